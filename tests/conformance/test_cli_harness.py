"""``lance-conformance harness run|check|faulty``: summaries, the JSON
report against its shipped schema, exit statuses, and a writer plugged in
from outside the package by its module path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib import resources

import jsonschema
import pytest

from conformance.cli import main
from conformance.exit_codes import ExitCode
from conformance.harness.command import LOCAL_PROCESSES, TRACEBACK_FILE
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


def test_a_clean_run_exits_0_and_check_says_the_same(tmp_path):
    """``harness run`` in a process of its own as people run it: the JSON
    report follows the schema, exit 0; ``harness check`` re-checks the saved
    run to the same verdict. The data file version asked for is the
    dataset's and the saved spec's. The writers are local processes here:
    the run without ``--master`` (Spark on ``local[*]``) is the demo's
    (tests/conformance/test_cli.py), and harness/test_spark.py races the
    writers on Spark."""
    out = tmp_path / "run"
    argv = ["harness", "run", "--writer", "reference", "--writers", "4", "--operations", "3", "--seed", "4"]
    argv += ["--master", "local-processes"]
    ran = _cli(*argv, "--data-storage-version", "2.1", "--out", str(out), "--format", "json")
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    document = json.loads(ran.stdout)
    jsonschema.validate(document, _schema())
    assert document["anomalies"] == [] and document["skipped_workloads"] == ["upsert"]
    assert document["operations"] == 12 and document["acknowledged"] > 0
    assert (
        document["report_format"] == 2
        and document["operations"]
        == document["acknowledged"] + document["conflicts"] + document["errors"] + document["unknown"]
    )
    assert json.loads((out / "report.json").read_text())["report_format"] == 2
    assert json.loads((out / "writer.json").read_text())["skipped"] == ["upsert"]
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
        (["--master", "spark://nowhere:7077"], "--master"),
        (["--writers", "0"], "--writers must be at least 1"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capsys, extra, message):
    argv = ["harness", "run", "--writer", "reference", "--out", str(tmp_path), *extra]
    assert main(argv) == ExitCode.USAGE == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_bad_option_exits_2(tmp_path):
    ran = _cli("harness", "run", "--writer", "reference", "--out", str(tmp_path), "--naming", "v3")
    assert ran.returncode == ExitCode.USAGE and "invalid choice: 'v3'" in ran.stderr


@pytest.mark.parametrize("writer", ["no_such_module_here", "faulty:no-such-bug"])
def test_a_writer_that_cannot_load_exits_3_in_one_line(tmp_path, capsys, writer):
    argv = ["harness", "run", "--writer", writer, "--out", str(tmp_path / "out"), "--master", LOCAL_PROCESSES]
    assert main(argv) == ExitCode.WRITER_CANNOT_LOAD == 3
    err = capsys.readouterr().err
    assert "the writer cannot be loaded" in err and writer.removeprefix("faulty:") in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "dataset.lance").exists()


def test_an_internal_error_exits_3_in_one_line_with_the_traceback_saved(tmp_path, capsys, monkeypatch):
    """Anything the command does not expect (here a writer module whose
    create_writer raises) is one line on stderr, exit 3, and the traceback
    is in OUT/traceback.txt."""
    (tmp_path / "raising_writer.py").write_text(
        textwrap.dedent(
            """
            from conformance.drivers.reference import describe, info, read_table, versions, write

            def create_writer(writer_index):
                raise ZeroDivisionError('a bug in the writer factory')
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    argv = ["harness", "run", "--writer", "raising_writer", "--out", str(out), "--master", LOCAL_PROCESSES]
    assert main(argv) == ExitCode.INTERNAL == 3
    err = capsys.readouterr().err
    assert "ZeroDivisionError: a bug in the writer factory" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    saved = (out / TRACEBACK_FILE).read_text()
    assert saved.startswith("Traceback") and "raising_writer.py" in saved
    sys.modules.pop("raising_writer", None)


def test_an_existing_run_is_not_run_over(tmp_path, capsys):
    """--out holding a run (or a dataset) is a usage error in one line, exit
    2, and leaves what is there untouched."""
    out = tmp_path / "out"
    argv = ["harness", "run", "--writer", "reference", "--writers", "2", "--operations", "2"]
    argv += ["--master", LOCAL_PROCESSES, "--out", str(out)]
    assert main(argv) == ExitCode.OK
    capsys.readouterr()
    history = (out / "history.jsonl").read_bytes()
    assert main(argv) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "already holds a run" in err and len(err.strip().splitlines()) == 1
    assert (out / "history.jsonl").read_bytes() == history
    (out / "run.json").unlink()
    (out / "history.jsonl").unlink()
    assert main(argv) == ExitCode.USAGE
    assert "dataset.lance already exists" in capsys.readouterr().err


