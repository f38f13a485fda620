"""The BITMAP and LABEL_LIST rules (conformance/validator/rules/index_bitmap.py)
on datasets pylance 14 takes through appends and optimize_indices (delta and
merged segments), deletes, updates and compaction, with and without deferred
remap and stable row ids: no error or warning, in a default and a deep run;
what went unchecked is said as info. (The mutation tests show each error
rule reporting a broken segment.)
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.validator import Severity, validate
from conformance.validator.facts import index_contents
from reference_impl.dataset import Dataset
from reference_impl.indices.bitmap import read_bitmap_segment, write_bitmap_segment

lance = pytest.importorskip("lance")

SERIOUS = (Severity.ERROR, Severity.WARNING)
TOPICS = ("index-bitmap/", "index-label-list/")


def _rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "c": [None if i % 7 == 0 else f"v{i % 5}" for i in ids],
            "tags": pa.array([[f"t{i % 3}", f"t{i % 4}"] if i % 9 else None for i in ids], pa.list_(pa.string())),
        }
    )


def _history(path: str, *, stable: bool, defer: bool) -> None:
    """Indices built, appended to and optimized (a delta segment, then a
    merge), rows deleted and updated, optimized again, a fragment deleted
    whole, compacted (remapping now or deferring it), updated once more."""
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100, enable_stable_row_ids=stable)
    dataset = lance.dataset(path)
    dataset.create_scalar_index("c", "BITMAP")
    dataset.create_scalar_index("tags", "LABEL_LIST")
    lance.write_dataset(_rows(300, 100), path, mode="append")
    lance.dataset(path).optimize.optimize_indices(num_indices_to_merge=0)
    lance.write_dataset(_rows(400, 50), path, mode="append")
    lance.dataset(path).optimize.optimize_indices()
    lance.dataset(path).delete("id % 10 = 3")
    lance.dataset(path).update({"c": "'upd'", "tags": "['tu']"}, where="id % 10 = 4")
    lance.dataset(path).optimize.optimize_indices()
    lance.dataset(path).delete("id < 150")
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=1000, defer_index_remap=defer)
    lance.dataset(path).update({"c": "'upd2'"}, where="id % 10 = 5")


def _index_findings(path: str, *, deep: bool) -> tuple[list, list]:
    findings = validate(path, all_versions=True, deep=deep).findings
    serious = [f for f in findings if f.severity in SERIOUS]
    return serious, [f for f in findings if f.rule.startswith(TOPICS)]


def _check_clean(path: str) -> list:
    infos = []
    for deep in (False, True):
        serious, ours = _index_findings(path, deep=deep)
        assert not serious, [(f.rule, f.version, f.message) for f in serious]
        infos += ours
    return infos


def test_a_history_with_deferred_remap_draws_no_finding_and_says_what_it_skipped(tmp_path):
    path = str(tmp_path / "ds")
    _history(path, stable=False, defer=True)
    infos = _check_clean(path)
    assert {f.severity for f in infos} == {Severity.INFO}
    assert any("deferred compaction" in f.message for f in infos), [f.message for f in infos]


@pytest.mark.slow
@pytest.mark.parametrize("stable, defer", [(False, False), (True, False)], ids=["remapped", "stable-row-ids"])
def test_histories_draw_no_finding(tmp_path, stable, defer):
    path = str(tmp_path / "ds")
    _history(path, stable=stable, defer=defer)
    infos = _check_clean(path)
    assert not [f for f in infos if "deferred compaction" in f.message]


def test_the_reference_writers_indices_draw_no_finding(tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100)
    lance.dataset(path).delete("id % 10 = 3")
    Dataset.open(path).create_index("c", index_type="BITMAP").create_index("tags", index_type="LABEL_LIST")
    lance.dataset(path).delete("id % 10 = 6")  # deleted after the build: kept by the segment, filtered by readers
    assert not _check_clean(path)


def test_a_default_run_says_which_fragments_it_compared(tmp_path, monkeypatch):
    """Past the sample, a default run compares whole fragments read so far
    and says so; a deep run compares every covered fragment."""
    path = str(tmp_path / "ds")
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100)
    lance.dataset(path).create_scalar_index("c", "BITMAP")
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 150)
    default = [f for f in _index_findings(path, deep=False)[1] if f.rule == "index-bitmap/sampled"]
    assert default and all("fragments 0, 1 were compared" in f.message for f in default), default
    assert not [f for f in _index_findings(path, deep=True)[1] if f.rule == "index-bitmap/sampled"]


def test_a_wrong_row_past_the_sample_is_found_by_a_deep_run(tmp_path, monkeypatch):
    """A segment wrong about the last fragment only: a default run stopping
    before it finds nothing; --deep reports it."""
    path = str(tmp_path / "ds")
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100)
    Dataset.open(path).create_index("c", index_type="BITMAP")
    # The reference's file again, with the first row of fragment 2 (id 200,
    # value 'v0') under key 'v1'.
    dataset = Dataset.open(path)
    (index,) = dataset.indices
    segment = read_bitmap_segment(dataset, index)
    moved, values, rows = 2 << 32, [], []
    for key, row_set in zip(segment.keys.to_pylist(), segment.row_sets, strict=True):
        for row in row_set.tolist():
            values.append("v1" if row == moved else key)
            rows.append(row)
    target = dataset.storage.path(f"_indices/{index.uuid}/bitmap_page_lookup.lance")
    target.unlink()
    write_bitmap_segment(dataset.storage, f"_indices/{index.uuid}", pa.array(values, pa.string()), rows)
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 150)
    default = _index_findings(path, deep=False)[1]
    assert not [f for f in default if f.rule == "index-bitmap/rows-match-values"]
    deep = [f for f in _index_findings(path, deep=True)[1] if f.rule == "index-bitmap/rows-match-values"]
    assert deep and f"row {moved} ('v0') is in the set of key 'v1'" in deep[0].message, deep
