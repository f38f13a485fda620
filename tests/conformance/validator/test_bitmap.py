"""The BITMAP and LABEL_LIST rules (conformance/validator/rules/index_bitmap.py)
on datasets pylance 14 takes through appends and optimize_indices (delta and
merged segments), deletes, updates and compaction, with and without deferred
remap and stable row ids: no error or warning, in a default and a deep run;
what went unchecked is said as info. (The mutation tests show each error
rule reporting a broken segment.)
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from conformance.validator import Severity, validate
from conformance.validator.engine import INTERNAL_ERROR_RULE
from conformance.validator.facts import index_contents
from conformance.validator.facts.bitmap_contents import compare
from conformance.validator.facts.index_contents import CoveredRows
from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.dataset import Dataset
from reference_impl.file_format.writer import write_v2_0
from reference_impl.indices.bitmap import (
    BitmapSegment,
    RowIdentifiers,
    group_rows,
    read_bitmap_segment,
    write_bitmap_segment,
)
from reference_impl.indices.label_list import label_rows

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
    write_bitmap_segment(dataset.storage, f"_indices/{index.uuid}", pa.array(values, pa.string()), rows, version="2.2")
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 150)
    default = _index_findings(path, deep=False)[1]
    assert not [f for f in default if f.rule == "index-bitmap/rows-match-values"]
    deep = [f for f in _index_findings(path, deep=True)[1] if f.rule == "index-bitmap/rows-match-values"]
    assert deep and f"row {moved} ('v0') is in the set of key 'v1'" in deep[0].message, deep


# -- the comparison itself, without files ------------------------------------------------

_VALUES = st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=1, max_size=60)


def _covered(values: list, deleted: list[bool]) -> CoveredRows:
    addresses = np.arange(len(values), dtype=np.uint64) + np.uint64(3 << 32)
    return CoveredRows(
        fragment_ids=(3,),
        row_ids=addresses,
        row_addresses=addresses,
        values=pa.array(values, pa.int64()),
        deleted=np.array(deleted, dtype=bool),
        complete=True,
        gone_fragment_ids=(),
    )


def _segment(values: list, rows: np.ndarray) -> BitmapSegment:
    keys, sets = group_rows(pa.array(values, pa.int64()), rows)
    return BitmapSegment("lookup.lance", keys, tuple(sets), None, RowIdentifiers.ROW_ADDRESSES)


@settings(max_examples=60, deadline=None)
@given(_VALUES, st.data())
def test_a_segment_built_from_the_live_rows_matches_and_any_moved_row_is_named(values, data):
    """Property: a segment of exactly the rows not deleted (rows deleted
    before the build left out) draws no discrepancy; the same segment with
    one live row put under another value names that row."""
    deleted = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    covered = _covered(values, deleted)
    live = ~covered.deleted
    kept_values = [v for v, d in zip(values, deleted, strict=True) if not d]
    segment = _segment(kept_values, covered.row_addresses[live])
    assert compare(segment, covered, labels=False) == []
    if not kept_values:
        return
    moved = data.draw(st.integers(0, len(kept_values) - 1))
    other = data.draw(st.one_of(st.none(), st.integers(0, 5)).filter(lambda v: v != kept_values[moved]))
    changed = list(kept_values)
    changed[moved] = other
    found = compare(_segment(changed, covered.row_addresses[live]), covered, labels=False)
    assert {d.row for d in found} == {int(covered.row_addresses[live][moved])}


_LISTS = st.lists(
    st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=4)), min_size=1, max_size=40
)


@settings(max_examples=60, deadline=None)
@given(_LISTS, st.data())
def test_a_label_segment_built_from_the_lists_matches_and_a_dropped_label_is_named(lists, data):
    """Property: a label list segment built from the lists (labels, null
    items, null lists apart) draws no discrepancy; with one (row, label)
    entry taken out of its set, that row is named."""
    covered = _covered([0] * len(lists), [False] * len(lists))
    covered = dataclasses.replace(covered, values=pa.array(lists, pa.list_(pa.int64())))
    items, item_rows, nulls = label_rows(covered.values, covered.row_addresses)
    keys, sets = group_rows(items, item_rows)
    segment = BitmapSegment("lookup.lance", keys, tuple(sets), None, RowIdentifiers.ROW_ADDRESSES)
    assert compare(segment, covered, labels=True, list_nulls=nulls) == []
    entries = [(k, row) for k, rows in enumerate(sets) for row in rows.tolist()] + [(-1, row) for row in nulls.tolist()]
    if not entries:
        return
    slot, row = data.draw(st.sampled_from(entries))
    if slot < 0:
        found = compare(segment, covered, labels=True, list_nulls=nulls[nulls != row])
    else:
        fewer = list(sets)
        fewer[slot] = sets[slot][sets[slot] != row]
        segment = dataclasses.replace(segment, row_sets=tuple(fewer))
        found = compare(segment, covered, labels=True, list_nulls=nulls)
    assert [(d.row, d.missing) for d in found] == [(row, True)]


def test_a_bitmap_claiming_more_rows_than_its_bytes_hold_is_a_finding_not_a_crash(tmp_path):
    """A run container claims 65,536 rows in a few bytes: a lookup file whose
    bitmaps expand past what their bytes hold without runs (and past four
    per row of the table) is refused before it is expanded."""
    path = str(tmp_path / "ds")
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100)
    dataset = Dataset.open(path).create_index("c", index_type="BITMAP")
    (index,) = dataset.indices
    bomb = BitMap(range(1 << 26))
    bomb.run_optimize()
    raw = struct.pack("<III", 1, 0, len(bomb.serialize())) + bomb.serialize()
    table = pa.table({"keys": ["v1"], "bitmaps": pa.array([raw], pa.binary())})
    target = f"_indices/{index.uuid}/{index.files[0].path}"
    dataset.storage.path(target).unlink()
    dataset.storage.put_if_not_exists(target, write_v2_0(table, schema_from_arrow(table.schema).fields).chunks)
    findings = validate(path, all_versions=True).findings
    decodes = [f for f in findings if f.rule == "index-bitmap/file-decodes"]
    assert decodes and "holds more than" in decodes[0].message, findings
    assert not [f for f in findings if f.rule == INTERNAL_ERROR_RULE]


@pytest.mark.parametrize("stable", [False, True], ids=["row-addresses", "stable-row-ids"])
def test_reference_operations_after_reference_written_indices_draw_no_finding(tmp_path, stable):
    """The reference's own delete, update, compaction and append over the
    indices it wrote leave a dataset the rules find nothing in, which pylance
    answers through the indices as by a scan."""
    path = str(tmp_path / "ds")
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100, enable_stable_row_ids=stable)
    dataset = Dataset.open(path).create_index("c", index_type="BITMAP").create_index("tags", index_type="LABEL_LIST")
    dataset = dataset.delete(pc.field("id") < 150).update({"c": "zz"}, where=pc.field("id") == 160)
    dataset.compact(target_rows_per_fragment=1000).append(_rows(300, 10))
    assert not _check_clean(path)
    pylance = lance.dataset(path)
    for where in ("c = 'v1'", "c = 'zz'", "c IS NULL", "array_has_any(tags, ['t1'])"):
        indexed = pylance.to_table(filter=where, with_row_id=True).column("_rowid").to_pylist()
        scanned = pylance.to_table(filter=where, with_row_id=True, use_scalar_index=False).column("_rowid").to_pylist()
        assert sorted(indexed) == sorted(scanned), where
