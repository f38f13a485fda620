"""The operations of racing writers (:mod:`._schedules`): write-vocabulary
operations (:mod:`conformance.drivers.writes`) resolved against the version
their writer read, the table they work on as plain values
(:class:`TableState`), and the serial model (:func:`apply`: what one
operation makes of a table, by its :class:`WriteKind`).

The table every schedule works on has a key column ``id`` (unique, never
updated), an int64 column ``v`` and a string column ``s``; writers add int64
columns named after themselves. What depends on what a writer read (which
rows, which column, which version) is drawn from the state of the version it
read, so every drawn operation applies to it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

from conformance.drivers import read_rows
from conformance.drivers.writes import (
    AddColumns,
    Append,
    Compact,
    Compare,
    Comparison,
    Config,
    CreateIndex,
    Delete,
    DropColumns,
    IsIn,
    NewColumn,
    Overwrite,
    Predicate,
    Restore,
    Update,
    WriteKind,
    WriteOp,
)

KEY = "id"
VALUE = "v"
TEXT = "s"
#: The config keys writers set are ``key.<n>``: the model compares these only.
CONFIG_PREFIX = "key."
#: Keys of the rows writer ``w`` writes start at ``(w + 1) * KEYS_PER_WRITER``.
KEYS_PER_WRITER = 1000
#: The base dataset's writer (its rows' keys start at 0).
BASE_WRITER = -1
#: The file size limit of the rows writers append or overwrite with.
ROWS_PER_FILE = 2

#: Every kind of operation a writer may perform, in the order schedules shrink through them.
SCHEDULED_KINDS: tuple[WriteKind, ...] = (
    WriteKind.APPEND,
    WriteKind.DELETE,
    WriteKind.UPDATE,
    WriteKind.ADD_COLUMNS,
    WriteKind.DROP_COLUMNS,
    WriteKind.COMPACT,
    WriteKind.RESTORE,
    WriteKind.OVERWRITE,
    WriteKind.CONFIG,
    WriteKind.CREATE_INDEX,
)


# -- the table as plain values --------------------------------------------------------------


@dataclass
class TableState:
    """A version's table: column names in order, rows by key, and the
    ``key.*`` config entries."""

    columns: list[str]
    rows: dict[int, dict]
    config: dict[str, str]

    def copy(self) -> TableState:
        return copy.deepcopy(self)

    @classmethod
    def read(cls, driver: Any, uri: str, version: int | None = None) -> TableState:
        """The state of ``version`` (the latest by default) of the dataset at
        ``uri``, as ``driver`` reads and describes it."""
        table = read_rows(driver, str(uri), version)
        rows = {row[KEY]: row for row in table.to_pylist()}
        described = driver.describe(str(uri), version)
        config = {k: v for k, v in described["config"].items() if k.startswith(CONFIG_PREFIX)}
        return cls(list(table.column_names), rows, config)

    def to_arrow(self) -> pa.Table:
        """The rows as a table (``s`` a string column, every other one int64)."""
        schema = pa.schema([(c, pa.string() if c == TEXT else pa.int64()) for c in self.columns])
        return pa.Table.from_pylist(list(self.rows.values()), schema=schema)

    def selected(self, where: Predicate | None) -> list[int]:
        """The keys of the rows ``where`` selects (every row when None), as
        the predicate's own Arrow expression selects them."""
        if where is None:
            return list(self.rows)
        return self.to_arrow().filter(where.to_arrow()).column(KEY).to_pylist()


def _value(column: str, key: int):
    """What a writer stores in ``column`` of the row it writes with ``key``."""
    return f"r{key}" if column == TEXT else key


def rows_table(keys: Iterable[int], columns: Iterable[str]) -> pa.Table:
    """The rows a writer writes with ``keys``, in ``columns``."""
    keys = list(keys)
    arrays = {}
    for column in columns:
        kind = pa.string() if column == TEXT else pa.int64()
        arrays[column] = pa.array([_value(column, k) for k in keys], kind)
    return pa.table(arrays)


# -- the serial model: what each kind makes of a table ----------------------------------------


def _append(state: TableState, op: Append, history: dict[int, TableState]) -> None:
    for row in op.rows.to_pylist():
        state.rows[row[KEY]] = {c: row.get(c) for c in state.columns}


def _overwrite(state: TableState, op: Overwrite, history: dict[int, TableState]) -> None:
    state.columns = list(op.rows.column_names)
    state.rows = {row[KEY]: row for row in op.rows.to_pylist()}


def _delete(state: TableState, op: Delete, history: dict[int, TableState]) -> None:
    for key in state.selected(op.where):
        del state.rows[key]


def _update(state: TableState, op: Update, history: dict[int, TableState]) -> None:
    keys = state.selected(op.where)
    for column, value in op.values:
        if column in state.columns:
            for key in keys:
                state.rows[key][column] = value


