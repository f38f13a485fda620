"""Deletion files (table format: deletion files), against the rows pylance
reads, in both directions, and on hostile bytes."""

from __future__ import annotations

import json
import os
import time

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from conformance import strategies
from conformance.mutations.edit import arrow_ipc_file
from reference_impl.deletions import (
    BITMAP_COUNT_THRESHOLD,
    DEFAULT_MAX_OFFSETS,
    DeletionStatus,
    arrow_deletion_schema,
    choose_deletion_file_type,
    decode_arrow_deletions,
    decode_bitmap_deletions,
    encode_arrow_deletions,
    encode_bitmap_deletions,
    inspect_deletion_bytes,
    inspect_deletion_file,
    read_deletion_file,
    write_deletion_file,
)
from reference_impl.errors import CommitConflictError, CorruptFileError, LanceFormatError, UnsupportedFeatureError
from reference_impl.fragments import DeletionFile, DeletionFileType
from reference_impl.manifest import BasePath
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import resolve_version
from reference_impl.storage import LocalStorage, Storage
from tests.hypothesis_budget import examples

lance = pytest.importorskip("lance")
from lance.fragment import FragmentMetadata  # noqa: E402


def _table(start: int, count: int) -> pa.Table:
    return pa.table({"a": pa.array(range(start, start + count), pa.int64())})


@pytest.fixture(scope="module")
def deleted_dataset(tmp_path_factory):
    """Fragment 0: 10,000 rows, half deleted (pylance writes a bitmap).
    Fragment 1: 100 rows, a sparse few deleted (an Arrow file)."""
    path = tmp_path_factory.mktemp("deletions") / "ds"
    lance.write_dataset(_table(0, 10_000), path, max_rows_per_file=10_000)
    ds = lance.write_dataset(_table(10_000, 100), path, mode="append")
    ds.delete("a < 10000 and a % 2 = 1")
    ds.delete("a >= 10000 and a % 9 = 4")
    return path


def _latest_fragments(path):
    storage = LocalStorage(path)
    _, relpath, _ = resolve_version(storage, None)
    return storage, read_manifest_file(storage, relpath).manifest.fragments


def _pylance_deleted_offsets(path, version=None) -> dict[int, list[int]]:
    """fragment id -> offsets pylance no longer returns."""
    ds = lance.dataset(path, version=version)
    visible: dict[int, set[int]] = {f.fragment_id: set() for f in ds.get_fragments()}
    for address in ds.to_table(columns=[], with_row_address=True)["_rowaddr"].to_pylist():
        visible[address >> 32].add(address & 0xFFFFFFFF)
    return {
        f.fragment_id: sorted(set(range(f.metadata.physical_rows)) - visible[f.fragment_id]) for f in ds.get_fragments()
    }


def test_pylance_writes_both_kinds(deleted_dataset):
    _, fragments = _latest_fragments(deleted_dataset)
    kinds = {f.id: f.deletion_file.file_type for f in fragments}
    assert kinds == {0: DeletionFileType.BITMAP, 1: DeletionFileType.ARROW_ARRAY}
    names = sorted(os.listdir(deleted_dataset / "_deletions"))
    assert [n.rsplit(".", 1)[1] for n in names] == ["bin", "arrow"]


def test_offsets_match_the_rows_pylance_hides(deleted_dataset):
    storage, fragments = _latest_fragments(deleted_dataset)
    expected = _pylance_deleted_offsets(deleted_dataset)
    for fragment in fragments:
        offsets = read_deletion_file(storage, fragment.id, fragment.deletion_file, physical_rows=fragment.physical_rows)
        assert offsets == expected[fragment.id]
        assert len(offsets) == fragment.deletion_file.num_deleted_rows
    assert len(expected[0]) == 5000 and len(expected[1]) == 11


