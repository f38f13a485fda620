"""One writer's loop: the pure entry point a Spark task or a process calls.

Each planned operation is one attempt: the harness reads the latest
version (with the reference reader: its number and schema), builds the
vocabulary operation on it (:func:`~.workloads.to_write_op`; asked to build on
that version when the writer declares ``write-at-version``, and named by its
op id as the token the writer records in the transaction where it can),
and hands it to the writer's ``write``. The attempt is recorded whatever
happens: a :class:`~conformance.drivers.writes.WriteConflict` is a conflict,
any other failure of the implementation an error, and the writer goes on
with its plan. With a journal the task appends each attempt to a file as it
goes (a "started" line before the operation, the attempt after), so that an
executor can recover the history of a task that died and mark its last
operation unknown (:func:`read_journal`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from conformance.drivers import is_implementation_failure
from conformance.drivers.writes import WriteConflict, WriteKind, WriteNotSupported, WriteOutcome, write_result
from reference_impl.arrow_schema import schema_to_arrow
from reference_impl.dataset import Dataset, dataset_storage

from .errors import error_text
from .history import Attempt
from .spec import RunSpec, TaskSpec
from .workloads import PlannedOp, plan_all, to_write_op
from .writers import LoadedWriter, load_writer


class _Latest:
    """The latest version of the run's dataset and its Arrow schema, as the
    reference reads them (what an operation is built on)."""

    def __init__(self, spec: RunSpec):
        self.storage = dataset_storage(spec.uri, spec.storage_options or None, writable=False)

    def read(self):
        dataset = Dataset.open(self.storage, with_fragments=False)
        return dataset.version, schema_to_arrow(dataset.schema)


def run_writer_task(task: TaskSpec, *, ready: Callable[[], object] | None = None) -> list[Attempt]:
    """Run writer ``task.writer_index``'s plan and return its attempts.
    ``ready`` is called once the writer is loaded and warm (its
    implementation imported and the dataset read once), before its first
    operation: an executor's start barrier, so that writers race from the start."""
    spec = task.run
    writer = load_writer(spec.writer_of(task.writer_index), task.writer_index, spec)
    plan = plan_all(spec, writer.performed)[task.writer_index]
    latest = _Latest(spec)
    _warm_up(writer, spec)
    latest.read()
    if ready is not None:
        ready()
    journal = Path(task.journal).open("a") if task.journal else None
    attempts = []
    try:
        for planned in plan:
            if spec.pace_seconds:
                time.sleep(spec.pace_seconds)
            attempt = _attempt(writer, spec, task.writer_index, planned, latest, journal)
            if attempt is None:
                continue
            attempts.append(attempt)
            if journal is not None:
                _journal(journal, {"attempt": attempt.to_json()})
    finally:
        if journal is not None:
            journal.close()
        writer.close()
    return attempts


def _warm_up(writer: LoadedWriter, spec: RunSpec) -> None:
    """Load what the writer's first operation would (its implementation, the
    dataset), so that the start barrier is passed warm."""
    warm = getattr(writer.driver, "warm_up", None)
    if callable(warm):
        warm(spec.uri, storage_options=spec.storage_options or None)


def _attempt(
    writer: LoadedWriter, spec: RunSpec, writer_index: int, planned: PlannedOp, latest: _Latest, journal
) -> Attempt | None:
    start = time.time()
    read: int | None = None
    outcome, error = WriteOutcome.ACKNOWLEDGED, None
    versions: tuple[int, ...] = ()
    engine_reads: tuple[int, ...] = ()
    args = dict(planned.args)
    planned = PlannedOp(planned.op_id, planned.kind, args)
    try:
        read, schema = latest.read()
        op = to_write_op(
            planned, schema, read, read_version=read if writer.writes_at_version else None, token=planned.op_id
        )
        if op is None:
            return None  # nothing to do (no column of the writer's own left to drop or rename)
        if journal is not None:
            started = {"op_id": planned.op_id, "kind": planned.kind.value, "args": args, "read_version": read}
            _journal(journal, {"started": {**started, "start": start}})
        result = write_result(writer.driver.write(spec.uri, op, storage_options=spec.storage_options or None))
        outcome, versions, engine_reads = result.outcome, result.versions, result.read_versions
        args.update(result.detail)
    except WriteConflict as exc:
        outcome, error = WriteOutcome.CONFLICT, error_text(exc)
    except WriteNotSupported as exc:
        outcome, error = WriteOutcome.ERROR, error_text(exc)
    except BaseException as exc:  # any failure of the implementation is recorded, never fatal
        if not is_implementation_failure(exc):
            raise
        outcome, error = WriteOutcome.ERROR, error_text(exc)
    return Attempt(
        planned.op_id,
        writer_index,
        planned.kind,
        args,
        read,
        outcome,
        versions[-1] if versions else None,
        error,
        start,
        time.time(),
        versions=versions,
        engine_read_versions=engine_reads,
        read_asked=writer.writes_at_version,
    )


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
                WriteKind(started["kind"]),
                started["args"],
                started["read_version"],
                WriteOutcome.UNKNOWN,
                None,
                "the writer died during the operation",
                started["start"],
                died_at,
            )
        )
    return attempts
