"""Deep validation (``validate --deep``): what ``verify_data_file`` returns for
one file, which rules a deep run adds, that data the reference cannot decode
is named in both modes, that the non-nullable rule finds the same nulls from
the deep decoding as from its own read, and that the command line and the
reports say the run was deep.
"""

from __future__ import annotations

import json

import lance
import pyarrow as pa
import pytest

from conformance.cli import main
from conformance.fixtures import default_corpus
from conformance.mutations import all_mutations, copy_dataset
from conformance.validator import Severity, validate
from conformance.validator.ruleset import all_rules
from reference_impl import jsonb
from reference_impl.dataset import Dataset
from reference_impl.file_format.verification import ProblemKind
from reference_impl.file_format.verify import verify_data_file

CASES = default_corpus() / "cases"
DEEP_RULES = {"data-page/decodes", "data-page/rows", "data-page/buffers"}


def _verify(root, version: int | None = None, watched=()):
    dataset = Dataset.open(root, version=version)
    fragment = dataset.fragments[0]
    data_file = fragment.files[0]
    location = dataset.data_file_location(data_file)
    return verify_data_file(
        location.storage,
        location.relpath,
        dataset.schema.fields,
        data_file.fields,
        data_file.column_indices,
        fragment.physical_rows,
        watched,
    )


@pytest.mark.parametrize(
    "case", ["pylance-encodings-2-2", "pylance-encodings-2-1", "pylance-types", "ref-types-nested", "ref-types-json"]
)
def test_a_well_formed_file_has_no_problem_and_nothing_unchecked(case):
    found = _verify(CASES / case / "dataset")
    assert found.well_formed and not found.unchecked, found


def test_a_legacy_file_is_unchecked_not_a_problem():
    found = _verify(CASES / "old-legacy-format" / "dataset")
    assert found.well_formed
    assert [gap.encoding for gap in found.unchecked] == ["legacy (v0.2) file layout"]


def test_a_corrupt_page_is_a_problem_naming_its_column_and_page(tmp_path):
    root = copy_dataset(CASES / "pylance-encodings-2-2" / "dataset", tmp_path / "ds")
    path = next((root / "data").glob("*.lance"))
    data = bytearray(path.read_bytes())
    data[: len(data) // 3] = b"\xff" * (len(data) // 3)
    path.write_bytes(bytes(data))
    found = _verify(root)
    undecodable = [p for p in found.problems if p.kind is ProblemKind.UNDECODABLE]
    assert undecodable and all(p.column is not None and p.page is not None for p in undecodable)
    assert undecodable[0].message.startswith(f"column {undecodable[0].column} page {undecodable[0].page}:")


_JSON_FIELD = pa.field("j", pa.large_binary(), metadata={b"ARROW:extension:name": b"lance.json"})
_MARKER = b"marker-0123456789"


def _json_dataset(path, version: str):
    """pylance's dataset of JSON documents, top-level and in a struct and a
    list; the document of row 2 holds :data:`_MARKER` in each."""
    texts = ['{"a":1}', '[1,2.5,"x",null]', f'{{"k":"{_MARKER.decode()}"}}', '"s"']
    documents = [jsonb.encode(text) for text in texts] + [None]
    schema = pa.schema(
        [
            _JSON_FIELD.with_name("doc"),
            pa.field("s", pa.struct([_JSON_FIELD])),
            pa.field("l", pa.list_(_JSON_FIELD)),
        ]
    )
    table = pa.table(
        [
            pa.array(documents, pa.large_binary()),
            pa.array([{"j": d} for d in documents], schema.field("s").type),  # 2.0 has no struct nulls
            pa.array([None if d is None else [d] for d in documents], schema.field("l").type),
        ],
        schema=schema,
    )
    lance.write_dataset(table, path, data_storage_version=version)
    return path


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2", "2.3"])
def test_a_json_value_that_is_not_a_jsonb_document_is_a_problem_naming_field_and_row(tmp_path, version):
    root = _json_dataset(tmp_path / "ds", version)
    assert _verify(root).well_formed
    path = next((root / "data").glob("*.lance"))
    data = path.read_bytes()
    assert data.count(_MARKER) == 3  # stored as is: one document per field
    # The string's first bytes become bytes no UTF-8 text starts with.
    path.write_bytes(data.replace(_MARKER, b"\xff\xfe" + _MARKER[2:]))
    malformed = [p for p in _verify(root).problems if p.kind is ProblemKind.MALFORMED_VALUE]
    assert sorted(p.message.split(":")[0] for p in malformed) == [
        "field 'doc' row 2",
        "field 'l[]' row 2",
        "field 's.j' row 2",
    ]
    assert all("not UTF-8" in p.message for p in malformed)
    findings = [f for f in validate(root, deep=True).findings if f.severity is Severity.ERROR]
    assert {f.rule for f in findings} == {"data-page/decodes"} and len(findings) == 3


def test_the_deep_rules_run_only_when_asked():
    deep = {rule.id for rule in all_rules() if rule.deep}
    assert deep == DEEP_RULES
    root = CASES / "pylance-encodings-2-2" / "dataset"
    assert not DEEP_RULES & set(validate(root).rules)
    assert DEEP_RULES <= set(validate(root, deep=True).rules)
    assert "data-page/unchecked" in validate(root).rules


def test_legacy_data_is_named_unchecked_in_a_deep_run_only():
    root = CASES / "old-legacy-format" / "dataset"
    assert not [f for f in validate(root).findings if f.rule == "data-page/unchecked"]
    (finding,) = [f for f in validate(root, deep=True).findings if f.rule == "data-page/unchecked"]
    assert finding.severity is Severity.INFO and "legacy (v0.2) file layout" in finding.message


@pytest.mark.parametrize("deep", [False, True])
def test_a_file_of_a_version_no_reader_implements_is_named_in_both_modes(base_datasets, tmp_path, deep):
    (mutation,) = [m for m in all_mutations() if m.rule == "data-page/unchecked"]
    root = copy_dataset(base_datasets[mutation.base], tmp_path / "ds")
    mutation.apply(root)
    found = [f for f in validate(root, deep=deep).findings if f.rule == "data-page/unchecked"]
    assert len(found) == 1 and "2.99" in found[0].message, found
    name = Dataset.open(root).fragments[-1].files[0].path
    assert name in found[0].message


@pytest.mark.parametrize("base", ["v2_0", "v2_1"])
def test_the_non_nullable_rule_finds_the_same_nulls_from_the_deep_decoding(base_datasets, tmp_path, base):
    (mutation,) = [m for m in all_mutations() if m.rule == "schema/non-nullable-values" and m.base == base]
    root = copy_dataset(base_datasets[base], tmp_path / "ds")
    mutation.apply(root)

    def nulls(deep: bool) -> list:
        report = validate(root, all_versions=True, deep=deep)
        return [f for f in report.findings if f.rule == "schema/non-nullable-values"]

    shallow = nulls(False)
    assert any(f.severity is Severity.ERROR for f in shallow)
    assert nulls(True) == shallow


def test_the_command_line_and_the_reports_say_the_run_was_deep(capsys):
    root = str(CASES / "pylance-encodings-2-2" / "dataset")
    assert main(["validate", root, "--deep", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["deep"] is True
    assert main(["validate", root, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["deep"] is False
    assert main(["validate", root, "--deep", "--format", "sarif"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["properties"]["deep"] is True
    assert main(["validate", root, "--deep", "--format", "junit"]) == 0
    assert '<property name="deep" value="true"' in capsys.readouterr().out
    assert main(["rules"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed if "[--deep]" in line] == sorted(DEEP_RULES)