def test_pylance_arrow_files_are_unsorted_uint32(deleted_dataset):
    """What the reader must cope with: pylance's column is uint32, in no
    particular order."""
    storage, fragments = _latest_fragments(deleted_dataset)
    fragment = next(f for f in fragments if f.deletion_file.file_type is DeletionFileType.ARROW_ARRAY)
    data = storage.read(fragment.deletion_file.path(fragment.id))
    reader = ipc.open_file(pa.BufferReader(data))
    assert reader.schema == arrow_deletion_schema()
    raw = reader.get_batch(0).column(0).to_pylist()
    assert sorted(raw) == decode_arrow_deletions(data, "x")


def _commit_deletion(path, deletion_file: DeletionFile, count: int):
    """Attach our deletion file to fragment 0 through pylance's own commit."""
    ds = lance.dataset(path)
    meta = ds.get_fragments()[0].metadata.to_json()
    meta["deletion_file"] = {
        "read_version": deletion_file.read_version,
        "id": deletion_file.id,
        "file_type": "array" if deletion_file.file_type is DeletionFileType.ARROW_ARRAY else "bitmap",
        "num_deleted_rows": count,
        "base_id": None,
    }
    operation = lance.LanceOperation.Delete([FragmentMetadata.from_json(json.dumps(meta))], [], "a < 0")
    return lance.LanceDataset.commit(path, operation, read_version=ds.version)


@pytest.mark.parametrize(
    ("file_type", "offsets", "expected_type"),
    [
        (DeletionFileType.ARROW_ARRAY, [0, 3, 99, 50], DeletionFileType.ARROW_ARRAY),
        (DeletionFileType.BITMAP, [0, 3, 99, 50], DeletionFileType.BITMAP),
        (None, [1, 17, 64], DeletionFileType.ARROW_ARRAY),
        (None, list(range(10, 80)), DeletionFileType.BITMAP),
    ],
)
def test_pylance_reads_our_deletion_files(tmp_path, file_type, offsets, expected_type):
    path = tmp_path / "ds"
    lance.write_dataset(_table(0, 100), path)
    written = write_deletion_file(LocalStorage(path), 0, 1, offsets, file_type=file_type)
    assert written.file_type is expected_type
    assert written.num_deleted_rows == len(offsets)
    assert (path / written.path(0)).is_file()
    _commit_deletion(path, written, len(offsets))
    assert _pylance_deleted_offsets(path) == {0: sorted(offsets)}
    # and our reader agrees with what it wrote
    assert read_deletion_file(LocalStorage(path), 0, written) == sorted(offsets)


def test_pylance_refuses_the_seeds_int32_column(tmp_path):
    """Why the writer departs from table.proto: an Int32 column (as table.proto
    describes) makes pylance 14 report a corrupt file; our reader takes it."""
    path = tmp_path / "ds"
    lance.write_dataset(_table(0, 100), path)
    storage = LocalStorage(path)
    written = write_deletion_file(storage, 0, 1, [2, 4], file_type=DeletionFileType.ARROW_ARRAY)
    schema = pa.schema([pa.field("row_id", pa.int32(), nullable=False)])
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, schema) as writer:
        writer.write_batch(pa.record_batch([pa.array([2, 4], pa.int32())], schema=schema))
    (path / written.path(0)).write_bytes(sink.getvalue().to_pybytes())
    assert read_deletion_file(storage, 0, written) == [2, 4]
    _commit_deletion(path, written, 2)
    with pytest.raises(Exception, match="(?i)corrupt"):
        lance.dataset(path).to_table()


def test_writer_never_replaces_a_file(tmp_path):
    storage = LocalStorage(tmp_path)
    first = write_deletion_file(storage, 3, 7, [1, 2, 3])
    assert first.path(3) == f"_deletions/3-7-{first.id}.bin"
    assert 0 <= first.id < 2**64
    with pytest.raises(CommitConflictError):
        storage.put_if_not_exists(first.path(3), b"other")
    second = write_deletion_file(storage, 3, 7, [1, 2, 3])
    assert second.id != first.id
    with pytest.raises(ValueError):
        write_deletion_file(storage, 3, 7, [])


