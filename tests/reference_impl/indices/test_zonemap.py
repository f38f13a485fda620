"""The zone map and bloom filter readers against pylance 14's own index files,
and the reference's ZONEMAP writer against pylance 14's planner.

The zone statistics and bloom filter membership the reference computes must
agree with what pylance wrote for the same rows; a zone map the reference
writes must be read by pylance (its index statistics count its zones), be
planned through (explain_plan names it) and give the scan's answers.
"""

from __future__ import annotations

import dataclasses
import decimal
import struct

import numpy as np
import pyarrow as pa
import pytest

from reference_impl.dataset import Dataset
from reference_impl.indices.bloom_filter import (
    BloomFilterError,
    SplitBlockBloomFilter,
    read_bloom_filter,
    value_hashes,
)
from reference_impl.indices.files import IndexFileContents, IndexFormatError
from reference_impl.indices.types import IndexType, compatibility
from reference_impl.indices.xxhash64 import xxh64, xxh64_rows
from reference_impl.indices.zonemap import read_zone_map, write_zone_map, zone_map_of, zone_statistics
from reference_impl.indices.zones import read_null_rows

lance = pytest.importorskip("lance")
IndexConfig = lance.indices.IndexConfig

NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000001))[0]


def _zonemap(rows: int) -> IndexConfig:
    return IndexConfig(index_type="zonemap", parameters={"rows_per_zone": rows})


def _bloom(items: int) -> IndexConfig:
    return IndexConfig(index_type="bloomfilter", parameters={"number_of_items": items, "probability": 0.01})


def _segment(dataset: Dataset, name: str):
    (index,) = [index for index in dataset.indices if index.name == name]
    return index


def _rows_of_zone(table: pa.Table, column: str, fragment_id: int, start: int, length: int) -> pa.Array:
    addresses = table.column("_rowaddr").to_numpy()
    first = np.uint64(fragment_id << 32) + np.uint64(start)
    inside = (addresses >= first) & (addresses < first + np.uint64(length))
    return table.column(column).combine_chunks().filter(pa.array(inside))


# -- XXH64 -------------------------------------------------------------------------


def test_xxh64_gives_the_published_digests():
    # The xxHash project's reference digests (seed 0).
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"a") == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc") == 0x44BC2CF5AD770999


def test_hashing_rows_together_equals_hashing_each_row():
    rng = np.random.default_rng(7)
    for length in (0, 3, 4, 7, 8, 31, 32, 33, 64, 100):
        matrix = rng.integers(0, 256, (5, length), dtype=np.uint8)
        together = xxh64_rows(matrix)
        assert [int(h) for h in together] == [xxh64(bytes(row)) for row in matrix]
    assert len(set(xxh64(bytes([n])) for n in range(256))) == 256


# -- the bloom filter ------------------------------------------------------------------


def test_a_filter_holds_what_was_inserted_and_refuses_bad_sizes():
    hashes = xxh64_rows(np.arange(400, dtype="<u8").view(np.uint8).reshape(400, 8))
    empty = SplitBlockBloomFilter.empty(8)
    assert not empty.might_contain(hashes).any()
    filled = empty.with_inserted(hashes[:200])
    assert filled.might_contain(hashes[:200]).all()
    assert filled.might_contain(hashes[200:]).mean() < 0.5
    assert SplitBlockBloomFilter.from_bytes(filled.to_bytes()).might_contain(hashes[:200]).all()
    for size in (0, 31, 33):
        with pytest.raises(BloomFilterError):
            SplitBlockBloomFilter.from_bytes(bytes(size))
    with pytest.raises(BloomFilterError):
        value_hashes(pa.array([True, False]))


