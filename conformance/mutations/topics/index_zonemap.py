"""Mutations for the zone map and bloom filter index rules
(conformance/validator/rules/index_zonemap.py).

They change the contents of the ``zone_indices`` base's index files in
place, each keeping the file's size, the way a faulty writer or a damaged
disk would: a recorded value overwritten by another of the same width (a
zone bound narrowed, a zone start moved, a metadata value spoiled), a filter
bit cleared, a constant page's value flipped in the column metadata, one
row of the null rows moved to its neighbour. The values are located through
the file's own structure (a column's page buffers, a global buffer), never
by position guessed from outside.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from google.protobuf import any_pb2

from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.bloom_filter import BLOOM_FILTER_FILE, read_bloom_filter, value_hashes
from reference_impl.indices.row_addr_map import decode_row_addr_map, encode_row_addr_map
from reference_impl.indices.types import IndexType
from reference_impl.indices.zonemap import ZONEMAP_FILE, read_zone_map
from reference_impl.indices.zones import NULL_BITMAP_KEY, Zones
from reference_impl.scan import fragment_table
from reference_impl.storage import LocalStorage
from reference_impl.wire import encodings_v2_1_pb2

from ..edit import overwrite_once
from ..registry import mutation

BASE = "zone_indices"


def _segment(root: Path, index_type: IndexType) -> tuple[Dataset, IndexMetadata, Path]:
    dataset = Dataset.open(root)
    (index,) = [index for index in dataset.indices if IndexType.of(index) is index_type]
    name = ZONEMAP_FILE if index_type is IndexType.ZONEMAP else BLOOM_FILTER_FILE
    return dataset, index, Path(root) / dataset.index_file_location(index, name).relpath


def _column_buffers(path: Path, column: str) -> list[tuple[int, int]]:
    """(position, size) of the page buffers of the top-level column ``column``
    (each field of an index file is one column, in schema order)."""
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    assert metadata.descriptor is not None
    names = [field.name for field in metadata.descriptor.schema.fields]
    pages = metadata.columns[names.index(column)].pages
    return [(p, s) for page in pages for p, s in zip(page.buffer_offsets, page.buffer_sizes, strict=True)]


def _descriptor_region(path: Path) -> list[tuple[int, int]]:
    """Global buffer 0: the file descriptor, where the schema metadata is."""
    return [read_v2_metadata(LocalStorage(path.parent), path.name).global_buffers[0]]


def _move_a_start(path: Path, zones: Zones) -> None:
    """The last zone of fragment 0 starts one row later, so it runs one row
    past the fragment and its first row (not deleted) lies in no zone; its
    other rows stay in it, so its statistics still hold for them. Fragment
    1 has fewer zones: the start is written once in the zone_start column."""
    old = int(zones.starts[zones.of_fragment(0)[-1]])
    overwrite_once(path, struct.pack("<Q", old), struct.pack("<Q", old + 1), _column_buffers(path, "zone_start"))


def _move_a_null_row(path: Path, null_rows: np.ndarray, is_null) -> None:
    """Move the first recorded null row whose next row holds a value (and is
    not itself recorded) one row on, rewriting the serialized set in place."""
    recorded = set(null_rows.tolist())
    row = next(r for r in null_rows.tolist() if r + 1 not in recorded and not is_null(r + 1))
    moved = encode_row_addr_map(sorted((recorded - {row}) | {row + 1}))
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    assert metadata.descriptor is not None
    position, size = metadata.global_buffers[int(metadata.descriptor.schema.metadata[NULL_BITMAP_KEY])]
    assert len(moved) == size, (len(moved), size)
    assert np.array_equal(decode_row_addr_map(moved), np.array(sorted((recorded - {row}) | {row + 1}), np.uint64))
    data = bytearray(path.read_bytes())
    data[position : position + size] = moved
    path.write_bytes(bytes(data))


def _null_in(dataset: Dataset, column: str):
    """Whether the row at a row address holds a null in ``column``."""
    by_id = {fragment.id: fragment for fragment in dataset.fragments}
    tables: dict[int, list] = {}

    def is_null(address: int) -> bool:
        fragment_id, offset = address >> 32, address & 0xFFFFFFFF
        if fragment_id not in tables:
            table = fragment_table(dataset, by_id[fragment_id], include_deleted=True, columns=[column])
            tables[fragment_id] = table.column(column).to_pylist()
        return tables[fragment_id][offset] is None

    return is_null


# -- zone map -----------------------------------------------------------------------------


@mutation("index-zonemap/file", base=BASE)
def spoil_rows_per_zone(root):
    """rows_per_zone "100" becomes "1x0" in the file's schema metadata."""
    _, _, path = _segment(root, IndexType.ZONEMAP)
    overwrite_once(path, b"\x0drows_per_zone\x12\x03100", b"\x0drows_per_zone\x12\x031x0", _descriptor_region(path))


@mutation("index-zonemap/zones-tile", base=BASE)
def move_a_zone_map_zone_start(root):
    """The last zone of fragment 0 starts one row later."""
    dataset, index, path = _segment(root, IndexType.ZONEMAP)
    _move_a_start(path, read_zone_map(dataset, index).zones)


@mutation("index-zonemap/bounds", base=BASE)
def narrow_a_zone_minimum(root):
    """The minimum of zone 2 rises by one, above the value it holds."""
    dataset, index, path = _segment(root, IndexType.ZONEMAP)
    old = read_zone_map(dataset, index).minimums[2].as_py()
    overwrite_once(path, struct.pack("<q", old), struct.pack("<q", old + 1), _column_buffers(path, "min"))


