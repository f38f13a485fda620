"""The operations of racing writers (:mod:`._schedules`): one frozen
dataclass per kind, the table they work on as plain values
(:class:`TableState`), and a writer's plan (:class:`PlannedWrite`: an
operation resolved against the version its writer read), which both
performs the write through the reference implementation and models it.

The table every schedule works on has a key column ``id`` (unique, never
updated), an int64 column ``v`` and a string column ``s``; writers add int64
columns named after themselves. Choices that depend on what a writer read
(which rows, which version) are stored as plain integers ("picks") and
resolved against the version it read, so every drawn operation applies.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Union, get_args

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from reference_impl.dataset import Dataset

KEY = "id"
VALUE = "v"
TEXT = "s"
#: The config keys writers set are ``key.<n>``: the model compares these only.
CONFIG_PREFIX = "key."
#: Keys of the rows writer ``w`` writes start at ``(w + 1) * KEYS_PER_WRITER``.
KEYS_PER_WRITER = 1000
#: The base dataset's writer (its rows' keys start at 0).
BASE_WRITER = -1


# -- the operations a writer performs ----------------------------------------------------


@dataclass(frozen=True)
class AppendRows:
    """Append ``count`` rows with fresh keys (an Append)."""

    KIND: ClassVar[str] = "append"
    count: int


@dataclass(frozen=True)
class DeleteRows:
    """Delete the picked rows of the version read (a Delete)."""

    KIND: ClassVar[str] = "delete"
    picks: tuple[int, ...]


@dataclass(frozen=True)
class UpdateRows:
    """Set ``v`` to ``value`` on the picked rows of the version read (an Update)."""

    KIND: ClassVar[str] = "update"
    picks: tuple[int, ...]
    value: int


@dataclass(frozen=True)
class AddColumn:
    """Add the int64 column ``c<writer>`` holding ``id * scale`` (a Merge)."""

    KIND: ClassVar[str] = "add_column"
    scale: int


@dataclass(frozen=True)
class DropColumn:
    """Drop the picked non-key column of the version read (a Project)."""

    KIND: ClassVar[str] = "drop_column"
    pick: int


@dataclass(frozen=True)
class CompactFiles:
    """Compact towards ``target_rows`` rows per fragment (ReserveFragments,
    then a Rewrite; nothing when no fragment needs it)."""

    KIND: ClassVar[str] = "compact"
    target_rows: int


@dataclass(frozen=True)
class RestoreVersion:
    """Restore the picked version, at most the one read (a Restore)."""

    KIND: ClassVar[str] = "restore"
    pick: int


@dataclass(frozen=True)
class OverwriteRows:
    """Replace the table with ``count`` rows with fresh keys (an Overwrite)."""

    KIND: ClassVar[str] = "overwrite"
    count: int


@dataclass(frozen=True)
class SetConfig:
    """Set config key ``key.<key>`` to ``str(value)`` (an UpdateConfig)."""

    KIND: ClassVar[str] = "config"
    key: int
    value: int


@dataclass(frozen=True)
class IndexColumn:
    """Record an index named ``idx<name>`` over ``id`` (a CreateIndex)."""

    KIND: ClassVar[str] = "create_index"
    name: int


#: One writer's operation.
ScheduledOperation = Union[
    AppendRows,
    DeleteRows,
    UpdateRows,
    AddColumn,
    DropColumn,
    CompactFiles,
    RestoreVersion,
    OverwriteRows,
    SetConfig,
    IndexColumn,
]
#: Every kind of :data:`ScheduledOperation`, in the order schedules shrink through them.
SCHEDULED_KINDS: tuple[Any, ...] = get_args(ScheduledOperation)


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
    def read(cls, dataset) -> TableState:
        """The state of a reference :class:`~reference_impl.dataset.Dataset` version."""
        from reference_impl.arrow_schema import schema_to_arrow

        columns = schema_to_arrow(dataset.schema).names
        rows = {row[KEY]: row for row in dataset.to_table().to_pylist()}
        config = {k: v for k, v in dataset.manifest.config.items() if k.startswith(CONFIG_PREFIX)}
        return cls(list(columns), rows, config)


def _value(column: str, key: int):
    """What a writer stores in ``column`` of the row it writes with ``key``."""
    return f"r{key}" if column == TEXT else key


def rows_table(keys, columns) -> pa.Table:
    arrays = {}
    for column in columns:
        kind = pa.string() if column == TEXT else pa.int64()
        arrays[column] = pa.array([_value(column, k) for k in keys], kind)
    return pa.table(arrays)


# -- a writer's plan: the operation resolved against the version it read ---------------------


@dataclass(frozen=True)
class PlannedWrite:
    """What writer ``writer`` does, resolved against the version it read:
    the keys it writes or selects, the column it names, the version it
    restores. Plain values, so a plan crosses into another process."""

    writer: int
    read_version: int
    operation: ScheduledOperation
    columns_read: tuple[str, ...]
    keys: tuple[int, ...] = ()
    column: str | None = None
    version: int | None = None

    def perform(self, dataset: Dataset) -> Dataset:
        """Perform the write through ``dataset`` (opened at the version read);
        returns the dataset the last commit returned."""
        operation = self.operation
        if isinstance(operation, (AppendRows, OverwriteRows)):
            columns = self.columns_read if isinstance(operation, AppendRows) else (KEY, VALUE, TEXT)
            table = rows_table(self.keys, columns)
            if isinstance(operation, AppendRows):
                return dataset.append(table, max_rows_per_file=2)
            return dataset.overwrite(table, max_rows_per_file=2)
        if isinstance(operation, DeleteRows):
            return dataset.delete(pc.field(KEY).isin(list(self.keys)))
        if isinstance(operation, UpdateRows):
            return dataset.update({self.column: operation.value}, pc.field(KEY).isin(list(self.keys)))
        if isinstance(operation, AddColumn):
            return dataset.add_columns({pa.field(self.column, pa.int64()): pc.field(KEY) * operation.scale})
        if isinstance(operation, DropColumn):
            return dataset.drop_columns([self.column])
        if isinstance(operation, CompactFiles):
            return dataset.compact(target_rows_per_fragment=operation.target_rows)
        if isinstance(operation, RestoreVersion) and self.version is not None:
            return dataset.restore(self.version)
        if isinstance(operation, SetConfig):
            return dataset.update_metadata(config={f"{CONFIG_PREFIX}{operation.key}": str(operation.value)})
        if isinstance(operation, IndexColumn):
            return dataset.create_index([KEY], name=f"idx{operation.name}")
        raise TypeError(f"not a scheduled operation: {operation!r}")

    def apply(self, state: TableState, history: dict[int, TableState]) -> TableState:
        """The model: what this write makes of ``state`` when applied on it
        serially (``history``: the states of the versions it may restore)."""
        operation = self.operation
        state = state.copy()
        if isinstance(operation, AppendRows):
            for key in self.keys:
                state.rows[key] = {c: (_value(c, key) if c in self.columns_read else None) for c in state.columns}
        elif isinstance(operation, OverwriteRows):
            state.columns = [KEY, VALUE, TEXT]
            state.rows = {key: {c: _value(c, key) for c in state.columns} for key in self.keys}
        elif isinstance(operation, DeleteRows):
            for key in self.keys:
                state.rows.pop(key, None)
        elif isinstance(operation, UpdateRows):
            if self.column in state.columns:
                for key in self.keys:
                    if key in state.rows:
                        state.rows[key][self.column] = operation.value
        elif isinstance(operation, AddColumn):
            if self.column is not None and self.column not in state.columns:
                state.columns.append(self.column)
                for key, row in state.rows.items():
                    row[self.column] = key * operation.scale
        elif isinstance(operation, DropColumn):
            if self.column in state.columns:
                state.columns.remove(self.column)
                for row in state.rows.values():
                    row.pop(self.column, None)
        elif isinstance(operation, RestoreVersion) and self.version is not None:
            return history[self.version].copy()
        elif isinstance(operation, SetConfig):
            state.config[f"{CONFIG_PREFIX}{operation.key}"] = str(operation.value)
        # CompactFiles and IndexColumn leave the rows, columns and config alone.
        return state


def plan(writer: int, operation: ScheduledOperation, read: TableState, read_version: int) -> PlannedWrite:
    """Resolve ``operation``'s picks against ``read``, the state writer
    ``writer`` read at ``read_version``."""
    columns = tuple(read.columns)
    first_key = (writer + 1) * KEYS_PER_WRITER
    visible = sorted(read.rows)
    others = [c for c in columns if c != KEY]
    if isinstance(operation, (AppendRows, OverwriteRows)):
        # Each writer and each base step writes keys of its own range.
        offset = first_key + read_version * 50 if writer == BASE_WRITER else first_key
        return PlannedWrite(writer, read_version, operation, columns, tuple(range(offset, offset + operation.count)))
    if isinstance(operation, (DeleteRows, UpdateRows)):
        keys = tuple(sorted({visible[p % len(visible)] for p in operation.picks})) if visible else ()
        # Every base version has ``v`` (only writers drop columns).
        column = VALUE if isinstance(operation, UpdateRows) else None
        return PlannedWrite(writer, read_version, operation, columns, keys, column)
    if isinstance(operation, AddColumn):
        return PlannedWrite(writer, read_version, operation, columns, column=f"c{writer}")
    if isinstance(operation, DropColumn):
        column = others[operation.pick % len(others)] if others else None
        return PlannedWrite(writer, read_version, operation, columns, column=column)
    if isinstance(operation, RestoreVersion):
        return PlannedWrite(writer, read_version, operation, columns, version=1 + operation.pick % read_version)
    return PlannedWrite(writer, read_version, operation, columns)
