"""BITMAP index segments (upstream format/index/scalar/bitmap.md).

A segment is one Lance file, ``bitmap_page_lookup.lance``, with a row per
distinct value of the indexed column: ``keys`` (the value, of the column's
type) and ``bitmaps`` (a serialized row address map,
:mod:`.row_addr_map`, of the rows holding it). The rows whose value is null
are the bitmap of the null key: the "pre-computed null bitmap" the page
answers ``IS NULL`` from. The schema metadata ``lance:index_stats`` holds
JSON statistics (pylance 14 writes ``{"num_bitmaps": <rows of the file>}``;
the page does not name the key).

What the sets hold depends on the segment's ``index_version`` (the page, on
the ``bitmaps`` column): row addresses from version 1, row ids before it
(stable row ids where the dataset has them; without them a row id is the
row address). pylance 14 writes version 0.

pylance 14 writes the keys ascending, the null key first; the page asks for
unique keys and no order, and pylance's reader sorts them itself.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrow_schema import schema_from_arrow
from ..storage import Storage
from .files import IndexFileContents, IndexFormatError, read_index_file, write_index_file
from .row_addr_map import MAX_ROWS, RowAddrMapError, decode_row_addr_map, encode_row_addr_map

if TYPE_CHECKING:
    from ..dataset import Dataset
    from ..index_metadata import IndexMetadata

#: The one file of a segment (the page, "Storage Layout").
BITMAP_FILE = "bitmap_page_lookup.lance"
KEYS_COLUMN = "keys"
BITMAPS_COLUMN = "bitmaps"
#: Schema metadata key of the segment's statistics (JSON).
INDEX_STATS_KEY = "lance:index_stats"
#: The first ``index_version`` whose sets hold row addresses (the page).
ADDRESSES_FROM_VERSION = 1
#: The ``index_version`` pylance 14 writes, and so the reference.
WRITTEN_VERSION = 0
#: The newest ``index_version`` the page defines.
NEWEST_VERSION = 1


class RowIdentifiers(enum.Enum):
    """What a segment's row sets hold."""

    ROW_IDS = "row ids"
    ROW_ADDRESSES = "row addresses"


def identifiers_of(index_version: int | None, addresses_from: int) -> RowIdentifiers:
    """Row addresses from version ``addresses_from`` on, row ids before."""
    return RowIdentifiers.ROW_ADDRESSES if (index_version or 0) >= addresses_from else RowIdentifiers.ROW_IDS


@dataclass(frozen=True)
class BitmapSegment:
    """A ``bitmap_page_lookup.lance`` file as plain data: entry ``i`` is key
    ``keys[i]`` (null for the null key) with the ascending ``uint64`` row
    set ``row_sets[i]``, in file order; duplicate keys are kept as stored."""

    path: str
    keys: pa.Array
    row_sets: tuple[np.ndarray, ...]
    #: The parsed ``lance:index_stats`` (None when the file has none).
    stats: Mapping | None
    identifiers: RowIdentifiers

    @property
    def null_rows(self) -> np.ndarray:
        """The null bitmap: the rows of every null key (none: empty)."""
        sets = [rows for key, rows in zip(self.keys.is_null().to_pylist(), self.row_sets, strict=True) if key]
        return np.unique(np.concatenate(sets)) if sets else np.zeros(0, dtype=np.uint64)

    def lookup(self) -> dict:
        """Key (a Python value) -> row set, the null key left out; the sets
        of a key stored twice are united."""
        out: dict = {}
        for key, rows in zip(self.keys.to_pylist(), self.row_sets, strict=True):
            if key is not None:
                out[key] = np.union1d(out[key], rows) if key in out else rows
        return out


def decode_bitmap_file(
    contents: IndexFileContents, identifiers: RowIdentifiers, *, max_rows: int = MAX_ROWS
) -> BitmapSegment:
    """Decode a bitmap lookup file already read. ``max_rows`` bounds the row
    entries of all its sets together, checked before each set is expanded.
    Raises :class:`IndexFormatError` naming the file and the problem."""
    keys = contents.column(KEYS_COLUMN).combine_chunks()
    bitmaps = contents.column(BITMAPS_COLUMN).combine_chunks()
    if not (pa.types.is_binary(bitmaps.type) or pa.types.is_large_binary(bitmaps.type)):
        raise IndexFormatError(contents.path, f"its bitmaps column is {bitmaps.type}, not binary")
    row_sets: list[np.ndarray] = []
    budget = max_rows
    for number, raw in enumerate(bitmaps):
        if not raw.is_valid:  # the column is nullable (the page): a null set holds no row
            row_sets.append(np.zeros(0, dtype=np.uint64))
            continue
        try:
            rows = decode_row_addr_map(raw.as_buffer().to_pybytes(), max_rows=budget)
        except RowAddrMapError as exc:
            raise IndexFormatError(
                contents.path, f"the bitmap of row {number} (key {_shown(keys[number])}): {exc}"
            ) from None
        budget -= len(rows)
        row_sets.append(rows)
    return BitmapSegment(contents.path, keys, tuple(row_sets), _stats(contents), identifiers)


