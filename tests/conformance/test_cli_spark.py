"""``lance-conformance validate --spark``: the same output and exit code as
the local run in every report format, and a clear exit 2 (no traceback) when
Spark cannot be used as asked.

In-process runs name the test session's master (``local[8]``), so they use
the shared session rather than start a JVM each; one fresh process on the
default ``local[*]`` runs under ``tox -e spark``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conformance.cli import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, main
from conformance.fixtures import default_corpus
from tests.servers import _free_port
from tests.spark import LOCAL_MASTER

FORMATS = ("text", "json", "junit", "sarif")
CLEAN_CASE = default_corpus() / "cases" / "old-appends-deletes" / "dataset"


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.fixture
def mutated(tmp_path):
    """A golden case with a truncated data file: the validator reports it (exit 1)."""
    root = tmp_path / "ds"
    shutil.copytree(CLEAN_CASE, root)
    damaged = sorted((root / "data").iterdir())[0]
    damaged.write_bytes(damaged.read_bytes()[:20])
    return root


def test_spark_output_and_exit_code_equal_the_local_run(spark_local, capsys, mutated):
    spark_local.session()  # the in-process runs below find it running on the same master
    for root, expected in ((mutated, EXIT_FINDINGS), (CLEAN_CASE, EXIT_OK)):
        for report_format in FORMATS:
            local = _run(capsys, "validate", str(root), "--all-versions", "--format", report_format)
            on_spark = _run(
                capsys,
                "validate",
                str(root),
                "--all-versions",
                "--format",
                report_format,
                "--spark",
                "--master",
                LOCAL_MASTER,
            )
            assert local[0] == expected
            assert on_spark == local, report_format
    # One version: the per-file reads on executors.
    assert _run(capsys, "validate", str(mutated), "--spark", "--master", LOCAL_MASTER) == _run(
        capsys, "validate", str(mutated)
    )
    assert spark_local.session().sparkContext._jsc is not None  # a session it did not start is left running


def test_master_without_spark_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(CLEAN_CASE), "--master", "local[2]"])
    assert exited.value.code == EXIT_USAGE
    assert "--master names the Spark master of --spark" in capsys.readouterr().err


def test_a_master_that_does_not_answer_exits_2_naming_it():
    master = f"spark://127.0.0.1:{_free_port()}"
    result = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "validate", str(CLEAN_CASE), "--spark", "--master", master],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == EXIT_USAGE, result.stderr
    assert master in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.spark_cluster
def test_spark_on_the_default_master_in_a_fresh_process_equals_the_local_run(mutated):
    """The command as a user types it: ``local[*]``, its own JVM, started and stopped by the command."""
    for report_format in ("json", "text"):
        command = [sys.executable, "-m", "conformance.cli", "validate", str(mutated), "--all-versions"]
        command += ["--format", report_format]
        local = subprocess.run(command, capture_output=True, text=True, timeout=300)
        on_spark = subprocess.run([*command, "--spark"], capture_output=True, text=True, timeout=300)
        assert local.returncode == EXIT_FINDINGS
        assert (on_spark.returncode, on_spark.stdout) == (local.returncode, local.stdout)
        assert "Traceback" not in on_spark.stderr
