"""Row ids and row version sequences (row id & lineage), checked against the
row ids and versions pylance itself reports, and on hostile bytes."""

from __future__ import annotations

import struct
import tracemalloc

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import strategies
from reference_impl.deletions import read_deletion_file
from reference_impl.errors import CorruptFileError
from reference_impl.fragments import ExternalFile, Fragment
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import committed_manifests
from reference_impl.row_ids import (
    DEFAULT_MAX_ROWS,
    MIN_RANGE_RUN,
    decode_row_id_sequence,
    decode_version_sequence,
    encode_row_id_segments,
    encode_row_id_sequence,
    encode_version_sequence,
    fragment_created_at_versions,
    fragment_last_updated_at_versions,
    fragment_row_ids,
    row_address,
    row_id_segment_kinds,
    split_row_address,
)
from reference_impl.storage import LocalStorage
from reference_impl.wire import rowids_pb2
from tests.hypothesis_budget import examples

lance = pytest.importorskip("lance")


U64_MAX = 2**64 - 1


def _rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({"a": pa.array(ids, pa.int64()), "b": pa.array([f"r{i}" for i in ids])})


@pytest.fixture(scope="module")
def stable_dataset(tmp_path_factory):
    """A dataset with stable row ids taken through appends, sparse and dense
    deletes, an update, an upsert and a compaction."""
    path = tmp_path_factory.mktemp("rowids") / "ds"
    lance.write_dataset(_rows(0, 3000), path, max_rows_per_file=1000, enable_stable_row_ids=True)
    ds = lance.write_dataset(_rows(3000, 500), path, mode="append")
    ds.delete("a in (5, 1500, 2500)")
    ds.delete("a >= 3000 and a % 3 = 0")
    ds.update({"b": "'updated'"}, where="a >= 100 and a < 110")
    upsert = pa.table({"a": pa.array([7, 99999], pa.int64()), "b": ["seven", "new"]})
    ds = lance.dataset(path)
    ds.merge_insert("a").when_matched_update_all().when_not_matched_insert_all().execute(upsert)
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=100000)
    return path


def _manifests(path):
    storage = LocalStorage(path)
    manifests, _ = committed_manifests(storage)
    return storage, {v: read_manifest_file(storage, p).manifest for v, p in sorted(manifests.items())}


def _expected_by_address(storage, manifest):
    """row address -> (row id, created at, last updated at) of every visible
    row, computed by the reference implementation alone."""
    out = {}
    for fragment in manifest.fragments:
        deleted = set()
        if fragment.deletion_file is not None:
            deleted = set(read_deletion_file(storage, fragment.id, fragment.deletion_file))
        ids = fragment_row_ids(storage, fragment)
        created = fragment_created_at_versions(storage, fragment)
        updated = fragment_last_updated_at_versions(storage, fragment)
        for offset in range(fragment.physical_rows):
            if offset not in deleted:
                out[row_address(fragment.id, offset)] = (ids[offset], created[offset], updated[offset])
    return out


def test_row_ids_and_versions_match_pylance_at_every_version(stable_dataset):
    storage, manifests = _manifests(stable_dataset)
    assert len(manifests) >= 7
    for version, manifest in manifests.items():
        expected = _expected_by_address(storage, manifest)
        table = lance.dataset(stable_dataset, version=version).to_table(
            columns=["_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version"]
        )
        got = {
            addr: (rid, created, updated)
            for addr, rid, created, updated in zip(
                table["_rowaddr"].to_pylist(),
                table["_rowid"].to_pylist(),
                table["_row_created_at_version"].to_pylist(),
                table["_row_last_updated_at_version"].to_pylist(),
                strict=True,
            )
        }
        assert got == expected, f"version {version}"


def test_real_sequences_use_every_sorted_segment_kind(stable_dataset):
    """The comparison above only means something if pylance's files exercise
    the decoders: range, range_with_holes, range_with_bitmap, sorted_array."""
    _, manifests = _manifests(stable_dataset)
    kinds = set()
    for manifest in manifests.values():
        for fragment in manifest.fragments:
            assert isinstance(fragment.row_id_sequence, bytes)
            kinds.update(row_id_segment_kinds(fragment.row_id_sequence))
    assert {"range", "range_with_holes", "range_with_bitmap", "sorted_array"} <= kinds