def test_choice_of_kind():
    assert choose_deletion_file_type([5]) is DeletionFileType.ARROW_ARRAY
    assert choose_deletion_file_type([0]) is DeletionFileType.BITMAP
    assert choose_deletion_file_type(range(0, 1000, 3)) is DeletionFileType.ARROW_ARRAY
    assert choose_deletion_file_type(range(0, 1000, 2)) is DeletionFileType.BITMAP
    many_sparse = range(0, 100 * (BITMAP_COUNT_THRESHOLD + 1), 100)
    assert choose_deletion_file_type(many_sparse) is DeletionFileType.BITMAP
    assert choose_deletion_file_type(range(0, 100 * BITMAP_COUNT_THRESHOLD, 100)) is DeletionFileType.ARROW_ARRAY


def test_base_paths_are_honoured(tmp_path):
    root, base_root, base_flat = tmp_path / "root", tmp_path / "other", tmp_path / "flat"
    root.mkdir()
    remote = write_deletion_file(LocalStorage(base_root), 2, 5, [1, 4], file_type=DeletionFileType.ARROW_ARRAY)
    remote.base_id = 7
    flat_file = write_deletion_file(LocalStorage(tmp_path / "scratch"), 2, 5, [6], file_type=DeletionFileType.BITMAP)
    base_flat.mkdir()
    os.replace(tmp_path / "scratch" / flat_file.path(2), base_flat / flat_file.path(2).split("/", 1)[1])
    flat_file.base_id = 8
    bases = [BasePath(7, str(base_root), is_dataset_root=True), BasePath(8, str(base_flat), is_dataset_root=False)]
    storage = LocalStorage(root)
    assert read_deletion_file(storage, 2, remote, base_paths=bases) == [1, 4]
    assert read_deletion_file(storage, 2, flat_file, base_paths=bases) == [6]
    with pytest.raises(CorruptFileError, match="base_id 7"):
        read_deletion_file(storage, 2, remote)


# -- round trips ----------------------------------------------------------------------

offset_sets = strategies.deletion_vectors()


@settings(max_examples=examples(2))
@given(offset_sets)
def test_encodings_round_trip(offsets):
    """For any set of u32 offsets, both encodings decode to the sorted set."""
    assert decode_arrow_deletions(encode_arrow_deletions(offsets), "a") == sorted(offsets)
    assert decode_bitmap_deletions(encode_bitmap_deletions(offsets), "b") == sorted(offsets)


@settings(max_examples=examples(1))
@given(
    strategies.deletion_vectors(min_size=1),
    st.sampled_from([None, DeletionFileType.ARROW_ARRAY, DeletionFileType.BITMAP]),
)
def test_written_files_read_back(tmp_path_factory, offsets, file_type):
    """write_deletion_file then read_deletion_file gives the sorted offsets,
    whichever kind is written, and the metadata counts them."""
    storage = LocalStorage(tmp_path_factory.mktemp("rt"))
    written = write_deletion_file(storage, 1, 2, offsets, file_type=file_type)
    assert written.num_deleted_rows == len(offsets)
    assert read_deletion_file(storage, 1, written, physical_rows=2**32) == sorted(offsets)


# -- hostile files --------------------------------------------------------------------


HOSTILE_ARROW = {
    "not arrow": b"definitely not an arrow file",
    "empty": b"",
    "arrow stream instead of file": None,  # filled below
    "two columns": arrow_ipc_file({"a": pa.array([1], pa.uint32()), "b": pa.array([2], pa.uint32())}),
    "two batches": arrow_ipc_file({"row_id": pa.array([1], pa.uint32())}, batches=2),
    "no batch": arrow_ipc_file({"row_id": pa.array([1], pa.uint32())}, batches=0),
    "int64 column": arrow_ipc_file({"row_id": pa.array([1], pa.int64())}),
    "string column": arrow_ipc_file({"row_id": pa.array(["1"])}),
    "nulls": arrow_ipc_file({"row_id": pa.array([1, None], pa.uint32())}),
    "negative": arrow_ipc_file({"row_id": pa.array([3, -1], pa.int32())}),
    "duplicates": arrow_ipc_file({"row_id": pa.array([3, 3], pa.uint32())}),
    "truncated": encode_arrow_deletions([1, 2, 3])[:-12],
}
_stream = pa.BufferOutputStream()
with ipc.new_stream(_stream, arrow_deletion_schema()) as _w:
    _w.write_batch(pa.record_batch([pa.array([1], pa.uint32())], schema=arrow_deletion_schema()))
