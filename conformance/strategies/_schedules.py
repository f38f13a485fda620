"""Strategies for writers that race: a :class:`CommitSchedule` is a base
dataset, several writers that each opened it at some version and perform one
operation (:mod:`._schedule_operations`) through that (possibly stale)
handle, and the order their commits start in. :meth:`CommitSchedule.run`
performs it with the reference implementation's commit loop, one writer
after another, in threads, or in processes (:mod:`._schedule_runs`), and
:meth:`ScheduleRun.serial` is what the acknowledged writes make of the table
when applied one after another in the order of the versions they committed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from hypothesis import strategies as st

from ._arguments import selection, size_range
from ._schedule_operations import (
    BASE_WRITER,
    KEY,
    SCHEDULED_KINDS,
    TEXT,
    VALUE,
    AddColumn,
    AppendRows,
    CompactFiles,
    DeleteRows,
    DropColumn,
    IndexColumn,
    OverwriteRows,
    RestoreVersion,
    ScheduledOperation,
    SetConfig,
    TableState,
    UpdateRows,
    plan,
    rows_table,
)
from ._schedule_runs import RunMode, ScheduleRun, in_processes, in_threads, perform


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
            rows_table(range(self.first_rows), (KEY, VALUE, TEXT)),
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
            results = in_threads(path, ordered)
        elif how == "processes":
            results = in_processes(path, ordered)
        else:
            raise ValueError(f"no run mode {how!r}")
        return ScheduleRun(path, base_version, history, plans, sorted(results, key=lambda r: r.writer))


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
def _commit_schedules(draw, writers_range: tuple[int, int], kinds: tuple[type, ...]) -> CommitSchedule:
    base_steps = draw(st.lists(_operations(BASE_KINDS), max_size=2))
    base_version = 1 + len(base_steps)
    writers = []
    for _ in range(draw(st.integers(*writers_range))):
        staleness = draw(st.integers(0, 2))
        writers.append(ScheduledWriter(max(1, base_version - staleness), draw(_operations(kinds))))
    return CommitSchedule(
        first_rows=draw(st.integers(1, 6)),
        stable_row_ids=draw(st.booleans()),
        naming=draw(st.sampled_from(["v2", "v1"])),
        max_rows_per_file=draw(st.integers(1, 4)),
        base_steps=base_steps,
        writers=writers,
        order=list(draw(st.permutations(range(len(writers))))),
    )


def commit_schedules(
    *, min_writers: int = 2, max_writers: int | None = None, operations: Iterable[str] | None = None
) -> st.SearchStrategy[CommitSchedule]:
    """:class:`CommitSchedule`: a base dataset of 1 to 6 rows (stable row
    ids or not, V1 or V2 names, 1 to 4 rows per file) with up to two more
    versions (appends, deletes, updates, config changes), and
    ``min_writers..max_writers`` writers, each of which opened one of the
    base's last three versions and performs one operation the reference can
    perform through that handle, and the order their commits start in. The
    operations are every kind in :data:`SCHEDULED_KINDS` (append, delete,
    update, add_column, drop_column, compact, restore, overwrite, config,
    create_index), or only the ``operations`` named by their ``KIND`` (an
    unknown name is an ``InvalidArgument``). Guarantee: every operation
    applies to the version its writer read; whether the writers conflict is
    what the schedule is for.

    Shrinks towards ``min_writers`` writers appending one row to the latest
    base version (or the first kind selected, in the order of
    :data:`SCHEDULED_KINDS`), started in the order drawn, on a base of one
    row with no further version."""
    by_name = {kind.KIND: kind for kind in SCHEDULED_KINDS}
    chosen = set(selection("operations", operations, by_name))
    kinds = tuple(kind for kind in SCHEDULED_KINDS if kind.KIND in chosen)
    return _commit_schedules(size_range("writers", min_writers, max_writers, at_least=1), kinds)
