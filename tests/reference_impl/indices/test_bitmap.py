"""BITMAP and LABEL_LIST segments (upstream format/index/scalar/bitmap.md and
label_list.md): the reference reads what pylance 14 writes and agrees with
pylance's answers through those indices; the stored row address maps are
byte for byte pylance's; segments the reference writes are planned through
by pylance 14 and answer as a scan does.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.dataset import Dataset
from reference_impl.indices import bitmap, label_list
from reference_impl.indices.bitmap import RowIdentifiers, read_bitmap_segment
from reference_impl.indices.files import IndexFileContents, IndexFormatError, read_index_file
from reference_impl.indices.label_list import read_label_list_segment
from reference_impl.indices.row_addr_map import (
    RowAddrMapError,
    decode_row_addr_map,
    encode_roaring32,
    encode_row_addr_map,
)
from reference_impl.indices.types import IndexType, compatibility
from reference_impl.operations.indices import IndexOperationError

lance = pytest.importorskip("lance")


def _rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "c": [None if i % 7 == 0 else f"v{i % 5}" for i in ids],
            "n": pa.array([None if i % 11 == 0 else i % 6 for i in ids], pa.int32()),
            "tags": pa.array(
                [None if i % 9 == 0 else [f"t{i % 3}", f"t{i % 4}", None if i % 13 == 0 else "t0"] for i in ids],
                pa.list_(pa.string()),
            ),
        }
    )


def _pylance_indexed(path, *, stable: bool = False) -> None:
    """Three fragments, deletes before the indices are built, then BITMAP
    indices on ``c`` and ``n`` and a LABEL_LIST index on ``tags``."""
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100, enable_stable_row_ids=stable)
    dataset = lance.dataset(path)
    dataset.delete("id % 10 = 3")
    if stable:  # rows then move, so that a stable row id is not the row address
        dataset.optimize.compact_files(target_rows_per_fragment=150)
    dataset = lance.dataset(path)
    dataset.create_scalar_index("c", "BITMAP")
    dataset.create_scalar_index("n", "BITMAP")
    dataset.create_scalar_index("tags", "LABEL_LIST")


def _index(dataset: Dataset, name: str):
    (index,) = [index for index in dataset.indices if index.name == name]
    return index


def _answer(path, where: str, *, use_index: bool = True) -> set[int]:
    table = lance.dataset(path).to_table(filter=where, with_row_id=True, use_scalar_index=use_index)
    return set(table.column("_rowid").to_pylist())


def _literal(value) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


# -- row address maps --------------------------------------------------------------


@pytest.mark.parametrize(
    "addresses",
    [
        [],
        list(range(5000)),  # a whole fragment, past an array container's 4,096 values
        [0, 7, 1 << 32, (1 << 32) + 65_536, (5 << 32) + 3, (5 << 32) + 70_000],  # several fragments and containers
    ],
    ids=["empty", "whole-fragment", "many-fragments"],
)
def test_a_map_round_trips_and_is_read_back_by_pyroaring(addresses):
    raw = encode_row_addr_map(addresses)
    assert decode_row_addr_map(raw).tolist() == sorted(addresses)


@settings(max_examples=50, deadline=None)
@given(st.sets(st.integers(0, (3 << 32) | 0x2FFFF), max_size=300))
def test_encoding_then_decoding_gives_the_set_back(addresses):
    """Property: decode(encode(s)) is s, ascending."""
    assert decode_row_addr_map(encode_row_addr_map(addresses)).tolist() == sorted(addresses)


@pytest.mark.parametrize(
    "raw, problem",
    [
        (b"\x01\x00", "cannot hold the fragment count"),
        (struct.pack("<I", 2), "starts past the end"),
        (struct.pack("<III", 1, 0, 99), "runs past the end"),
        (encode_row_addr_map([1 << 32]) + b"\x00", "follow the last fragment"),
        (struct.pack("<III", 1, 0, 4) + b"\xff\xff\xff\xff", "does not decode"),
    ],
)
def test_a_broken_map_is_refused_with_its_problem(raw, problem):
    with pytest.raises(RowAddrMapError, match=problem):
        decode_row_addr_map(raw)


def test_fragments_out_of_order_are_refused():
    one, two = encode_row_addr_map([5 << 32])[4:], encode_row_addr_map([2 << 32])[4:]
    with pytest.raises(RowAddrMapError, match="not ascending"):
        decode_row_addr_map(struct.pack("<I", 2) + one + two)


def test_a_map_claiming_more_rows_than_allowed_is_refused_before_it_is_expanded():
    with pytest.raises(RowAddrMapError, match="more than 100"):
        decode_row_addr_map(encode_row_addr_map(range(200)), max_rows=100)


def test_roaring_containers_are_those_pylance_writes():
    """Array containers up to 4,096 values, bitmap containers above; no run
    containers, whatever the values' runs."""
    small, large = (
        encode_roaring32(np.arange(4096, dtype=np.uint32)),
        encode_roaring32(np.arange(4097, dtype=np.uint32)),
    )
    assert struct.unpack_from("<I", small)[0] == struct.unpack_from("<I", large)[0] == 12346
    assert len(small) == 16 + 2 * 4096 and len(large) == 16 + 8192


