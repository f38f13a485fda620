"""The harness's Spark executor (conformance/harness/spark.py) on an embedded
master (``local[8]``, tests/spark.py: writers wait on storage, so eight task
slots on two cores let every writer of a short run race) and, in
``tox -e spark``, on a standalone cluster started on loopback. The command
line's own default, ``local[*]``, runs in tests/conformance/test_cli_harness.py.

Real Spark, real pylance and reference writes to real directories: each
writer is a Spark task, the checker reads every version back.
"""

from __future__ import annotations

import json
import sys

import lance
import pytest

from conformance.harness.command import LOCAL_PROCESSES, UnknownMasterError, executor_for
from conformance.harness.executors import ProcessExecutor
from conformance.harness.faulty import FAULTY_WRITERS
from conformance.harness.history import AttemptOutcome, load_history
from conformance.harness.runner import HISTORY_FILE, REPORT_FILE, run
from conformance.harness.spark import (
    IMPLEMENTATIONS,
    ConnectorCommit,
    SparkError,
    SparkExecutor,
    connector_appends,
    create_connector_dataset,
)
from conformance.harness.spec import RunSpec
from conformance.harness.workloads import parse_workloads
from reference_impl.dataset import Dataset


def _spec(tmp_path, writer: str, **changes) -> RunSpec:
    options: dict = dict(
        uri=str(tmp_path / "t.lance"),
        storage_options={},
        writer=writer,
        writers=8,
        operations=4,
        workloads=parse_workloads("mixed"),
        seed=14,
        stable_row_ids=True,
        naming="v2",
    )
    options.update(changes)
    return RunSpec(**options)


def _check_clean_run(result, spec: RunSpec) -> None:
    assert result.report.anomalies == [], result.report.anomalies
    attempts = [a for a in result.history if a.writer >= 0]
    assert len(attempts) == spec.writers * spec.operations
    assert {a.writer for a in attempts} == set(range(spec.writers))
    acknowledged = [a for a in attempts if a.outcome is AttemptOutcome.ACKNOWLEDGED]
    assert acknowledged, "no writer committed anything"
    # The history the driver saved is the one the executors sent back.
    assert load_history(result.out_dir / HISTORY_FILE) == result.history
    assert json.loads((result.out_dir / REPORT_FILE).read_text())["anomalies"] == []
    assert (result.out_dir / "report.html").exists()


@pytest.mark.parametrize("writer", ["pylance", "reference"])
def test_eight_writers_on_local_spark_show_no_anomaly(spark_local, tmp_path, writer):
    """A small harness run on local Spark: 8 writers of one implementation, the
    mixed workload, each writer a Spark task; the checker finds nothing."""
    spec = _spec(tmp_path, writer)
    _check_clean_run(run(spec, spark_local, tmp_path / "out"), spec)


def test_a_writer_killed_mid_commit_on_an_executor_is_indeterminate(spark_local, tmp_path):
    """The kill-mid-commit fault SIGKILLs two writers inside their commits on
    the executor: the Spark job still returns their attempts, the one in
    flight indeterminate, and the run stays consistent."""
    spec = _spec(tmp_path, "reference", writers=3, operations=5, workloads={"append": 1.0}, fault="kill-mid-commit")
    result = run(spec, spark_local, tmp_path / "out", validate=False)
    indeterminate = [a for a in result.history if a.outcome is AttemptOutcome.INDETERMINATE]
    assert sorted(a.writer for a in indeterminate) == [0, 1]
    assert result.report.anomalies == []


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


@pytest.mark.parametrize("name", sorted(FAULTY_WRITERS))
def test_each_faulty_writer_racing_on_local_spark_is_caught(spark_local, tmp_path, name):
    """Each shipped faulty writer, four of them raced as one barrier stage of
    Spark tasks (the test master has a slot for each), is caught with its
    anomaly's name, as with local processes (test_faulty.py)."""
    info = FAULTY_WRITERS[name]
    assert spark_local.default_parallelism >= 4
    spec = _spec(tmp_path, f"faulty:{name}", writers=4, operations=8, workloads=parse_workloads(info.workload), seed=3)
    result = run(spec, spark_local, tmp_path / "out", validate=False)
    assert info.anomaly in result.report.names(), f"{name}: expected {info.anomaly!r}, found {result.report.names()}"
    witness = next(a.witness for a in result.report.anomalies if a.name == info.anomaly)
    assert witness.versions and (witness.op_ids or witness.rows)


def test_harness_run_defaults_to_local_spark_and_takes_a_master():
    """The command line's executor choice: Spark on local[*] without
    --master, any master URL as given, local processes on request; a
    spark:// master that does not answer is refused at once."""
    assert isinstance(executor_for(None), SparkExecutor) and executor_for(None).master == "local[*]"
    assert executor_for("local[3]").master == "local[3]"
    assert isinstance(executor_for(LOCAL_PROCESSES), ProcessExecutor)
    with pytest.raises(UnknownMasterError, match="no Spark master answers at 127.0.0.1:9"):
        executor_for("spark://127.0.0.1:9")
    with pytest.raises(UnknownMasterError, match="not a Spark master URL"):
        executor_for("mesos://somewhere")


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
@pytest.mark.parametrize("writer", ["pylance", "reference"])
def test_the_harness_runs_on_a_standalone_cluster(spark_cluster, tmp_path, writer):
    """A standalone cluster on loopback (a master and two workers): a larger
    run (8 writers, the mixed workload, 15 operations each) whose writers
    are the cluster's tasks shows no anomaly, and connector jobs commit
    every row once."""
    with SparkExecutor(spark_cluster) as executor:
        assert executor.spark_context.master == spark_cluster
        spec = _spec(tmp_path, writer, operations=15, seed=1414)
        _check_clean_run(run(spec, executor, tmp_path / "out"), spec)
        uri = str(tmp_path / "connector")
        create_connector_dataset(writer, uri)
        jobs = _jobs(4, 2, 10)
        _check_connector_jobs(writer, uri, jobs, connector_appends(executor, writer, uri, jobs))


@pytest.mark.spark_cluster
def test_harness_run_takes_the_cluster_as_master(spark_cluster, tmp_path, capsys):
    """``lance-conformance harness run --master spark://...``: the writers
    run on the cluster, the JSON report follows the run, exit 0 when clean."""
    from conformance.cli import main

    argv = ["harness", "run", "--writer", "reference", "--writers", "4", "--operations", "5", "--workload", "rows"]
    assert main([*argv, "--master", spark_cluster, "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["writers"] == 4 and document["anomalies"] == []
    assert (tmp_path / "out" / "report.html").exists()