HOSTILE_ARROW["arrow stream instead of file"] = _stream.getvalue().to_pybytes()

HOSTILE_BITMAP = {
    "garbage": b"\x01\x02\x03garbage bytes",
    "empty": b"",
    "truncated": BitMap(range(0, 100000, 3)).serialize()[:-5],
    "trailing bytes": BitMap([1, 2, 3]).serialize() + b"\x00\x00",
}


def _install(tmp_path, kind: DeletionFileType, data: bytes, count: int = 0) -> tuple[Storage, DeletionFile]:
    storage = LocalStorage(tmp_path)
    deletion_file = DeletionFile(kind, read_version=1, id=99, num_deleted_rows=count)
    storage.put_if_not_exists(deletion_file.path(0), data)
    return storage, deletion_file


@pytest.mark.parametrize("case", sorted(HOSTILE_ARROW))
def test_hostile_arrow_files_are_corrupt(tmp_path, case):
    storage, deletion_file = _install(tmp_path, DeletionFileType.ARROW_ARRAY, HOSTILE_ARROW[case])
    with pytest.raises(CorruptFileError, match="0-1-99.arrow"):
        read_deletion_file(storage, 0, deletion_file)


@pytest.mark.parametrize("case", sorted(HOSTILE_BITMAP))
def test_hostile_bitmap_files_are_corrupt(tmp_path, case):
    storage, deletion_file = _install(tmp_path, DeletionFileType.BITMAP, HOSTILE_BITMAP[case])
    with pytest.raises(CorruptFileError, match="0-1-99.bin"):
        read_deletion_file(storage, 0, deletion_file)


def test_count_and_range_are_checked(tmp_path):
    storage, deletion_file = _install(tmp_path, DeletionFileType.BITMAP, encode_bitmap_deletions([1, 5, 9]), 2)
    with pytest.raises(CorruptFileError, match="manifest says 2"):
        read_deletion_file(storage, 0, deletion_file)
    deletion_file.num_deleted_rows = 0  # unknown, as old writers leave it
    assert read_deletion_file(storage, 0, deletion_file) == [1, 5, 9]
    with pytest.raises(CorruptFileError, match="physical rows"):
        read_deletion_file(storage, 0, deletion_file, physical_rows=9)


def test_missing_and_unknown_files(tmp_path):
    storage = LocalStorage(tmp_path)
    with pytest.raises(LanceFormatError, match="does not exist"):
        read_deletion_file(storage, 0, DeletionFile(DeletionFileType.BITMAP, 1, 2, 0))
    with pytest.raises(UnsupportedFeatureError):
        read_deletion_file(storage, 0, DeletionFile(5, 1, 2, 0))


def test_a_deletion_file_of_unknown_kind_has_no_path():
    """The extension follows from the kind: a kind the proto does not know
    (kept as a plain int) gets the documented error naming the file, not an
    AttributeError."""
    assert DeletionFile(DeletionFileType.BITMAP, 3, 4, 0).path(2) == "_deletions/2-3-4.bin"
    with pytest.raises(UnsupportedFeatureError, match=r"_deletions/2-3-4: deletion file type 5 is neither"):
        DeletionFile(5, 3, 4, 0).path(2)