def test_the_maps_pylance_writes_are_what_the_reference_writes(tmp_path):
    """Every bitmap and list-null set pylance 14 stores, re-encoded from its
    decoded rows, is the same bytes: a fragment all of whose rows hold the
    value (a bitmap container of 5,000 rows), many fragments, an empty set."""
    path = str(tmp_path / "ds")
    table = pa.table(
        {
            "c": ["all"] * 5000 + [f"k{i % 3}" for i in range(300)],
            "tags": pa.array([["x"]] * 5300, pa.list_(pa.string())),
        }
    )
    lance.write_dataset(table, path, max_rows_per_file=5000)
    lance.write_dataset(pa.table({"c": ["k1"] * 50, "tags": table.column("tags").slice(0, 50)}), path, mode="append")
    dataset = lance.dataset(path)
    dataset.create_scalar_index("c", "BITMAP")
    dataset.create_scalar_index("tags", "LABEL_LIST")
    reference = Dataset.open(path)
    stored = []
    for index in reference.indices:
        contents = read_index_file(reference, index, bitmap.BITMAP_FILE)
        stored += contents.column(bitmap.BITMAPS_COLUMN).to_pylist() + list(contents.global_buffers[1:])
    assert encode_row_addr_map([]) in stored  # the list-null set of a column without null lists
    assert any(len(decode_row_addr_map(raw)) == 5000 for raw in stored)
    assert any(struct.unpack_from("<I", raw)[0] > 1 for raw in stored)
    for raw in stored:
        assert encode_row_addr_map(decode_row_addr_map(raw)) == raw


# -- reading what pylance writes ----------------------------------------------------


@pytest.mark.parametrize("stable", [False, True], ids=["row-addresses", "stable-row-ids"])
def test_the_reader_agrees_with_pylance_answers_through_the_index(tmp_path, stable):
    path = str(tmp_path / "ds")
    _pylance_indexed(path, stable=stable)
    dataset = Dataset.open(path)
    for name in ("c_idx", "n_idx"):
        index = _index(dataset, name)
        assert compatibility(index).usable and IndexType.of(index) is IndexType.BITMAP
        segment = read_bitmap_segment(dataset, index)
        assert segment.identifiers is RowIdentifiers.ROW_IDS  # pylance 14 writes version 0
        assert segment.stats == {"num_bitmaps": len(segment.keys)}
        column = name.removesuffix("_idx")
        for key, rows in segment.lookup().items():
            assert set(rows.tolist()) == _answer(path, f"{column} = {_literal(key)}"), (name, key)
        assert set(segment.null_rows.tolist()) == _answer(path, f"{column} IS NULL")
    labels = read_label_list_segment(dataset, _index(dataset, "tags_idx"))
    assert labels.labels.identifiers is RowIdentifiers.ROW_IDS  # pylance 14 writes version 1
    for key, rows in labels.labels.lookup().items():
        assert set(rows.tolist()) == _answer(path, f"array_has_any(tags, ['{key}'])"), key
    # Rows whose list is null sit apart; a null item puts its row under the null key.
    assert set(labels.list_nulls.tolist()) == _answer(path, "tags IS NULL", use_index=False)
    assert len(labels.labels.null_rows) > 0


