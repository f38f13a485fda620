"""The BTREE index rules (conformance/validator/rules/index_btree.py) on
pylance-14 datasets whose indices went through appends, delta segments
(optimize_indices), merges, deletes, updates and compaction with and
without deferred remapping, with and without stable row ids: no false
finding; a sample and its info in a default run; the reference's own
segments clean. The mutations (conformance/mutations/topics/index_btree.py)
are run by test_mutations.py."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.mutations.edit import edit_manifest
from conformance.mutations.topics.index_btree import _column_positions, _flip_until, _one_change
from conformance.validator import Severity, validate
from conformance.validator.facts import index_contents
from reference_impl.dataset import Dataset
from reference_impl.operations.indices import create_index

lance = pytest.importorskip("lance")


def _rows(start: int, count: int) -> pa.Table:
    ids = range(start, start + count)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": pa.array([None if i % 9 == 0 else (i * 7) % 40 for i in ids], pa.int32()),
            "s": pa.array([None if i % 13 == 0 else f"s{i % 37}" for i in ids]),
            "f": pa.array([float("nan") if i % 11 == 0 else (i % 17) / 2 for i in ids]),
        }
    )


def _history(path, *, stable: bool, defer_remap: bool):
    """Indices through the operations the acceptance names, in one history."""
    dataset = lance.write_dataset(_rows(0, 1200), path, max_rows_per_file=500, enable_stable_row_ids=stable)
    for column in ("k", "s", "f"):
        dataset.create_scalar_index(column, "BTREE")
    dataset = lance.write_dataset(_rows(1200, 300), path, mode="append")
    dataset.optimize.optimize_indices(num_indices_to_merge=0)  # a delta segment per index
    dataset = lance.write_dataset(_rows(1500, 200), path, mode="append")
    dataset.delete("id % 5 = 0")
    dataset.update({"k": "k + 1"}, where="id < 100")
    dataset.optimize.optimize_indices(num_indices_to_merge=0)  # another delta segment
    segments = [i for i in Dataset.open(path).indices if i.name == "k_idx"]
    assert len(segments) == 3, segments
    dataset.optimize.optimize_indices(num_indices_to_merge=2)  # the two deltas merged
    dataset.delete("id >= 1600 AND id < 1650")
    dataset.optimize.compact_files(target_rows_per_fragment=800, defer_index_remap=defer_remap)
    lance.write_dataset(_rows(1700, 100), path, mode="append")


def _index_findings(path, deep: bool = False):
    report = validate(path, all_versions=True, deep=deep)
    serious = [f for f in report.findings if f.severity is not Severity.INFO]
    btree = [f for f in report.findings if f.rule.startswith("index-btree/")]
    return serious, btree


# Stable row ids cannot be compacted with deferred remapping in pylance 14
# ("not supported by this build of Lance").
@pytest.mark.requirements(
    "index.btree-page-layout",
    "index.btree-keys-sorted",
    "index.btree-page-bounds",
    "index.btree-rows-present",
    "index.btree-entries-valid",
)
@pytest.mark.parametrize(
    "stable, defer_remap",
    # Stable row ids: the index corpus's scenarios walk BTREE with them by default; nightly here.
    [(False, False), (False, True), pytest.param(True, False, marks=pytest.mark.slow)],
    ids=["addresses", "deferred", "stable"],
)
def test_pylance_histories_draw_no_finding(tmp_path, stable, defer_remap):
    path = tmp_path / "ds"
    _history(path, stable=stable, defer_remap=defer_remap)
    for deep in (False, True):
        serious, btree = _index_findings(path, deep)
        assert not serious, serious
    # the rules looked at something: the last version lists BTREE segments
    assert any("BTree" in (i.type_url or "") for i in Dataset.open(path).indices)
    assert not btree  # nothing sampled: the rows are few, and translated through a reuse index
    if defer_remap:
        # the entries are checked through the translation: a row id moved is found
        index = next(i for i in Dataset.open(path).indices if i.name == "k_idx")
        _move_one_row_id(path / "_indices" / index.uuid / "page_data.lance")
        serious, _ = _index_findings(path)
        assert {f.rule for f in serious} & {"index-btree/rows-present", "index-btree/entries-valid"}, serious


def _move_one_row_id(path):
    positions = _column_positions(path, 1)  # the ids column: bit-packed, so one flip moves one id
    _flip_until(path, lambda before, after: _one_change(before, after, "ids") is not None, positions)


def test_a_default_run_samples_and_says_so(tmp_path, monkeypatch):
    path = tmp_path / "ds"
    dataset = lance.write_dataset(_rows(0, 900), path, max_rows_per_file=300)
    dataset.create_scalar_index("k", "BTREE")
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 300)
    serious, btree = _index_findings(path)
    assert not serious
    (sampled,) = [f for f in btree if f.rule == "index-btree/sampled"]
    assert "fragments [0] only" in sampled.message
    serious, btree = _index_findings(path, deep=True)
    assert not serious and not btree


def test_reference_written_segments_are_clean(tmp_path):
    path = tmp_path / "ds"
    lance.write_dataset(_rows(0, 900), path, max_rows_per_file=400)
    lance.dataset(path).delete("id % 7 = 1")
    dataset = Dataset.open(path)
    for column in ("k", "s", "f"):
        dataset = create_index(dataset, column, index_type="BTREE")
    serious, btree = _index_findings(path, deep=True)
    assert not serious and not btree, serious + btree


def test_a_missing_file_the_manifest_does_not_list_is_reported(tmp_path):
    # Older writers list no files; the page still names both.
    path = tmp_path / "ds"
    lance.write_dataset(_rows(0, 100), path).create_scalar_index("k", "BTREE")

    def forget_files(manifest_file):
        for index in manifest_file.indices:
            index.files = []

    edit_manifest(path, forget_files)
    serious, _ = _index_findings(path)
    assert not serious
    (index,) = Dataset.open(path).indices
    (path / "_indices" / index.uuid / "page_data.lance").unlink()
    serious, _ = _index_findings(path)
    assert [(f.rule, "page_data.lance" in f.message) for f in serious] == [("index-btree/files-decode", True)]