@settings(max_examples=examples(4))
@given(st.binary(max_size=300), st.integers(0, 2000), st.integers(0, 255))
def test_garbage_never_escapes_as_another_error(noise, index, byte):
    """Random bytes, and real files with one byte changed, either decode to
    ascending distinct offsets or raise CorruptFileError."""
    samples = [noise]
    for good in (encode_arrow_deletions([1, 7, 300]), encode_bitmap_deletions(range(0, 5000, 7))):
        mutated = bytearray(good)
        mutated[index % len(mutated)] = byte
        samples.append(bytes(mutated))
    for data in samples:
        for decode in (decode_arrow_deletions, decode_bitmap_deletions):
            try:
                offsets = decode(data, "f")
            except CorruptFileError:
                continue
            assert offsets == sorted(set(offsets))
            assert all(0 <= o < 2**32 for o in offsets)


# -- bounds: nothing is expanded before its size is known to fit ------------------------


def _compressedarrow_ipc_file(values) -> bytes:
    table = pa.table({"row_id": pa.array(values, pa.uint32())})
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table.schema, options=ipc.IpcWriteOptions(compression="zstd")) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _every_u32() -> bytes:
    """A bitmap of all four billion u32 offsets: under a megabyte of run containers."""
    bitmap = BitMap(range(2**32))
    bitmap.run_optimize()
    return bitmap.serialize()


def test_a_four_billion_offset_bitmap_is_never_listed(tmp_path):
    data = _every_u32()
    assert len(data) < 1 << 20
    started = time.monotonic()
    content = inspect_deletion_bytes(data, DeletionFileType.BITMAP, physical_rows=100)
    assert content.ok and content.entries == 2**32 and content.offsets.max() == 2**32 - 1
    assert "past the fragment's 100 physical rows" in content.problem_for(100)
    with pytest.raises(CorruptFileError, match="past the fragment's 100 physical rows"):
        decode_bitmap_deletions(data, "x.bin", physical_rows=100)
    with pytest.raises(CorruptFileError, match=f"more than the limit of {DEFAULT_MAX_OFFSETS}"):
        decode_bitmap_deletions(data, "x.bin")
    storage, deletion_file = _install(tmp_path, DeletionFileType.BITMAP, data)
    with pytest.raises(CorruptFileError, match="0-1-99.bin: deleted offset 4294967295 is past"):
        read_deletion_file(storage, 0, deletion_file, physical_rows=1000)
    with pytest.raises(CorruptFileError, match="0-1-99.bin: the file lists 4294967296 offsets, more than the limit"):
        read_deletion_file(storage, 0, deletion_file, physical_rows=2**32)
    assert time.monotonic() - started < 2


def test_the_count_limit_is_checked_before_listing():
    offsets = list(range(0, 300, 3))
    for kind, data in (
        (DeletionFileType.BITMAP, encode_bitmap_deletions(offsets)),
        (DeletionFileType.ARROW_ARRAY, encode_arrow_deletions(offsets)),
    ):
        decode = decode_bitmap_deletions if kind is DeletionFileType.BITMAP else decode_arrow_deletions
        assert decode(data, "f", physical_rows=300, max_offsets=100) == offsets
        with pytest.raises(CorruptFileError, match="more than the limit of 99"):
            decode(data, "f", physical_rows=300, max_offsets=99)


def test_a_compressed_buffer_claiming_a_huge_size_is_never_decompressed():
    values = list(range(0, 4000, 2))
    data = bytearray(_compressedarrow_ipc_file(values))
    declared = (4 * len(values)).to_bytes(8, "little")
    assert data.count(declared) == 1
    at = data.index(declared)
    data[at : at + 8] = (1 << 40).to_bytes(8, "little")
    started = time.monotonic()
    content = inspect_deletion_bytes(bytes(data), DeletionFileType.ARROW_ARRAY, physical_rows=10_000)
    assert content.status is DeletionStatus.ARROW_LAYOUT and "expands to" in content.problem
    with pytest.raises(CorruptFileError, match="x.arrow: a buffer expands to 1099511627776 bytes"):
        decode_arrow_deletions(bytes(data), "x.arrow")
    assert time.monotonic() - started < 1


