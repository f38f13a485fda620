"""The harness's Spark executor (conformance/harness/spark.py) on ``local[*]``
and, in ``tox -e spark``, on a standalone cluster started on loopback.

Real Spark, real pylance and reference writes to real directories: a task
runs in an executor's Python worker, the rows it writes are read back.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import lance
import pyarrow as pa
import pytest

from conformance.harness.spark import (
    IMPLEMENTATIONS,
    ConnectorCommit,
    SparkError,
    SparkExecutor,
    connector_appends,
    create_connector_dataset,
)
from reference_impl.dataset import Dataset


@dataclass(frozen=True)
class AppendTask:
    """A stand-in writer task: append ``count`` ids from ``first`` to ``uri``."""

    uri: str
    writer: int
    first: int
    count: int


@dataclass(frozen=True)
class AppendRecord:
    writer: int
    ids: tuple[int, ...]
    version: int
    pid: int


def append_ids(task: AppendTask) -> list[AppendRecord]:
    """Runs on an executor: one pylance append per id, one record each."""
    records = []
    for identifier in range(task.first, task.first + task.count):
        dataset = lance.write_dataset(pa.table({"id": pa.array([identifier], pa.int64())}), task.uri, mode="append")
        records.append(AppendRecord(task.writer, (identifier,), dataset.version, os.getpid()))
    return records


def _encode(record: AppendRecord) -> dict:
    return {"writer": record.writer, "ids": list(record.ids), "version": record.version, "pid": record.pid}


def _decode(document: dict) -> AppendRecord:
    return AppendRecord(document["writer"], tuple(document["ids"]), document["version"], document["pid"])


def _ship_this_module() -> None:
    """Send the stand-in task to the executors by value: a cluster's Python
    workers start elsewhere than this checkout's root, where ``tests`` is
    not importable."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _stand_in_run(executor: SparkExecutor, root, writers: int, per_writer: int) -> None:
    _ship_this_module()
    uri = str(root / "appends")
    lance.write_dataset(pa.table({"id": pa.array([], pa.int64())}), uri, data_storage_version="2.0")
    executor_with_stand_in = SparkExecutor(executor.master, task=append_ids, encode=_encode, decode=_decode)
    # The same Spark session (one a process): the stand-in executor borrows it.
    executor_with_stand_in._session = executor.session()
    tasks = [AppendTask(uri, writer, writer * 1000, per_writer) for writer in range(writers)]
    records = executor_with_stand_in.run_tasks(tasks)

    assert [record.writer for record in records] == sorted(record.writer for record in records)
    assert len(records) == writers * per_writer
    assert all(record.pid != os.getpid() for record in records), "a task ran on the driver"
    acknowledged = sorted(i for record in records for i in record.ids)
    assert sorted(lance.dataset(uri).to_table()["id"].to_pylist()) == acknowledged
    # Every append got a version of its own.
    assert sorted(record.version for record in records) == list(range(2, 2 + writers * per_writer))


def test_each_task_spec_runs_as_a_spark_task_in_a_python_worker(spark_local, tmp_path):
    """Every TaskSpec's records come back to the driver, written by executor
    processes, and the dataset holds exactly the acknowledged appends."""
    _stand_in_run(spark_local, tmp_path, writers=4, per_writer=2)


def test_the_session_is_bound_to_loopback_with_the_ui_off(spark_local):
    conf = spark_local.spark_context.getConf()
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.pyspark.python") == sys.executable
    assert spark_local.spark_context.uiWebUrl is None


def test_a_session_on_another_master_is_refused_while_one_runs(spark_local):
    spark_local.session()
    with pytest.raises(SparkError, match="already running"):
        SparkExecutor("local[1]").session()


def _check_connector_jobs(implementation: str, uri: str, jobs, commits: list[ConnectorCommit]) -> None:
    assert [commit.error for commit in commits] == [None] * len(jobs)
    assert sorted(commit.version for commit in commits) == list(range(2, 2 + len(jobs)))  # type: ignore[type-var]
    latest = Dataset.open(uri).to_table()["id"].to_pylist()
    expected = sorted(i for job in jobs for share in job for i in share)
    assert sorted(latest) == expected, "a job's rows are missing or doubled"
    for commit in commits:
        # The job's rows are there, once each, from the version it committed.
        at_commit = Dataset.open(uri, commit.version).to_table()["id"].to_pylist()
        assert all(at_commit.count(i) == 1 for i in commit.ids)
        before = Dataset.open(uri, commit.version - 1).to_table()["id"].to_pylist()  # type: ignore[operator]
        assert not set(before) & set(commit.ids)
    assert sorted(lance.dataset(uri).to_table()["id"].to_pylist()) == expected


def _jobs(count: int, tasks: int, rows: int) -> list[list[list[int]]]:
    return [[[job * 10_000 + task * 100 + row for row in range(rows)] for task in range(tasks)] for job in range(count)]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_connector_jobs_pinned_on_one_version_commit_every_row_once(spark_local, tmp_path, implementation):
    """The connector pattern: three jobs plan on version 1, their executors
    write fragments, the driver commits each job's Append on version 1; the
    later commits are rebased over the earlier ones and every job's rows are
    visible exactly once from its version on (read by both readers)."""
    uri = str(tmp_path / "connector")
    assert create_connector_dataset(implementation, uri) == 1
    jobs = _jobs(3, 2, 5)
    commits = connector_appends(spark_local, implementation, uri, jobs, pinned_version=1)
    assert [commit.read_version for commit in commits] == [1, 1, 1]
    _check_connector_jobs(implementation, uri, jobs, commits)


@pytest.mark.spark_cluster
def test_the_harness_runs_on_a_standalone_cluster(spark_cluster, tmp_path):
    """A standalone cluster on loopback (a master and two workers): the
    writers' tasks run in its executors, and connector jobs of both
    implementations commit every row once."""
    with SparkExecutor(spark_cluster) as executor:
        assert executor.spark_context.master == spark_cluster
        _stand_in_run(executor, tmp_path, writers=4, per_writer=3)
        for implementation in IMPLEMENTATIONS:
            uri = str(tmp_path / f"connector-{implementation}")
            create_connector_dataset(implementation, uri)
            jobs = _jobs(4, 2, 10)
            _check_connector_jobs(implementation, uri, jobs, connector_appends(executor, implementation, uri, jobs))