def test_stable_row_ids_are_stored_not_addresses(tmp_path):
    """Segments before bitmap.md's version 1 store row ids: after a
    compaction with stable row ids, those differ from the row addresses."""
    path = str(tmp_path / "ds")
    _pylance_indexed(path, stable=True)
    dataset = Dataset.open(path)
    stored = np.concatenate(read_bitmap_segment(dataset, _index(dataset, "c_idx")).row_sets)
    assert stored.max() < dataset.manifest.next_row_id
    assert not np.any(stored >> np.uint64(32))  # the compacted fragment's id is not in them


def _contents(table: pa.Table, metadata: dict, buffers=()) -> IndexFileContents:
    return IndexFileContents("lookup.lance", table, metadata, (b"descriptor", *buffers))


def test_a_broken_lookup_file_gives_an_index_format_error():
    good = encode_row_addr_map([1])
    with pytest.raises(IndexFormatError, match="no column 'bitmaps'"):
        bitmap.decode_bitmap_file(_contents(pa.table({"keys": ["a"]}), {}), RowIdentifiers.ROW_IDS)
    with pytest.raises(IndexFormatError, match="not binary"):
        bitmap.decode_bitmap_file(_contents(pa.table({"keys": ["a"], "bitmaps": [1]}), {}), RowIdentifiers.ROW_IDS)
    broken = pa.table({"keys": ["a"], "bitmaps": pa.array([good[:-1]], pa.binary())})
    with pytest.raises(IndexFormatError, match="key 'a'"):
        bitmap.decode_bitmap_file(_contents(broken, {}), RowIdentifiers.ROW_IDS)
    table = pa.table({"keys": ["a"], "bitmaps": pa.array([good], pa.binary())})
    with pytest.raises(IndexFormatError, match="not JSON"):
        bitmap.decode_bitmap_file(_contents(table, {bitmap.INDEX_STATS_KEY: b"{"}), RowIdentifiers.ROW_IDS)
    for value in (b"0", b"2", b"x"):
        with pytest.raises(IndexFormatError, match="global buffers"):
            label_list.decode_label_list_file(_contents(table, {label_list.LIST_NULLS_KEY: value}, (good,)), 1)
    with pytest.raises(IndexFormatError, match="list-null set"):
        label_list.decode_label_list_file(_contents(table, {label_list.LIST_NULLS_KEY: b"1"}, (b"\x01",)), 1)


def test_a_segment_naming_too_many_rows_is_refused():
    table = pa.table({"keys": ["a", "b"], "bitmaps": pa.array([encode_row_addr_map(range(60))] * 2, pa.binary())})
    with pytest.raises(IndexFormatError, match=r"key 'b'\): holds more than 40"):
        bitmap.decode_bitmap_file(_contents(table, {}), RowIdentifiers.ROW_IDS, max_rows=100)


def test_a_version_the_pages_do_not_define_is_skipped(tmp_path):
    path = str(tmp_path / "ds")
    _pylance_indexed(path)
    index = _index(Dataset.open(path), "c_idx")
    index.index_version = bitmap.NEWEST_VERSION + 1
    assert not compatibility(index).usable


# -- writing ------------------------------------------------------------------------

QUERIES = {
    "c_idx": ["c = 'v1'", "c IS NULL", "c IN ('v1', 'v3')", "c > 'v2'"],
    "n_idx": ["n = 2", "n IS NULL", "n IN (1, 5)", "n BETWEEN 1 AND 3"],
    "tags_idx": ["array_has_any(tags, ['t1'])", "array_has_all(tags, ['t1', 't2'])", "array_contains(tags, 't0')"],
}


