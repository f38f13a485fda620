"""The BTREE reader and writer (reference_impl/indices/btree.py) against
pylance 14: the reader answers queries through pylance's segments with
pylance's rows, and pylance plans queries through the reference's segments
and answers them as its scan does."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reference_impl.dataset import Dataset
from reference_impl.errors import UnsupportedFeatureError
from reference_impl.file_format.reader import LanceFileReader
from reference_impl.fragment_reuse import (
    FRAGMENT_REUSE_INDEX_NAME,
    NO_ROW,
    address_moves,
    translate_row_addresses,
)
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.btree import (
    BATCH_SIZE_KEY,
    PAGES_PER_PARTITION_KEY,
    RANGE_PARTITIONED_KEY,
    decode_btree,
    encode_btree,
    read_btree,
)
from reference_impl.indices.files import IndexFileContents, IndexFormatError
from reference_impl.indices.types import Usability, compatibility
from reference_impl.operations.indices import create_index
from reference_impl.storage.memory import MemoryStorage

lance = pytest.importorskip("lance")

ROWS = 6000


def _table(start: int = 0, count: int = ROWS) -> pa.Table:
    ids = range(start, start + count)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": pa.array([None if i % 9 == 0 else (i * 7) % 300 for i in ids], pa.int32()),
            "s": pa.array([None if i % 13 == 0 else f"v{i % 211:03d}" for i in ids]),
            "f": pa.array([float("nan") if i % 11 == 0 else (i % 17) / 2 for i in ids]),
        }
    )


#: (column, filter, how the reader answers it)
QUERIES = [
    ("k", "k = 22", lambda s: s.search_equal(22)),
    ("k", "k >= 100 AND k < 140", lambda s: s.search_range(100, 140, high_inclusive=False)),
    ("k", "k IN (0, 7, 299)", lambda s: s.search_in([0, 7, 299])),
    ("k", "k IS NULL", lambda s: s.search_null()),
    ("s", "s = 'v017'", lambda s: s.search_equal("v017")),
    ("s", "s > 'v200'", lambda s: s.search_range("v200", None, low_inclusive=False)),
    ("s", "s IS NULL", lambda s: s.search_null()),
    ("f", "f = 3.5", lambda s: s.search_equal(3.5)),
    ("f", "f <= 1.0", lambda s: s.search_range(None, 1.0)),
]


def _addresses(dataset, where: str, *, use_index: bool) -> list[int]:
    table = dataset.to_table(filter=where, with_row_address=True, use_scalar_index=use_index)
    return sorted(table.column("_rowaddr").to_pylist())


@pytest.fixture(scope="module")
def pylance_indexed(tmp_path_factory):
    path = tmp_path_factory.mktemp("btree") / "pylance"
    dataset = lance.write_dataset(_table(), path, max_rows_per_file=2500)
    for column in ("k", "s", "f"):
        dataset.create_scalar_index(column, "BTREE")
    return path


def _segment(path, column):
    dataset = Dataset.open(path)
    (index,) = [i for i in dataset.indices if i.name == f"{column}_idx"]
    return read_btree(dataset, index)


@pytest.mark.requirements("index.btree-files-schema", "index.btree-page-layout", "index.btree-keys-sorted")
def test_the_reader_decodes_pylance_pages(pylance_indexed):
    segment = _segment(pylance_indexed, "k")
    assert len(segment.ids) == ROWS and segment.batch_size == 4096
    assert [bounds.page_idx for bounds in segment.lookup] == list(range(segment.page_count))
    # every row once, under its own value
    table = _table()
    assert sorted(segment.ids.tolist()) == sorted(
        (fragment << 32) | offset for fragment in range(3) for offset in range(min(2500, ROWS - fragment * 2500))
    )
    by_address = {int(a): v for a, v in zip(segment.ids, segment.values.to_pylist(), strict=True)}
    first = table.column("k").to_pylist()
    assert all(by_address[(i // 2500) << 32 | i % 2500] == first[i] for i in range(0, ROWS, 97))
    # nulls first and the page bounds as pylance writes them
    assert segment.values.null_count == segment.lookup[0].null_count
    assert segment.lookup[0].min is None


@pytest.mark.parametrize("column, where, answer", QUERIES, ids=[q[1] for q in QUERIES])
def test_the_reader_answers_as_pylance_through_its_index(pylance_indexed, column, where, answer):
    ours = sorted(int(i) for i in answer(_segment(pylance_indexed, column)))
    assert ours == _addresses(lance.dataset(pylance_indexed), where, use_index=True)


@pytest.fixture(scope="module", params=[False, True], ids=["row-addresses", "stable-row-ids"])
def reference_indexed(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("btree") / "reference"
    lance.write_dataset(_table(), path, max_rows_per_file=2500, enable_stable_row_ids=request.param)
    lance.dataset(path).delete("id % 10 = 3")
    dataset = Dataset.open(path)
    for column in ("k", "s", "f"):
        dataset = create_index(dataset, column, index_type="BTREE")
    return path


@pytest.mark.requirements("index.btree-page-bounds", "index.btree-rows-present", "index.btree-entries-valid")
@pytest.mark.parametrize("column, where, answer", QUERIES, ids=[q[1] for q in QUERIES])
def test_pylance_plans_through_the_reference_index_with_the_scan_answer(reference_indexed, column, where, answer):
    dataset = lance.dataset(reference_indexed)
    assert f"@{column}_idx(BTree)" in dataset.scanner(filter=where).explain_plan()
    through_index = _addresses(dataset, where, use_index=True)
    assert through_index == _addresses(dataset, where, use_index=False)
    assert through_index  # every query matches some rows


def test_the_reference_index_is_listed_with_its_files(reference_indexed):
    dataset = Dataset.open(reference_indexed)
    for index in dataset.indices:
        assert sorted(f.path for f in index.files) == ["page_data.lance", "page_lookup.lance"]
        assert index.index_version == (1 if dataset.uses_stable_row_ids else 0)
    described = {d.name: d for d in lance.dataset(reference_indexed).describe_indices()}
    assert described["k_idx"].num_rows_indexed == ROWS - ROWS // 10


def _contents(table: pa.Table, metadata=None, path="file.lance") -> IndexFileContents:
    return IndexFileContents(path, table, dict(metadata or {}), ())


def _decoded(values: pa.Array, ids, batch_size: int = 3):
    """Encode with the reference writer and read the files back."""
    lookup_bytes, data_bytes = encode_btree(values, np.asarray(ids, dtype=np.uint64), batch_size, version="2.2")
    storage = MemoryStorage({"lookup": lookup_bytes, "data": data_bytes}, "test")
    files = []
    for name in ("lookup", "data"):
        reader = LanceFileReader(storage, name)
        metadata = dict(reader.metadata.descriptor.schema.metadata)
        files.append(_contents(reader.read(), metadata, name))
    return decode_btree(files[0], files[1], index_version=1)


def test_the_writer_sorts_nulls_first_and_nan_last_with_first_and_last_as_bounds():
    values = pa.array([2.0, None, float("nan"), -1.0, 2.0, None, 7.5])
    segment = _decoded(values, [10, 11, 12, 13, 14, 15, 16])
    assert segment.values.to_pylist()[:2] == [None, None]
    assert np.isnan(segment.values.to_pylist()[-1])
    assert segment.values.to_pylist()[2:6] == [-1.0, 2.0, 2.0, 7.5]
    assert segment.ids.tolist() == [11, 15, 13, 10, 14, 16, 12]
    # pages of 3: [None, None, -1.0], [2.0, 2.0, 7.5], [NaN]
    assert [(b.page_idx, b.min, b.max, b.null_count) for b in segment.lookup[:2]] == [
        (0, None, -1.0, 2),
        (1, 2.0, 7.5, 0),
    ]
    assert np.isnan(segment.lookup[2].min) and np.isnan(segment.lookup[2].max)
    assert segment.search_equal(2.0).tolist() == [10, 14]
    assert segment.search_range(0.0, None).tolist() == [10, 14, 16]
    assert segment.search_null().tolist() == [11, 15]


def _lookup(batch_size=b"4096", partitioned=b"false", page_type=None):
    table = pa.table(
        {
            "min": pa.array([1], pa.int64()),
            "max": pa.array([2], pa.int64()),
            "null_count": pa.array([0], pa.uint32()),
            "page_idx": pa.array([0], page_type or pa.uint32()),
        }
    )
    return _contents(table, {BATCH_SIZE_KEY: batch_size, RANGE_PARTITIONED_KEY: partitioned}, "page_lookup.lance")


DATA = _contents(pa.table({"values": pa.array([1, 2], pa.int64()), "ids": pa.array([0, 1], pa.uint64())}))


@pytest.mark.parametrize(
    "lookup, problem",
    [
        (_lookup(batch_size=b"40x6"), "batch_size"),
        (_lookup(batch_size=b"0"), "batch_size"),
        (_lookup(batch_size=b"\xff"), "UTF-8"),
        (_lookup(partitioned=b"maybe"), "range_partitioned"),
        (_lookup(page_type=pa.int64()), "page_idx"),
    ],
)
def test_files_that_do_not_hold_what_the_page_says_are_refused(lookup, problem):
    with pytest.raises(IndexFormatError, match=problem):
        decode_btree(lookup, DATA, index_version=1)


def test_a_range_partitioned_segment_is_skipped_as_unsupported():
    lookup = _lookup(partitioned=b"true")
    with pytest.raises(IndexFormatError, match=PAGES_PER_PARTITION_KEY):
        decode_btree(lookup, DATA, index_version=1)  # pylance 14 panics on it
    lookup = _contents(lookup.table, {**lookup.metadata, PAGES_PER_PARTITION_KEY: b"[[0,1]]"})
    with pytest.raises(UnsupportedFeatureError, match="range-partitioned"):
        decode_btree(lookup, DATA, index_version=1)


def test_ids_are_row_ids_before_version_1():
    assert not decode_btree(_lookup(), DATA, index_version=0).ids_are_addresses
    assert decode_btree(_lookup(), DATA, index_version=1).ids_are_addresses


@pytest.mark.parametrize(
    "version, usability", [(0, Usability.USABLE), (1, Usability.USABLE), (2, Usability.UNKNOWN_VERSION)]
)
def test_a_newer_btree_version_is_skipped(version, usability):
    index = IndexMetadata("u", "k_idx", [0], 1, type_url="/lance.table.BTreeIndexDetails", index_version=version)
    assert compatibility(index).usability is usability


def test_keys_without_an_order_are_refused():
    data = _contents(
        pa.table({"values": pa.array([{"a": 1}], pa.struct([("a", pa.int64())])), "ids": pa.array([0], pa.uint64())})
    )
    with pytest.raises(IndexFormatError, match="no order"):
        decode_btree(_lookup(), data, index_version=1)


def test_a_segment_over_no_fragment_gets_no_files(tmp_path):
    dataset = Dataset.create(tmp_path / "ds", _table(0, 10).slice(0, 0))
    (index,) = create_index(dataset, "k", index_type="BTREE").indices
    assert index.files == []


def test_entries_translated_through_a_fragment_reuse_index_name_their_rows(tmp_path):
    """frag_reuse.md, "Ordered Compaction": after a compaction that defers
    the remap, each surviving entry's translated address holds its key in
    pylance's own scan; entries of rows deleted before it translate to none."""
    path = tmp_path / "ds"
    lance.write_dataset(_table(0, 3000), path, max_rows_per_file=1000).create_scalar_index("k", "BTREE")
    lance.dataset(path).delete("id % 4 = 1")
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=5000, defer_index_remap=True)
    dataset = Dataset.open(path)
    (reuse,) = [i for i in dataset.indices if i.name == FRAGMENT_REUSE_INDEX_NAME]
    segment = _segment(path, "k")
    translated = translate_row_addresses(segment.ids, address_moves(reuse, dataset.storage.read))
    scanned = lance.dataset(path).to_table(columns=["k"], with_row_address=True)
    value_at = dict(zip(scanned.column("_rowaddr").to_pylist(), scanned.column("k").to_pylist(), strict=True))
    kept = translated != NO_ROW
    assert int((~kept).sum()) == 750  # the rows deleted before the compaction
    keys = segment.values.to_pylist()
    assert all(value_at[int(a)] == keys[i] for i, a in zip(np.flatnonzero(kept), translated[kept], strict=True))
    assert len(set(translated[kept].tolist())) == len(value_at) == 2250
