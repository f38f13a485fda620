"""The R-Tree index (upstream format/index/scalar/rtree.md): a static 2D
index over the bounding boxes of a GeoArrow geometry column, packed bottom
up into pages of ``page_size`` entries and stored in two Lance files.

* ``page_data.lance``: ``bbox`` (a GeoArrow box, physically
  ``struct<xmin, ymin, xmax, ymax>`` of ``Float64``) and ``id``
  (``UInt64``), one row per entry; the leaf pages first (an entry per
  indexed row: from ``index_version`` 1 its row address, before it its row
  id), then each branch level (an entry per page of the level below: the
  union of that page's boxes and the page's number). Schema metadata:
  ``page_size``, ``num_pages``, ``num_items`` (leaf entries) and ``bbox``
  (the JSON of the box around every entry).
* ``nulls.lance``: one ``Binary`` row, the serialized RowAddrTreeMap
  (:mod:`.row_addr_map`) of the rows whose geometry is null.

The page offsets follow from ``num_items`` and ``page_size`` alone
(:func:`page_offsets`, the page's "Query Traversal"); the root is the last
page. What the page leaves open is read as pylance 14 writes and reads it
(docs/spec-discrepancies.md, "Index formats", RTREE): a missing
``page_size`` means 4096, and rows whose geometry is empty (no coordinate,
or NaN ones) are in neither file.

:func:`intersecting` walks a segment as the page's traversal does;
:func:`leaf_hilbert_values` gives the Hilbert value the page sorts leaf
entries by (pylance 14 truncates where the page rounds: both are given).
:func:`geometry_boxes` gives the bounding box of each value of a native
GeoArrow column (points, line strings, polygons, their multi forms, boxes;
separated or interleaved coordinates), which is what a leaf entry holds for
its row. Serialized encodings (WKB, WKT) are not decoded here.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .files import IndexFileContents, IndexFormatError, read_index_file
from .row_addr_map import RowAddrMapError, decode_row_addr_map

if TYPE_CHECKING:
    from ..dataset import Dataset
    from ..index_metadata import IndexMetadata

PAGE_FILE = "page_data.lance"
NULLS_FILE = "nulls.lance"
PAGE_SIZE_KEY, NUM_PAGES_KEY, NUM_ITEMS_KEY, BBOX_KEY = "page_size", "num_pages", "num_items", "bbox"
BBOX_COLUMN, ID_COLUMN, NULLS_COLUMN = "bbox", "id", "nulls"
BOX_FIELDS = ("xmin", "ymin", "xmax", "ymax")
#: What a file without ``page_size`` means (pylance's default page size).
DEFAULT_PAGE_SIZE = 4096
#: The ``index_version`` from which leaf ids are row addresses (rtree.md).
ROW_ADDRESS_VERSION = 1


@dataclass(frozen=True)
class Boxes:
    """Axis-aligned boxes, one per position, as four ``float64`` arrays."""

    xmin: np.ndarray
    ymin: np.ndarray
    xmax: np.ndarray
    ymax: np.ndarray

    def __len__(self) -> int:
        return len(self.xmin)

    def take(self, positions) -> Boxes:
        return Boxes(self.xmin[positions], self.ymin[positions], self.xmax[positions], self.ymax[positions])

    def contain(self, other: Boxes) -> np.ndarray:
        """Whether each box contains the box at the same position of ``other``."""
        return (
            (self.xmin <= other.xmin)
            & (self.ymin <= other.ymin)
            & (self.xmax >= other.xmax)
            & (self.ymax >= other.ymax)
        )

    def describe(self, position: int) -> str:
        values = (self.xmin[position], self.ymin[position], self.xmax[position], self.ymax[position])
        return "[" + ", ".join(f"{float(v)!r}" for v in values) + "]"


@dataclass(frozen=True)
class RTreeSegment:
    """One segment's two files, decoded."""

    path: str
    page_size: int
    num_pages: int
    num_items: int
    #: The box of the ``bbox`` metadata key (None when the key is absent).
    global_box: tuple[float, float, float, float] | None
    #: Every entry of page_data.lance, leaves first.
    boxes: Boxes
    ids: np.ndarray
    #: The first entry of each page; page ``i`` runs to the next offset (the
    #: last one to the end of the file).
    offsets: tuple[int, ...]
    #: The page numbers of each level, from the leaves up to the root.
    levels: tuple[tuple[int, ...], ...]
    #: The rows recorded as null (row addresses, or row ids before version 1).
    null_rows: np.ndarray
    #: Whether leaf ids are row addresses (``index_version`` >= 1).
    ids_are_addresses: bool

    def page_range(self, page: int) -> range:
        end = self.offsets[page + 1] if page + 1 < len(self.offsets) else len(self.ids)
        return range(self.offsets[page], end)

    def is_leaf(self, page: int) -> bool:
        return self.offsets[page] < self.num_items

    @property
    def leaf_ids(self) -> np.ndarray:
        return self.ids[: self.num_items]

    @property
    def leaf_boxes(self) -> Boxes:
        return self.boxes.take(slice(0, self.num_items))


