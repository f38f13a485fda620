"""The connector pattern as a harness run: connector jobs
(:func:`.spark.connector_appends`: executors write fragments, the driver
commits one Append per job, several jobs at once) recorded in the history
like any writer's operations and checked by the same checker.

Each job is one attempt: operation id ``job<J>``, kind ``append``, the ids
its tasks wrote, the version it pinned as its read version, and its outcome
(acknowledged with the version its commit made, a conflict, or an error).
The run is saved as any run is (``DIR/history.jsonl``, ``DIR/run.json``,
``DIR/report.json``, ``DIR/report.html``), so ``lance-conformance harness
check DIR`` re-checks it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

from conformance.drivers.writes import WriteKind, WriteOutcome

from .checker import check
from .history import SETUP_WRITER, Attempt, save_history
from .runner import HISTORY_FILE, RUN_FILE, RunResult, save_report
from .spark import ConnectorCommit, SparkExecutor, connector_appends, create_connector_dataset
from .spec import RunSpec


def connector_attempts(commits: Sequence[ConnectorCommit], initial_ids: Sequence[int] = ()) -> list[Attempt]:
    """The history of connector jobs: the set-up that created the dataset
    (version 1, ``initial_ids``), then one attempt per job, by start time."""
    setup = Attempt(
        "setup",
        SETUP_WRITER,
        WriteKind.CREATE,
        {"ids": list(initial_ids)},
        None,
        WriteOutcome.ACKNOWLEDGED,
        1,
        None,
        0.0,
        0.0,
    )
    attempts = []
    for commit in commits:
        if commit.error is None:
            outcome = WriteOutcome.ACKNOWLEDGED
        else:
            outcome = WriteOutcome.CONFLICT if commit.conflict else WriteOutcome.ERROR
        attempts.append(
            Attempt(
                f"job{commit.job}",
                commit.job,
                WriteKind.APPEND,
                {"ids": list(commit.ids)},
                commit.read_version,
                outcome,
                commit.version,
                commit.error,
                commit.start,
                commit.end,
            )
        )
    return [setup, *sorted(attempts, key=lambda a: (a.start, a.op_id))]


def connector_run(
    executor: SparkExecutor,
    implementation: str,
    jobs: Sequence[Sequence[Sequence[int]]],
    out_dir: Path,
    *,
    uri: str | None = None,
    storage_options: dict[str, str] | None = None,
    initial_rows: int = 0,
    pinned_version: int | None = None,
    validate: bool = True,
    data_storage_version: str | None = None,
) -> RunResult:
    """Create the dataset (``uri``, default ``out_dir/dataset.lance``) with
    ids ``0 .. initial_rows - 1``, data files of ``data_storage_version``
    (None: the implementation's default), run the connector ``jobs`` at once on ``executor``
    (:func:`.spark.connector_appends`), save their history and check it
    against every version, as :func:`.runner.run` does for writer tasks."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    options = dict(storage_options or {})
    spec = RunSpec(
        uri=uri or str(out_dir / "dataset.lance"),
        storage_options=options,
        writer=implementation,
        writers=len(jobs),
        operations=1,
        workloads={WriteKind.APPEND.value: 1.0},
        seed=0,
        stable_row_ids=False,
        naming="v2",
        data_storage_version=data_storage_version,
        initial_rows=initial_rows,
    )
    initial_ids = list(range(initial_rows))
    created = time.time()
    create_connector_dataset(
        implementation, spec.uri, options, initial_ids=initial_ids, data_storage_version=data_storage_version
    )
    started = time.monotonic()
    commits = connector_appends(
        executor, implementation, spec.uri, jobs, storage_options=options, pinned_version=pinned_version
    )
    seconds = time.monotonic() - started
    setup, *attempts = connector_attempts(commits, initial_ids)
    history = [dataclasses.replace(setup, start=created, end=created), *attempts]
    save_history(out_dir / HISTORY_FILE, history)
    spec.save(out_dir / RUN_FILE)
    result = RunResult(spec, history, check(history, spec, validate=validate), out_dir, [], seconds)
    save_report(result)
    return result
