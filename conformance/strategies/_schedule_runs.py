"""Performing racing writers' operations (:mod:`._schedules`) through a
driver's ``write``: one writer after another, every writer in threads, or
every writer in a process of its own, and what each one got
(:class:`ScheduledOutcome`)."""

from __future__ import annotations

import multiprocessing
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conformance.drivers.protocol import WriteConflict
from conformance.drivers.writes import WriteOp, WriteOutcome, WriteResult

from ._schedule_operations import TableState, apply
from ._writing import resolve_driver, write


@dataclass(frozen=True)
class ScheduledOutcome:
    """What one writer got: ``result``, the driver's :class:`WriteResult` for
    an acknowledged write (the versions it committed), or one saying only
    how it failed (its ``outcome``; no version); for a failure, the error's
    type and message and, for a :class:`WriteConflict`, whether the
    implementation called it retryable (None: it did not say)."""

    writer: int
    result: WriteResult
    error_type: str | None = None
    message: str | None = None
    retryable: bool | None = None

    @property
    def outcome(self) -> WriteOutcome:
        return self.result.outcome

    @property
    def acknowledged(self) -> bool:
        return self.outcome is WriteOutcome.ACKNOWLEDGED

    @classmethod
    def failed(
        cls, writer: int, outcome: WriteOutcome, error_type: str, message: str, retryable: bool | None = None
    ) -> ScheduledOutcome:
        """A write that did not commit (or may have: ``UNKNOWN``)."""
        return cls(writer, WriteResult(outcome=outcome), error_type, message, retryable)


def perform(
    driver: Any, path: str, writer: int, op: WriteOp, ready: Callable[[], None] = lambda: None
) -> ScheduledOutcome:
    """Call ``ready()``, then perform ``op`` (built on its ``read_version``)
    through ``driver.write``; a conflict or any other failure becomes the
    outcome, not an exception."""
    ready()
    try:
        result = write(driver, path, op)
    except WriteConflict as exc:
        return ScheduledOutcome.failed(writer, WriteOutcome.CONFLICT, type(exc).__name__, str(exc), exc.retryable)
    except Exception as exc:  # reported in the outcome; the property tests judge it
        return ScheduledOutcome.failed(writer, WriteOutcome.ERROR, type(exc).__name__, str(exc))
    return ScheduledOutcome(writer, result)


#: How long a writer process waits for the one before it to start.
START_TIMEOUT_SECONDS = 120


def _perform_in_process(driver_name: str, path: str, writer: int, op: WriteOp, wait, start, results) -> None:
    driver = resolve_driver(driver_name)

    def ready():
        if wait is not None:
            wait.wait(START_TIMEOUT_SECONDS)
        start.set()

    results.put(perform(driver, path, writer, op, ready))


class RunMode(str, Enum):
    """How a schedule is run: one writer after another in its order, or
    every writer at once in threads or processes (started in its order)."""

    SERIAL = "serial"
    THREADS = "threads"
    PROCESSES = "processes"


@dataclass
class ScheduleRun:
    """A schedule performed on a dataset: the states of the base versions
    (as the driver read them), each writer's operation and outcome."""

    path: str
    base_version: int
    history: dict[int, TableState]
    operations: list[WriteOp]
    outcomes: list[ScheduledOutcome]

    def serial(self) -> TableState:
        """The model of the outcome: the acknowledged writes applied one
        after another to the base's latest state (:func:`apply`), in the
        order of the last version each committed (a compaction with nothing
        to do changes nothing wherever it lands)."""
        state = self.history[self.base_version]
        acknowledged = []
        for outcome in self.outcomes:
            if not outcome.acknowledged:
                continue
            if outcome.result.version is None:
                continue  # acknowledged with no version: it had nothing to commit (a compaction with no work)
            acknowledged.append((outcome.result.version, self.operations[outcome.writer]))
        for _, op in sorted(acknowledged, key=lambda item: item[0]):
            state = apply(state, op, self.history)
        return state


def in_threads(driver: Any, path: str, ordered: list[tuple[int, WriteOp]]) -> list[ScheduledOutcome]:
    """Each writer waits until the one before it in the order has started,
    then starts: commits overlap, in order of start."""
    started = [threading.Event() for _ in ordered]
    outcomes: list[ScheduledOutcome] = []

    def run(position: int) -> None:
        def ready():
            if position:
                started[position - 1].wait()
            started[position].set()

        writer, op = ordered[position]
        outcomes.append(perform(driver, path, writer, op, ready))

    threads = [threading.Thread(target=run, args=(p,)) for p in range(len(ordered))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def in_processes(driver_name: str, path: str, ordered: list[tuple[int, WriteOp]]) -> list[ScheduledOutcome]:
    """As :func:`in_threads`, one process per writer (spawned, so nothing
    of the parent's state is shared; each loads the driver by its name);
    every process is joined."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    started = [context.Event() for _ in ordered]
    processes = [
        context.Process(
            target=_perform_in_process,
            args=(driver_name, path, writer, op, started[p - 1] if p else None, started[p], results),
        )
        for p, (writer, op) in enumerate(ordered)
    ]
    for process in processes:
        process.start()
    collected: dict[int, ScheduledOutcome] = {}
    try:
        while len(collected) < len(processes):
            try:
                outcome = results.get(timeout=1)
            except queue.Empty:
                if any(process.is_alive() for process in processes):
                    continue
                try:  # every writer has exited: take what it left, once more
                    outcome = results.get(timeout=1)
                except queue.Empty:
                    break
            collected[outcome.writer] = outcome
    finally:
        for process in processes:
            process.join(timeout=START_TIMEOUT_SECONDS)
            if process.is_alive():
                process.terminate()
                process.join()
    for (writer, _), process in zip(ordered, processes, strict=True):
        if writer not in collected:  # the process died without an outcome: it may have committed
            collected[writer] = ScheduledOutcome.failed(
                writer, WriteOutcome.UNKNOWN, "WriterProcessDied", f"exit code {process.exitcode}"
            )
    return list(collected.values())
