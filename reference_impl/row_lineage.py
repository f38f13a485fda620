"""Row lineage sequences spilled to hidden columns (row id & lineage
specification, revision upstream-2026-11-29, "Inline and Spilled Storage").

A fragment's row id, created-at and last-updated-at sequences are kept inline
in the manifest while small. A larger one may be *spilled*: the fragment then
sets the column arm of the sequence's oneof (``DataFragment`` fields 12, 13
and 14, an empty ``RowLineageColumn`` marker, :class:`LineageColumn`) and the
values live in a hidden column of one of its own data files. That file is the
one whose ``fields`` list the column's reserved negative field id (-3, -4 or
-5, :data:`LINEAGE_COLUMNS`); its ``column_indices`` entry locates the column
as it does for a user column. The column is a non-nullable UInt64 with one
value per physical row, deleted rows included.

Corruption the page names, each a :class:`~reference_impl.errors.CorruptFileError`:
no file or more than one file of the fragment listing the field id, a marker
in a fragment with a legacy (v1) data file (:func:`lineage_file`), a column
whose length is not ``physical_rows`` or that holds a null
(:func:`lineage_values`).

This module reads no file: it sits with the row id sequences, below the file
format. The column is read by the dataset
(:meth:`reference_impl.dataset.Dataset.lineage_column`), which the sequence
readers of :mod:`reference_impl.row_ids` are given as a :data:`ColumnReader`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import CorruptFileError
from .fragments import DataFile, Fragment, LineageColumn

if TYPE_CHECKING:  # the column is handed in by the dataset: this module imports no Arrow
    import pyarrow as pa


@dataclass(frozen=True)
class LineageColumnSpec:
    """One of the three hidden lineage columns."""

    #: The Fragment attribute holding the sequence.
    attr: str
    #: The reserved field id listed in ``DataFile.fields``.
    field_id: int
    #: The reserved column name (a user schema must not use it).
    name: str


#: The hidden lineage columns by the Fragment attribute of their sequence.
LINEAGE_COLUMNS: dict[str, LineageColumnSpec] = {
    spec.attr: spec
    for spec in (
        LineageColumnSpec("row_id_sequence", -3, "_rowid"),
        LineageColumnSpec("created_at_version_sequence", -4, "_row_created_at_version"),
        LineageColumnSpec("last_updated_at_version_sequence", -5, "_row_last_updated_at_version"),
    )
}
#: Field ids a data file may list for a hidden lineage column.
LINEAGE_FIELD_IDS = frozenset(spec.field_id for spec in LINEAGE_COLUMNS.values())
#: Column names no user schema may use.
RESERVED_NAMES = frozenset(spec.name for spec in LINEAGE_COLUMNS.values())

#: Reads the values of a spilled sequence: (fragment, its column, the
#: context errors name) -> one value per physical row.
ColumnReader = Callable[[Fragment, "LineageColumnSpec", str], list[int]]


def spilled(fragment: Fragment) -> list[LineageColumnSpec]:
    """The lineage columns whose sequence ``fragment`` spills (column arm set)."""
    return [spec for attr, spec in LINEAGE_COLUMNS.items() if isinstance(getattr(fragment, attr), LineageColumn)]


def carrying_files(fragment: Fragment, spec: LineageColumnSpec) -> list[int]:
    """Positions in ``fragment.files`` of the data files listing the column's field id."""
    return [position for position, data_file in enumerate(fragment.files) if spec.field_id in data_file.fields]


def legacy_files(fragment: Fragment) -> list[int]:
    """Positions of the fragment's legacy (v1) data files, where no lineage column can be located."""
    return [position for position, data_file in enumerate(fragment.files) if data_file.is_legacy]


def lineage_file(fragment: Fragment, spec: LineageColumnSpec, context: str) -> DataFile:
    """The one data file of ``fragment`` that carries the column; corrupt
    when none does, more than one does, or the fragment has a legacy file."""
    legacy = legacy_files(fragment)
    if legacy:
        raise CorruptFileError(
            context,
            f"the {spec.name} column arm is set but data file {legacy[0]} of the fragment is a legacy (v1) file, "
            "which has no column_indices to locate the column by",
        )
    found = carrying_files(fragment, spec)
    if len(found) != 1:
        which = "no data file" if not found else f"{len(found)} data files ({found})"
        raise CorruptFileError(
            context, f"the {spec.name} column arm is set but {which} of the fragment list field id {spec.field_id}"
        )
    return fragment.files[found[0]]


def lineage_values(column: pa.ChunkedArray | pa.Array, fragment: Fragment, where: str) -> list[int]:
    """The values of a hidden lineage column as read from its file: one per
    physical row, none null."""
    if len(column) != fragment.physical_rows:
        raise CorruptFileError(
            where, f"holds {len(column)} values but the fragment has {fragment.physical_rows} physical rows"
        )
    if column.null_count:
        raise CorruptFileError(where, f"{column.null_count} values are null; every physical row needs one")
    return column.to_pylist()