def test_visible_row_ids_are_unique_and_below_next_row_id(stable_dataset):
    """Unique among *visible* rows only: pylance 14 keeps a row's id when it
    updates the row, so the deleted old copy and the new copy share it."""
    storage, manifests = _manifests(stable_dataset)
    shared = 0
    for version, manifest in manifests.items():
        visible = [rid for rid, _, _ in _expected_by_address(storage, manifest).values()]
        assert len(visible) == len(set(visible)), f"version {version}"
        physical = [i for f in manifest.fragments for i in fragment_row_ids(storage, f)]
        assert max(physical) < manifest.next_row_id, f"version {version}"
        shared = max(shared, len(physical) - len(set(physical)))
    # The update of rows 100..109 and the upsert of row 7 made eleven ids
    # appear twice (once deleted).
    assert shared == 11


def test_update_keeps_the_row_id_and_creation_version(stable_dataset):
    """pylance 14 departs from the older table format page here: an updated row keeps its row id
    and created-at version; only last-updated-at moves."""
    update_version = 5
    assert type(lance.dataset(stable_dataset).read_transaction(update_version).operation).__name__ == "Update"
    before = lance.dataset(stable_dataset, version=update_version - 1).to_table(
        columns=["a", "_rowid", "_row_created_at_version"], filter="a >= 100 and a < 110"
    )
    after = lance.dataset(stable_dataset, version=update_version).to_table(
        columns=["a", "b", "_rowid", "_row_created_at_version", "_row_last_updated_at_version"],
        filter="a >= 100 and a < 110",
    )
    assert set(after["b"].to_pylist()) == {"updated"}
    assert sorted(before["_rowid"].to_pylist()) == sorted(after["_rowid"].to_pylist())
    assert set(after["_row_created_at_version"].to_pylist()) == {1}
    assert set(after["_row_last_updated_at_version"].to_pylist()) == {update_version}


def test_compaction_keeps_row_ids(stable_dataset):
    """Stable row ids survive a move: the rows before and after the last
    (compaction) commit carry the same ids."""
    before = lance.dataset(stable_dataset, version=lance.dataset(stable_dataset).version - 1)
    after = lance.dataset(stable_dataset)
    assert type(after.read_transaction(after.version).operation).__name__ == "Rewrite"

    def ids(ds):
        table = ds.to_table(columns=["a", "_rowid"])
        return dict(zip(table["a"].to_pylist(), table["_rowid"].to_pylist(), strict=True))

    assert ids(before) == ids(after)


def test_dataset_without_stable_row_ids_stores_no_sequences(tmp_path):
    lance.write_dataset(_rows(0, 10), tmp_path / "plain")
    storage, manifests = _manifests(tmp_path / "plain")
    fragment = manifests[1].fragments[0]
    assert fragment_row_ids(storage, fragment) is None
    assert fragment_created_at_versions(storage, fragment) is None
    assert fragment_last_updated_at_versions(storage, fragment) is None


# -- the encoder's choices ------------------------------------------------------------


def _segments(data: bytes) -> list:
    msg = rowids_pb2.RowIdSequence()
    msg.ParseFromString(data)
    return list(msg.segments)


def test_contiguous_ids_become_one_range():
    (segment,) = _segments(encode_row_id_sequence(range(1000, 5000)))
    assert segment.WhichOneof("segment") == "range"
    assert (segment.range.start, segment.range.end) == (1000, 5000)


def test_gaps_split_ranges_and_short_runs_become_arrays():
    values = list(range(0, 100)) + [150, 152, 160] + list(range(200, 300)) + [305, 303]
    data = encode_row_id_sequence(values)
    assert row_id_segment_kinds(data) == ["range", "sorted_array", "range", "array"]
    assert decode_row_id_sequence(data) == values
    unsorted = encode_row_id_sequence([9, 4, 7])
    assert row_id_segment_kinds(unsorted) == ["array"]


