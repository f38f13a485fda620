"""The golden fixtures: schemas, coverage, size, determinism, verification
with both drivers, promotion and the cross-implementation matrix.

The committed corpus (``fixtures/``) is what is checked: the tests read it,
regenerate copies of it and compare, so a builder change that is not followed
by ``lance-conformance fixtures generate`` fails here.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from conformance.cli import main
from conformance.describe import load_schema, schema_validator
from conformance.fixtures.base_paths import CASE_PLACEHOLDER, materialize
from conformance.fixtures.case import case_dirs, load_case
from conformance.fixtures.all_cases import all_specs
from conformance.fixtures.catalog import OLD_PYLANCE, PYLANCE
from conformance.fixtures.expected import EXPECTED_DIR, load_expected
from conformance.fixtures.features import FEATURES
from conformance.spec_sources import load_documents
from conformance.fixtures.generate import CASES_DIR, generate
from conformance.fixtures.matrix import build_matrix
from conformance.fixtures.verify import ACCEPTED, FAIL, KNOWN_DEVIATION, PASS, verify_case, verify_corpus
from conformance.validator import Severity, validate
from reference_impl.dataset import Dataset
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import VERSIONS_DIR
from reference_impl.storage import Storage

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "fixtures"
SIZE_BUDGET_BYTES = 20 * 1024 * 1024
MIN_CASES = 40


def corpus_cases():
    return [load_case(case_dir) for case_dir in case_dirs(CORPUS)]


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- schemas and the corpus as committed --------------------------------------


@pytest.mark.parametrize("name", ["fixture-case.schema.json", "fixture-expected.schema.json",
                                  "fixture-matrix.schema.json"])
def test_shipped_fixture_schemas_are_valid_json_schemas(name):
    schema_validator(name)  # check_schema raises on an invalid schema
    assert load_schema(name)["$id"].endswith(name)


def test_every_case_and_expected_file_fits_its_schema():
    cases = case_dirs(CORPUS)
    assert cases, "the corpus is empty: run `lance-conformance fixtures generate`"
    for case_dir in cases:
        load_case(case_dir)  # schema, feature ids, requirement ids, dataset present
        expected = load_expected(case_dir)  # expected.json and every describe document
        assert [v.version for v in expected] == sorted(v.version for v in expected)


def test_the_case_schema_rejects_what_it_should():
    validator = schema_validator("fixture-case.schema.json")
    good = json.loads((case_dirs(CORPUS)[0] / "case.json").read_text())
    assert not list(validator.iter_errors(good))
    for broken in (
        {**good, "tags": ["reader", "sometimes"]},
        {**good, "writer": {"library": "lance"}},
        {key: value for key, value in good.items() if key != "features"},
        {**good, "surprise": 1},
    ):
        assert list(validator.iter_errors(broken)), broken


def test_at_least_forty_cases_from_every_writer():
    cases = corpus_cases()
    assert len(cases) >= MIN_CASES
    libraries = {(case.writer.library, case.writer.version) for case in cases}
    assert ("lance-conformance", "0.1.0") in libraries
    assert any(library == "lance" and version.startswith("14.") for library, version in libraries)
    assert ("lance", "0.20.0") in libraries


def test_every_specification_feature_appears_in_a_case():
    covered = {feature for case in corpus_cases() for feature in case.features}
    missing = sorted(set(FEATURES) - covered)
    assert not missing, f"features no case exercises: {missing}"


def test_every_feature_names_a_source_document():
    assert sorted({f.id for f in FEATURES.values() if f.document not in load_documents()}) == []


def test_every_registered_case_is_in_the_corpus():
    assert sorted(all_specs()) == sorted(d.name for d in case_dirs(CORPUS) if "promoted" not in load_case(d).tags)


def test_the_corpus_fits_its_size_budget():
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    assert total < SIZE_BUDGET_BYTES, f"the corpus takes {total} bytes"


def test_negative_cases_expect_what_readers_must_do():
    refusing = load_expected(CORPUS / CASES_DIR / "crafted-unknown-reader-flag")
    assert [v.outcome for v in refusing] == ["read", "refuse"]
    assert refusing[1].refusal_error == "UnsupportedFeatureError"
    unknown_index = load_expected(CORPUS / CASES_DIR / "ref-index-unknown-type")[-1]
    assert unknown_index.outcome == "read" and unknown_index.content.num_rows == 5
    assert unknown_index.describe["indices"][0]["type_url"] == "/lance.fixtures.FutureIndexDetails"


@pytest.mark.parametrize("case_dir", case_dirs(CORPUS), ids=lambda d: d.name)
def test_the_golden_datasets_conform(case_dir, tmp_path):
    """A golden case is a conforming dataset: the validator finds no error in
    any version, except in the versions a negative case expects readers to
    refuse, where it must find one (the reason they refuse)."""
    case = load_case(case_dir)
    refused = {v.version for v in load_expected(case_dir) if v.outcome == "refuse"}
    if case.portable_base_paths:  # what readers are given: the copy with absolute base paths
        case_dir = materialize(case_dir, tmp_path)
    errors: dict[int | None, list[str]] = {}
    for finding in validate(case_dir / case.dataset, all_versions=True).findings:
        if finding.severity is Severity.ERROR:
            errors.setdefault(finding.version, []).append(f"{finding.rule}: {finding.message}")
    assert set(errors) == refused, errors


# -- base paths ---------------------------------------------------------------------


PORTABLE_CASES = [d for d in case_dirs(CORPUS) if load_case(d).portable_base_paths]


def base_paths_of_every_manifest(case_dir: Path) -> dict[str, list[str]]:
    """``{manifest path relative to the case: [base path, ...]}`` for every dataset under ``case_dir``."""
    found = {}
    for versions_dir in sorted(case_dir.rglob(VERSIONS_DIR)):
        storage = Storage(versions_dir.parent)
        for name in sorted(p.name for p in versions_dir.glob("*.manifest")):
            manifest = read_manifest_file(storage, f"{VERSIONS_DIR}/{name}").manifest
            found[str((versions_dir / name).relative_to(case_dir))] = [base.path for base in manifest.base_paths]
    return found


def test_the_cases_with_base_paths_are_kept_portable():
    """Every case with a base path keeps it relative in the corpus and says so."""
    assert {d.name for d in PORTABLE_CASES} == {"ref-branch", "ref-shallow-clone", "ref-update-bases"}
    for case_dir in case_dirs(CORPUS):
        paths = [p for bases in base_paths_of_every_manifest(case_dir).values() for p in bases]
        assert load_case(case_dir).portable_base_paths == any(not Path(p).is_absolute() for p in paths), case_dir


@pytest.mark.parametrize("case_dir", PORTABLE_CASES, ids=lambda d: d.name)
@pytest.mark.requirements("base-path.absolute")
def test_a_materialized_case_has_absolute_base_paths_inside_the_copy(case_dir, tmp_path):
    """What readers are given conforms: every base path of every manifest is
    absolute and names a directory of the copy, the validator has nothing to
    say about base paths, and the reference reader sees the expected
    documents once ``{case}`` is the copy."""
    copy = materialize(case_dir, tmp_path)
    template = base_paths_of_every_manifest(case_dir)
    materialized = base_paths_of_every_manifest(copy)
    assert materialized.keys() == template.keys() and any(materialized.values())
    for bases in materialized.values():
        for path in bases:
            assert Path(path).is_absolute() and Path(path).is_dir() and Path(path).is_relative_to(copy), path
    case = load_case(case_dir)
    findings = validate(copy / case.dataset, all_versions=True).findings
    assert not [f for f in findings if f.rule.startswith("base-path/")], findings
    from conformance.drivers import reference

    for expected in load_expected(case_dir):
        document = json.loads(json.dumps(expected.describe).replace(CASE_PLACEHOLDER, str(copy)))
        assert reference.describe(str(copy / case.dataset), expected.version) == document


@pytest.mark.parametrize("case_dir", PORTABLE_CASES, ids=lambda d: d.name)
def test_a_case_with_base_paths_still_verifies_after_the_corpus_moves(case_dir, tmp_path):
    """The corpus moves (a copy elsewhere) and pylance reads the case there,
    with no known deviation to excuse it."""
    pytest.importorskip("lance")
    moved = tmp_path / "moved" / CASES_DIR / case_dir.name
    shutil.copytree(case_dir, moved)
    assert not load_case(moved).deviation_for("pylance")
    for driver in ("reference", "pylance"):
        result = verify_case(moved, driver)
        assert result.status == PASS, (driver, result.problems)


# -- determinism ------------------------------------------------------------------


def test_generating_twice_gives_byte_identical_expected_files(tmp_path):
    """Regenerate two copies of the committed corpus: the expected files of
    both equal each other and the committed ones, and every dataset the
    reference writer builds is byte-identical too."""
    copies = [tmp_path / "a", tmp_path / "b"]
    for copy in copies:
        shutil.copytree(CORPUS, copy, ignore=shutil.ignore_patterns("matrix.json"))
        for case_dir in case_dirs(copy):
            shutil.rmtree(case_dir / EXPECTED_DIR)
        generate(copy)
    specs = all_specs()
    for case_dir in case_dirs(CORPUS):
        name = case_dir.name
        first, second = (tree_bytes(copy / CASES_DIR / name / EXPECTED_DIR) for copy in copies)
        assert first == second, f"{name}: expected files differ between two generations"
        assert first == tree_bytes(case_dir / EXPECTED_DIR), f"{name}: committed expected files are stale"
        assert (copies[0] / CASES_DIR / name / "case.json").read_bytes() == (case_dir / "case.json").read_bytes()
        if specs[name].writer not in (PYLANCE, OLD_PYLANCE):
            assert tree_bytes(copies[0] / CASES_DIR / name) == tree_bytes(copies[1] / CASES_DIR / name), name


def test_the_reference_writer_is_random_outside_a_deterministic_block(tmp_path):
    """The entropy injection must not leak: ordinary writes still get fresh uuids."""
    names = []
    for side in ("a", "b"):
        dataset = Dataset.create(tmp_path / side, pa.table({"id": [1]}))
        names.append(dataset.fragments[0].files[0].path)
    assert names[0] != names[1]


# -- verification -------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference_results():
    return verify_corpus(CORPUS, "reference")


@pytest.fixture(scope="module")
def pylance_results():
    pytest.importorskip("lance")
    return verify_corpus(CORPUS, "pylance")


def test_verify_passes_with_the_reference_reader(reference_results):
    failed = [(r.case, r.problems) for r in reference_results if r.status != PASS]
    assert not failed
    assert len(reference_results) == len(case_dirs(CORPUS))


def test_verify_passes_with_pylance_or_records_a_known_deviation(pylance_results):
    failed = [(r.case, r.status, r.problems) for r in pylance_results if r.status not in ACCEPTED]
    assert not failed
    deviations = {r.case for r in pylance_results if r.status == KNOWN_DEVIATION}
    recorded = {case.name for case in corpus_cases() if case.deviation_for("pylance")}
    assert deviations == recorded


def test_every_known_deviation_is_documented():
    text = (ROOT / "docs" / "spec-discrepancies.md").read_text()
    sections = dict(re.findall(r"^## (.+)\n((?:(?!^## ).*\n?)*)", text, re.MULTILINE))
    for case in corpus_cases():
        for deviation in case.known_deviations:
            for reference in deviation.discrepancy.split(";"):
                section, item = re.fullmatch(r"\s*(.+), item (\d+)\s*", reference).groups()
                assert section in sections, f"{case.name}: no section {section!r}"
                assert re.search(rf"^{item}\. \*\*", sections[section], re.MULTILINE), f"{case.name}: {reference}"


def test_verify_notices_a_wrong_expectation(tmp_path):
    """Verification must be able to fail: change one expected value and one
    expected row and both are reported."""
    case_dir = tmp_path / CASES_DIR / "ref-deletion-arrow"
    shutil.copytree(CORPUS / CASES_DIR / "ref-deletion-arrow", case_dir)
    describe = case_dir / EXPECTED_DIR / "v2.describe.json"
    document = json.loads(describe.read_text())
    document["fragments"][0]["deleted_offsets"] = [4]
    describe.write_text(json.dumps(document))
    result = verify_case(case_dir, "reference")
    assert result.status == FAIL
    assert any("deleted_offsets" in problem for problem in result.problems)
    content = case_dir / EXPECTED_DIR / "v1.content.arrow"
    table = pa.ipc.open_file(pa.BufferReader(content.read_bytes())).read_all()
    changed = table.set_column(0, table.schema.field(0), pc.add(table.column("id"), 1))
    with pa.ipc.new_file(str(content), changed.schema) as writer:
        writer.write_table(changed)
    assert any("content: column 'id' row 0" in p for p in verify_case(case_dir, "reference").problems)


def test_unpinned_rows_excuse_only_a_declared_unsupported_feature():
    """Where the reference could not pin a case's rows (legacy files here), a
    driver may decline to read them with UnsupportedFeatureError, and gets a
    note; failing to read them any other way is a finding."""
    from types import SimpleNamespace

    from conformance.drivers import reference
    from reference_impl.errors import UnsupportedFeatureError

    case_dir = CORPUS / CASES_DIR / "pylance-legacy-files"
    assert all(v.content is None for v in load_expected(case_dir) if v.outcome == "read")

    def driver_raising(error):
        def read_table(uri, version=None):
            raise error

        return SimpleNamespace(versions=reference.versions, describe=reference.describe, read_table=read_table,
                               UNREPORTED=reference.UNREPORTED)

    declined = verify_case(case_dir, "declines", driver_raising(UnsupportedFeatureError("f", "not here")))
    assert declined.status == PASS and declined.notes
    broken = verify_case(case_dir, "breaks", driver_raising(OSError("cannot read")))
    assert broken.status == FAIL and any("cannot read" in p for p in broken.problems)


def test_verify_lets_an_interrupt_through():
    """Only the implementation's failures are findings: an interrupt (or an
    exit) raised inside a driver call stops the run as it should."""
    from types import SimpleNamespace

    from conformance.drivers import reference

    def interrupted(uri, version=None):
        raise KeyboardInterrupt

    driver = SimpleNamespace(versions=reference.versions, describe=interrupted, read_table=reference.read_table,
                             UNREPORTED=reference.UNREPORTED)
    with pytest.raises(KeyboardInterrupt):
        verify_case(CORPUS / CASES_DIR / "ref-naming-v1", "interrupted", driver)


def test_a_stale_deviation_fails(tmp_path):
    case_dir = tmp_path / CASES_DIR / "ref-naming-v1"
    shutil.copytree(CORPUS / CASES_DIR / "ref-naming-v1", case_dir)
    document = json.loads((case_dir / "case.json").read_text())
    document["known_deviations"] = [{"driver": "reference", "requirement": "naming.v1-pattern",
                                     "discrepancy": "none", "explanation": "made up"}]
    (case_dir / "case.json").write_text(json.dumps(document))
    assert verify_case(case_dir, "reference").status == "stale-deviation"


# -- the command line -------------------------------------------------------------


def test_cli_verify_and_a_malformed_case(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    for name in ("ref-naming-v2", "crafted-unknown-reader-flag"):
        shutil.copytree(CORPUS / CASES_DIR / name, corpus / CASES_DIR / name)
    assert main(["fixtures", "verify", "--driver", "reference", "--corpus", str(corpus)]) == 0
    assert "2 pass" in capsys.readouterr().out
    broken = corpus / CASES_DIR / "ref-naming-v2" / "case.json"
    broken.write_text("{not json")
    assert main(["fixtures", "verify", "--driver", "reference", "--corpus", str(corpus)]) == 1
    out = capsys.readouterr().out
    assert str(broken) in out and "Traceback" not in out
    assert main(["fixtures", "verify", "--driver", "nonesuch", "--corpus", str(corpus)]) == 1
    assert "unknown driver 'nonesuch'" in capsys.readouterr().err


def test_a_driver_plugs_in_by_its_module_path(tmp_path, capsys, monkeypatch):
    """A driver is any module with the four names: one that is not shipped
    here, given by its dotted path, is verified like the shipped ones, and a
    module lacking a name is refused with a message, not a traceback."""
    package = tmp_path / "third_party"
    package.mkdir()
    (package / "__init__.py").write_text("")
    # Reads like the reference driver but drops the last row of every
    # version: what an implementation that loses a row would do.
    (package / "lossy.py").write_text(
        "from conformance.drivers import reference\n"
        "UNREPORTED = reference.UNREPORTED\n"
        "versions = reference.versions\n"
        "describe = reference.describe\n"
        "def read_table(uri, version=None):\n"
        "    table = reference.read_table(uri, version)\n"
        "    return table.slice(0, max(table.num_rows - 1, 0))\n"
    )
    (package / "incomplete.py").write_text("def versions(uri):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS / CASES_DIR / "ref-naming-v2", corpus / CASES_DIR / "ref-naming-v2")

    assert main(["fixtures", "verify", "--driver", "third_party.lossy", "--corpus", str(corpus)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "content: expected 5 rows, got 4" in out, out
    assert main(["fixtures", "verify", "--driver", "third_party.incomplete", "--corpus", str(corpus)]) == 1
    err = capsys.readouterr().err
    assert "lacks describe, read_table, UNREPORTED" in err and "Traceback" not in err


def test_a_driver_module_without_a_dot_plugs_in(tmp_path, capsys, monkeypatch):
    """A driver module outside the package whose name has no dot is loaded
    like any other (known names are looked up first); a name that is neither
    a known driver nor a module is refused as unknown."""
    (tmp_path / "my_lance_driver.py").write_text(
        "from conformance.drivers.reference import UNREPORTED, versions, describe, read_table\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS / CASES_DIR / "ref-naming-v2", corpus / CASES_DIR / "ref-naming-v2")
    assert main(["fixtures", "verify", "--driver", "my_lance_driver", "--corpus", str(corpus)]) == 0
    assert "1 pass" in capsys.readouterr().out
    assert main(["fixtures", "verify", "--driver", "no_such_driver_module", "--corpus", str(corpus)]) == 1
    assert "unknown driver 'no_such_driver_module'" in capsys.readouterr().err


def test_cli_generate_rebuilds_one_case(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    assert main(["fixtures", "generate", "--corpus", str(corpus), "--case", "ref-tags"]) == 0
    assert load_case(corpus / CASES_DIR / "ref-tags").writer.library == "lance-conformance"
    assert tree_bytes(corpus / CASES_DIR / "ref-tags") == tree_bytes(CORPUS / CASES_DIR / "ref-tags")
    assert main(["fixtures", "generate", "--corpus", str(corpus), "--case", "no-such-case"]) == 1
    assert "no builder" in capsys.readouterr().err


# -- promote -----------------------------------------------------------------------------


def test_promote_turns_a_dataset_into_a_verified_case(tmp_path, capsys):
    source = tmp_path / "bug-report"
    dataset = Dataset.create(source, pa.table({"id": pa.array(range(10), pa.int64())}), stable_row_ids=True,
                             max_rows_per_file=5)
    dataset = dataset.delete(pc.field("id") == 9)
    dataset.update_metadata(config={"user.key": "v"})
    corpus = tmp_path / "corpus"
    assert main(["fixtures", "promote", str(source), "--corpus", str(corpus),
                 "--requirement", "row-id.unique"]) == 0
    case_dir = corpus / CASES_DIR / "promoted-bug-report"
    case = load_case(case_dir)
    assert {"naming.v2", "deletion.arrow", "row-ids.stable", "config.table", "fragment.multiple",
            "versions.history", "txn.overwrite", "txn.delete", "txn.update_config"} <= set(case.features)
    assert case.requirements == ["row-id.unique"] and "promoted" in case.tags
    assert case.writer.implementation == "unknown" and case.writer.library == "lance-conformance"
    assert [v.version for v in load_expected(case_dir)] == [1, 2, 3]
    assert verify_case(case_dir, "reference").status == PASS
    # A second promotion under the same name is refused, and so is a non-dataset.
    assert main(["fixtures", "promote", str(source), "--corpus", str(corpus)]) == 1
    assert main(["fixtures", "promote", str(tmp_path / "corpus"), "--corpus", str(corpus)]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "Traceback" not in err
    # Regeneration keeps a promoted case and recomputes its expected files.
    report = generate(corpus, only={"ref-tags"})
    assert "promoted-bug-report" in report.expected_computed and not report.unknown_dirs


# -- the matrix -------------------------------------------------------------------------


def test_the_matrix_crosses_every_writer_with_every_reader(reference_results, pylance_results):
    matrix = build_matrix(reference_results + pylance_results)
    errors = list(schema_validator("fixture-matrix.schema.json").iter_errors(matrix))
    assert not errors, errors[0]
    assert matrix["readers"] == ["reference", "pylance"]
    assert {"lance-conformance 0.1.0", "lance 0.20.0"} <= set(matrix["writers"])
    assert any(writer.startswith("lance 14.") for writer in matrix["writers"])
    assert len(matrix["cells"]) == len(matrix["writers"]) * len(matrix["readers"])
    assert all(cell["pass"] for cell in matrix["cells"]), [c for c in matrix["cells"] if not c["pass"]]
    assert sum(cell["cases"] for cell in matrix["cells"]) == 2 * len(case_dirs(CORPUS))


def test_cli_matrix_prints_and_saves(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    for name in ("ref-naming-v1", "pylance-naming-v1", "old-appends-deletes"):
        shutil.copytree(CORPUS / CASES_DIR / name, corpus / CASES_DIR / name)
    out = tmp_path / "matrix.json"
    assert main(["fixtures", "matrix", "--corpus", str(corpus), "--drivers", "reference", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "lance 0.20.0" in printed and "PASS 1/1" in printed
    saved = json.loads(out.read_text())
    assert saved["readers"] == ["reference"] and len(saved["cells"]) == 3


# -- rewriting the peer cases -----------------------------------------------------------


def _rewrite_and_verify(tmp_path, names):
    corpus = tmp_path / "corpus"
    report = generate(corpus, rewrite_peers=True, only=set(names))
    assert sorted(report.peers_written) == sorted(names)
    for name in names:
        case = load_case(corpus / CASES_DIR / name)
        committed = load_case(CORPUS / CASES_DIR / name)
        assert case.writer == committed.writer and case.features == committed.features
        for driver in ("reference", "pylance"):
            result = verify_case(corpus / CASES_DIR / name, driver)
            assert result.status == PASS, (name, driver, result.problems)
        # Fresh uuids, same facts: the description differs only where pylance invents values.
        fresh = [v.describe["num_rows"] for v in load_expected(corpus / CASES_DIR / name)]
        assert fresh == [v.describe["num_rows"] for v in load_expected(CORPUS / CASES_DIR / name)]


def test_pylance_14_still_writes_its_cases(tmp_path):
    pytest.importorskip("lance")
    _rewrite_and_verify(tmp_path, ["pylance-naming-v1", "pylance-deletion-bitmap", "pylance-stable-row-ids"])


@pytest.mark.old_pylance
def test_pylance_0_20_still_writes_its_cases(tmp_path):
    from conformance.peers import old_pylance

    try:
        old_pylance.ensure_venv("0.20.0")
    except old_pylance.PeerUnavailableError as exc:
        pytest.fail(f"cannot install pylance 0.20.0: {exc}", pytrace=False)
    _rewrite_and_verify(tmp_path, ["old-appends-deletes", "old-legacy-format", "old-update-compaction"])
