"""The BTREE scalar index (upstream format/index/scalar/btree.md): reading a
segment's two Lance files into plain data, answering the queries the page
lists through them, and writing a segment.

* ``page_lookup.lance``: one row per page, ``min``, ``max`` (the key type,
  nullable), ``null_count`` and ``page_idx`` (``UInt32``, not null); schema
  metadata ``batch_size`` (rows per page, "4096" by default) and, as pylance
  14 writes it though the page does not name it, ``range_partitioned``.
* ``page_data.lance``: ``values`` (the key type, sorted) and ``ids``
  (``UInt64``): from ``index_version`` 1 a row address, before it a row id
  (the page, "Page Data File Schema").

What the page leaves open, read here as pylance 14 writes and reads it
(docs/spec-discrepancies.md, "Index formats"):

* the page data file holds the pages one after another, page ``i`` being
  rows ``[i * batch_size, (i + 1) * batch_size)`` (the last one shorter);
* the order is a total order: nulls first, then values ascending, NaN last
  (floating point keys); equal keys in any order (pylance: by id);
* a page's ``min`` is its first value in that order and ``max`` its last, so
  a page holding a null has a null ``min``.

A ``range_partitioned`` segment (``range_partitioned`` "true": per-partition
page files named by a ``page_num_per_range_partition`` key, which no page
describes) is refused with :class:`UnsupportedFeatureError`: the reference
skips it as it skips an index version it does not know.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrow_schema import schema_from_arrow
from ..errors import UnsupportedFeatureError
from ..fragment_writer import encode_lance_file
from ..index_metadata import IndexFile, IndexMetadata
from ..row_ids import row_address
from ..scan import fragment_table
from .files import IndexFileContents, IndexFormatError, index_file_version, read_index_file

if TYPE_CHECKING:
    from ..dataset import Dataset

LOOKUP_FILE = "page_lookup.lance"
DATA_FILE = "page_data.lance"
BATCH_SIZE_KEY = "batch_size"
RANGE_PARTITIONED_KEY = "range_partitioned"
#: The key a range-partitioned lookup needs beside it (no page names it).
PAGES_PER_PARTITION_KEY = "page_num_per_range_partition"
DEFAULT_BATCH_SIZE = 4096
#: The ``index_version`` from which ``ids`` hold row addresses (btree.md).
ROW_ADDRESS_VERSION = 1
#: The newest ``index_version`` read here.
READ_VERSION = 1
#: A ``batch_size`` above this is refused (pylance writes 4096; a page is
#: read whole).
MAX_BATCH_SIZE = 1 << 24


@dataclass(frozen=True)
class PageBounds:
    """One row of the page lookup."""

    page_idx: int
    #: Python values of the key type; None for a null bound.
    min: object
    max: object
    null_count: int


@dataclass(frozen=True)
class BTreePage:
    """One page of the page data: rows ``[start, start + len(ids))``."""

    page_idx: int
    start: int
    values: pa.Array
    ids: np.ndarray


@dataclass(frozen=True)
class BTreeSegment:
    """A BTREE segment's files, decoded."""

    batch_size: int
    range_partitioned: bool
    #: The page lookup in file order.
    lookup: tuple[PageBounds, ...]
    #: The page data, every page in file order.
    values: pa.Array
    ids: np.ndarray
    #: Whether ``ids`` are row addresses (``index_version`` 1 and later) or
    #: row ids (earlier: stable row ids where the dataset has them).
    ids_are_addresses: bool
    lookup_path: str
    data_path: str

    @property
    def page_count(self) -> int:
        """How many pages the page data holds at ``batch_size`` rows a page."""
        return -(-len(self.ids) // self.batch_size)

    def page(self, page_idx: int) -> BTreePage:
        """Page ``page_idx`` of the page data (IndexError past the end)."""
        if not 0 <= page_idx < self.page_count:
            raise IndexError(f"page {page_idx} is not among the {self.page_count} pages")
        start = page_idx * self.batch_size
        stop = min(start + self.batch_size, len(self.ids))
        return BTreePage(page_idx, start, self.values.slice(start, stop - start), self.ids[start:stop])

    # -- queries (btree.md, "Accelerated Queries") ---------------------------

    def search_range(self, low=None, high=None, *, low_inclusive=True, high_inclusive=True) -> np.ndarray:
        """The ids of the entries with ``low <= value <= high`` (a None end is
        open; the inclusive flags choose ``<`` instead). Nulls never match;
        NaN matches only an open upper end, as in a scan."""
        found = []
        for bounds in self.lookup:
            if not _may_hold(bounds, low, high):
                continue
            page = self.page(bounds.page_idx)
            mask = pc.is_valid(page.values)
            if pa.types.is_floating(page.values.type):
                mask = pc.and_(mask, pc.invert(pc.is_nan(page.values)))
            if low is not None:
                compare = pc.greater_equal if low_inclusive else pc.greater
                mask = pc.and_(mask, compare(page.values, pa.scalar(low, page.values.type)))
            if high is not None:
                compare = pc.less_equal if high_inclusive else pc.less
                mask = pc.and_(mask, compare(page.values, pa.scalar(high, page.values.type)))
            found.append(page.ids[np.asarray(mask.fill_null(False), dtype=bool)])
        return _ids(found)

    def search_equal(self, value) -> np.ndarray:
        return self.search_range(value, value)

    def search_in(self, values) -> np.ndarray:
        return np.unique(np.concatenate([self.search_equal(value) for value in values] or [_ids([])]))

    def search_null(self) -> np.ndarray:
        """The ids of the null entries (pages whose ``null_count`` is not 0)."""
        found = []
        for bounds in self.lookup:
            if bounds.null_count:
                page = self.page(bounds.page_idx)
                found.append(page.ids[np.asarray(pc.is_null(page.values), dtype=bool)])
        return _ids(found)


def _ids(parts: list[np.ndarray]) -> np.ndarray:
    return np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)


