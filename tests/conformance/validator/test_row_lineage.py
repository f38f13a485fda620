"""Row lineage under the revisions (issue 31): what an update does to a row's
id is judged by the revision asked for (row-id.new-id-on-update under seeds
and upstream-2026-11, row-id.kept-on-update from upstream-2026-11-29), and a
sequence spilled to a hidden column (row id page at 117de6ba, "Inline and
Spilled Storage") is read by the reference and validates clean."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from conformance.cli import main as cli_main
from conformance.mutations import copy_dataset
from conformance.mutations.topics.row_lineage import spill_row_ids
from conformance.spec_revisions import NEWEST, OLDEST, revision
from conformance.validator import Severity, validate
from reference_impl.dataset import Dataset
from reference_impl.errors import UnsupportedFeatureError
from reference_impl.fragments import LineageColumn
from reference_impl.scan import scan

lance = pytest.importorskip("lance")

SERIOUS = (Severity.ERROR, Severity.WARNING)
SEEDS_RULE = "row-id/kept-on-update"


@pytest.fixture(scope="module")
def updated(tmp_path_factory) -> Path:
    """pylance 14 (the installed lance), stable row ids, then an update of
    two of its six rows: version 2 keeps their ids at new addresses."""
    path = tmp_path_factory.mktemp("updated") / "ds"
    table = pa.table({"id": pa.array(range(6), pa.int64()), "name": [f"row {i}" for i in range(6)]})
    lance.write_dataset(table, path, enable_stable_row_ids=True)
    lance.dataset(path).update({"name": "'changed'"}, where="id = 1 OR id = 4")
    return path


def _serious(report, prefix: str = "") -> list[str]:
    return [f"{f.rule}: {f.message}" for f in report.findings if f.severity in SERIOUS and f.rule.startswith(prefix)]


@pytest.mark.requirements("row-id.kept-on-update")
def test_an_update_keeping_ids_is_valid_under_the_newest_revision(updated):
    report = validate(updated, all_versions=True)
    assert report.spec_revision is NEWEST
    assert _serious(report) == []
    assert SEEDS_RULE not in report.rules, "the seeds' rule on updates does not run under the newest revision"
    assert not [f for f in report.findings if f.rule == SEEDS_RULE]
    # The ids really were kept: two visible rows carry ids of deleted rows.
    row_ids = scan(Dataset.open(updated), with_row_id=True).column("_rowid").to_pylist()
    assert sorted(row_ids) == list(range(6))


@pytest.mark.parametrize("name", [OLDEST.name, "upstream-2026-11"])
def test_the_seeds_rule_reports_the_kept_ids_under_the_revisions_that_give_new_ids(updated, name):
    """Under seeds, and under upstream-2026-11, whose sources re-read no row
    id page (the catalog's page for it is the seeds' one, new id on update),
    the seeds' rule reports the kept ids, at its own severity (info: the
    seeds' requirement is a should)."""
    report = validate(updated, all_versions=True, spec_revision=name)
    [finding] = [f for f in report.findings if f.rule == SEEDS_RULE]
    assert finding.severity is Severity.INFO and finding.version == 2
    assert finding.requirements == ("row-id.new-id-on-update",)
    assert "2 row ids of deleted rows are carried by visible rows (1, 4)" in finding.message
    assert f"format revision {name}" in finding.message
    assert _serious(report, "row-id/") == []


def test_the_cli_judges_the_update_by_the_revision_it_is_given(updated, capsys):
    """``lance-conformance validate`` (its entry point, in this process):
    exit 0 under both revisions, the JSON report naming the revision."""

    def _cli(*args: str) -> dict:
        code = cli_main(["validate", *args, "--all-versions", "--format", "json"])
        out = capsys.readouterr().out
        assert code == 0, out
        return json.loads(out)

    newest = _cli(str(updated))
    assert newest["spec_revision"] == NEWEST.name
    assert not [f for f in newest["findings"] if f["rule"] == SEEDS_RULE]
    seeds = _cli(str(updated), "--spec-revision", "seeds")
    [finding] = [f for f in seeds["findings"] if f["rule"] == SEEDS_RULE]
    assert finding["severity"] == "info" and finding["requirements"] == ["row-id.new-id-on-update"]


def test_a_spilled_row_id_column_is_read_by_the_reference_and_validates_clean(base_datasets, tmp_path):
    """Fragment 0's row ids moved to a hidden _rowid column (field id -3) of
    a data file of its own, flag 2048 set in both words: the reference
    reads the ids from the column and the newest revision finds nothing
    wrong; the ids and the scan are those of the inline original. (As a
    table reader the reference still refuses the dataset: bit 2048 also
    means managed blobs, which it does not implement; the pages disagree on
    the bit, so the check of reader flags is bypassed here.)"""
    root = copy_dataset(base_datasets["stable_row_ids"], tmp_path / "ds")
    before = Dataset.open(root)
    expected = before.row_ids(before.manifest.fragments[0])
    expected_rows = scan(before, with_row_id=True)
    spill_row_ids(root)

    with pytest.raises(UnsupportedFeatureError, match="0x800"):
        Dataset.open(root)
    after = Dataset.open(root, check_features=False)
    fragment = after.manifest.fragments[0]
    assert isinstance(fragment.row_id_sequence, LineageColumn)
    assert [data_file.fields for data_file in fragment.files][-1] == [-3]
    assert after.row_ids(fragment) == expected
    assert scan(after, with_row_id=True).equals(expected_rows)
    assert _serious(validate(root, all_versions=True)) == []


def test_a_spilled_column_is_unknown_to_the_earlier_revisions(base_datasets, tmp_path):
    """Before upstream-2026-11-29 the -3 field id is a stray negative id (only
    the -2 tombstone is allowed), so the earlier revisions reject it."""
    root = copy_dataset(base_datasets["stable_row_ids"], tmp_path / "ds")
    spill_row_ids(root)
    rules = {
        f.rule for f in validate(root, spec_revision=revision("upstream-2026-11")).findings if f.severity in SERIOUS
    }
    assert "data-file/field-id-values" in rules