@mutation("index-zonemap/null-rows", base=BASE)
def move_a_zone_map_null_row(root):
    """A recorded null row moves to the next row, which holds a value."""
    dataset, index, path = _segment(root, IndexType.ZONEMAP)
    null_rows = read_zone_map(dataset, index).null_rows
    assert null_rows is not None
    _move_a_null_row(path, null_rows, _null_in(dataset, "value"))


# -- bloom filter --------------------------------------------------------------------------


@mutation("index-bloom-filter/file", base=BASE)
def spoil_the_false_positive_probability(root):
    """bloomfilter_probability "0.01" becomes "0.x1", not a number."""
    _, _, path = _segment(root, IndexType.BLOOM_FILTER)
    key = b"\x17bloomfilter_probability\x12\x04"
    overwrite_once(path, key + b"0.01", key + b"0.x1", _descriptor_region(path))


@mutation("index-bloom-filter/zones-tile", base=BASE)
def move_a_bloom_filter_zone_start(root):
    """The last zone of fragment 0 starts one row later."""
    dataset, index, path = _segment(root, IndexType.BLOOM_FILTER)
    _move_a_start(path, read_bloom_filter(dataset, index).zones)


@mutation("index-bloom-filter/members", base=BASE)
def clear_a_filter_bit(root):
    """One bit of zone 0's filter that a value of the zone sets is cleared:
    that value is no longer in the filter."""
    dataset, index, path = _segment(root, IndexType.BLOOM_FILTER)
    bloom = read_bloom_filter(dataset, index)
    fragment = next(f for f in dataset.fragments if f.id == int(bloom.zones.fragment_ids[0]))
    names = fragment_table(dataset, fragment, columns=["name"]).column("name").combine_chunks()
    value = names.filter(names.is_valid()).slice(0, 1)
    (hash_value,) = value_hashes(value)
    zone_filter = bloom.filters[0]
    block = int(zone_filter.block_of(np.array([hash_value]))[0])
    mask = zone_filter.masks(np.array([hash_value]))[0]
    cleared = zone_filter.blocks.copy()
    cleared[block, 0] &= ~mask[0]
    regions = [(p, s) for p, s in _column_buffers(path, "bloom_filter_data")]
    overwrite_once(path, zone_filter.to_bytes(), cleared.astype("<u4").tobytes(), regions)


@mutation("index-bloom-filter/has-null", base=BASE)
def clear_has_null(root):
    """has_null, true in every zone (a constant page), becomes false: the
    page's inline value in the column metadata changes from 1 to 0."""
    _, _, path = _segment(root, IndexType.BLOOM_FILTER)
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    assert metadata.descriptor is not None
    names = [field.name for field in metadata.descriptor.schema.fields]
    page = metadata.columns[names.index("has_null")].pages[0]
    wrapped = any_pb2.Any.FromString(page.encoding.direct.encoding)
    layout = encodings_v2_1_pb2.PageLayout()
    wrapped.Unpack(layout)
    assert layout.constant_layout.inline_value == b"\x01", layout
    layout.constant_layout.inline_value = b"\x00"
    wrapped.value = layout.SerializeToString()
    overwrite_once(path, page.encoding.direct.encoding, wrapped.SerializeToString())


@mutation("index-bloom-filter/null-rows", base=BASE)
def move_a_bloom_filter_null_row(root):
    """A recorded null row moves to the next row, which holds a value."""
    dataset, index, path = _segment(root, IndexType.BLOOM_FILTER)
    null_rows = read_bloom_filter(dataset, index).null_rows
    assert null_rows is not None
    _move_a_null_row(path, null_rows, _null_in(dataset, "name"))


@mutation("index-zonemap/bounds-exact", base=BASE)
def widen_a_zone_maximum(root):
    """The maximum of a zone none of whose rows is deleted rises by one: a
    bound, but not the zone's maximum."""
    dataset, index, path = _segment(root, IndexType.ZONEMAP)
    zone_map = read_zone_map(dataset, index)
    deleted = {fragment.id: set(dataset.deleted_offsets(fragment)) for fragment in dataset.fragments}
    zones = zone_map.zones
    whole = next(
        zone
        for zone in range(len(zones))
        if not deleted[int(zones.fragment_ids[zone])] & set(range(int(zones.starts[zone]), int(zones.ends[zone])))
    )
    old = zone_map.maximums[whole].as_py()
    overwrite_once(path, struct.pack("<q", old), struct.pack("<q", old + 1), _column_buffers(path, "max"))


# -- what a run leaves unchecked ----------------------------------------------------------


def _compact_deferring_the_remap(root) -> None:
    """pylance 14 compacts both fragments with the remap of the indices
    deferred, then appends a row: from that commit on the segments' bitmaps
    name the compacted fragment, while their zones still name fragments 0
    and 1 (docs/spec-discrepancies.md, "Index formats")."""
    import lance  # lazy: pylance is optional (the test extra), as for the bases

    dataset = lance.dataset(str(root))
    dataset.optimize.compact_files(target_rows_per_fragment=5000, defer_index_remap=True)
    row = dataset.to_table(limit=1)
    lance.write_dataset(row, str(root), mode="append")


@mutation("index-zonemap/sampled", base=BASE)
def defer_the_zone_map_remap(root):
    """The zone map's zones under the compacted fragment go unchecked, and the info says so."""
    _compact_deferring_the_remap(root)


@mutation("index-bloom-filter/sampled", base=BASE)
def defer_the_bloom_filter_remap(root):
    """The bloom filter's zones under the compacted fragment go unchecked, and the info says so."""
    _compact_deferring_the_remap(root)