@pytest.mark.parametrize(
    ("values", "width"),
    [([10, 20, 65_545], "u16_array"), ([10, 20, 65_546], "u32_array"), ([0, 2**32], "u64_array")],
)
def test_arrays_use_the_narrowest_width(values, width):
    (segment,) = _segments(encode_row_id_sequence(values))
    assert segment.sorted_array.WhichOneof("array") == width
    assert decode_row_id_sequence(encode_row_id_sequence(values)) == values


def test_bitmap_bits_are_least_significant_first():
    """pylance's compacted fragments hold ``range_with_bitmap{290..300,
    bitmap EF 03}`` for ids 290..299 without 294: bit i is bit i % 8 of
    byte i // 8."""
    msg = rowids_pb2.RowIdSequence()
    seg = msg.segments.add().range_with_bitmap
    seg.start, seg.end, seg.bitmap = 290, 300, b"\xef\x03"
    assert decode_row_id_sequence(msg.SerializeToString()) == [290, 291, 292, 293, 295, 296, 297, 298, 299]


def test_holes_are_absolute_values():
    msg = rowids_pb2.RowIdSequence()
    seg = msg.segments.add().range_with_holes
    seg.start, seg.end = 1000, 1010
    seg.holes.u16_array.base = 1002
    seg.holes.u16_array.offsets = struct.pack("<2H", 0, 5)
    assert decode_row_id_sequence(msg.SerializeToString()) == [1000, 1001, 1003, 1004, 1005, 1006, 1008, 1009]


def test_version_sequence_runs():
    data = encode_version_sequence([3, 3, 3, 7, 7, 3])
    msg = rowids_pb2.RowDatasetVersionSequence()
    msg.ParseFromString(data)
    assert [(r.span.range.start, r.span.range.end, r.version) for r in msg.runs] == [(0, 3, 3), (3, 5, 7), (5, 6, 3)]
    assert decode_version_sequence(data) == [3, 3, 3, 7, 7, 3]


def test_version_spans_count_values_whatever_they_are():
    """A span's values are old row positions; only how many there are counts."""
    msg = rowids_pb2.RowDatasetVersionSequence()
    run = msg.runs.add(version=4)
    run.span.range_with_bitmap.start, run.span.range_with_bitmap.end = 290, 300
    run.span.range_with_bitmap.bitmap = b"\xef\x03"
    run = msg.runs.add(version=9)
    run.span.range.start, run.span.range.end = 0, 2
    assert decode_version_sequence(msg.SerializeToString()) == [4] * 9 + [9, 9]


def test_row_address_helpers():
    assert row_address(3, 7) == (3 << 32) | 7
    assert split_row_address(row_address(2**32 - 1, 5)) == (2**32 - 1, 5)
    with pytest.raises(ValueError):
        row_address(2**32, 0)


# -- round trips ----------------------------------------------------------------------


@settings(max_examples=examples(4))
@given(strategies.row_id_sequences())
def test_encode_then_decode_is_identity(values):
    """For any list of distinct u64s, decode(encode(v)) == v, and every
    contiguous run of at least MIN_RANGE_RUN values is stored as a range."""
    data = encode_row_id_sequence(values)
    assert decode_row_id_sequence(data) == values
    kinds = row_id_segment_kinds(data)
    longest = 0
    run = 0
    for i, v in enumerate(values):
        run = run + 1 if i and values[i - 1] + 1 == v else 1
        longest = max(longest, run)
    if longest >= MIN_RANGE_RUN:
        assert "range" in kinds


@st.composite
def explicit_segments(draw):
    """A list of (kind, values) segments, each feasible for its kind, with
    distinct values overall."""
    segments = []
    base = draw(st.integers(0, 2**48))
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["range", "range_with_holes", "range_with_bitmap", "sorted_array", "array"]))
        span = draw(st.integers(0, 200))
        if kind == "range":
            values = list(range(base, base + span))
        else:
            keep = draw(st.lists(st.booleans(), min_size=span, max_size=span))
            values = [base + i for i, k in enumerate(keep) if k]
            if kind == "array":
                values = draw(st.permutations(values))
        segments.append((kind, values))
        base += span + draw(st.integers(0, 2**20))
    return segments


