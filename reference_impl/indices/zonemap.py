"""The zone map index (upstream format/index/scalar/zonemap.md): per zone of
rows (:mod:`.zones`), the minimum and maximum of the key column's non-null,
non-NaN values, and how many of its values are null and NaN, in one file,
``zonemap.lance``, whose schema metadata holds ``rows_per_zone``.

Reading gives a :class:`ZoneMap`; :func:`zone_statistics` computes what a
zone's row should hold for given values, and :func:`write_zone_map` writes a
segment's file from the dataset's rows, as pylance 14 cuts zones (each
fragment's rows that are not deleted, ``rows_per_zone`` at a time), so that
pylance 14 plans queries through it.

Comparisons follow Arrow's total ordering (zonemap.md): ``-0.0`` sorts below
``0.0``; NaNs never enter the bounds, and ``max`` is the canonical ``+NaN``
when the zone holds a positive NaN. pylance 14 writes that marker for NaNs
of either sign, the convention older indices follow, which the page tells
readers to take as "holds NaNs of unknown sign" (docs/spec-discrepancies.md).
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrow_schema import schema_from_arrow, schema_to_arrow
from ..index_metadata import IndexFile, IndexMetadata
from ..scan import ROW_ADDRESS, fragment_table
from .files import IndexFileContents, IndexFormatError, index_file_version, read_index_file, write_index_file
from .zones import FRAGMENT_ID, ZONE_LENGTH, ZONE_START, Zones, read_null_rows, read_zones, unsigned_column

if TYPE_CHECKING:
    from ..dataset import Dataset

ZONEMAP_FILE = "zonemap.lance"
ROWS_PER_ZONE_KEY = "rows_per_zone"
#: zonemap.md: "default: 8192" (also what a file without the key means).
DEFAULT_ROWS_PER_ZONE = 8192
MIN, MAX, NULL_COUNT, NAN_COUNT = "min", "max", "null_count", "nan_count"
#: The canonical quiet NaN with the sign bit clear, as the ``max`` marker.
POSITIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000000))[0]


@dataclass(frozen=True)
class ZoneMap:
    """One segment's ``zonemap.lance``, decoded."""

    path: str
    rows_per_zone: int
    zones: Zones
    minimums: pa.Array
    maximums: pa.Array
    null_counts: np.ndarray
    nan_counts: np.ndarray
    #: Row addresses of the null rows, or None when the file records none.
    null_rows: np.ndarray | None


def zone_map_of(contents: IndexFileContents) -> ZoneMap:
    """Decode a ``zonemap.lance`` already read; :class:`IndexFormatError`
    when it does not hold what zonemap.md says."""
    rows_per_zone = DEFAULT_ROWS_PER_ZONE
    if ROWS_PER_ZONE_KEY in contents.metadata:
        text = contents.text(ROWS_PER_ZONE_KEY)
        if not text.isdigit() or int(text) == 0:
            raise IndexFormatError(contents.path, f"{ROWS_PER_ZONE_KEY} is {text!r}, not a positive integer")
        rows_per_zone = int(text)
    minimums = contents.column(MIN).combine_chunks()
    maximums = contents.column(MAX).combine_chunks()
    if minimums.type != maximums.type:
        raise IndexFormatError(contents.path, f"min is {minimums.type} but max is {maximums.type}")
    return ZoneMap(
        contents.path,
        rows_per_zone,
        read_zones(contents),
        minimums,
        maximums,
        unsigned_column(contents, NULL_COUNT),
        unsigned_column(contents, NAN_COUNT),
        read_null_rows(contents),
    )


def read_zone_map(dataset: Dataset, index: IndexMetadata) -> ZoneMap:
    """The zone map of segment ``index`` of ``dataset``."""
    return zone_map_of(read_index_file(dataset, index, ZONEMAP_FILE))


# -- the statistics of one zone ---------------------------------------------------


@dataclass(frozen=True)
class ZoneStatistics:
    """What a zone's row holds for some values: Python values of the column
    type (None where the zone has no ordinary value)."""

    minimum: object
    maximum: object
    null_count: int
    nan_count: int
    #: Whether a NaN with the sign bit clear is among the values.
    positive_nan: bool


def _float_bounds(values: np.ndarray) -> tuple[object, object]:
    """Min and max of non-NaN floats under total ordering (-0.0 < 0.0)."""
    if not len(values):
        return None, None
    low, high = values.min(), values.max()
    zeros = values[values == 0]
    if low == 0 and np.signbit(zeros).any():
        low = -0.0
    if high == 0 and not np.signbit(zeros).all():
        high = 0.0
    return float(low), float(high)