def tree_levels(num_items: int, page_size: int) -> list[list[int]]:
    """The first entry of each page, level by level from the leaves up, for
    ``num_items`` leaf entries (rtree.md, "Query Traversal"): the leaves at
    ``page_size`` a page, then each branch level over the pages of the level
    below, until a level fits in one page, the root. No level for no entry;
    at most ``num_items`` pages in all for a ``page_size`` of at least 2."""
    levels: list[list[int]] = []
    level_items, level_start = num_items, 0
    while level_items > 0:
        if level_items <= page_size:
            levels.append([level_start])
            break
        levels.append(list(range(level_start, level_start + level_items, page_size)))
        level_start += level_items
        level_items = -(-level_items // page_size)
    return levels


def page_offsets(num_items: int, page_size: int) -> list[int]:
    """The first entry of each page, pages numbered from the first leaf to
    the root (the numbers branch entries hold)."""
    return [offset for level in tree_levels(num_items, page_size) for offset in level]


def _whole_number(contents: IndexFileContents, key: str, default: int | None = None) -> int:
    if key not in contents.metadata and default is not None:
        return default
    text = contents.text(key)
    if not (text.isascii() and text.isdigit()):
        raise IndexFormatError(contents.path, f"{key} is {text!r}, not a non-negative integer")
    return int(text)


def _global_box(contents: IndexFileContents) -> tuple[float, float, float, float] | None:
    """The ``bbox`` metadata box. pylance 14 writes the box of no entry (its
    infinite bounds) with JSON nulls: a null minimum is read as +inf and a
    null maximum as -inf, an empty box."""
    if BBOX_KEY not in contents.metadata:
        return None
    text = contents.text(BBOX_KEY)
    try:
        decoded = json.loads(text)
        limits = {"minx": math.inf, "miny": math.inf, "maxx": -math.inf, "maxy": -math.inf}
        xmin, ymin, xmax, ymax = (limits[key] if decoded[key] is None else float(decoded[key]) for key in limits)
    except (ValueError, TypeError, KeyError):
        problem = f"bbox is {text[:80]!r}, not a JSON box with minx, miny, maxx, maxy"
        raise IndexFormatError(contents.path, problem) from None
    return xmin, ymin, xmax, ymax


def _boxes(contents: IndexFileContents) -> Boxes:
    column = contents.column(BBOX_COLUMN).combine_chunks()
    if column.type.num_fields != 4 or not pa.types.is_struct(column.type):
        raise IndexFormatError(contents.path, f"bbox is {column.type}, not struct<xmin, ymin, xmax, ymax>")
    names = [column.type.field(i).name for i in range(4)]
    if names != list(BOX_FIELDS) or any(column.type.field(i).type != pa.float64() for i in range(4)):
        raise IndexFormatError(contents.path, f"bbox is {column.type}, not struct of four float64 {BOX_FIELDS}")
    if column.null_count or any(column.field(i).null_count for i in range(4)):
        raise IndexFormatError(contents.path, "bbox holds nulls (the page makes it not nullable)")
    xmin, ymin, xmax, ymax = (column.field(i).to_numpy(zero_copy_only=False) for i in range(4))
    return Boxes(xmin, ymin, xmax, ymax)


def _ids(contents: IndexFileContents) -> np.ndarray:
    column = contents.column(ID_COLUMN).combine_chunks()
    if column.type != pa.uint64() or column.null_count:
        raise IndexFormatError(
            contents.path, f"id is {column.type} with {column.null_count} nulls, not UInt64 non-null"
        )
    return column.to_numpy(zero_copy_only=False).astype(np.uint64)


def _null_rows(contents: IndexFileContents) -> np.ndarray:
    column = contents.column(NULLS_COLUMN).combine_chunks()
    if not pa.types.is_binary(column.type) and not pa.types.is_large_binary(column.type):
        raise IndexFormatError(contents.path, f"nulls is {column.type}, not Binary")
    if len(column) > 1 or column.null_count:
        raise IndexFormatError(contents.path, f"holds {len(column)} rows ({column.null_count} null), not one value")
    if not len(column):
        return np.zeros(0, dtype=np.uint64)  # pylance reads no row as no null row
    try:
        return decode_row_addr_map(column[0].as_py())
    except RowAddrMapError as exc:
        raise IndexFormatError(contents.path, f"the null rows do not decode: {exc}") from None


def rtree_of(pages: IndexFileContents, nulls: IndexFileContents, index_version: int) -> RTreeSegment:
    """Decode both files already read; :class:`IndexFormatError` when they
    do not hold what rtree.md says (the counts are checked against the rows
    of the page file before any page list is built)."""
    boxes, ids = _boxes(pages), _ids(pages)
    page_size = _whole_number(pages, PAGE_SIZE_KEY, DEFAULT_PAGE_SIZE)
    num_items = _whole_number(pages, NUM_ITEMS_KEY)
    num_pages = _whole_number(pages, NUM_PAGES_KEY)
    if num_items > len(ids):
        raise IndexFormatError(pages.path, f"num_items is {num_items} but the file holds {len(ids)} entries")
    if page_size < 2 and num_items > 1:
        raise IndexFormatError(pages.path, f"page_size {page_size} cannot hold {num_items} entries in a tree")
    levels = tree_levels(num_items, max(page_size, 2))
    offsets = [offset for level in levels for offset in level]
    if num_pages != len(offsets):
        raise IndexFormatError(
            pages.path, f"num_pages is {num_pages} but {num_items} entries at {page_size} a page make {len(offsets)}"
        )
    return RTreeSegment(
        pages.path,
        page_size,
        num_pages,
        num_items,
        _global_box(pages),
        boxes,
        ids,
        tuple(offsets),
        _levels_as_pages(levels),
        _null_rows(nulls),
        index_version >= ROW_ADDRESS_VERSION,
    )


def _levels_as_pages(levels: list[list[int]]) -> tuple[tuple[int, ...], ...]:
    pages, first = [], 0
    for level in levels:
        pages.append(tuple(range(first, first + len(level))))
        first += len(level)
    return tuple(pages)


def read_rtree(dataset: Dataset, index: IndexMetadata) -> RTreeSegment:
    """The R-Tree segment ``index`` of ``dataset``."""
    pages, nulls = read_index_file(dataset, index, PAGE_FILE), read_index_file(dataset, index, NULLS_FILE)
    return rtree_of(pages, nulls, index.index_version or 0)


def intersecting(segment: RTreeSegment, box: tuple[float, float, float, float]) -> np.ndarray:
    """The leaf ids whose boxes intersect ``box`` (xmin, ymin, xmax, ymax),
    found as rtree.md's "Query Traversal" walks the tree: from the root,
    into the pages named by branch entries whose boxes intersect, taking the
    ids of leaf entries that do. Candidates of an AtMost answer: the rows'
    geometries are then tested exactly. Each page is visited once."""
    xmin, ymin, xmax, ymax = box
    found: list[np.ndarray] = []
    stack, seen = ([segment.num_pages - 1] if segment.num_pages else []), set()
    while stack:
        page = stack.pop()
        if page in seen or not 0 <= page < segment.num_pages:
            continue
        seen.add(page)
        entries = segment.page_range(page)
        boxes = segment.boxes.take(slice(entries.start, entries.stop))
        hit = (boxes.xmin <= xmax) & (boxes.xmax >= xmin) & (boxes.ymin <= ymax) & (boxes.ymax >= ymin)
        ids = segment.ids[entries.start : entries.stop][hit]
        if segment.is_leaf(page):
            found.append(ids)
        else:
            stack.extend(int(child) for child in ids)
    return np.sort(np.concatenate(found)) if found else np.zeros(0, np.uint64)


# -- the order of the leaf entries --------------------------------------------------------

#: The bits per axis of the Hilbert grid (rtree.md, "Hilbert Curve Sorting").
HILBERT_BITS = 16
_GRID_MAX = (1 << HILBERT_BITS) - 1


class Quantisation(enum.Enum):
    """How a box centre becomes a grid coordinate: the page rounds; pylance
    14 truncates (floor), docs/spec-discrepancies.md, "Index formats", RTREE."""

    ROUND = "round"
    FLOOR = "floor"


def hilbert_values(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The Hilbert value of each grid cell ``(x, y)`` (integers in ``[0,
    2**16)``), as the page's pseudocode computes it one bit pair at a time
    from the most significant, rotating the quadrant as it goes."""
    x, y = x.astype(np.uint64), y.astype(np.uint64)
    mask = np.uint64(_GRID_MAX)
    h = np.zeros(len(x), np.uint64)
    for bit in range(HILBERT_BITS - 1, -1, -1):
        shift = np.uint64(bit)
        rx, ry = (x >> shift) & np.uint64(1), (y >> shift) & np.uint64(1)
        h |= ((np.uint64(3) * rx) ^ ry) << np.uint64(2 * bit)
        flip = (ry == 0) & (rx == 1)
        x, y = np.where(flip, ~x & mask, x), np.where(flip, ~y & mask, y)
        turn = ry == 0
        x, y = np.where(turn, y, x), np.where(turn, x, y)
    return h


def leaf_hilbert_values(segment: RTreeSegment, quantisation: Quantisation) -> np.ndarray:
    """The Hilbert value of each leaf entry's box centre on the grid over
    the segment's ``bbox`` metadata (the global box the entries were sorted
    by); an axis of no extent is one cell (every value 0 on it)."""
    assert segment.global_box is not None
    xmin, ymin, xmax, ymax = segment.global_box
    width, height = (xmax - xmin) or 1.0, (ymax - ymin) or 1.0
    boxes = segment.leaf_boxes
    with np.errstate(invalid="ignore", over="ignore"):
        cells = [
            _GRID_MAX * ((low + high) / 2 - origin) / extent
            for low, high, origin, extent in (
                (boxes.xmin, boxes.xmax, xmin, width),
                (boxes.ymin, boxes.ymax, ymin, height),
            )
        ]
        snap = np.round if quantisation is Quantisation.ROUND else np.floor
        x, y = (np.clip(np.nan_to_num(snap(cell)), 0, _GRID_MAX) for cell in cells)
    return hilbert_values(x, y)


# -- the bounding box of a geometry ------------------------------------------------------


class UnsupportedGeometry(ValueError):
    """A geometry column the reference computes no boxes for (a serialized
    encoding such as WKB or WKT, or an unknown layout)."""


@dataclass(frozen=True)
class GeometryBoxes:
    """The box of each value of a geometry column."""

    boxes: Boxes
    #: The value is null (recorded in the nulls file).
    null: np.ndarray
    #: The value has no coordinate, or a NaN one: no box (pylance 14 indexes
    #: it in neither file).
    empty: np.ndarray


def _coordinates(values: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """(x, y) at the bottom of a geometry's nesting, each of shape (1, n) for
    points and (2, n) for boxes (minimum, maximum), or None for a level that
    is not coordinates."""
    data_type = values.type
    if pa.types.is_struct(data_type):
        names = [data_type.field(i).name for i in range(data_type.num_fields)]
        if names == list(BOX_FIELDS):
            corners = [np.asarray(values.field(name).to_numpy(zero_copy_only=False), np.float64) for name in names]
            return np.stack([corners[0], corners[2]]), np.stack([corners[1], corners[3]])
        if names[:2] == ["x", "y"]:
            x = np.asarray(values.field("x").to_numpy(zero_copy_only=False), np.float64)
            y = np.asarray(values.field("y").to_numpy(zero_copy_only=False), np.float64)
            return x[None, :], y[None, :]
        return None
    if (
        pa.types.is_fixed_size_list(data_type)
        and pa.types.is_floating(data_type.value_type)
        and data_type.list_size >= 2
    ):
        size = data_type.list_size
        # the child array, null points' slots included, so that positions stay aligned
        child = values.values.slice(values.offset * size, len(values) * size)
        flat = np.asarray(child.to_numpy(zero_copy_only=False), np.float64).reshape(-1, size)
        return flat[:, 0][None, :], flat[:, 1][None, :]
    return None


def geometry_boxes(values: pa.Array) -> GeometryBoxes:
    """The bounding box of each value of a native GeoArrow column (nested
    lists down to ``struct<x, y, ...>`` or interleaved coordinates, or a
    box struct); :class:`UnsupportedGeometry` for anything else."""
    rows = len(values)
    if not rows:  # whatever the type (no rows read: an untyped empty array)
        nothing = np.zeros(0, np.float64)
        return GeometryBoxes(Boxes(nothing, nothing, nothing, nothing), np.zeros(0, bool), np.zeros(0, bool))
    null = np.asarray(values.is_null(), dtype=bool)
    owner = np.arange(rows, dtype=np.int64)
    level = values
    while pa.types.is_list(level.type) or pa.types.is_large_list(level.type):
        parents = np.asarray(pc.list_parent_indices(level), dtype=np.int64)
        owner = owner[parents]
        level = pc.list_flatten(level)
    found = _coordinates(level) if isinstance(level, pa.Array) else None
    if found is None:
        raise UnsupportedGeometry(f"no native GeoArrow coordinates in {values.type}")
    x, y = found
    valid = np.asarray(level.is_valid(), dtype=bool) if len(level) else np.zeros(0, bool)
    x, y, owner = x[:, valid], y[:, valid], owner[valid]
    nan = np.zeros(rows, bool)
    np.logical_or.at(nan, owner, np.isnan(x).any(axis=0) | np.isnan(y).any(axis=0))
    xmin, ymin = np.full(rows, math.inf), np.full(rows, math.inf)
    xmax, ymax = np.full(rows, -math.inf), np.full(rows, -math.inf)
    # a box's first row holds its minimums and its last its maximums; a point
    # has one row. NaNs propagate into the bounds (the row is then empty).
    with np.errstate(invalid="ignore"):
        np.minimum.at(xmin, owner, x[0])
        np.minimum.at(ymin, owner, y[0])
        np.maximum.at(xmax, owner, x[-1])
        np.maximum.at(ymax, owner, y[-1])
    empty = ~null & (nan | (xmin > xmax) | (ymin > ymax))
    return GeometryBoxes(Boxes(xmin, ymin, xmax, ymax), null, empty)
