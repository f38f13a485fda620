"""The harness on Spark: writers as Spark tasks, and the connector's write path.

:class:`SparkExecutor` runs a harness run's writers as the tasks of one Spark
job (the plan's ``Executor``: ``run_tasks``): one task per
:class:`~conformance.harness.spec.TaskSpec`, each calling
:func:`conformance.harness.tasks.run_writer_task` in a Python worker of an
executor and sending its attempts back to the driver as JSON-able dicts.
``master`` is any Spark master URL: ``local[N]`` (the driver's own JVM, N
writers at once, each in a Python worker: writers wait on storage, not on
cores; :data:`HARNESS_MASTER`, eight, is the embedded default), ``local[*]``
(a task per core) or ``spark://HOST:PORT`` (a standalone cluster).

:func:`connector_appends` is the other pattern (recorded and checked as a
harness run by :mod:`.connector`): the way Lance's Spark
connector writes. The driver plans each job and pins the version it read,
the executors write fragments (pylance's
:func:`lance.fragment.write_fragments`, the reference's
:func:`reference_impl.fragment_writer.write_fragments`), and the driver
commits them as one Append transaction built on the pinned version. Several
jobs run at once (one driver thread each), so their commits race and each
must be rebased over the others' appends (upstream "Conflict resolution":
Append against Append is compatible).

The executors import this project: the Python workers are started with the
driver's own interpreter (``spark.pyspark.python`` and ``PYSPARK_PYTHON`` in
``spark.executorEnv``), which has it installed. Everything listens on
127.0.0.1 only and the web UI is off; Spark's own logging is kept to errors.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..spark_session import SparkError, spark_conf, unreachable_masters
from ..spark_session import start_session as _start_session
from .errors import error_text

__all__ = ["HARNESS_MASTER", "SparkError", "SparkExecutor", "spark_conf", "unreachable_masters"]

#: The harness's embedded master: eight task slots whatever the cores. A
#: run's writers race only when each has a slot (they then run as one barrier
#: stage and start together, once warm); on ``local[*]`` with two cores, four
#: writers would run two at a time.
HARNESS_MASTER = "local[8]"


def _default_task() -> Callable[..., list[Any]]:
    return run_task_in_child


def run_task_in_child(task: Any, ready: Callable[[], object] | None = None) -> list[Any]:
    """Runs on an executor: :func:`~conformance.harness.tasks.run_writer_task`
    for ``task`` in a child process with a journal in the executor's
    temporary directory, then its attempts from the journal. A writer that
    dies (SIGKILLed mid-commit by the ``kill-mid-commit`` fault, or a crash of
    the implementation) takes only its child down: its finished attempts
    come back and the one in flight is indeterminate, as with the local
    ProcessExecutor; the Spark task itself succeeds.

    ``ready`` (the stage's barrier) is called once the child has loaded its
    writer, and the child starts its first operation only when it returns,
    so that writers race from their first operation on; it is called
    exactly once even when the child dies first, so no other task waits
    for this one in vain."""
    # lazy: pulls pyarrow, and the CLI imports this module at start-up (harness command: HARNESS_MASTER)
    from .executors import TaskFailedError
    from .tasks import read_journal

    with tempfile.TemporaryDirectory(prefix="lance-conformance-writer-") as scratch:
        journal = Path(scratch) / "journal.jsonl"
        task_file = Path(scratch) / "task.pickle"
        task_file.write_bytes(pickle.dumps(dataclasses.replace(task, journal=str(journal))))
        # Two pipes: the child says it is ready on one, waits for the go on the other.
        ready_read, ready_write = os.pipe()
        go_read, go_write = os.pipe()
        command = [sys.executable, "-m", "conformance.harness.spark", str(task_file), str(ready_write), str(go_read)]
        with open(Path(scratch) / "stderr", "w+b") as stderr:
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                pass_fds=(ready_write, go_read),
            )
            os.close(ready_write)
            os.close(go_read)
            try:
                os.read(ready_read, 1)  # b"" when the child died before it was ready
                if ready is not None:
                    ready()
                try:
                    os.write(go_write, b"g")
                except BrokenPipeError:
                    pass  # the child is gone; its journal says how far it got
            finally:
                os.close(ready_read)
                os.close(go_write)
            returncode = child.wait()
            died_at = time.time()
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace").strip().splitlines()[-5:]
        if returncode != 0 and (not journal.exists() or journal.stat().st_size == 0):
            raise TaskFailedError(
                f"writer {task.writer_index} exited with status {returncode} before recording anything: "
                + " | ".join(tail)
            )
        return read_journal(journal, task.writer_index, died_at=died_at)


def _child_main(task_file: str, ready_fd: int, go_fd: int) -> None:
    """The child process of :func:`run_task_in_child`: the writer's loop
    (its attempts are in the journal), started when the parent says go."""
    from .tasks import run_writer_task  # lazy: pulls pyarrow, and the CLI imports this module at start-up

    def ready() -> None:
        os.write(ready_fd, b"r")
        os.read(go_fd, 1)

    run_writer_task(pickle.loads(Path(task_file).read_bytes()), ready=ready)


def attempt_to_json(attempt: Any) -> dict[str, Any]:
    """A history attempt as the JSON document that crosses from executor to driver."""
    return attempt.to_json()


def attempt_from_json(record: dict[str, Any]) -> Any:
    from .history import Attempt  # lazy: pulls jsonschema and pyarrow; the CLI imports this module

    return Attempt.from_json(record)


#: How long after the last writer passed the barrier every writer starts:
#: more than the barrier's replies take to reach every task on a busy machine.
START_GRACE_SECONDS = 0.5


def _start_together() -> None:
    """The stage's barrier, then one start time for every writer: each task
    passes its clock through ``allGather`` (itself a barrier) and all wait
    until the latest plus :data:`START_GRACE_SECONDS`, so that writers
    released a few hundred milliseconds apart still start together."""
    from pyspark import BarrierTaskContext  # lazy: runs on an executor, inside a barrier stage

    clocks = BarrierTaskContext.get().allGather(repr(time.time()))
    start = max(float(clock) for clock in clocks) + START_GRACE_SECONDS
    time.sleep(max(0.0, start - time.time()))


class _TaskRunner:
    """What one Spark task runs: the writer task for each TaskSpec of its
    partition (exactly one), its attempts encoded for the trip back. In a
    barrier stage every writer waits at the stage's barrier before its
    first operation."""

    def __init__(self, task: Callable[..., list[Any]], encode: Callable[[Any], dict[str, Any]], barrier: bool):
        self.task = task
        self.encode = encode
        self.barrier = barrier
        # A writer plugged in by module path may live on the driver's
        # PYTHONPATH as it is now (not as it was when Spark started): the
        # writer's process gets it too.
        self.python_path = os.environ.get("PYTHONPATH", "")

    def __call__(self, specs: Iterable[Any]) -> Iterator[dict[str, Any]]:
        if self.python_path:
            inherited = os.environ.get("PYTHONPATH", "")
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (self.python_path, inherited) if p)
        ready = _start_together if self.barrier else None
        for spec in specs:
            for attempt in self.task(spec, ready):
                yield self.encode(attempt)


class SparkExecutor:
    """Runs a harness run's writers as the tasks of one Spark job.

    The Spark session is started on first use and stopped by :meth:`stop`
    (or leaving a ``with`` block); a process has one Spark session at a
    time, so a second executor on another master fails until the first is
    stopped. ``task(spec, ready)`` is what each Spark task runs (``ready``:
    the stage's barrier, or None). ``conf`` adds Spark settings or overrides the harness's
    (:func:`spark_conf`), e.g. ``spark.pyspark.python`` where a cluster's
    nodes keep the project's interpreter elsewhere. ``task`` (by default ``run_writer_task``) must be importable on
    the executors: a module-level function of an installed module.
    """

    def __init__(
        self,
        master: str = HARNESS_MASTER,
        *,
        app_name: str = "lance-conformance harness",
        conf: Mapping[str, str] | None = None,
        task: Callable[..., list[Any]] | None = None,
        encode: Callable[[Any], dict[str, Any]] = attempt_to_json,
        decode: Callable[[dict[str, Any]], Any] = attempt_from_json,
    ):
        self.master = master
        self.app_name = app_name
        self.conf = dict(conf or {})
        self._task = task
        self._encode = encode
        self._decode = decode
        self._session: Any = None
        self._owns_session = False
        self._lock = threading.Lock()

    # -- the session ---------------------------------------------------------------

    def session(self):
        """The running Spark session (started here on first use)."""
        with self._lock:
            if self._session is None:
                self._session, self._owns_session = _start_session(self.master, self.app_name, self.conf)
            return self._session

    @property
    def spark_context(self):
        return self.session().sparkContext

    @property
    def default_parallelism(self) -> int:
        """How many tasks run at once (cores of ``local[N]`` or of the cluster)."""
        return int(self.spark_context.defaultParallelism)

    def stop(self) -> None:
        """Stop the Spark session if this executor started it (a session it
        found running in this process is left to whoever started it)."""
        with self._lock:
            if self._session is not None and self._owns_session:
                self._session.stop()
            self._session = None

    def __enter__(self) -> SparkExecutor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- the plan's Executor protocol -----------------------------------------------

    def run_tasks(self, tasks: Sequence[Any]) -> list[Any]:
        """Run each TaskSpec as its own Spark task; every attempt, back on
        the driver, in the order of the tasks."""
        tasks = list(tasks)
        if not tasks:
            return []
        # When every writer has a slot, the tasks run as a barrier stage and
        # start their first operations together (as the ProcessExecutor's
        # writers do); with more writers than slots they start as slots free.
        barrier = len(tasks) <= self.default_parallelism
        runner = _TaskRunner(self._task or _default_task(), self._encode, barrier)
        partitions = self.spark_context.parallelize(tasks, numSlices=len(tasks))
        stage = partitions.barrier().mapPartitions(runner) if barrier else partitions.mapPartitions(runner)
        return [self._decode(record) for record in stage.collect()]


# -- the connector pattern: executors write fragments, the driver commits ------------

IMPLEMENTATIONS = ("pylance", "reference")


@dataclass(frozen=True)
class FragmentTask:
    """One executor's share of a connector job: write ``ids`` as fragments
    of the dataset as it was at ``read_version``."""

    implementation: str
    uri: str
    storage_options: dict[str, str]
    read_version: int
    ids: tuple[int, ...]


@dataclass(frozen=True)
class ConnectorCommit:
    """One connector job as the driver saw it: the version it pinned when
    planning, the version its Append was committed as (None with the error
    when the commit failed), and the ids its tasks wrote."""

    job: int
    read_version: int
    version: int | None
    ids: tuple[int, ...]
    error: str | None
    start: float
    end: float
    #: Whether the failed commit was refused as a conflict (not another error).
    conflict: bool = False


def connector_rows(ids: Sequence[int]):
    """The rows a connector job writes: the harness's rows (``id``, and
    ``value`` 0, as an append writes them), so the checker traces each row
    to the job that appended it."""
    # lazy: pulls pyarrow, and the CLI imports this module at start-up (harness command: HARNESS_MASTER)
    from .workloads import INITIAL_SCHEMA, rows_table

    return rows_table(list(ids), 0, INITIAL_SCHEMA)


def create_connector_dataset(
    implementation: str,
    uri: str,
    storage_options: dict[str, str] | None = None,
    *,
    initial_ids: Sequence[int] = (),
    data_storage_version: str | None = None,
) -> int:
    """Create the dataset connector jobs append to (V2 manifest naming; data
    files of ``data_storage_version``, None: the implementation's default);
    its version. The jobs' fragments take the dataset's version."""
    table = connector_rows(initial_ids)
    if implementation == "pylance":
        import lance  # lazy: pylance is optional (the test extra)

        return lance.write_dataset(
            table,
            uri,
            data_storage_version=data_storage_version,  # type: ignore[arg-type]  # None: pylance's default
            enable_v2_manifest_paths=True,
            storage_options=storage_options or None,
        ).version
    if implementation == "reference":
        # lazy: reference_impl loads protobuf, botocore, pyarrow; the CLI imports this module at start-up
        from reference_impl.dataset import Dataset
        from reference_impl.fragment_writer import DEFAULT_DATA_STORAGE_VERSION

        return Dataset.create(
            uri,
            table,
            manifest_naming="v2",
            data_storage_version=data_storage_version or DEFAULT_DATA_STORAGE_VERSION,
            storage_options=storage_options,
        ).version
    raise ValueError(f"unknown implementation {implementation!r}: one of {', '.join(IMPLEMENTATIONS)}")


def write_task_fragments(task: FragmentTask) -> list[Any]:
    """Runs on an executor: write the task's rows as new fragments, commit
    nothing; the fragments' metadata goes back to the driver (pylance's as
    its JSON dict, the reference's as the picklable Fragment)."""
    table = connector_rows(task.ids)
    if task.implementation == "pylance":
        # lazy: pylance is optional (the test extra)
        import lance
        from lance.fragment import write_fragments

        pinned = lance.dataset(task.uri, version=task.read_version, storage_options=task.storage_options or None)
        # Given the dataset, pylance writes its files in the dataset's version.
        fragments = write_fragments(table, pinned, schema=pinned.schema, storage_options=task.storage_options or None)
        return [fragment.to_json() for fragment in fragments]
    # lazy: reference_impl loads protobuf, botocore, pyarrow; the CLI imports this module at start-up
    from reference_impl.dataset import Dataset
    from reference_impl.fragment_writer import dataset_data_version
    from reference_impl.fragment_writer import write_fragments as reference_write_fragments

    dataset = Dataset.open(task.uri, task.read_version, storage_options=task.storage_options)
    # As pylance above: the files in the version of the dataset's files.
    version = dataset_data_version(dataset.manifest)
    return list(reference_write_fragments(dataset.storage, table, dataset.schema, version=version))


def _write_partition(tasks: Iterable[FragmentTask]) -> Iterator[Any]:
    for task in tasks:
        yield from write_task_fragments(task)


def _latest_version(implementation: str, uri: str, storage_options: dict[str, str]) -> int:
    if implementation == "pylance":
        import lance  # lazy: pylance is optional (the test extra)

        return lance.dataset(uri, storage_options=storage_options or None).version
    # lazy: reference_impl loads protobuf, botocore, pyarrow; the CLI imports this module at start-up
    from reference_impl.dataset import Dataset

    return Dataset.open(uri, storage_options=storage_options).version


def _commit_append(
    implementation: str, uri: str, storage_options: dict[str, str], read_version: int, fragments: list[Any]
) -> int:
    """The driver's step: one Append of every task's fragments, built on the
    version pinned when the job was planned."""
    if implementation == "pylance":
        # lazy: pylance is optional (the test extra)
        import lance
        from lance.fragment import FragmentMetadata

        operation = lance.LanceOperation.Append([FragmentMetadata.from_json(_json(f)) for f in fragments])
        committed = lance.LanceDataset.commit(
            uri, operation, read_version=read_version, storage_options=storage_options or None
        )
        return committed.version
    # lazy: reference_impl loads protobuf, botocore, pyarrow; the CLI imports this module at start-up
    from reference_impl.dataset import Dataset
    from reference_impl.transactions import Append

    read = Dataset.open(uri, read_version, storage_options=storage_options)
    return read.commit(Append(fragments=list(fragments))).version


def _is_commit_conflict(implementation: str, failure: BaseException) -> bool:
    """Whether the driver's commit was refused because another commit
    conflicts (each driver's ``conflict_from``, the one place its
    implementation's signal is read)."""
    from conformance.drivers import pylance_driver, reference  # lazy: only connector runs need them

    driver = pylance_driver if implementation == "pylance" else reference
    return driver.conflict_from(failure) is not None


def short_error(failure: BaseException) -> str:
    """A failure as the history keeps it: a Python worker's exception comes
    back inside Spark's with the worker's whole traceback, whose head says
    where and whose tail says what (:func:`.errors.error_text` keeps both)."""
    return error_text(failure)


def _json(fragment: Any) -> str:
    return json.dumps(fragment)


def connector_appends(
    executor: SparkExecutor,
    implementation: str,
    uri: str,
    jobs: Sequence[Sequence[Sequence[int]]],
    *,
    storage_options: dict[str, str] | None = None,
    pinned_version: int | None = None,
) -> list[ConnectorCommit]:
    """Run connector jobs at once, one driver thread each: job ``j`` appends
    ``jobs[j]`` (one list of ids per executor task). Every job pins the
    latest version when it is planned, its tasks write fragments on the
    executors, and the driver commits one Append built on the pinned
    version (``pinned_version`` instead pins that one version for every
    job: each commit then has the others' to rebase over). The dataset at
    ``uri`` must exist (see :func:`create_connector_dataset`). Returns each
    job's record, in job order.
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"unknown implementation {implementation!r}: one of {', '.join(IMPLEMENTATIONS)}")
    options = dict(storage_options or {})
    context = executor.spark_context
    results: list[ConnectorCommit | None] = [None] * len(jobs)

    def run_job(index: int) -> None:
        start = time.time()
        ids = tuple(i for share in jobs[index] for i in share)
        read_version = pinned_version if pinned_version is not None else _latest_version(implementation, uri, options)
        tasks = [FragmentTask(implementation, uri, options, read_version, tuple(share)) for share in jobs[index]]
        version: int | None = None
        error: str | None = None
        conflict = False
        try:
            # Each thread's job is its own Spark job; the scheduler runs
            # their tasks side by side.
            context.setJobGroup(f"connector-{index}", f"connector job {index}")
            fragments = context.parallelize(tasks, numSlices=max(1, len(tasks))).mapPartitions(_write_partition)
            version = _commit_append(implementation, uri, options, read_version, fragments.collect())
        except Exception as failure:  # recorded, as a writer's failed attempt is
            error = short_error(failure)
            conflict = _is_commit_conflict(implementation, failure)
        results[index] = ConnectorCommit(index, read_version, version, ids, error, start, time.time(), conflict)

    threads = [threading.Thread(target=run_job, args=(index,), name=f"connector-{index}") for index in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [result for result in results if result is not None]


if __name__ == "__main__":
    _child_main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