def test_help_documents_the_exit_statuses():
    shown = _cli("harness", "run", "--help")
    assert shown.returncode == 0
    for code in ExitCode:
        assert f"  {code.value}  " in shown.stdout, code
    assert "writer that cannot load" in shown.stdout and "already holds a run" in shown.stdout


def test_check_of_a_directory_without_a_run_exits_2(tmp_path, capsys):
    assert main(["harness", "check", str(tmp_path)]) == 2
    assert "no saved run" in capsys.readouterr().err


def test_check_of_a_run_with_a_broken_history_exits_2_naming_the_line(tmp_path, capsys):
    (tmp_path / "run.json").write_text("{}")
    (tmp_path / "history.jsonl").write_text("not json\n")
    assert main(["harness", "check", str(tmp_path)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "run.json" in err and "Traceback" not in err


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


def test_check_never_loads_the_writer_so_a_run_whose_module_is_gone_still_checks(tmp_path):
    """A run with a writer plugged in by module path, its module deleted
    afterwards: ``harness check`` (a process of its own, where importing the
    module would fail) checks the saved run to the run's verdict, with the
    skipped kinds saved in writer.json; without writer.json (a run saved
    before it) they are said to be unknown."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "short_lived_writer.py").write_text(
        textwrap.dedent(
            """
            import dataclasses

            from conformance.drivers import reference
            from conformance.drivers.protocol import Capability

            def info():
                declared = reference.info()
                capabilities = frozenset({Capability.WRITE, Capability.WRITE_AT_VERSION})
                return dataclasses.replace(declared, capabilities=capabilities, write_operations=frozenset({"append"}))

            write = reference.write
            """
        )
    )
    out = tmp_path / "run"
    argv = ["harness", "run", "--writer", "short_lived_writer", "--workload", "append:3,delete:1"]
    argv += ["--writers", "2", "--operations", "3", "--master", LOCAL_PROCESSES, "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(modules), os.environ.get("PYTHONPATH", "")])}
    ran = subprocess.run(
        [sys.executable, "-m", "conformance.cli", *argv, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert ran.returncode == ExitCode.OK, ran.stderr[-2000:]
    assert json.loads(ran.stdout)["skipped_workloads"] == ["delete"]

    shutil.rmtree(modules)
    checked = _cli("harness", "check", str(out), "--format", "json")
    assert checked.returncode == ExitCode.OK, checked.stderr[-2000:]
    assert "Traceback" not in checked.stderr
    document = json.loads(checked.stdout)
    jsonschema.validate(document, _schema())
    assert document["skipped_workloads"] == ["delete"] and document["acknowledged"] == 6

    (out / "writer.json").unlink()
    checked = _cli("harness", "check", str(out))
    assert checked.returncode == ExitCode.OK, checked.stderr[-2000:]
    assert "skipped workloads (the writer cannot do them): unknown" in checked.stdout
    assert json.loads(_cli("harness", "check", str(out), "--format", "json").stdout)["skipped_workloads"] is None


def test_any_driver_that_writes_is_a_writer_lancedb_included(tmp_path, capsys):
    """LanceDB for Python enters the harness as it is, through its driver:
    the kinds it has no call for (config) are skipped and listed, the
    versions it commits are attributed to its operations, and it is clean."""
    argv = ["harness", "run", "--writer", "lancedb", "--writers", "2", "--operations", "3", "--workload", "rows"]
    argv += ["--master", LOCAL_PROCESSES, "--out", str(tmp_path / "out"), "--format", "json"]
    assert main(argv) == ExitCode.OK
    document = json.loads(capsys.readouterr().out)
    assert document["anomalies"] == [] and document["acknowledged"] + document["conflicts"] == 6
    assert json.loads((tmp_path / "out" / "writer.json").read_text())["driver"]["implementation"] == "lancedb"


def test_writers_in_turn_race_one_implementation_against_another(tmp_path, capsys):
    """--writer given twice: writer 0 is the reference, writer 1 pylance,
    each with its own workload; both kinds of attempt are in the history."""
    argv = ["harness", "run", "--writer", "reference", "--writer", "pylance", "--writers", "2", "--operations", "3"]
    argv += ["--workload", "append", "--workload", "delete", "--master", LOCAL_PROCESSES]
    argv += ["--out", str(tmp_path / "out"), "--format", "json"]
    assert main(argv) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["anomalies"] == []
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["writer_names"] == ["reference", "pylance"]
    kinds = {json.loads(line)["kind"] for line in (tmp_path / "out" / "history.jsonl").read_text().splitlines()}
    assert kinds == {"create", "append", "delete"}