def read_bitmap_segment(dataset: Dataset, index: IndexMetadata, *, max_rows: int = MAX_ROWS) -> BitmapSegment:
    """Read and decode the lookup file of BITMAP segment ``index``."""
    contents = read_index_file(dataset, index, BITMAP_FILE)
    return decode_bitmap_file(contents, identifiers_of(index.index_version, ADDRESSES_FROM_VERSION), max_rows=max_rows)


def _stats(contents: IndexFileContents) -> Mapping | None:
    if INDEX_STATS_KEY not in contents.metadata:
        return None
    try:
        stats = json.loads(contents.text(INDEX_STATS_KEY))
    except json.JSONDecodeError as exc:
        raise IndexFormatError(contents.path, f"{INDEX_STATS_KEY} is not JSON: {exc}") from None
    if not isinstance(stats, dict):
        raise IndexFormatError(contents.path, f"{INDEX_STATS_KEY} is not a JSON object")
    return stats


def _shown(scalar: pa.Scalar) -> str:
    return "null" if not scalar.is_valid else repr(scalar.as_py())


# -- writing ---------------------------------------------------------------------


def group_rows(values: pa.Array, rows: np.ndarray) -> tuple[pa.Array, list[np.ndarray]]:
    """The distinct ``values`` ascending, null first when there is one, each
    with the ascending set of ``rows`` (parallel to ``values``) holding it."""
    table = pa.table({"value": values, "row": pa.array(np.asarray(rows, dtype=np.uint64))})
    grouped = table.group_by("value", use_threads=False).aggregate([("row", "list")])
    grouped = grouped.take(pc.sort_indices(grouped, sort_keys=[("value", "ascending")]))
    # The null key (sorted last) goes first, as pylance 14 writes it.
    valid = grouped.column("value").is_valid().to_numpy(zero_copy_only=False)
    grouped = grouped.take(pa.array(np.argsort(valid, kind="stable")))
    sets = [np.unique(np.asarray(part, dtype=np.uint64)) for part in grouped.column("row_list").to_pylist()]
    return grouped.column("value").combine_chunks().cast(values.type), sets


def write_bitmap_file(
    storage: Storage,
    relpath: str,
    keys: pa.Array,
    row_sets: list[np.ndarray],
    *,
    version: str,
    metadata: Mapping[str, bytes] | None = None,
    buffers: tuple[bytes, ...] = (),
) -> int:
    """Store a lookup file of ``version`` holding ``keys`` with ``row_sets``
    (as pylance 14 lays it out: a ``keys`` and a ``bitmaps`` column, its
    statistics, then ``metadata``), global buffers 1 on being ``buffers``;
    its size in bytes."""
    table = pa.table(
        {
            KEYS_COLUMN: keys,
            BITMAPS_COLUMN: pa.array([encode_row_addr_map(rows) for rows in row_sets], pa.binary()),
        }
    )
    fields = schema_from_arrow(table.schema).fields
    stats = json.dumps({"num_bitmaps": len(row_sets)}, separators=(",", ":")).encode()
    metadata = {**(metadata or {}), INDEX_STATS_KEY: stats}
    return write_index_file(storage, relpath, table, fields, metadata, version=version, global_buffers=buffers)


def write_bitmap_segment(storage: Storage, directory: str, values: pa.Array, rows: np.ndarray, *, version: str) -> int:
    """Write the lookup file (a Lance file of ``version``) of a BITMAP
    segment over ``values`` (the column's values) of ``rows`` (what the
    segment stores for each: row ids or row addresses) into ``directory``;
    its size in bytes."""
    keys, sets = group_rows(values, rows)
    return write_bitmap_file(storage, f"{directory}/{BITMAP_FILE}", keys, sets, version=version)
