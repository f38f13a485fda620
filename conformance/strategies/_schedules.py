"""Strategies for writers that race: a :class:`CommitSchedule` is a base
dataset, several writers that each read it at some version and perform one
write-vocabulary operation built on that (possibly stale) version
(:mod:`._schedule_operations`), and the order their commits start in.
:meth:`CommitSchedule.run` performs it through a driver's ``write`` (the
reference's by default), one writer after another, in threads, or in
processes (:mod:`._schedule_runs`), and :meth:`ScheduleRun.serial` is what
the acknowledged writes make of the table when applied one after another in
the order of the versions they committed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from conformance.drivers.protocol import Capability
from conformance.drivers.writes import Create, WriteKind, WriteOp

from ._arguments import selection, size_range
from ._schedule_operations import (
    BASE_WRITER,
    KEY,
    SCHEDULED_KINDS,
    TEXT,
    VALUE,
    TableState,
    apply,
    rows_table,
    scheduled_operations,
)
from ._schedule_runs import RunMode, ScheduleRun, in_processes, in_threads, perform
from ._writing import REFERENCE, DriverLike, ManifestNaming, create, driver_name, require_writes, resolve_driver, write


@dataclass(frozen=True)
class ScheduledWriter:
    """One writer of a :class:`CommitSchedule`: it read the dataset at
    ``read_version`` and performs ``operation``, built on that version (an
    operation given without a ``read_version`` gets this one)."""

    read_version: int
    operation: WriteOp

    def __post_init__(self) -> None:
        if self.operation.read_version is None:
            object.__setattr__(self, "operation", replace(self.operation, read_version=self.read_version))
        elif self.operation.read_version != self.read_version:
            raise ValueError(
                f"a writer that read version {self.read_version} performs an operation built on "
                f"version {self.operation.read_version}"
            )


@dataclass
class CommitSchedule:
    """A base dataset (``first_rows`` rows, then ``base_steps`` written one
    after another, each committing a version) and ``writers`` racing on top of
    it; ``order`` is the order their commits start in (a permutation of
    positions in ``writers``)."""

    first_rows: int
    stable_row_ids: bool
    naming: ManifestNaming
    max_rows_per_file: int
    base_steps: list[WriteOp]
    writers: list[ScheduledWriter]
    order: list[int]

    def build_base(self, path: str | os.PathLike, *, driver: DriverLike = REFERENCE) -> int:
        """Write the base dataset at ``path`` (which must not exist) through
        ``driver``; returns its latest version."""
        driver = resolve_driver(driver)
        require_writes(driver)
        first = Create(
            rows_table(range(self.first_rows), (KEY, VALUE, TEXT)),
            stable_row_ids=self.stable_row_ids,
            max_rows_per_file=self.max_rows_per_file,
        )
        latest = create(driver, path, first, self.naming).version
        for step in self.base_steps:
            latest = write(driver, path, step).version
        if latest is None:
            raise ValueError("the driver did not say which version the base's last write committed")
        return latest

    def run(
        self, path: str | os.PathLike, how: RunMode | str = RunMode.SERIAL, *, driver: DriverLike = REFERENCE
    ) -> ScheduleRun:
        """Build the base at ``path`` and perform every writer through
        ``driver`` (a driver declaring ``write-at-version``; a name or a
        module when ``how`` is processes), ``how`` says how; every thread or
        process is joined before this returns."""
        how = RunMode(how)
        loaded = resolve_driver(driver)
        require_writes(loaded, Capability.WRITE_AT_VERSION)
        path = str(path)
        base_version = self.build_base(path, driver=loaded)
        history = {v: TableState.read(loaded, path, v) for v in range(1, base_version + 1)}
        operations = [writer.operation for writer in self.writers]
        ordered = [(w, operations[w]) for w in self.order]
        if how is RunMode.SERIAL:
            outcomes = [perform(loaded, path, w, op) for w, op in ordered]
        elif how is RunMode.THREADS:
            outcomes = in_threads(loaded, path, ordered)
        else:
            outcomes = in_processes(driver_name(driver), path, ordered)
        return ScheduleRun(path, base_version, history, operations, sorted(outcomes, key=lambda o: o.writer))


# -- the strategy -------------------------------------------------------------------------

#: What the base's own steps may be: one commit each, rows and config only.
BASE_KINDS = (WriteKind.APPEND, WriteKind.DELETE, WriteKind.UPDATE, WriteKind.CONFIG)


@st.composite
def _commit_schedules(draw, writers_range: tuple[int, int], kinds: tuple[WriteKind, ...]) -> CommitSchedule:
    first_rows = draw(st.integers(1, 6))
    first = rows_table(range(first_rows), (KEY, VALUE, TEXT))
    # The state of every base version, as the model has it: what writers read.
    states = {1: TableState(list(first.column_names), {row[KEY]: row for row in first.to_pylist()}, {})}
    base_steps: list[Any] = []
    for version in range(1, 1 + draw(st.integers(0, 2))):
        step = draw(scheduled_operations(BASE_KINDS, BASE_WRITER, states[version], version))
        base_steps.append(step)
        states[version + 1] = apply(states[version], step, states)
    base_version = 1 + len(base_steps)
    writers = []
    for writer in range(draw(st.integers(*writers_range))):
        read_version = max(1, base_version - draw(st.integers(0, 2)))
        operation = draw(scheduled_operations(kinds, writer, states[read_version], read_version))
        writers.append(ScheduledWriter(read_version, operation))
    return CommitSchedule(
        first_rows=first_rows,
        stable_row_ids=draw(st.booleans()),
        naming=draw(st.sampled_from(list(ManifestNaming))),
        max_rows_per_file=draw(st.integers(1, 4)),
        base_steps=base_steps,
        writers=writers,
        order=list(draw(st.permutations(range(len(writers))))),
    )


def _kind_names(operations: Iterable[WriteKind | str] | None) -> Iterable[str] | None:
    """The selected kinds' names (``WriteKind`` values), members or names alike."""
    if operations is None or isinstance(operations, str):
        return operations
    try:
        return [kind.value if isinstance(kind, WriteKind) else kind for kind in operations]
    except TypeError:
        raise InvalidArgument(f"operations={operations!r} must be a collection of write kinds") from None


