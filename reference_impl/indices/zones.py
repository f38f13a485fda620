"""Zones: what the zone map and bloom filter indices have in common
(upstream format/index/scalar/zonemap.md, "Zone Statistics File Schema";
the bloom filter stores the same three columns, protos/index.proto
``BloomFilterIndexDetails`` and pylance 14's ``bloomfilter.lance``).

A zone is a run of rows of one fragment: ``fragment_id``, ``zone_start``
(the offset of its first row in the fragment) and ``zone_length``. pylance
14 cuts each fragment's rows that are not deleted into zones of a fixed
number of rows, in offset order; ``zone_length`` is the span from the first
row's offset to the last's, plus one, so rows deleted before the index was
built may lie inside a zone (counted in its length, not in its statistics)
or between zones. Zones do not cross fragments and never overlap.

Both files may also record the rows whose value is null as a serialized
row address set in a global buffer, whose number the schema metadata key
``null_bitmap`` holds (zonemap.md, "Global Buffers").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .files import IndexFileContents, IndexFormatError
from .row_addr_map import RowAddrMapError, decode_row_addr_map

FRAGMENT_ID = "fragment_id"
ZONE_START = "zone_start"
ZONE_LENGTH = "zone_length"
#: Schema metadata key: the number of the global buffer holding the null rows.
NULL_BITMAP_KEY = "null_bitmap"

#: The zone columns' types as pylance 14 writes them. zonemap.md types
#: ``zone_length`` UInt32; pylance 14 writes UInt64 (docs/spec-discrepancies.md),
#: and any unsigned integer type is read.
ZONE_COLUMN_TYPES = {FRAGMENT_ID: pa.uint64(), ZONE_START: pa.uint64(), ZONE_LENGTH: pa.uint64()}


@dataclass(frozen=True)
class Zones:
    """The zones of one segment, one entry per row of its file, in file order."""

    fragment_ids: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.fragment_ids)

    @property
    def ends(self) -> np.ndarray:
        """One past the offset of each zone's last row."""
        return self.starts + self.lengths

    def of_fragment(self, fragment_id: int) -> np.ndarray:
        """Positions of the zones of ``fragment_id``, by start offset."""
        positions = np.flatnonzero(self.fragment_ids == np.uint64(fragment_id))
        return positions[np.argsort(self.starts[positions], kind="stable")]


def unsigned_column(contents: IndexFileContents, name: str) -> np.ndarray:
    """A column of unsigned integers with no nulls, as uint64;
    :class:`IndexFormatError` when it is missing, of another type or has
    nulls (the page declares these columns not nullable)."""
    column = contents.column(name)
    if not pa.types.is_unsigned_integer(column.type):
        raise IndexFormatError(contents.path, f"column {name!r} is {column.type}, not an unsigned integer")
    if column.null_count:
        raise IndexFormatError(contents.path, f"column {name!r} holds {column.null_count} nulls")
    return column.to_numpy().astype(np.uint64)


def read_zones(contents: IndexFileContents) -> Zones:
    """The zone columns of a zone map or bloom filter file."""
    return Zones(
        unsigned_column(contents, FRAGMENT_ID),
        unsigned_column(contents, ZONE_START),
        unsigned_column(contents, ZONE_LENGTH),
    )


def read_null_rows(contents: IndexFileContents) -> np.ndarray | None:
    """The row addresses of null rows the file records (ascending uint64), or
    None when it records none (no ``null_bitmap`` key: files of releases
    before the key existed)."""
    if NULL_BITMAP_KEY not in contents.metadata:
        return None
    text = contents.text(NULL_BITMAP_KEY)
    if not text.isdigit() or not 0 < int(text) < len(contents.global_buffers):
        raise IndexFormatError(
            contents.path,
            f"{NULL_BITMAP_KEY} names global buffer {text!r}, not one of 1..{len(contents.global_buffers) - 1}",
        )
    try:
        return decode_row_addr_map(contents.global_buffers[int(text)])
    except RowAddrMapError as exc:
        raise IndexFormatError(contents.path, f"the null rows (global buffer {text}) do not decode: {exc}") from None