def zone_statistics(values: pa.Array) -> ZoneStatistics:
    """The statistics of a zone holding ``values`` (its rows' values)."""
    if pa.types.is_floating(values.type):
        present = values.drop_null().to_numpy(zero_copy_only=False).astype(np.float64)
        nans = np.isnan(present)
        minimum, maximum = _float_bounds(present[~nans])
        positive_nan = bool((nans & ~np.signbit(present)).any())
        return ZoneStatistics(minimum, maximum, values.null_count, int(nans.sum()), positive_nan)
    bounds = pc.min_max(values)
    return ZoneStatistics(bounds["min"].as_py(), bounds["max"].as_py(), values.null_count, 0, False)


# -- writing --------------------------------------------------------------------


def _field_values(table: pa.Table, path: list[str]) -> pa.Array:
    column = table.column(path[0]).combine_chunks()
    for name in path[1:]:
        column = pc.struct_field(column, name)
    return column


def zone_map_table(dataset: Dataset, path: list[str], value_type: pa.DataType, rows_per_zone: int) -> pa.Table:
    """The rows of ``zonemap.lance`` for the field at ``path`` (names from the
    top-level column down) over every fragment of ``dataset``."""
    rows: dict[str, list] = {
        name: [] for name in (MIN, MAX, NULL_COUNT, NAN_COUNT, FRAGMENT_ID, ZONE_START, ZONE_LENGTH)
    }
    for fragment in sorted(dataset.fragments, key=lambda f: f.id):
        table = fragment_table(dataset, fragment, columns=[path[0]], with_row_address=True)
        values = _field_values(table, path)
        offsets = (table.column(ROW_ADDRESS).to_numpy() & np.uint64(0xFFFFFFFF)).astype(np.uint64)
        for first in range(0, len(values), rows_per_zone):
            zone = values.slice(first, rows_per_zone)
            statistics = zone_statistics(zone)
            start, last = int(offsets[first]), int(offsets[first + len(zone) - 1])
            rows[MIN].append(statistics.minimum)
            rows[MAX].append(POSITIVE_NAN if statistics.positive_nan else statistics.maximum)
            rows[NULL_COUNT].append(statistics.null_count)
            rows[NAN_COUNT].append(statistics.nan_count)
            rows[FRAGMENT_ID].append(fragment.id)
            rows[ZONE_START].append(start)
            rows[ZONE_LENGTH].append(last - start + 1)
    return pa.table(
        {
            MIN: pa.array(rows[MIN], value_type),
            MAX: pa.array(rows[MAX], value_type),
            NULL_COUNT: pa.array(rows[NULL_COUNT], pa.uint32()),
            NAN_COUNT: pa.array(rows[NAN_COUNT], pa.uint32()),
            FRAGMENT_ID: pa.array(rows[FRAGMENT_ID], pa.uint64()),
            ZONE_START: pa.array(rows[ZONE_START], pa.uint64()),
            ZONE_LENGTH: pa.array(rows[ZONE_LENGTH], pa.uint64()),
        }
    )


def details_message(rows_per_zone: int) -> bytes:
    """The ``ZoneMapIndexDetails`` pylance 14 records: ``rows_per_zone``
    (field 1), ``use_seeds`` (field 2) false, ``has_null_bitmap`` (field 3)
    false, since this writer records no null rows (encoded by hand: the
    message is not among the project's protos)."""
    varint = bytearray()
    value = rows_per_zone
    while True:
        byte, value = value & 0x7F, value >> 7
        varint.append(byte | (0x80 if value else 0))
        if not value:
            break
    return b"\x08" + bytes(varint) + b"\x10\x00\x18\x00"


def _value_type(dataset: Dataset, path: list[str]) -> pa.DataType:
    data_type = schema_to_arrow(dataset.schema).field(path[0]).type
    for name in path[1:]:
        data_type = data_type.field(name).type
    return data_type


def write_zone_map(
    dataset: Dataset, index: IndexMetadata, path: list[str], rows_per_zone: int = DEFAULT_ROWS_PER_ZONE
) -> IndexMetadata:
    """Write ``zonemap.lance`` of segment ``index`` (its uuid names the
    directory) over every fragment of ``dataset`` for the field at ``path``;
    ``index`` with the file and the details recorded. The file's version is
    the dataset's (:func:`.files.index_file_version`). It records no null rows (the
    optional ``null_bitmap`` buffer): IS NULL is then answered from
    ``null_count``."""
    table = zone_map_table(dataset, path, _value_type(dataset, path), rows_per_zone)
    fields = schema_from_arrow(table.schema).fields
    metadata = {ROWS_PER_ZONE_KEY: str(rows_per_zone).encode()}
    location = dataset.index_file_location(index, ZONEMAP_FILE)
    size = write_index_file(
        location.storage, location.relpath, table, fields, metadata, version=index_file_version(dataset)
    )
    return dataclasses.replace(index, details=details_message(rows_per_zone), files=[IndexFile(ZONEMAP_FILE, size)])