BLOOM_COLUMNS = {
    "i8": pa.array((np.arange(600) % 120 - 60).astype(np.int8)),
    "i32": pa.array(np.arange(600, dtype=np.int32) * -7),
    "u64": pa.array(np.arange(600, dtype=np.uint64) * 2**40),
    "f32": pa.array(np.arange(600, dtype=np.float32) / 3),
    "f64": pa.array([None if n % 9 == 0 else n / 7 for n in range(600)], pa.float64()),
    "s": pa.array([None if n % 5 == 0 else f"value {n}" for n in range(600)]),
    "long": pa.array([f"long string number {n} " * (1 + n % 4) for n in range(600)], pa.large_string()),
    "b": pa.array([bytes([n % 256, n // 256]) * (n % 3) for n in range(600)], pa.binary()),
    "d": pa.array(np.arange(600, dtype=np.int32), pa.date32()),
    "ts": pa.array(np.arange(600, dtype=np.int64) * 1_000_003, pa.timestamp("ns", tz="UTC")),
}


@pytest.fixture(scope="module")
def bloom_dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("bloom") / "ds"
    dataset = lance.write_dataset(pa.table(BLOOM_COLUMNS), path, max_rows_per_file=250)
    for column in BLOOM_COLUMNS:
        dataset.create_scalar_index(column, _bloom(64), name=f"{column}_bf")
    return path


@pytest.mark.parametrize("column", list(BLOOM_COLUMNS))
def test_every_value_is_in_its_zone_filter_as_pylance_built_it(bloom_dataset, column):
    table = lance.dataset(bloom_dataset).to_table(columns=[column], with_row_address=True)
    bloom = read_bloom_filter(Dataset.open(bloom_dataset), _segment(Dataset.open(bloom_dataset), f"{column}_bf"))
    assert bloom.number_of_items == 64 and bloom.probability == 0.01
    assert len(bloom.zones) == 10  # 250, 250 and 100 rows in zones of at most 64
    rng = np.random.default_rng(3)
    false_positives = 0
    for zone in range(len(bloom.zones)):
        values = _rows_of_zone(
            table,
            column,
            int(bloom.zones.fragment_ids[zone]),
            int(bloom.zones.starts[zone]),
            int(bloom.zones.lengths[zone]),
        )
        present = values.drop_null()
        assert bloom.filters[zone].might_contain(value_hashes(present)).all()
        assert bool(bloom.has_null[zone]) == (values.null_count > 0)
        false_positives += int(bloom.filters[zone].might_contain(rng.integers(0, 2**63, 1000, dtype=np.uint64)).sum())
    # Filters sized for 1% false positives, checked with random hashes: a
    # wrong hash would let them answer "absent" for stored values above; a
    # filter of all ones would answer "present" here.
    assert false_positives < 0.05 * 1000 * len(bloom.zones)


# -- zone map statistics -----------------------------------------------------------------


def test_zone_statistics_agree_with_pylance_on_nulls_nans_and_signed_zeros(tmp_path):
    floats = [
        np.nan,
        np.nan,
        np.nan,
        np.nan,
        1.0,
        -0.0,
        0.0,
        2.0,
        None,
        None,
        NEGATIVE_NAN,
        5.5,
        None,
        None,
        None,
        None,
    ]
    table = pa.table(
        {
            "i": pa.array([None] * 4 + [1, 2, 3, 4, 5, None, 7, 8, None, None, None, None], pa.int64()),
            "f": pa.array(floats, pa.float64()),
            "s": pa.array(["b", "a", None, "ab"] * 4),
        }
    )
    dataset = lance.write_dataset(table, tmp_path / "ds")
    for column in table.column_names:
        dataset.create_scalar_index(column, _zonemap(4), name=f"{column}_zm")
    reference = Dataset.open(tmp_path / "ds")
    with_addresses = lance.dataset(tmp_path / "ds").to_table(with_row_address=True)
    for column in table.column_names:
        zone_map = read_zone_map(reference, _segment(reference, f"{column}_zm"))
        assert zone_map.rows_per_zone == 4 and len(zone_map.zones) == 4
        for zone in range(4):
            values = _rows_of_zone(with_addresses, column, 0, 4 * zone, 4)
            expected = zone_statistics(values)
            assert zone_map.null_counts[zone] == expected.null_count
            assert zone_map.nan_counts[zone] == expected.nan_count
            stored_min = zone_map.minimums[zone].as_py()
            stored_max = zone_map.maximums[zone].as_py()
            assert repr(stored_min) == repr(expected.minimum), (column, zone)
            if expected.nan_count:
                # pylance 14 marks a zone with NaNs of either sign by +NaN.
                assert np.isnan(stored_max) and not np.signbit(stored_max)
            else:
                assert repr(stored_max) == repr(expected.maximum), (column, zone)
        null_rows = zone_map.null_rows
        assert null_rows is not None
        assert null_rows.tolist() == [n for n, v in enumerate(table.column(column).to_pylist()) if v is None]


def test_a_zone_map_file_not_as_the_page_says_is_refused():
    good = {
        "min": pa.array([1], pa.int64()),
        "max": pa.array([2], pa.int64()),
        "null_count": pa.array([0], pa.uint32()),
        "nan_count": pa.array([0], pa.uint32()),
        "fragment_id": pa.array([0], pa.uint64()),
        "zone_start": pa.array([0], pa.uint64()),
        "zone_length": pa.array([2], pa.uint64()),
    }

    def contents(columns, metadata=None, buffers=(b"descriptor",)):
        return IndexFileContents("zonemap.lance", pa.table(columns), metadata or {}, buffers)

    assert zone_map_of(contents(good)).rows_per_zone == 8192
    for broken, metadata, buffers in [
        ({**good, "null_count": pa.array([0], pa.int32())}, None, (b"",)),
        ({k: v for k, v in good.items() if k != "zone_start"}, None, (b"",)),
        ({**good, "max": pa.array(["2"])}, None, (b"",)),
        (good, {"rows_per_zone": b"0"}, (b"",)),
        (good, {"null_bitmap": b"1"}, (b"",)),
        (good, {"null_bitmap": b"1"}, (b"", b"\x01\x00")),
    ]:
        with pytest.raises(IndexFormatError):
            zone_map_of(contents(broken, metadata, buffers))
    assert read_null_rows(contents(good, {"null_bitmap": b"1"}, (b"", b"\x00\x00\x00\x00"))).tolist() == []


def test_the_reference_reads_zone_maps_and_bloom_filters_of_version_0(tmp_path):
    dataset = lance.write_dataset(pa.table({"x": range(10)}), tmp_path / "ds")
    dataset.create_scalar_index("x", "ZONEMAP")
    dataset.create_scalar_index("x", "BLOOMFILTER", name="x_bf")
    for index in Dataset.open(tmp_path / "ds").indices:
        checked = compatibility(index)
        assert checked.usable and checked.index_type in (IndexType.ZONEMAP, IndexType.BLOOM_FILTER)


# -- the reference's zone map writer ------------------------------------------------------


def _rows(count: int) -> pa.Table:
    floats = np.arange(count, dtype=np.float64) / 4
    floats[17] = np.nan
    return pa.table(
        {
            "i": pa.array([None if n % 7 == 0 else n for n in range(count)], pa.int64()),
            "f": pa.array(floats),
            "s": pa.array([None if n % 11 == 0 else f"s{n:06d}" for n in range(count)]),
        }
    )


def _typed_rows(count: int) -> pa.Table:
    return pa.table(
        {
            "d": pa.array([None if n % 11 == 0 else n * 3 for n in range(count)], pa.date32()),
            "ts": pa.array([None if n % 13 == 0 else n * 1000003 for n in range(count)], pa.timestamp("us", "UTC")),
            "b": pa.array([None if n % 7 == 0 else n % 3 == 0 for n in range(count)], pa.bool_()),
            "dec": pa.array([decimal.Decimal(n) / 4 for n in range(count)], pa.decimal128(10, 2)),
            "f32": pa.array(np.arange(count, dtype=np.float32) - 100.5),
            "ls": pa.array([f"x{(n * 37) % 101}" for n in range(count)], pa.large_string()),
            "bin": pa.array([bytes([n % 256]) * (n % 5) for n in range(count)], pa.binary()),
            "u8": pa.array(np.arange(count) % 256, pa.uint8()),
        }
    )


@pytest.mark.parametrize("rows", [_rows, _typed_rows], ids=["int-float-string", "other-types"])
def test_the_written_zone_map_is_the_one_pylance_writes(tmp_path, rows):
    """Same rows, same zone size: the reference's zonemap.lance holds the
    rows pylance 14's does (no negative NaNs, where the two conventions part)."""
    table = rows(1200)
    lance.write_dataset(table, tmp_path / "ds", max_rows_per_file=500)
    lance.dataset(tmp_path / "ds").delete("_rowid % 13 = 5")
    theirs = lance.dataset(tmp_path / "ds")
    for column in table.column_names:
        theirs.create_scalar_index(column, _zonemap(64), name=f"{column}_zm")
    reference = Dataset.open(tmp_path / "ds")
    for number, column in enumerate(table.column_names):
        index = _segment(reference, f"{column}_zm")
        pylance_map = read_zone_map(reference, index)
        ours = dataclasses.replace(index, uuid=f"00000000-0000-4000-8000-{number:012d}")
        written = write_zone_map(reference, ours, [column], rows_per_zone=64)
        our_map = read_zone_map(reference, written)
        for name in ("fragment_ids", "starts", "lengths"):
            assert np.array_equal(getattr(our_map.zones, name), getattr(pylance_map.zones, name)), (column, name)
        assert np.array_equal(our_map.null_counts, pylance_map.null_counts)
        assert np.array_equal(our_map.nan_counts, pylance_map.nan_counts)
        assert repr(our_map.minimums.to_pylist()) == repr(pylance_map.minimums.to_pylist())
        assert repr(our_map.maximums.to_pylist()) == repr(pylance_map.maximums.to_pylist())


QUERIES = [
    "i = 34",
    "i = 36",
    "i > 100 AND i < 250",
    "i >= 1190",
    "i IN (5, 9, 600, 1199)",
    "i IS NULL",
    "f = 10.25",
    "f < 3.0",
    "s = 's000100'",
    "s >= 's001150'",
    "s IN ('s000001', 's000777')",
]


def test_pylance_plans_queries_through_a_reference_zone_map_with_the_scans_answers(tmp_path):
    lance.write_dataset(_rows(1200), tmp_path / "ds", max_rows_per_file=500)
    lance.dataset(tmp_path / "ds").delete("i % 13 = 5")
    reference = Dataset.open(tmp_path / "ds")
    for column in ("i", "f", "s"):
        reference = reference.create_index(column, index_type="ZONEMAP")
    dataset = lance.dataset(tmp_path / "ds")
    assert dataset.stats.index_stats("i_idx")["segments"] == [{"num_zones": 3, "rows_per_zone": 8192}]
    for query in QUERIES:
        plan = dataset.scanner(filter=query).explain_plan()
        column = query.split()[0]
        assert f"@{column}_idx(ZoneMap)" in plan, (query, plan)
        through_index = dataset.to_table(filter=query).column("i").to_pylist()
        by_scan = dataset.to_table(filter=query, use_scalar_index=False).column("i").to_pylist()
        assert sorted(through_index, key=repr) == sorted(by_scan, key=repr), query
        assert by_scan, query