def _may_hold(bounds: PageBounds, low, high) -> bool:
    """Whether a page with these bounds may hold a non-null, non-NaN value
    in ``[low, high]``: a null ``min`` lies below every value and a NaN
    ``max`` above; a null ``max`` or a NaN ``min`` leaves no such value."""
    if bounds.max is None or _is_nan(bounds.min):
        return False
    if low is not None and not _is_nan(bounds.max) and bounds.max < low:
        return False
    return high is None or bounds.min is None or not bounds.min > high


def _is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def order_rank(value) -> tuple[int, object]:
    """A key ordering Python values as the index orders them: null first,
    NaN last, everything else by its own order."""
    if value is None:
        return (0, 0)
    if _is_nan(value):
        return (2, 0)
    return (1, value)


# -- reading -------------------------------------------------------------------


def read_btree(dataset: Dataset, index: IndexMetadata) -> BTreeSegment:
    """Read ``index``'s two files. Raises :class:`IndexFormatError` for files
    that do not hold what the page says, :class:`UnsupportedFeatureError`
    for a range-partitioned segment."""
    lookup = read_index_file(dataset, index, LOOKUP_FILE)
    data = read_index_file(dataset, index, DATA_FILE)
    return decode_btree(lookup, data, index_version=index.index_version or 0)


def decode_btree(lookup: IndexFileContents, data: IndexFileContents, *, index_version: int) -> BTreeSegment:
    """A segment from its two files, already read (the validator caches them)."""
    if _flag(lookup, RANGE_PARTITIONED_KEY):
        if PAGES_PER_PARTITION_KEY not in lookup.metadata:
            # pylance 14 cannot read such a lookup either (it panics)
            raise IndexFormatError(
                lookup.path, f"is range-partitioned and has no {PAGES_PER_PARTITION_KEY!r} to find its pages by"
            )
        raise UnsupportedFeatureError(
            lookup.path, "a range-partitioned BTREE segment, which the reference does not read"
        )
    batch_size = _batch_size(lookup)
    mins, maxs = lookup.column("min").combine_chunks(), lookup.column("max").combine_chunks()
    null_counts = _unsigned(lookup, "null_count", pa.uint32())
    page_indices = _unsigned(lookup, "page_idx", pa.uint32())
    values = data.column("values").combine_chunks()
    ids = _unsigned(data, "ids", pa.uint64())
    if not _orderable(values.type):
        raise IndexFormatError(data.path, f"keys of type {values.type}, which have no order a BTREE can use")
    if mins.type != values.type or maxs.type != values.type:
        raise IndexFormatError(
            lookup.path, f"page bounds of type {mins.type}/{maxs.type} for keys of type {values.type}"
        )
    entries = tuple(
        PageBounds(int(page), low, high, int(count))
        for page, low, high, count in zip(
            page_indices.tolist(), mins.to_pylist(), maxs.to_pylist(), null_counts.tolist(), strict=True
        )
    )
    return BTreeSegment(
        batch_size=batch_size,
        range_partitioned=False,
        lookup=entries,
        values=values,
        ids=ids,
        ids_are_addresses=index_version >= ROW_ADDRESS_VERSION,
        lookup_path=lookup.path,
        data_path=data.path,
    )


def _orderable(data_type: pa.DataType) -> bool:
    """Types whose values compare (what a BTREE over them needs)."""
    checks = (
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_boolean,
        pa.types.is_string,
        pa.types.is_large_string,
        pa.types.is_binary,
        pa.types.is_large_binary,
        pa.types.is_temporal,
        pa.types.is_decimal,
    )
    return any(check(data_type) for check in checks)


def _flag(contents: IndexFileContents, key: str) -> bool:
    if key not in contents.metadata:
        return False
    text = contents.text(key)
    if text not in ("true", "false"):
        raise IndexFormatError(contents.path, f"metadata {key!r} is {text!r}, not 'true' or 'false'")
    return text == "true"


def _batch_size(lookup: IndexFileContents) -> int:
    if BATCH_SIZE_KEY not in lookup.metadata:
        return DEFAULT_BATCH_SIZE
    text = lookup.text(BATCH_SIZE_KEY)
    if not text.isdigit() or not 0 < int(text) <= MAX_BATCH_SIZE:
        raise IndexFormatError(lookup.path, f"metadata {BATCH_SIZE_KEY!r} is {text!r}, not a count of rows")
    return int(text)


