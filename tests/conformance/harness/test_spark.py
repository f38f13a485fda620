"""The harness's Spark executor (conformance/harness/spark.py) on an embedded
master (``local[8]``, tests/spark.py: writers wait on storage, so eight task
slots on two cores let every writer of a short run race) and, in
``tox -e spark``, on a standalone cluster started on loopback. The command
line's own default, ``local[*]``, runs in tests/conformance/test_cli_harness.py.

Real Spark, real pylance and reference writes to real directories: each
writer is a Spark task, the checker reads every version back.
"""

from __future__ import annotations

import dataclasses
import json
import sys

import lance
import pytest

from conformance.drivers.writes import WriteOutcome
from conformance.harness.anomalies import every_anomaly
from conformance.harness.checker import check
from conformance.harness.command import LOCAL_PROCESSES, UnknownMasterError, executor_for
from conformance.harness.connector import connector_run
from conformance.harness.executors import ProcessExecutor
from conformance.harness.faulty import FAULTY_WRITERS
from conformance.harness.history import load_history
from conformance.harness.runner import HISTORY_FILE, REPORT_FILE, run
from conformance.harness.spark import (
    HARNESS_MASTER,
    IMPLEMENTATIONS,
    FragmentTask,
    SparkError,
    SparkExecutor,
    create_connector_dataset,
    write_task_fragments,
)
from conformance.harness.spec import RunSpec
from conformance.harness.workloads import parse_workload, workload_to_json
from reference_impl.dataset import Dataset
from reference_impl.transactions import Append