def test_an_arrow_file_with_more_offsets_than_rows_is_not_decoded():
    data = _compressedarrow_ipc_file(range(5000))
    content = inspect_deletion_bytes(data, DeletionFileType.ARROW_ARRAY, physical_rows=100)
    assert content.status is DeletionStatus.TOO_MANY and content.entries == 5000
    assert content.offsets == BitMap()
    with pytest.raises(CorruptFileError, match="lists 5000 offsets but the fragment has only 100 rows"):
        decode_arrow_deletions(data, "x.arrow", physical_rows=100)
    beyond = inspect_deletion_bytes(data, DeletionFileType.ARROW_ARRAY, max_offsets=4999)
    assert beyond.status is DeletionStatus.TOO_LARGE and beyond.entries == 5000
    with pytest.raises(CorruptFileError, match="more than the limit of 4999"):
        decode_arrow_deletions(data, "x.arrow", max_offsets=4999)


def test_a_column_longer_than_its_batch_is_malformed():
    data = bytearray(_compressedarrow_ipc_file(range(0, 2468, 2)))
    node = (1234).to_bytes(8, "little") + (0).to_bytes(8, "little")  # FieldNode: length, null_count
    assert data.count(node) == 1
    at = data.index(node)
    data[at : at + 8] = (1 << 40).to_bytes(8, "little")
    content = inspect_deletion_bytes(bytes(data), DeletionFileType.ARROW_ARRAY, physical_rows=5000)
    assert content.status is DeletionStatus.ARROW_LAYOUT and "metadata is malformed" in content.problem


def test_compressed_and_int32_files_decode():
    content = inspect_deletion_bytes(
        _compressedarrow_ipc_file([7, 3, 5]), DeletionFileType.ARROW_ARRAY, physical_rows=10
    )
    assert content.ok and list(content.offsets) == [3, 5, 7] and content.column_type == "uint32"
    assert (content.found, content.batches) == (DeletionFileType.ARROW_ARRAY, 1)
    assert decode_arrow_deletions(_compressedarrow_ipc_file([7, 3, 5]), "x.arrow", physical_rows=10) == [3, 5, 7]
    table = pa.table({"x": pa.array([4, -1, 4, -1, 2], pa.int32())})
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    content = inspect_deletion_bytes(sink.getvalue().to_pybytes(), DeletionFileType.ARROW_ARRAY, physical_rows=10)
    assert content.ok and list(content.offsets) == [2, 4] and content.column_type == "int32"
    assert (content.entries, content.negatives, content.distinct_negatives) == (5, 2, 1)
    assert content.repeated == 2  # a second 4 and a second -1
    assert "2 negative offsets" in content.problem_for(10)


def test_the_other_kind_is_recognised():
    bitmap, arrow = encode_bitmap_deletions([1, 2]), encode_arrow_deletions([1, 2])
    as_arrow = inspect_deletion_bytes(bitmap, DeletionFileType.ARROW_ARRAY)
    assert (as_arrow.status, as_arrow.found) == (DeletionStatus.KIND_MISMATCH, DeletionFileType.BITMAP)
    as_bitmap = inspect_deletion_bytes(arrow, DeletionFileType.BITMAP)
    assert (as_bitmap.status, as_bitmap.found) == (DeletionStatus.KIND_MISMATCH, DeletionFileType.ARROW_ARRAY)
    with pytest.raises(CorruptFileError, match="the kind is BITMAP but the file is an Arrow IPC file"):
        decode_bitmap_deletions(arrow, "f")


def test_files_beyond_the_size_limit_are_not_read(tmp_path):
    storage, deletion_file = _install(tmp_path, DeletionFileType.ARROW_ARRAY, encode_arrow_deletions([1, 2]))
    relpath = deletion_file.path(0)
    content = inspect_deletion_file(storage, relpath, DeletionFileType.ARROW_ARRAY, max_bytes=16)
    assert content.status is DeletionStatus.TOO_LARGE and "more than the limit of 16" in content.problem
    assert inspect_deletion_file(storage, relpath, DeletionFileType.ARROW_ARRAY).ok
    missing = inspect_deletion_file(storage, "_deletions/0-1-98.arrow", DeletionFileType.ARROW_ARRAY)
    assert missing.status is DeletionStatus.MISSING
