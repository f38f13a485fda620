"""Performing racing writers' plans (:mod:`._schedules`) with the
reference implementation's commit loop: one writer, every writer in threads,
or every writer in a process of its own, and what each one got."""

from __future__ import annotations

import multiprocessing
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Literal

from ._schedule_operations import PlannedWrite, TableState


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


#: How long a writer process waits for the one before it to start.
START_TIMEOUT_SECONDS = 120


def _perform_in_process(path: str, write: PlannedWrite, wait, start, results) -> None:
    def ready():
        if wait is not None:
            wait.wait(START_TIMEOUT_SECONDS)
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


def in_threads(path: str, ordered: list[PlannedWrite]) -> list[WriteResult]:
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


def in_processes(path: str, ordered: list[PlannedWrite]) -> list[WriteResult]:
    """As :func:`in_threads`, one process per writer (spawned, so nothing
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
    collected: dict[int, WriteResult] = {}
    try:
        while len(collected) < len(processes):
            try:
                result = results.get(timeout=1)
            except queue.Empty:
                if any(process.is_alive() for process in processes):
                    continue
                try:  # every writer has exited: take what it left, once more
                    result = results.get(timeout=1)
                except queue.Empty:
                    break
            collected[result.writer] = result
    finally:
        for process in processes:
            process.join(timeout=START_TIMEOUT_SECONDS)
            if process.is_alive():
                process.terminate()
                process.join()
    for write, process in zip(ordered, processes, strict=True):
        if write.writer not in collected:  # the process died without a result
            died = Rejection("WriterProcessDied", f"exit code {process.exitcode}", False, None, None, None)
            collected[write.writer] = WriteResult(write.writer, rejection=died)
    return list(collected.values())