@settings(max_examples=examples(4))
@given(explicit_segments(), st.sampled_from([None, "u32", "u64"]))
def test_every_segment_kind_round_trips(segments, width):
    """Whatever segment kinds and array widths a writer picks, decoding gives
    back the concatenated values."""
    data = encode_row_id_segments(segments, width=width)
    assert decode_row_id_sequence(data) == [v for _, values in segments for v in values]
    assert row_id_segment_kinds(data) == [kind for kind, _ in segments]


@settings(max_examples=examples(3))
@given(st.lists(st.sampled_from([1, 2, 5, 2**40, U64_MAX]), max_size=200))
def test_version_sequence_round_trips(versions):
    """decode(encode(v)) == v, with one run per maximal block of equal versions."""
    data = encode_version_sequence(versions)
    assert decode_version_sequence(data) == versions
    msg = rowids_pb2.RowDatasetVersionSequence()
    msg.ParseFromString(data)
    assert len(msg.runs) == sum(1 for i, v in enumerate(versions) if i == 0 or versions[i - 1] != v)


# -- stored sequences -----------------------------------------------------------------


def test_external_sequences_are_read_from_their_byte_range(tmp_path):
    storage = LocalStorage(tmp_path)
    ids = encode_row_id_sequence([5, 6, 9])
    versions = encode_version_sequence([1, 1, 2])
    storage.put_if_not_exists("data/seq.bin", b"junk" + ids + versions + b"tail")
    fragment = Fragment(
        id=0,
        files=[],
        physical_rows=3,
        row_id_sequence=ExternalFile("data/seq.bin", 4, len(ids)),
        created_at_version_sequence=ExternalFile("data/seq.bin", 4 + len(ids), len(versions)),
        last_updated_at_version_sequence=versions,
    )
    assert fragment_row_ids(storage, fragment) == [5, 6, 9]
    assert fragment_created_at_versions(storage, fragment) == [1, 1, 2]
    assert fragment_last_updated_at_versions(storage, fragment) == [1, 1, 2]

    fragment.row_id_sequence = ExternalFile("data/seq.bin", 4, 10_000)
    with pytest.raises(CorruptFileError):
        fragment_row_ids(storage, fragment)


def test_sequence_length_must_match_physical_rows(tmp_path):
    storage = LocalStorage(tmp_path)
    fragment = Fragment(id=4, files=[], physical_rows=4, row_id_sequence=encode_row_id_sequence([1, 2, 3]))
    with pytest.raises(CorruptFileError, match="fragment 4"):
        fragment_row_ids(storage, fragment)
    fragment.created_at_version_sequence = encode_version_sequence([1] * 5)
    with pytest.raises(CorruptFileError):
        fragment_created_at_versions(storage, fragment)


# -- hostile bytes --------------------------------------------------------------------


def _sequence(build) -> bytes:
    msg = rowids_pb2.RowIdSequence()
    build(msg.segments.add())
    return msg.SerializeToString()


def _set_range(seg, start, end):
    seg.range.start, seg.range.end = start, end


def _set_bitmap(seg, start, end, bitmap):
    seg.range_with_bitmap.start, seg.range_with_bitmap.end, seg.range_with_bitmap.bitmap = start, end, bitmap


def _set_holes(seg, start, end, width, base, raw):
    seg.range_with_holes.start, seg.range_with_holes.end = start, end
    arr = getattr(seg.range_with_holes.holes, width)
    if width != "u64_array":
        arr.base = base
        arr.offsets = raw
    else:
        arr.values = raw