def _spec(tmp_path, writer: str, **changes) -> RunSpec:
    options: dict = dict(
        uri=str(tmp_path / "t.lance"),
        storage_options={},
        writer=writer,
        writers=8,
        operations=4,
        workloads=workload_to_json(parse_workload("mixed")),
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
    acknowledged = [a for a in attempts if a.outcome is WriteOutcome.ACKNOWLEDGED]
    assert acknowledged, "no writer committed anything"
    # The history the driver saved is the one the executors sent back.
    assert load_history(result.out_dir / HISTORY_FILE) == result.history
    assert json.loads((result.out_dir / REPORT_FILE).read_text())["anomalies"] == []
    assert (result.out_dir / "report.html").exists()


#: pylance's eight writers on Spark run nightly (marker slow): each Spark task
#: loads pylance afresh, half a minute of two cores, and the demo's test
#: (tests/conformance/test_cli.py) races pylance on local Spark by default.
@pytest.mark.parametrize("writer", [pytest.param("pylance", marks=pytest.mark.slow), "reference"])
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
    indeterminate = [a for a in result.history if a.outcome is WriteOutcome.UNKNOWN]
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


#: The faulty writer the default run races on Spark: a lost read. Every
#: faulty writer is caught on local processes by default (test_faulty.py);
#: all of them race on Spark too in the nightly run (marker slow, tox -e
#: nightly), the double merge of a retried upsert among them.
ON_SPARK_BY_DEFAULT = ("stale-read",)


@pytest.mark.parametrize(
    "name",
    [
        name if name in ON_SPARK_BY_DEFAULT else pytest.param(name, marks=pytest.mark.slow)
        for name in sorted(FAULTY_WRITERS)
    ],
)
def test_each_faulty_writer_racing_on_local_spark_is_caught(spark_local, tmp_path, name):
    """Each shipped faulty writer, four of them raced as one barrier stage of
    Spark tasks (the test master has a slot for each), is caught with its
    anomaly's name, as with local processes (test_faulty.py)."""
    info = FAULTY_WRITERS[name]
    assert spark_local.default_parallelism >= 4
    spec = _spec(
        tmp_path,
        f"faulty:{name}",
        writers=4,
        operations=8,
        workloads=workload_to_json(parse_workload(info.workload)),
        seed=3,
    )
    result = run(spec, spark_local, tmp_path / "out", validate=False)
    assert info.anomaly.value in result.report.names(), (
        f"{name}: expected {info.anomaly!r}, found {result.report.names()}"
    )
    witness = next(a.witness for a in every_anomaly(result.report.anomalies) if a.kind is info.anomaly)
    assert witness.versions and (witness.op_ids or witness.rows)


def test_harness_run_defaults_to_local_spark_and_takes_a_master():
    """The command line's executor choice: Spark on the harness's local
    master (a slot per writer) without --master, any master URL as given,
    local processes on request; a spark:// master that does not answer is
    refused at once."""
    assert isinstance(executor_for(None), SparkExecutor) and executor_for(None).master == HARNESS_MASTER == "local[8]"
    assert executor_for("local[3]").master == "local[3]"
    assert isinstance(executor_for(LOCAL_PROCESSES), ProcessExecutor)
    with pytest.raises(UnknownMasterError, match="no Spark master answers at 127.0.0.1:9"):
        executor_for("spark://127.0.0.1:9")
    with pytest.raises(UnknownMasterError, match="not a Spark master URL"):
        executor_for("mesos://somewhere")


def _check_connector_run(result, implementation: str, jobs) -> None:
    """Every job of a connector run is an acknowledged append in the history,
    and the checker finds nothing; the rows, read by both readers, are
    every job's once."""
    assert result.report.anomalies == [], result.report.anomalies
    job_attempts = [a for a in result.history if a.writer >= 0]
    assert sorted(a.op_id for a in job_attempts) == [f"job{j}" for j in range(len(jobs))]
    assert {a.kind for a in job_attempts} == {"append"}
    assert all(a.outcome is WriteOutcome.ACKNOWLEDGED for a in job_attempts)
    assert sorted(a.version for a in job_attempts) == list(range(2, 2 + len(jobs)))  # type: ignore[type-var]
    for attempt in job_attempts:
        assert sorted(attempt.args["ids"]) == sorted(i for share in jobs[attempt.writer] for i in share)
    expected = sorted(i for job in jobs for share in job for i in share)
    assert sorted(Dataset.open(result.spec.uri).to_table()["id"].to_pylist()) == expected
    assert sorted(lance.dataset(result.spec.uri).to_table()["id"].to_pylist()) == expected
    assert load_history(result.out_dir / HISTORY_FILE) == result.history


def _jobs(count: int, tasks: int, rows: int) -> list[list[list[int]]]:
    return [[[job * 10_000 + task * 100 + row for row in range(rows)] for task in range(tasks)] for job in range(count)]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_connector_jobs_pinned_on_one_version_are_recorded_and_checked(spark_local, tmp_path, implementation):
    """The connector pattern: three jobs plan on version 1, their executors
    write fragments, the driver commits each job's Append on version 1; the
    later commits are rebased over the earlier ones. Each job's commit is an
    attempt of the history (op id, kind, ids, read version 1, the version it
    made) and the checker, run on every version, finds every row once; a
    history that says a job's commit failed while its rows are visible is
    caught as a phantom, and ``harness check DIR`` re-checks the run."""
    from conformance.cli import main

    jobs = _jobs(3, 2, 5)
    result = connector_run(spark_local, implementation, jobs, tmp_path / "out", pinned_version=1)
    assert [a.read_version for a in result.history if a.writer >= 0] == [1, 1, 1]
    _check_connector_run(result, implementation, jobs)
    assert main(["harness", "check", str(tmp_path / "out")]) == 0
    forged = [
        dataclasses.replace(a, outcome=WriteOutcome.CONFLICT, version=None, error="refused") if a.op_id == "job1" else a
        for a in result.history
    ]
    report = check(forged, result.spec, validate=False, cross_check=False)
    assert [a.witness.op_ids for a in report.anomalies if a.name == "phantom from a failed commit"] == [["job1"]]


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
        jobs = _jobs(4, 2, 10)
        _check_connector_run(connector_run(executor, writer, jobs, tmp_path / "connector"), writer, jobs)


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


def test_a_reference_connector_task_writes_in_the_version_of_the_dataset_files(tmp_path):
    """Requirement data-file.same-format-version: on a dataset pylance created
    with its default (2.2), the reference's fragments of a connector task are
    2.2 files too, as pylance's are, and both read the rows."""
    uri = str(tmp_path / "t.lance")
    create_connector_dataset("pylance", uri, initial_ids=range(4))
    fragments = write_task_fragments(FragmentTask("reference", uri, {}, 1, (10, 11)))
    assert {(f.file_major_version, f.file_minor_version) for g in fragments for f in g.files} == {(2, 2)}
    committed = Dataset.open(uri).commit(Append(fragments=fragments))
    assert sorted(lance.dataset(uri).to_table()["id"].to_pylist()) == [0, 1, 2, 3, 10, 11]
    assert sorted(committed.to_table()["id"].to_pylist()) == [0, 1, 2, 3, 10, 11]
