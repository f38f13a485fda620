"""The installed pytest and pytest-xdist keep an ``xdist_group`` on one
worker, which tests/conftest.py relies on to start one Spark JVM and one
Chromium per run. pytest 9.2 with xdist 3.8 silently stopped doing so
(pytest-dev/pytest-xdist#1386); pyproject.toml pins the test extra below it,
and this test fails if an upgrade brings the problem back."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

GROUPED_TESTS = textwrap.dedent(
    """
    import os
    import pytest

    @pytest.mark.xdist_group("one")
    @pytest.mark.parametrize("i", range(6))
    def test_grouped(i):
        with open(os.environ["WORKERS_FILE"], "a") as sink:
            sink.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
    """
)


def test_an_xdist_group_runs_on_one_worker(tmp_path):
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text(GROUPED_TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    workers_file = tmp_path / "workers.txt"
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    env["WORKERS_FILE"] = str(workers_file)
    # Only xdist: the other installed plugins (Hypothesis, the suite's own)
    # would be imported by the run and both workers for nothing.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "xdist.plugin",
            "-n",
            "2",
            "--dist",
            "loadgroup",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    workers = workers_file.read_text().split()
    assert len(workers) == 12
    assert len(set(workers)) == 1, f"one group ran on workers {sorted(set(workers))}"
