"""Strategies for writers that race: a :class:`CommitSchedule` is a base
dataset, several writers that each opened it at some version and perform one
operation through that (possibly stale) handle, and the order their commits
start in. :meth:`CommitSchedule.run` performs it with the reference
implementation's commit loop, one writer after another, in threads, or in
processes, and reports what each writer got; :meth:`CommitSchedule.serial`
is what the acknowledged writes make of the table when applied one after
another in the order of the versions they committed.

The table every schedule works on has a key column ``id`` (unique, never
updated), an int64 column ``v`` and a string column ``s``; writers add int64
columns named after themselves. Choices that depend on what a writer read
(which rows, which version) are stored as plain integers ("picks") and
resolved against the version it read, so every drawn operation applies.
"""

from __future__ import annotations

import copy
import multiprocessing
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, ClassVar, Literal, Union, get_args

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import strategies as st

from ._arguments import size_range

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
SCHEDULED_KINDS: tuple[type, ...] = get_args(ScheduledOperation)


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


def _rows_table(keys, columns) -> pa.Table:
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
            table = _rows_table(self.keys, columns)
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


# -- running a schedule -----------------------------------------------------------------


@dataclass(frozen=True)
class Rejection:
    """Why a writer's commit failed: the error's type, message, and the
    attributes :class:`~reference_impl.errors.CommitConflictError` gives
    (the committed version and operation it conflicts with, whether retrying
    may succeed); None where the error does not say."""

    error_type: str
    message: str
    conflict: bool
    version: int | None
    operation: str | None
    retryable: bool | None


@dataclass
class WriteResult:
    """What one writer got: the versions it committed (ascending), every
    commit it asked for as ``(read version, operation)`` (the last one is the
    one that failed, when it failed), and the rejection, if any."""

    writer: int
    committed: list[int] = dc_field(default_factory=list)
    attempted: list[tuple[int, object]] = dc_field(default_factory=list)
    rejection: Rejection | None = None

    @property
    def acknowledged(self) -> bool:
        return self.rejection is None


def _recording_dataset(result: WriteResult):
    """A Dataset class whose commits are recorded in ``result``."""
    from reference_impl.dataset import Dataset

    class RecordingDataset(Dataset):
        def commit(self, operation, **options):
            result.attempted.append((self.version, operation))
            committed = super().commit(operation, **options)
            result.committed.append(committed.version)
            return committed

    return RecordingDataset


def perform(path: str, write: PlannedWrite, ready: Callable[[], None] = lambda: None) -> WriteResult:
    """Open ``path`` at the version ``write`` read, call ``ready()``, then
    perform it; a failure of the write becomes the result's rejection."""
    from reference_impl.errors import CommitConflictError

    result = WriteResult(write.writer)
    dataset = _recording_dataset(result).open(path, write.read_version)
    ready()
    try:
        write.perform(dataset)
    except Exception as exc:  # reported in the result; the property tests judge it
        result.rejection = Rejection(
            type(exc).__name__,
            str(exc),
            isinstance(exc, CommitConflictError),
            getattr(exc, "version", None),
            getattr(exc, "operation", None),
            getattr(exc, "retryable", None),
        )
    return result


def _perform_in_process(path: str, write: PlannedWrite, wait, start, results) -> None:
    def ready():
        if wait is not None:
            wait.wait()
        start.set()

    results.put(perform(path, write, ready))


#: How a schedule is run: one writer after another in ``order``, or every
#: writer at once in threads or processes (started in ``order``).
RunMode = Literal["serial", "threads", "processes"]


@dataclass
class ScheduleRun:
    """A schedule performed on a dataset: the states of the base versions,
    each writer's plan and result."""

    path: str
    base_version: int
    history: dict[int, TableState]
    plans: list[PlannedWrite]
    results: list[WriteResult]

    def serial(self) -> TableState:
        """The model of the outcome: the acknowledged writes applied one
        after another to the base's latest state, in the order of the last
        version each committed (a write that committed nothing, a compaction
        with nothing to do, changes nothing)."""
        state = self.history[self.base_version]
        acknowledged = [(r.committed[-1], self.plans[r.writer]) for r in self.results if r.acknowledged and r.committed]
        for _, write in sorted(acknowledged, key=lambda item: item[0]):
            state = write.apply(state, self.history)
        return state


@dataclass(frozen=True)
class ScheduledWriter:
    """One writer of a :class:`CommitSchedule`: it opened the dataset at
    ``read_version`` and performs ``operation`` through that handle."""

    read_version: int
    operation: ScheduledOperation