def commit_schedules(
    *, min_writers: int = 2, max_writers: int | None = None, operations: Iterable[WriteKind | str] | None = None
) -> st.SearchStrategy[CommitSchedule]:
    """:class:`CommitSchedule`: a base dataset of 1 to 6 rows (stable row
    ids or not, V1 or V2 names, 1 to 4 rows per file) with up to two more
    versions (appends, deletes, updates, config changes), and
    ``min_writers..max_writers`` writers, each of which read one of the
    base's last three versions and performs one write-vocabulary operation
    built on it (``read_version``), and the order their commits start in.
    The operations are every kind in :data:`SCHEDULED_KINDS` (append,
    delete, update, add-columns, drop-columns, compact, restore, overwrite,
    config, create-index), or only the ``operations`` named (``WriteKind``
    members or their values; an unknown one is an ``InvalidArgument``).
    Guarantee: every operation applies to the version its writer read;
    whether the writers conflict is what the schedule is for.

    Shrinks towards ``min_writers`` writers appending one row to the latest
    base version (or the first kind selected, in the order of
    :data:`SCHEDULED_KINDS`), started in the order drawn, on a base of one
    row with no further version."""
    chosen = set(selection("operations", _kind_names(operations), [kind.value for kind in SCHEDULED_KINDS]))
    kinds = tuple(kind for kind in SCHEDULED_KINDS if kind.value in chosen)
    return _commit_schedules(size_range("writers", min_writers, max_writers, at_least=1), kinds)