def _add_columns(state: TableState, op: AddColumns, history: dict[int, TableState]) -> None:
    for new in op.columns:
        if new.name in state.columns:
            continue
        state.columns.append(new.name)
        for row in state.rows.values():
            source = row.get(new.source)
            row[new.name] = None if source is None else source + new.offset


def _drop_columns(state: TableState, op: DropColumns, history: dict[int, TableState]) -> None:
    for column in op.columns:
        if column in state.columns:
            state.columns.remove(column)
            for row in state.rows.values():
                row.pop(column, None)


def _config(state: TableState, op: Config, history: dict[int, TableState]) -> None:
    for key, value in op.values:
        if value is None:
            state.config.pop(key, None)
        else:
            state.config[key] = value


def _unchanged(state: TableState, op: WriteOp, history: dict[int, TableState]) -> None:
    """Compaction and indexing leave the rows, columns and config alone."""


#: What each kind the model knows does to a table (in place).
_MODEL: dict[WriteKind, Callable[[TableState, Any, dict[int, TableState]], None]] = {
    WriteKind.APPEND: _append,
    WriteKind.OVERWRITE: _overwrite,
    WriteKind.DELETE: _delete,
    WriteKind.UPDATE: _update,
    WriteKind.ADD_COLUMNS: _add_columns,
    WriteKind.DROP_COLUMNS: _drop_columns,
    WriteKind.CONFIG: _config,
    WriteKind.COMPACT: _unchanged,
    WriteKind.CREATE_INDEX: _unchanged,
}


def apply(state: TableState, op: WriteOp, history: dict[int, TableState]) -> TableState:
    """The model: what ``op`` makes of ``state`` when applied on it serially
    (``history``: the states of the versions a restore may go back to)."""
    if isinstance(op, Restore):
        return history[op.version].copy()
    model = _MODEL.get(op.kind)
    if model is None:
        raise ValueError(f"the serial model of schedules has no {op.kind.value}")
    state = state.copy()
    model(state, op, history)
    return state


# -- resolving an operation against what its writer read ------------------------------------


def _rows_selected(draw, read: TableState) -> Predicate:
    """A predicate selecting one to three of the rows read, or none when
    nothing is visible (a key below every writer's range)."""
    if not read.rows:
        return Compare(KEY, Comparison.LT, 0)
    keys = draw(st.lists(st.sampled_from(sorted(read.rows)), min_size=1, max_size=3, unique=True))
    return IsIn(KEY, tuple(sorted(keys)))


def fresh_keys(writer: int, read_version: int, count: int) -> range:
    """The keys writer ``writer`` writes: a range of its own (each base
    version's append one of its own too)."""
    first = (writer + 1) * KEYS_PER_WRITER
    offset = first + read_version * 50 if writer == BASE_WRITER else first
    return range(offset, offset + count)


@st.composite
def scheduled_operations(draw, kinds: tuple[WriteKind, ...], writer: int, read: TableState, read_version: int):
    """One operation of ``kinds`` for writer ``writer``, resolved against
    ``read``, the state it read at ``read_version`` (its ``read_version``)."""
    kind = draw(st.sampled_from(kinds))
    if kind is WriteKind.APPEND:
        keys = fresh_keys(writer, read_version, draw(st.integers(1, 4)))
        return Append(rows_table(keys, read.columns), max_rows_per_file=ROWS_PER_FILE, read_version=read_version)
    if kind is WriteKind.OVERWRITE:
        keys = fresh_keys(writer, read_version, draw(st.integers(0, 4)))
        return Overwrite(
            rows_table(keys, (KEY, VALUE, TEXT)), max_rows_per_file=ROWS_PER_FILE, read_version=read_version
        )
    if kind is WriteKind.DELETE:
        return Delete(_rows_selected(draw, read), read_version=read_version)
    if kind is WriteKind.UPDATE:
        # Every base version has ``v`` (only writers drop columns).
        return Update(((VALUE, draw(st.integers(-5, 5))),), _rows_selected(draw, read), read_version=read_version)
    if kind is WriteKind.ADD_COLUMNS:
        return AddColumns((NewColumn(f"c{writer}", KEY, draw(st.integers(-3, 3))),), read_version=read_version)
    if kind is WriteKind.DROP_COLUMNS:
        others = [c for c in read.columns if c != KEY]  # never empty: the base keeps v and s
        return DropColumns((draw(st.sampled_from(others)),), read_version=read_version)
    if kind is WriteKind.COMPACT:
        return Compact(target_rows_per_fragment=draw(st.integers(1, 8)), read_version=read_version)
    if kind is WriteKind.RESTORE:
        return Restore(draw(st.integers(1, read_version)), read_version=read_version)
    if kind is WriteKind.CONFIG:
        return Config(
            ((f"{CONFIG_PREFIX}{draw(st.integers(0, 2))}", str(draw(st.integers(0, 3)))),), read_version=read_version
        )
    if kind is WriteKind.CREATE_INDEX:
        return CreateIndex(KEY, name=f"idx{draw(st.integers(0, 1))}", read_version=read_version)
    raise ValueError(f"schedules draw no {kind.value}")