@pytest.mark.parametrize("stable", [False, True], ids=["row-addresses", "stable-row-ids"])
def test_pylance_plans_through_reference_written_indices_with_the_scan_answers(tmp_path, stable):
    path = str(tmp_path / "ds")
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100, enable_stable_row_ids=stable)
    lance.dataset(path).delete("id % 10 = 3")
    if stable:
        lance.dataset(path).optimize.compact_files(target_rows_per_fragment=150)
    lance.write_dataset(_rows(300, 40), path, mode="append")
    dataset = Dataset.open(path)
    dataset = dataset.create_index("c", index_type="BITMAP")
    dataset = dataset.create_index("n", index_type="bitmap")
    dataset = dataset.create_index("tags", index_type="LABEL_LIST")
    written = {index.name: index for index in dataset.indices}
    assert written["c_idx"].index_version == bitmap.WRITTEN_VERSION
    assert written["tags_idx"].index_version == label_list.WRITTEN_VERSION
    for index in written.values():
        (listed,) = index.files
        assert listed.size_bytes == dataset.storage.size(f"_indices/{index.uuid}/{listed.path}")
    pylance = lance.dataset(path)
    assert {index.name for index in pylance.describe_indices()} == set(QUERIES)
    for name, queries in QUERIES.items():
        for where in queries:
            plan = pylance.scanner(filter=where).explain_plan()
            assert f"@{name}" in plan, (where, plan)
            assert _answer(path, where) == _answer(path, where, use_index=False), where
            assert _answer(path, where), where  # the queries select rows


def test_what_the_reference_writes_reads_back_as_pylance_would_build_it(tmp_path):
    """The reference's segment holds, per key, the rows pylance's own segment
    over the same data holds (the files themselves differ: pylance writes
    file version 2.2, the reference 2.0)."""
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for path in (ours, theirs):
        lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100)
        lance.dataset(path).delete("id % 10 = 3")
    Dataset.open(ours).create_index("c", index_type="BITMAP").create_index("tags", index_type="LABEL_LIST")
    lance.dataset(theirs).create_scalar_index("c", "BITMAP")
    lance.dataset(theirs).create_scalar_index("tags", "LABEL_LIST")
    mine, pylances = Dataset.open(ours), Dataset.open(theirs)
    a, b = read_bitmap_segment(mine, _index(mine, "c_idx")), read_bitmap_segment(pylances, _index(pylances, "c_idx"))
    assert a.keys == b.keys and [s.tolist() for s in a.row_sets] == [s.tolist() for s in b.row_sets]
    assert a.stats == b.stats
    x = read_label_list_segment(mine, _index(mine, "tags_idx"))
    y = read_label_list_segment(pylances, _index(pylances, "tags_idx"))
    assert x.labels.keys == y.labels.keys
    assert [s.tolist() for s in x.labels.row_sets] == [s.tolist() for s in y.labels.row_sets]
    assert x.list_nulls.tolist() == y.list_nulls.tolist()


def test_a_bitmap_index_is_over_one_column(tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(_rows(0, 10), path)
    with pytest.raises(ValueError, match="over one column"):
        Dataset.open(path).create_index(["c", "n"], index_type="BITMAP")


@pytest.mark.parametrize(
    "column, index_type", [("tags", "BITMAP"), ("c", "LABEL_LIST"), ("point", "BITMAP")], ids=["list", "str", "struct"]
)
def test_a_column_the_type_cannot_index_is_refused_before_anything_is_written(tmp_path, column, index_type):
    path = str(tmp_path / "ds")
    table = _rows(0, 10).append_column("point", pa.array([{"x": i} for i in range(10)]))
    lance.write_dataset(table, path)
    with pytest.raises(IndexOperationError, match="cannot index values of type"):
        Dataset.open(path).create_index(column, index_type=index_type)
    assert not (tmp_path / "ds" / "_indices").exists()
    assert Dataset.open(path).indices == []
