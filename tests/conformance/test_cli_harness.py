"""``lance-conformance harness run|check|faulty``: summaries, the JSON
report against its shipped schema, exit statuses, and a writer plugged in
from outside the package by its module path."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import resources

import jsonschema
import pytest

from conformance.cli import main
from conformance.harness.faulty import FAULTY_WRITERS
from reference_impl.dataset import Dataset
from tests.spark import LOCAL_MASTER


def _schema() -> dict:
    return json.loads(
        resources.files("conformance").joinpath("schemas").joinpath("harness-report.schema.json").read_text()
    )


def test_faulty_lists_every_faulty_writer_by_the_name_writer_takes(capsys):
    assert main(["harness", "faulty", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [row["writer"] for row in listed] == [f"faulty:{name}" for name in FAULTY_WRITERS]
    assert all(row["anomaly"] and row["bug_class"] for row in listed)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, timeout=300)


def test_a_clean_run_on_the_default_master_exits_0_and_check_says_the_same(tmp_path):
    """``harness run`` without ``--master`` (Spark on ``local[*]``), in a
    process of its own as people run it: the JSON report follows the schema,
    exit 0; ``harness check`` re-checks the saved run to the same verdict.
    The data file version asked for is the dataset's and the saved spec's.
    (pylance's 8-writer runs on Spark are in harness/test_spark.py.)"""
    out = tmp_path / "run"
    argv = ["harness", "run", "--writer", "reference", "--writers", "4", "--operations", "3", "--seed", "4"]
    ran = _cli(*argv, "--data-storage-version", "2.1", "--out", str(out), "--format", "json")
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    document = json.loads(ran.stdout)
    jsonschema.validate(document, _schema())
    assert document["anomalies"] == [] and document["skipped_workloads"] == ["upsert"]
    assert document["operations"] == 12 and document["acknowledged"] > 0
    assert document["report_format"] == 1
    assert json.loads((out / "report.json").read_text())["report_format"] == 1
    assert json.loads((out / "run.json").read_text())["data_storage_version"] == "2.1"
    assert Dataset.open(out / "dataset.lance").manifest.data_format.version == "2.1"
    checked = _cli("harness", "check", str(out))
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert "4 writers, 12 operations" in checked.stdout and "anomalies: none" in checked.stdout


def test_a_faulty_writer_exits_1_with_its_anomaly_in_the_json(tmp_path, capsys):
    info = FAULTY_WRITERS["restart-fragment-ids"]
    argv = ["harness", "run", "--writer", "faulty:restart-fragment-ids", "--workload", info.workload]
    argv += ["--master", LOCAL_MASTER]  # the test session's Spark master (one session per process)
    assert main([*argv, "--writers", "2", "--operations", "4", "--out", str(tmp_path), "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    jsonschema.validate(document, _schema())
    assert info.anomaly in {a["name"] for a in document["anomalies"]}
    # The saved run re-checks to the same verdict.
    assert main(["harness", "check", str(tmp_path), "--format", "json"]) == 1
    assert info.anomaly in {a["name"] for a in json.loads(capsys.readouterr().out)["anomalies"]}


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--workload", "teleport"], "unknown workload 'teleport'"),
        (["--writer", "no_such_module_here"], "no such module"),
        (["--master", "spark://nowhere:7077"], "--master"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capsys, extra, message):
    argv = ["harness", "run", "--writer", "reference", "--out", str(tmp_path), *extra]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_check_of_a_directory_without_a_run_exits_2(tmp_path, capsys):
    assert main(["harness", "check", str(tmp_path)]) == 2
    assert "no saved run" in capsys.readouterr().err


def test_a_writer_plugs_in_by_module_path(tmp_path, capsys, monkeypatch):
    """An appends-only driver on pylance, from a module outside the package:
    it enters the harness as any driver that writes does, and the kinds it
    does not perform are skipped and listed."""
    (tmp_path / "my_appender.py").write_text(
        textwrap.dedent(
            """
            import lance
            from conformance.drivers.protocol import Capability, DriverInfo
            from conformance.drivers.writes import Append, WriteConflict, WriteNotSupported

            def info():
                return DriverInfo(
                    name="my_appender",
                    implementation="pylance",
                    version=lance.__version__,
                    lance_version=None,
                    capabilities=frozenset({Capability.WRITE}),
                    write_operations=frozenset({"append"}),
                )

            def write(uri, op, *, storage_options=None):
                if not isinstance(op, Append):
                    raise WriteNotSupported(op.kind.value)
                try:
                    return lance.write_dataset(op.rows, uri, mode="append").version
                except OSError as exc:
                    raise WriteConflict(str(exc)) from exc
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    argv = ["harness", "run", "--writer", "my_appender", "--workload", "append:3,delete:1", "--writers", "2"]
    argv += ["--master", LOCAL_MASTER]
    assert main([*argv, "--operations", "3", "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["skipped_workloads"] == ["delete"]
    assert document["acknowledged"] == 6 and document["anomalies"] == []
    sys.modules.pop("my_appender", None)
