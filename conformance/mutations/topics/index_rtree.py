"""Mutations for the RTREE index rules (conformance/validator/rules/
index_rtree.py).

They change the contents of the ``rtree`` base's index files in place, each
keeping the file's size, as a faulty writer or a damaged disk would: a
value of page_data.lance overwritten by another of the same width (a box
corner, an entry's id, a metadata digit), or a row of nulls.lance's set
moved to its neighbour. pylance 14 stores each column of page_data.lance
(``xmin`` ... ``ymax``, ``id``) as plain 8-byte values in entry order; an
entry's value is found as the n-th occurrence of its bytes inside its
column's page buffers, n counting the entries before it holding the same
value, and the edit checks that the count of occurrences is the count of
entries, so that a layout that is not plain fails loudly instead of
editing the wrong bytes.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.row_addr_map import decode_row_addr_map, encode_row_addr_map
from reference_impl.indices.rtree import (
    NULLS_FILE,
    PAGE_FILE,
    Quantisation,
    RTreeSegment,
    geometry_boxes,
    leaf_hilbert_values,
    read_rtree,
)
from reference_impl.scan import fragment_table
from reference_impl.storage import LocalStorage

from ..edit import occurrences
from ..registry import mutation

BASE = "rtree"


def _segment(root: Path, name: str = PAGE_FILE) -> tuple[Dataset, IndexMetadata, RTreeSegment, Path]:
    dataset = Dataset.open(root)
    (index,) = [index for index in dataset.indices if index.name == "geom_idx"]
    return dataset, index, read_rtree(dataset, index), Path(root) / dataset.index_file_location(index, name).relpath


def _column_region(path: Path, column: str) -> list[tuple[int, int]]:
    """(position, size) of the page buffers of leaf column ``column`` (the
    struct ``bbox`` has no column of its own)."""
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    assert metadata.descriptor is not None
    leaves = [field.name for field in metadata.descriptor.schema.fields if field.name != "bbox"]
    pages = metadata.columns[leaves.index(column)].pages
    return [(p, s) for page in pages for p, s in zip(page.buffer_offsets, page.buffer_sizes, strict=True)]


def entry_position(path: Path, column: str, values: np.ndarray, entry: int) -> int:
    """Where entry ``entry`` of ``column`` (whose values are ``values``) of
    page_data.lance at ``path`` is stored: the n-th occurrence of its 8 bytes
    in the column's page buffers, n counting the entries before it holding
    the same value."""
    code = "<Q" if values.dtype == np.uint64 else "<d"
    old = struct.pack(code, values[entry].item())
    data = path.read_bytes()
    # values are 8-byte aligned within their buffer (a small integer's bytes also
    # occur across two neighbouring values)
    regions = _column_region(path, column)
    found = [p + i for p, s in regions for i in occurrences(data[p : p + s], old) if i % 8 == 0]
    same = np.flatnonzero(values == values[entry])
    if len(found) != len(same):
        raise AssertionError(f"{old!r} occurs {len(found)} times in {column} of {path}, held by {len(same)} entries")
    return found[int(np.searchsorted(same, entry))]


def overwrite_entry(path: Path, column: str, values: np.ndarray, entry: int, new: bytes) -> None:
    """Overwrite entry ``entry`` of ``column`` (whose values are ``values``)
    of page_data.lance at ``path`` with the 8 bytes ``new``, in place."""
    at = entry_position(path, column, values, entry)
    data = bytearray(path.read_bytes())
    data[at : at + 8] = new
    path.write_bytes(bytes(data))


def _rows(dataset: Dataset) -> tuple[np.ndarray, np.ndarray, list[bool]]:
    """(row addresses, boxes' xmin and ymin, deleted) of every row."""
    addresses, xs, ys, deleted = [], [], [], []
    for fragment in sorted(dataset.fragments, key=lambda f: f.id):
        table = fragment_table(dataset, fragment, include_deleted=True, columns=["geom"])
        boxes = geometry_boxes(table.column("geom").combine_chunks())
        gone = set(dataset.deleted_offsets(fragment))
        addresses += [(fragment.id << 32) + offset for offset in range(fragment.physical_rows)]
        xs.append(boxes.boxes.xmin)
        ys.append(boxes.boxes.ymin)
        deleted += [offset in gone for offset in range(fragment.physical_rows)]
    return np.array(addresses, np.uint64), np.stack([np.concatenate(xs), np.concatenate(ys)]), deleted


@mutation("index-rtree/files-decode", base=BASE)
def spoil_num_items(root):
    """num_items "348" becomes "3x8" in page_data.lance's schema metadata."""
    _, _, segment, path = _segment(root)
    value = str(segment.num_items).encode()
    spoiled = value[:1] + b"x" + value[2:]
    data = bytearray(path.read_bytes())
    descriptor = read_v2_metadata(LocalStorage(path.parent), path.name).global_buffers[0]
    old = b"\x09num_items\x12" + bytes([len(value)]) + value
    region = bytes(data[descriptor[0] : descriptor[0] + descriptor[1]])
    (at,) = occurrences(region, old)
    start = descriptor[0] + at + len(old) - len(value)
    data[start : start + len(value)] = spoiled
    path.write_bytes(bytes(data))


@mutation("index-rtree/tree-structure", base=BASE)
def name_a_page_twice(root):
    """The root's second entry names the page its first entry names: that
    page has two parents, the other none."""
    _, _, segment, path = _segment(root)
    root_page = segment.page_range(segment.num_pages - 1)
    first, second = root_page.start, root_page.start + 1
    overwrite_entry(path, "id", segment.ids, second, struct.pack("<Q", int(segment.ids[first])))


@mutation("index-rtree/page-bounds", base=BASE)
def narrow_a_branch_box(root):
    """The root's first entry's xmin rises to its xmax: the box no longer
    contains the entries of the page it names."""
    _, _, segment, path = _segment(root)
    entry = segment.page_range(segment.num_pages - 1).start
    overwrite_entry(path, "xmin", segment.boxes.xmin, entry, struct.pack("<d", float(segment.boxes.xmax[entry])))


@mutation("index-rtree/entries-valid", base=BASE)
def move_a_leaf_box(root):
    """A leaf entry's xmin rises by a quarter: its box no longer contains
    its row's point (its branch boxes still contain it)."""
    _, _, segment, path = _segment(root)
    entry = 7
    moved = float(segment.boxes.xmin[entry]) + 0.25
    overwrite_entry(path, "xmin", segment.boxes.xmin, entry, struct.pack("<d", moved))


@mutation("index-rtree/rows-present", base=BASE)
def repoint_a_leaf_entry(root):
    """A leaf entry names another row holding the same point: the first row
    has no entry, the second two."""
    dataset, _, segment, path = _segment(root)
    addresses, corners, deleted = _rows(dataset)
    by_address = {int(address): row for row, address in enumerate(addresses)}
    for entry, address in enumerate(segment.leaf_ids.tolist()):
        row = by_address[address]
        if deleted[row]:
            continue
        twins = np.flatnonzero((corners[0] == corners[0][row]) & (corners[1] == corners[1][row]))
        other = next((int(t) for t in twins if t != row and not deleted[t]), None)
        if other is not None:
            overwrite_entry(path, "id", segment.ids, entry, struct.pack("<Q", int(addresses[other])))
            return
    raise AssertionError("no indexed row shares its point with another row")


@mutation("index-rtree/null-rows", base=BASE)
def move_a_null_row(root):
    """A recorded null row moves to the next row, which holds a point."""
    dataset, _, segment, path = _segment(root, NULLS_FILE)
    recorded = set(segment.null_rows.tolist())
    row = next(r for r in segment.null_rows.tolist() if r + 1 not in recorded)
    moved = sorted((recorded - {row}) | {row + 1})
    old, new = encode_row_addr_map(segment.null_rows.tolist()), encode_row_addr_map(moved)
    assert len(old) == len(new) and np.array_equal(decode_row_addr_map(new), np.array(moved, np.uint64))
    data = bytearray(path.read_bytes())
    (at,) = occurrences(bytes(data), old)
    data[at : at + len(old)] = new
    path.write_bytes(bytes(data))


@mutation("index-rtree/sampled", base=BASE, breaks=("index.rtree-rows-present",))
def defer_the_rtree_remap(root):
    """pylance 14 compacts both fragments with the remap of the indices
    deferred, then appends a row: the segment's bitmap names the compacted
    fragment while its entries hold the old row addresses, which readers
    translate through the fragment reuse index; the info says they went
    unchecked."""
    import lance  # lazy: pylance is optional (the test extra), as for the bases

    dataset = lance.dataset(str(root))
    dataset.optimize.compact_files(target_rows_per_fragment=5000, defer_index_remap=True)
    lance.write_dataset(dataset.to_table(limit=1), str(root), mode="append")


@mutation("index-rtree/hilbert-order", base=BASE)
def swap_two_leaf_entries(root):
    """Two neighbouring entries of a leaf page, of different Hilbert values,
    trade places (every column): each still names its row with its box, the
    page's box is unchanged, but the leaves are out of Hilbert order."""
    _, _, segment, path = _segment(root)
    values = leaf_hilbert_values(segment, Quantisation.FLOOR)
    first = next(e for e in range(segment.page_size - 1) if values[e] < values[e + 1])
    columns = {
        "xmin": segment.boxes.xmin,
        "ymin": segment.boxes.ymin,
        "xmax": segment.boxes.xmax,
        "ymax": segment.boxes.ymax,
        "id": segment.ids,
    }
    data = bytearray(path.read_bytes())
    for column, column_values in columns.items():
        here, there = (entry_position(path, column, column_values, e) for e in (first, first + 1))
        data[here : here + 8], data[there : there + 8] = data[there : there + 8], data[here : here + 8]
    path.write_bytes(bytes(data))