@dataclass
class CommitSchedule:
    """A base dataset (``first_rows`` rows, then ``base_steps`` applied one
    after another, each committing a version) and ``writers`` racing on top of
    it; ``order`` is the order their commits start in (a permutation of
    positions in ``writers``)."""

    first_rows: int
    stable_row_ids: bool
    naming: Literal["v2", "v1"]
    max_rows_per_file: int
    base_steps: list[ScheduledOperation]
    writers: list[ScheduledWriter]
    order: list[int]

    def build_base(self, path) -> int:
        """Write the base dataset at ``path`` (which must not exist); returns
        its latest version."""
        from reference_impl.dataset import Dataset

        dataset = Dataset.create(
            path,
            _rows_table(range(self.first_rows), (KEY, VALUE, TEXT)),
            manifest_naming=self.naming,
            stable_row_ids=self.stable_row_ids,
            max_rows_per_file=self.max_rows_per_file,
        )
        for step in self.base_steps:
            write = plan(BASE_WRITER, step, TableState.read(dataset), dataset.version)
            dataset = write.perform(dataset)
        return dataset.version

    def run(self, path, how: RunMode = "serial") -> ScheduleRun:
        """Build the base at ``path`` and perform every writer, ``how`` says
        how; every thread or process is joined before this returns."""
        from reference_impl.dataset import Dataset

        path = str(path)
        base_version = self.build_base(path)
        history = {v: TableState.read(Dataset.open(path, v)) for v in range(1, base_version + 1)}
        plans = [
            plan(w, writer.operation, history[writer.read_version], writer.read_version)
            for w, writer in enumerate(self.writers)
        ]
        ordered = [plans[i] for i in self.order]
        if how == "serial":
            results = [perform(path, write) for write in ordered]
        elif how == "threads":
            results = _in_threads(path, ordered)
        elif how == "processes":
            results = _in_processes(path, ordered)
        else:
            raise ValueError(f"no run mode {how!r}")
        return ScheduleRun(path, base_version, history, plans, sorted(results, key=lambda r: r.writer))


def _in_threads(path: str, ordered: list[PlannedWrite]) -> list[WriteResult]:
    """Each writer waits until the one before it in the order has opened its
    handle and started, then starts: commits overlap, in order of start."""
    started = [threading.Event() for _ in ordered]
    results: list[WriteResult] = []

    def writer(position: int) -> None:
        def ready():
            if position:
                started[position - 1].wait()
            started[position].set()

        results.append(perform(path, ordered[position], ready))

    threads = [threading.Thread(target=writer, args=(p,)) for p in range(len(ordered))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _in_processes(path: str, ordered: list[PlannedWrite]) -> list[WriteResult]:
    """As :func:`_in_threads`, one process per writer (spawned, so nothing
    of the parent's state is shared); every process is joined."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    started = [context.Event() for _ in ordered]
    processes = [
        context.Process(
            target=_perform_in_process,
            args=(path, write, started[p - 1] if p else None, started[p], results),
        )
        for p, write in enumerate(ordered)
    ]
    for process in processes:
        process.start()
    try:
        collected = [results.get(timeout=300) for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=300)
            if process.is_alive():
                process.terminate()
                process.join()
    return collected


# -- the strategy -------------------------------------------------------------------------


def _operations(kinds: tuple[type, ...]) -> st.SearchStrategy[ScheduledOperation]:
    picks = st.lists(st.integers(0, 100), min_size=1, max_size=3).map(tuple)
    by_kind: dict[type, st.SearchStrategy] = {
        AppendRows: st.builds(AppendRows, st.integers(1, 4)),
        DeleteRows: st.builds(DeleteRows, picks),
        UpdateRows: st.builds(UpdateRows, picks, st.integers(-5, 5)),
        AddColumn: st.builds(AddColumn, st.integers(-3, 3)),
        DropColumn: st.builds(DropColumn, st.integers(0, 5)),
        CompactFiles: st.builds(CompactFiles, st.integers(1, 8)),
        RestoreVersion: st.builds(RestoreVersion, st.integers(0, 10)),
        OverwriteRows: st.builds(OverwriteRows, st.integers(0, 4)),
        SetConfig: st.builds(SetConfig, st.integers(0, 2), st.integers(0, 3)),
        IndexColumn: st.builds(IndexColumn, st.integers(0, 1)),
    }
    return st.one_of([by_kind[kind] for kind in kinds])


#: What the base's own steps may be: one commit each, rows and config only.
BASE_KINDS = (AppendRows, DeleteRows, UpdateRows, SetConfig)


@st.composite
def _commit_schedules(draw, writers_range: tuple[int, int]) -> CommitSchedule:
    base_steps = draw(st.lists(_operations(BASE_KINDS), max_size=2))
    base_version = 1 + len(base_steps)
    writers = []
    for _ in range(draw(st.integers(*writers_range))):
        staleness = draw(st.integers(0, 2))
        writers.append(ScheduledWriter(max(1, base_version - staleness), draw(_operations(SCHEDULED_KINDS))))
    return CommitSchedule(
        first_rows=draw(st.integers(1, 6)),
        stable_row_ids=draw(st.booleans()),
        naming=draw(st.sampled_from(["v2", "v1"])),
        max_rows_per_file=draw(st.integers(1, 4)),
        base_steps=base_steps,
        writers=writers,
        order=list(draw(st.permutations(range(len(writers))))),
    )


def commit_schedules(*, min_writers: int = 2, max_writers: int | None = None) -> st.SearchStrategy[CommitSchedule]:
    """:class:`CommitSchedule`: a base dataset of 1 to 6 rows (stable row
    ids or not, V1 or V2 names, 1 to 4 rows per file) with up to two more
    versions (appends, deletes, updates, config changes), and
    ``min_writers..max_writers`` writers, each of which opened one of the
    base's last three versions and performs one operation the reference can
    perform through that handle (every kind in :data:`SCHEDULED_KINDS`:
    append, delete, update, add or drop a column, compact, restore,
    overwrite, set config, create an index), and the order their commits
    start in. Guarantee: every operation applies to the version its writer
    read (``run`` raises nothing but the writers' own conflicts); whether the
    writers conflict is what the schedule is for.

    Shrinks towards ``min_writers`` writers appending one row to the latest
    base version, started in the order drawn, on a base of one row with no
    further version."""
    return _commit_schedules(size_range("writers", min_writers, max_writers, at_least=1))
