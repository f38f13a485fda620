"""Where the writer tasks run. An :class:`Executor` takes the tasks and
returns every attempt of every task; :class:`ProcessExecutor` runs each task
in a process of its own on this machine, all at once, and joins each one.
(The Spark executor lives in ``spark.py``.)"""

from __future__ import annotations

import multiprocessing
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from .history import Attempt
from .spec import TaskSpec
from .tasks import read_journal, run_writer_task

#: A task still running after this long is killed (its operation in flight
#: becomes indeterminate).
DEFAULT_TASK_TIMEOUT_SECONDS = 600.0


class TaskFailedError(RuntimeError):
    """A task process that ended in failure before recording anything."""


class Executor(Protocol):
    def run_tasks(self, tasks: list[TaskSpec]) -> list[Attempt]: ...


#: How long a task waits at the start barrier for the others to be ready.
BARRIER_TIMEOUT_SECONDS = 120.0


def _task_main(task: TaskSpec, barrier) -> None:
    def ready() -> None:
        try:
            barrier.wait(BARRIER_TIMEOUT_SECONDS)
        except threading.BrokenBarrierError:
            pass  # a writer failed to start: the others go on without it

    run_writer_task(task, ready=ready)  # the attempts are in the journal


class ProcessExecutor:
    """One real process per task (``spawn``: nothing of the parent's state,
    pylance's threads included, is inherited), all started at once, each
    joined; the attempts come back through each task's journal, so a process
    that dies (killed mid-commit) still reports what it did and its last
    operation as indeterminate."""

    def __init__(self, *, timeout: float = DEFAULT_TASK_TIMEOUT_SECONDS):
        self.timeout = timeout

    def run_tasks(self, tasks: list[TaskSpec]) -> list[Attempt]:
        context = multiprocessing.get_context("spawn")
        with tempfile.TemporaryDirectory(prefix="harness-journals-") as journals:
            tasks = [
                t if t.journal else replace(t, journal=str(Path(journals) / f"w{t.writer_index}.jsonl")) for t in tasks
            ]
            barrier = context.Barrier(len(tasks))
            processes = [
                context.Process(target=_task_main, args=(t, barrier), name=f"writer-{t.writer_index}") for t in tasks
            ]
            for process in processes:
                process.start()
            deadline = time.monotonic() + self.timeout
            ended: list[float] = []
            for process in processes:
                process.join(max(0.0, deadline - time.monotonic()))
                if process.is_alive():
                    process.kill()
                    process.join()
                ended.append(time.time())
            attempts: list[Attempt] = []
            for task, process, died_at in zip(tasks, processes, ended, strict=True):
                assert task.journal is not None
                journal = Path(task.journal)
                if process.exitcode != 0 and (not journal.exists() or journal.stat().st_size == 0):
                    raise TaskFailedError(
                        f"writer {task.writer_index} exited with status {process.exitcode} before recording anything"
                    )
                attempts.extend(read_journal(journal, task.writer_index, died_at=died_at))
        return attempts
