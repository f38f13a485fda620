"""One writer's loop: the pure entry point a Spark task or a process calls.

Each planned operation is one attempt: the writer takes a read version,
performs the operation, and the attempt is recorded whatever happens: a
conflict or an error is recorded and the writer goes on with its plan. With
a journal the task appends each attempt to a file as it goes (a "started"
line before the operation, the attempt after), so that an executor can
recover the history of a task that died and mark its last operation
indeterminate (:func:`read_journal`).
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from pathlib import Path

from .history import Attempt, AttemptOutcome
from .spec import FAULT_KILL_MID_COMMIT, FAULT_SLOW_STORE, RunSpec, TaskSpec
from .workloads import plan_all
from .writers import ReferenceWriter, Writer, WriterLoadError

#: Error messages kept in the history are cut to this many characters.
MAX_ERROR_CHARS = 500
#: With the kill-mid-commit fault, writer 0 dies just after committing its
#: n-th manifest (the commit happened, unacknowledged) and writer 1 just
#: before writing it (nothing visible).
KILL_AT_MANIFEST = 3


def load_writer(name: str, writer_index: int, spec: RunSpec | None = None) -> Writer:
    """The writer ``--writer NAME`` names, for writer ``writer_index``:
    ``pylance``, ``reference``, ``faulty:NAME`` or a module path whose module
    defines ``create_writer(writer_index) -> Writer``."""
    from . import faulty, writers  # the shipped writers

    if name == "pylance":
        return writers.PylanceWriter()
    if name == "reference":
        return ReferenceWriter(slow_store=spec is not None and spec.fault == FAULT_SLOW_STORE)
    if name.startswith("faulty:"):
        return faulty.create(name.removeprefix("faulty:"))
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise WriterLoadError(f"writer {name!r}: no such module ({exc})") from None
    create = getattr(module, "create_writer", None)
    if create is None:
        raise WriterLoadError(f"writer module {name!r} defines no create_writer(writer_index)")
    writer = create(writer_index)
    if not isinstance(writer, Writer):
        raise WriterLoadError(f"writer module {name!r}: create_writer returned {writer!r}, not a Writer")
    return writer


def _install_kill(writer: Writer, writer_index: int) -> None:
    """The kill-mid-commit fault: this process SIGKILLs itself around its
    n-th manifest write (reference writers only: pylance has no hook there)."""
    if not isinstance(writer, ReferenceWriter) or writer_index > 1:
        return
    writer.kill_at_manifest = (KILL_AT_MANIFEST, "after" if writer_index == 0 else "before")


def run_writer_task(task: TaskSpec, *, ready: Callable[[], object] | None = None) -> list[Attempt]:
    """Run writer ``task.writer_index``'s plan and return its attempts.
    ``ready`` is called once the writer is loaded, before its first
    operation (an executor's start barrier, so that writers race from the start)."""
    spec = task.run
    writer = load_writer(spec.writer, task.writer_index, spec)
    if spec.fault == FAULT_KILL_MID_COMMIT:
        _install_kill(writer, task.writer_index)
    plan = plan_all(spec, writer.supported_kinds)[task.writer_index]
    writer.open(spec.uri, spec.storage_options)
    if ready is not None:
        ready()
    journal = Path(task.journal).open("a") if task.journal else None
    attempts = []
    try:
        for op in plan:
            start = time.time()
            read_version = None
            outcome, version, error, args = AttemptOutcome.ACKNOWLEDGED, None, None, dict(op.args)
            try:
                read_version = writer.read_version()
                if journal is not None:
                    _journal(
                        journal,
                        {
                            "started": {
                                "op_id": op.op_id,
                                "kind": op.kind,
                                "args": op.args,
                                "read_version": read_version,
                                "start": start,
                            }
                        },
                    )
                performed = writer.perform(op)
                version = performed.version
                args.update(performed.args)
            except Exception as exc:  # any failure of the writer is recorded, never fatal
                outcome = AttemptOutcome.CONFLICT if writer.is_conflict(exc) else AttemptOutcome.ERROR
                error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
            attempt = Attempt(
                op.op_id, task.writer_index, op.kind, args, read_version, outcome, version, error, start, time.time()
            )
            attempts.append(attempt)
            if journal is not None:
                _journal(journal, {"attempt": attempt.to_json()})
    finally:
        if journal is not None:
            journal.close()
    return attempts


def _journal(out, record: dict) -> None:
    out.write(json.dumps(record) + "\n")
    out.flush()


def read_journal(path: Path, writer_index: int, *, died_at: float) -> list[Attempt]:
    """The attempts a task's journal holds; an operation started and never
    finished (the task died) is an indeterminate attempt ending ``died_at``."""
    attempts: list[Attempt] = []
    started: dict | None = None
    if not path.exists():
        return attempts
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            break  # a line cut short by the kill
        if "started" in record:
            started = record["started"]
        elif "attempt" in record:
            attempts.append(Attempt.from_json(record["attempt"]))
            started = None
    if started is not None:
        attempts.append(
            Attempt(
                started["op_id"],
                writer_index,
                started["kind"],
                started["args"],
                started["read_version"],
                AttemptOutcome.INDETERMINATE,
                None,
                "the writer died during the operation",
                started["start"],
                died_at,
            )
        )
    return attempts