MALFORMED = {
    "start after end": lambda s: _set_range(s, 10, 5),
    "no segment kind": lambda s: s.SetInParent(),
    "bitmap too short": lambda s: _set_bitmap(s, 0, 17, b"\xff\xff"),
    "bitmap too long": lambda s: _set_bitmap(s, 0, 8, b"\xff\xff"),
    "holes outside range": lambda s: _set_holes(s, 0, 10, "u16_array", 10, struct.pack("<H", 0)),
    "holes not ascending": lambda s: _set_holes(s, 0, 10, "u16_array", 0, struct.pack("<2H", 5, 3)),
    "holes missing": lambda s: (setattr(s.range_with_holes, "start", 0), setattr(s.range_with_holes, "end", 3)),
    "u16 offsets of odd length": lambda s: setattr(s.sorted_array.u16_array, "offsets", b"\x00\x00\x01"),
    "u32 offsets not a multiple of 4": lambda s: setattr(s.array.u32_array, "offsets", b"\x00" * 6),
    "u64 values not a multiple of 8": lambda s: setattr(s.array.u64_array, "values", b"\x00" * 12),
    "empty encoded array": lambda s: s.array.SetInParent(),
    "sorted array out of order": lambda s: setattr(s.sorted_array.u64_array, "values", struct.pack("<2Q", 9, 3)),
    "base plus offset overflows": lambda s: (
        setattr(s.array.u32_array, "base", U64_MAX - 1),
        setattr(s.array.u32_array, "offsets", struct.pack("<I", 5)),
    ),
    "duplicate row ids": lambda s: setattr(s.array.u64_array, "values", struct.pack("<2Q", 4, 4)),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_segments_are_corrupt(case):
    with pytest.raises(CorruptFileError, match="ctx"):
        decode_row_id_sequence(_sequence(MALFORMED[case]), "ctx")


@pytest.mark.parametrize("end", [DEFAULT_MAX_ROWS + 1, 2**40, U64_MAX])
def test_absurd_ranges_are_refused_without_allocating(end):
    data = _sequence(lambda s: _set_range(s, 0, end))
    versions = rowids_pb2.RowDatasetVersionSequence()
    run = versions.runs.add(version=1)
    run.span.range.end = end
    tracemalloc.start()
    try:
        with pytest.raises(CorruptFileError, match="limit"):
            decode_row_id_sequence(data)
        with pytest.raises(CorruptFileError, match="limit"):
            decode_version_sequence(versions.SerializeToString())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_fragment_physical_rows_bound_the_sequence(tmp_path):
    storage = LocalStorage(tmp_path)
    fragment = Fragment(id=1, files=[], physical_rows=10, row_id_sequence=_sequence(lambda s: _set_range(s, 0, 2**50)))
    with pytest.raises(CorruptFileError, match="limit of 10"):
        fragment_row_ids(storage, fragment)
    huge = Fragment(id=2, files=[], physical_rows=2**60, row_id_sequence=_sequence(lambda s: _set_range(s, 0, 2**60)))
    with pytest.raises(CorruptFileError, match="physical rows"):
        fragment_row_ids(storage, huge)


def test_version_run_without_span_is_corrupt():
    msg = rowids_pb2.RowDatasetVersionSequence()
    msg.runs.add(version=3)
    with pytest.raises(CorruptFileError, match="no span"):
        decode_version_sequence(msg.SerializeToString())


@settings(max_examples=examples(5), suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=64),
        st.builds(lambda v, i, b: (v, i, b), strategies.sorted_row_ids(), st.integers(0, 400), st.integers(0, 255)),
    )
)
def test_garbage_is_corrupt_or_decodes(sample):
    """Random bytes, and valid encodings with one byte changed, either decode
    or raise CorruptFileError: never another exception."""
    if isinstance(sample, tuple):
        values, index, byte = sample
        data = bytearray(encode_row_id_sequence(values) + encode_version_sequence([1] * len(values)))
        if data:
            data[index % len(data)] = byte
        data = bytes(data)
    else:
        data = sample
    for decode in (decode_row_id_sequence, decode_version_sequence):
        try:
            decode(data, max_rows=100_000)
        except CorruptFileError:
            pass
