"""Spark for the harness tests: the embedded ``local[*]`` session, and a real
standalone cluster on loopback.

Fixtures (registered in ``tests/conftest.py``):

* ``spark_local`` (session): a :class:`~conformance.harness.spark.SparkExecutor`
  on ``local[8]`` (:data:`LOCAL_MASTER`), started once per test session (one
  per xdist worker) and stopped when the session ends;
* ``spark_cluster`` (session): the master URL ``spark://127.0.0.1:PORT`` of a
  standalone cluster started from the pyspark wheel alone (``$SPARK_HOME/bin/
  spark-class``: a master and two workers of one core and 1 GiB each, every
  port and web UI port free ones on 127.0.0.1), waited for until both workers
  have registered, and every process stopped by its pid when the session
  ends, also after a failure. Used by the ``spark_cluster`` tests only
  (``tox -e spark``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.harness.spark import HARNESS_MASTER
from tests.servers import _free_port

#: How long the cluster may take to come up (two JVMs after the master's).
STARTUP_SECONDS = 120
WORKERS = 2


#: The embedded master of the tests: the harness's own default (eight task
#: slots whatever the cores, so that a run's writers race as one barrier stage).
LOCAL_MASTER = HARNESS_MASTER


@pytest.fixture(scope="session")
def spark_local():
    """The harness's Spark executor on :data:`LOCAL_MASTER` for this test session."""
    from conformance.harness.spark import SparkExecutor

    executor = SparkExecutor(LOCAL_MASTER, app_name="lance-conformance tests")
    try:
        yield executor
    finally:
        executor.stop()


def spark_home() -> Path:
    """The installed pyspark package: it is a whole Spark distribution."""
    import pyspark

    return Path(pyspark.__file__).parent


def _spark_class(home: Path, *arguments: str) -> list[str]:
    return [str(home / "bin" / "spark-class"), *arguments]


def _alive_workers(webui: str) -> int | None:
    """How many workers the master's web UI reports alive (None: no answer yet)."""
    try:
        with urllib.request.urlopen(f"{webui}/json/", timeout=2) as response:
            return int(json.load(response).get("aliveworkers", 0))
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _stop(process: subprocess.Popen) -> None:
    """Stop one process by its pid: SIGTERM, then SIGKILL if it lingers.
    (``spark-class`` execs the JVM, so the pid is the JVM's.)"""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


def _tail(paths: list[Path]) -> str:
    return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-1500:]}" for path in paths if path.exists())


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> Iterator[str]:
    """The master URL of a standalone Spark cluster on loopback."""
    home = spark_home()
    root = tmp_path_factory.mktemp("spark-cluster")
    environment = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        # The executors' Python workers run this interpreter (the project is installed in it).
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOG_DIR": str(root / "logs"),
        "SPARK_WORKER_DIR": str(root / "work"),
    }
    port, webui_port = _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    webui = f"http://127.0.0.1:{webui_port}"
    commands = [
        _spark_class(
            home,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(webui_port),
        )
    ]
    for index in range(WORKERS):
        commands.append(
            _spark_class(
                home,
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--port",
                str(_free_port()),
                "--webui-port",
                str(_free_port()),
                "--cores",
                "1",
                "--memory",
                "1g",
                "--work-dir",
                str(root / f"work-{index}"),
                master_url,
            )
        )
    processes: list[subprocess.Popen] = []
    logs: list[Path] = []
    try:
        for index, command in enumerate(commands):
            log_path = root / ("master.log" if index == 0 else f"worker-{index}.log")
            logs.append(log_path)
            with open(log_path, "wb") as log:
                processes.append(
                    subprocess.Popen(
                        command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environment
                    )
                )
        deadline = time.monotonic() + STARTUP_SECONDS
        while (_alive_workers(webui) or 0) < WORKERS:
            if any(process.poll() is not None for process in processes) or time.monotonic() > deadline:
                pytest.fail(f"the Spark cluster at {master_url} did not come up:\n{_tail(logs)}", pytrace=False)
            time.sleep(0.5)
        yield master_url
    finally:
        # Workers first, so none of them tries to reach a master that is gone.
        for process in reversed(processes):
            _stop(process)
