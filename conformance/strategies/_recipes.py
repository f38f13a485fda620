"""Strategies for whole datasets on disk: a :class:`DatasetRecipe` is a first
table and a run of write-vocabulary operations (:mod:`conformance.drivers.writes`)
that a driver writes one after another (:meth:`DatasetRecipe.build`), the
reference driver unless told otherwise.

Each step is drawn knowing what the steps before it leave (:class:`_Sketch`:
the visible rows, the versions whose numbers are certain), so that every
step applies: a delete names values that are there, a restore or a tag a
version that exists, a drop a column that is there."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import strategies as st

from conformance.drivers.writes import (
    OPERATIONS,
    AddColumns,
    Append,
    Compact,
    Config,
    Create,
    Delete,
    DropColumns,
    IsIn,
    NewColumn,
    Overwrite,
    Restore,
    Tag,
    WriteKind,
    WriteOp,
)

from ._arguments import size_range
from ._tables import arrow_tables
from ._writing import REFERENCE, DriverLike, ManifestNaming, create, require_writes, resolve_driver, write

#: Every kind of step a recipe draws, in the order :func:`dataset_recipes`
#: shrinks through them; each commits one version (a compaction: none, one
#: or two; a tag: none).
STEP_KINDS: tuple[WriteKind, ...] = (
    WriteKind.APPEND,
    WriteKind.DELETE,
    WriteKind.ADD_COLUMNS,
    WriteKind.DROP_COLUMNS,
    WriteKind.COMPACT,
    WriteKind.RESTORE,
    WriteKind.OVERWRITE,
    WriteKind.TAG,
    WriteKind.CONFIG,
)


@dataclass
class DatasetRecipe:
    """How to write a valid dataset: create it from ``first``, then perform
    ``steps`` (write-vocabulary operations) in order (:meth:`build`). Tables
    appended or overwritten later have the columns the dataset has by then
    (a dropped column left out, an added one null). ``naming`` is the
    manifest naming scheme."""

    first: pa.Table
    stable_row_ids: bool
    naming: ManifestNaming
    max_rows_per_file: int
    steps: list[WriteOp]

    def creation(self) -> Create:
        """The operation that writes version 1."""
        return Create(self.first, stable_row_ids=self.stable_row_ids, max_rows_per_file=self.max_rows_per_file)

    def build(self, path: str | os.PathLike, *, driver: DriverLike = REFERENCE) -> int:
        """Write the dataset at ``path`` (which must not exist) through
        ``driver``'s ``write`` (a loaded driver or its name) and return its
        latest version. A step that is not a write-vocabulary operation is a
        ``TypeError`` naming it."""
        driver = resolve_driver(driver)
        require_writes(driver)
        for step in self.steps:
            if not isinstance(step, tuple(OPERATIONS.values())):
                raise TypeError(f"not a write operation: {step!r}")
        latest = create(driver, path, self.creation(), self.naming).version
        for step in self.steps:
            result = write(driver, path, step)
            if not isinstance(step, Tag) and result.version is not None:
                latest = result.version
        if latest is None:
            raise ValueError("the driver did not say which version it created")
        return latest


# -- drawing steps that apply ----------------------------------------------------------------


@dataclass
class _Sketch:
    """What the steps drawn so far leave: the visible rows, and those of
    each version whose number is certain (``known[v - 1]``). Numbers stay
    certain until the first compaction, which may commit none, one or two
    versions."""

    current: pa.Table
    known: list[pa.Table] = field(default_factory=list)
    counting: bool = True

    def committed(self, table: pa.Table) -> None:
        self.current = table
        if self.counting:
            self.known.append(table)


def _fit(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly ``schema``'s columns: ones it lacks are null."""
    columns = [
        table.column(f.name) if f.name in table.column_names else pa.nulls(table.num_rows, f.type) for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _selectable(data_type: pa.DataType) -> bool:
    """Whether a delete may name values of this type: the literals of the
    vocabulary that stand for themselves (no float, whose equality is
    treacherous; no uint64, whose values may not fit a signed 64-bit literal)."""
    return (
        pa.types.is_boolean(data_type)
        or (pa.types.is_integer(data_type) and data_type != pa.uint64())
        or pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
    )


def _deletable(table: pa.Table) -> dict[str, list[Any]]:
    """The columns a delete may select on, each with its distinct non-null values."""
    values: dict[str, list[Any]] = {}
    for f in table.schema:
        if _selectable(f.type):
            present = sorted({v for v in table.column(f.name).to_pylist() if v is not None})
            if present:
                values[f.name] = present
    return values


def _copyable(table: pa.Table) -> list[str]:
    """The columns an added column may copy: flat ones (later appends fill an
    added column with nulls, which a 2.0 file cannot store for a struct)."""
    return [f.name for f in table.schema if not pa.types.is_nested(f.type)]


def _applicable(kind: WriteKind, sketch: _Sketch) -> bool:
    if kind is WriteKind.DELETE:
        return bool(_deletable(sketch.current))
    if kind is WriteKind.ADD_COLUMNS:
        return bool(_copyable(sketch.current))
    if kind is WriteKind.DROP_COLUMNS:
        return sketch.current.num_columns >= 2
    return True


#: Choices among what exists when a step is drawn (which column, which
#: version) are drawn as a plain integer resolved modulo the count, so that
#: every kind of step draws at least as much as an append of no rows does and
#: the shrinker, preferring fewer choices, still moves towards appends.
_PICKS = st.integers(0, 1000)


@st.composite
def _step(draw, sketch: _Sketch, schema: pa.Schema, max_rows: int, max_rows_per_file: int, number: int) -> WriteOp:
    """One step applying to what ``sketch`` holds (number ``number`` in the
    recipe, which names what it adds); ``sketch`` is moved past it."""
    kind = draw(st.sampled_from([k for k in STEP_KINDS if _applicable(k, sketch)]))
    current = sketch.current
    if kind in (WriteKind.APPEND, WriteKind.OVERWRITE):
        rows = _fit(draw(arrow_tables(schema, max_rows=max_rows)), current.schema)
        if kind is WriteKind.APPEND:
            sketch.committed(pa.concat_tables([current, rows]))
            return Append(rows, max_rows_per_file=max_rows_per_file)
        sketch.committed(rows)
        return Overwrite(rows, max_rows_per_file=max_rows_per_file)
    if kind is WriteKind.DELETE:
        candidates = _deletable(current)
        column = sorted(candidates)[draw(_PICKS) % len(candidates)]
        values = draw(st.lists(st.sampled_from(candidates[column]), min_size=1, max_size=4, unique=True))
        where = IsIn(column, tuple(values))
        sketch.committed(current.filter(~pc.coalesce(where.to_arrow(), pc.scalar(False))))
        return Delete(where)
    if kind is WriteKind.ADD_COLUMNS:
        sources = _copyable(current)
        source = sources[draw(_PICKS) % len(sources)]
        added = NewColumn(f"added_{number}", source)
        sketch.committed(current.append_column(added.name, current.column(source)))
        return AddColumns((added,))
    if kind is WriteKind.DROP_COLUMNS:
        column = current.column_names[draw(_PICKS) % current.num_columns]
        sketch.committed(current.drop_columns([column]))
        return DropColumns((column,))
    if kind is WriteKind.COMPACT:
        sketch.counting = False
        return Compact(
            target_rows_per_fragment=draw(st.integers(1, 2 * max_rows)), materialize_deletions=draw(st.booleans())
        )
    if kind is WriteKind.RESTORE:
        version = 1 + draw(_PICKS) % len(sketch.known)
        sketch.committed(sketch.known[version - 1])
        return Restore(version)
    if kind is WriteKind.TAG:
        return Tag(f"tag-{number}", version=1 + draw(_PICKS) % len(sketch.known))
    sketch.committed(current)
    return Config(((f"key.{draw(st.integers(0, 3))}", str(draw(st.integers(0, 9)))),))


@st.composite
def _dataset_recipes(draw, steps_range: tuple[int, int], rows_range: tuple[int, int]) -> DatasetRecipe:
    min_rows, max_rows = rows_range
    first = draw(arrow_tables(min_rows=min_rows, max_rows=max_rows))
    stable_row_ids = draw(st.booleans())
    naming = draw(st.sampled_from(list(ManifestNaming)))
    max_rows_per_file = draw(st.integers(1, max(max_rows, 1)))
    sketch = _Sketch(first, [first])
    count = draw(st.integers(*steps_range))
    steps = [draw(_step(sketch, first.schema, max_rows, max_rows_per_file, number)) for number in range(count)]
    return DatasetRecipe(first, stable_row_ids, naming, max_rows_per_file, steps)


def dataset_recipes(
    *, min_steps: int = 0, max_steps: int | None = None, min_rows: int = 0, max_rows: int | None = None
) -> st.SearchStrategy[DatasetRecipe]:
    """:class:`DatasetRecipe`: a first table of ``min_rows..max_rows`` rows
    from :func:`arrow_tables` (nested types and nulls included), stable row
    ids or not, V1 or V2 manifest names, a file size limit, and
    ``min_steps..max_steps`` steps of every kind in :data:`STEP_KINDS`
    (tables appended or overwritten later have at most ``max_rows`` rows;
    a delete selects values present in a boolean, integer or string column;
    an added column copies a flat column; a restore or a tag names a version
    committed before the first compaction).
    Guarantee: ``build(path)`` writes a dataset with one version per commit
    that the reference implementation and the specification both accept;
    tests/conformance/strategies/test_strategies.py holds the validator and pylance to it.

    Shrinks towards ``min_steps`` steps (appends first), a first table of
    ``min_rows`` rows of one ``bool`` column, V2 names without stable row
    ids, and one row per file."""
    return _dataset_recipes(size_range("steps", min_steps, max_steps), size_range("rows", min_rows, max_rows))