def _unsigned(contents: IndexFileContents, name: str, data_type: pa.DataType) -> np.ndarray:
    column = contents.column(name)
    if column.type != data_type:
        raise IndexFormatError(contents.path, f"column {name!r} is {column.type}, not {data_type}")
    if column.null_count:
        raise IndexFormatError(contents.path, f"column {name!r} holds {column.null_count} nulls")
    return np.asarray(column.combine_chunks().to_numpy(zero_copy_only=False), dtype=data_type.to_pandas_dtype())


# -- writing -------------------------------------------------------------------


def sorted_entries(values: pa.Array, ids: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """``values`` and ``ids`` in the index's order: nulls, values, NaN; ties by id."""
    columns = {"valid": pc.is_valid(values), "values": values, "ids": pa.array(ids, pa.uint64())}
    keys = [("valid", "ascending")]
    if pa.types.is_floating(values.type):
        columns["nan"] = pc.fill_null(pc.is_nan(values), False)
        keys.append(("nan", "ascending"))
    keys += [("values", "ascending"), ("ids", "ascending")]
    order = pc.sort_indices(pa.table(columns), sort_keys=keys)
    return values.take(order), ids[np.asarray(order)]


def encode_btree(
    values: pa.Array, ids: np.ndarray, batch_size: int = DEFAULT_BATCH_SIZE, *, version: str
) -> tuple[bytes, bytes]:
    """The bytes of ``page_lookup.lance`` and ``page_data.lance``, Lance
    files of ``version``, for entries (any order; they are sorted here)."""
    values, ids = sorted_entries(values, ids)
    data = pa.table({"values": values, "ids": pa.array(ids, pa.uint64())})
    data_schema = pa.schema([pa.field("values", values.type), pa.field("ids", pa.uint64(), nullable=False)])
    data = data.cast(data_schema)
    starts = list(range(0, len(ids), batch_size))
    lookup_schema = pa.schema(
        [
            pa.field("min", values.type),
            pa.field("max", values.type),
            pa.field("null_count", pa.uint32(), nullable=False),
            pa.field("page_idx", pa.uint32(), nullable=False),
        ]
    )
    pages = [values.slice(start, batch_size) for start in starts]
    lookup = pa.table(
        {
            "min": pa.array([page[0].as_py() for page in pages], values.type),
            "max": pa.array([page[len(page) - 1].as_py() for page in pages], values.type),
            "null_count": pa.array([page.null_count for page in pages], pa.uint32()),
            "page_idx": pa.array(range(len(pages)), pa.uint32()),
        },
        schema=lookup_schema,
    )
    metadata = {BATCH_SIZE_KEY: str(batch_size).encode(), RANGE_PARTITIONED_KEY: b"false"}
    lookup_file = encode_lance_file(lookup, schema_from_arrow(lookup_schema).fields, metadata, version=version)
    data_file = encode_lance_file(data, schema_from_arrow(data_schema).fields, None, version=version)
    return lookup_file.data, data_file.data


def key_values(dataset: Dataset, fragment, path: list[str]) -> pa.Array:
    """The key field's values of every physical row of ``fragment``."""
    table = fragment_table(dataset, fragment, include_deleted=True, columns=[path[0]])
    column = table.column(path[0]).combine_chunks()
    for name in path[1:]:
        column = pc.struct_field(column, name)
    return column


def write_btree(dataset: Dataset, index: IndexMetadata, path: list[str]) -> list[IndexFile]:
    """Write the files of ``index`` (a BTREE segment over the fragments its
    bitmap names, keyed on the field at ``path``) and return them as the
    manifest lists them. Deleted rows are left out (index.md allows it for
    rows deleted before the segment is built); ``ids`` are row addresses,
    which is what ``index_version`` 0 and 1 both store for a dataset
    without stable row ids, and what 1 stores with them. A segment covering
    no fragment gets no files (an empty list)."""
    covered = set(index.fragment_ids() or [])
    values, ids = [], []
    for fragment in dataset.fragments:
        if fragment.id not in covered:
            continue
        column = key_values(dataset, fragment, path)
        keep = np.ones(len(column), dtype=bool)
        keep[list(dataset.deleted_offsets(fragment))] = False
        addresses = np.uint64(row_address(fragment.id, 0)) + np.arange(len(column), dtype=np.uint64)
        values.append(column.filter(pa.array(keep)))
        ids.append(addresses[keep])
    if not values:
        return []  # nothing to index: the segment stays metadata only, as before this writer
    lookup_bytes, data_bytes = encode_btree(
        pa.concat_arrays(values), np.concatenate(ids), version=index_file_version(dataset)
    )
    files = []
    for name, content in ((DATA_FILE, data_bytes), (LOOKUP_FILE, lookup_bytes)):
        location = dataset.index_file_location(index, name)
        location.storage.put(location.relpath, content)
        files.append(IndexFile(name, len(content)))
    return files
