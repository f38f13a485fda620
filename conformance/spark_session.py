"""Starting a Spark session the project's way: the driver's interpreter on
the executors, everything bound to 127.0.0.1, the web UI off, Spark's own
logging kept to errors.

Shared by the concurrency harness (:mod:`conformance.harness.spark`) and the
validator on Spark (:mod:`conformance.validator.spark`); pyspark is imported
only when a session is started, never by importing this module.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

#: Spark's log configuration while the project runs Spark: errors only, on stderr.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def _log_config() -> Path:
    """A log4j2 file keeping Spark to errors (written once per process)."""
    path = Path(tempfile.gettempdir()) / f"lance-conformance-spark-log4j2-{os.getuid()}.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        staging = path.with_suffix(f".{os.getpid()}.tmp")
        staging.write_text(_LOG4J2)
        staging.replace(path)
    return path


#: The master when none is named: the driver's own JVM, a task per core.
DEFAULT_MASTER = "local[*]"


def spark_conf(master: str, app_name: str) -> dict[str, str]:
    """The Spark settings the project runs with (see the module docstring): the
    harness's writers and the validator's readers alike."""
    python = sys.executable
    java_options = f"-Dlog4j2.configurationFile=file:{_log_config()}"
    return {
        "spark.master": master,
        "spark.app.name": app_name,
        # Bound to loopback: nothing is reachable from another machine, and a
        # host whose name resolves elsewhere does not matter.
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": java_options,
        "spark.executor.extraJavaOptions": java_options,
        # The executors' Python workers run this interpreter: the project is
        # importable there (the venv it is installed in).
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": python,
        "spark.executorEnv.PYSPARK_PYTHON": python,
        # A task is never retried behind our back: a harness writer must not
        # run twice (a failed one is an indeterminate writer, recorded), and
        # the validator redoes a failed chunk of work on the driver.
        "spark.task.maxFailures": "1",
        # Small results; never let the default limits of a big cluster bite.
        "spark.driver.maxResultSize": "1g",
    }


class SparkError(RuntimeError):
    """Spark could not run what was asked of it (no Java, a session already running
    on another master, a master that does not answer)."""


def start_session(master: str, app_name: str, conf: Mapping[str, str]):
    """A Spark session on ``master`` with :func:`spark_conf` and ``conf``, and
    whether this call started it (False: one already running on the same
    master in this process, left to whoever started it). :class:`SparkError`
    when there is no Java, another master's session is running, or the master
    does not answer."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SparkError("Spark needs Java: run ./dev setup (it installs a JRE) or set JAVA_HOME")
    from pyspark.sql import SparkSession  # lazy: pyspark is optional, needed only to start a session

    active = SparkSession.getActiveSession()
    if active is not None:
        if active.sparkContext.master != master:
            raise SparkError(
                f"a Spark session on {active.sparkContext.master} is already running in this process; "
                f"stop it before starting one on {master}"
            )
        return active, False
    unreachable = unreachable_masters(master)
    if unreachable:
        raise SparkError(f"no Spark master answers at {', '.join(unreachable)} ({master})")
    # The Python workers of local mode are started from the driver's
    # environment; a cluster's executors get it from spark.executorEnv.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Spark picks the address it advertises before reading any setting.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder
    for key, value in {**spark_conf(master, app_name), **conf}.items():
        builder = builder.config(key, value)
    try:
        with warnings.catch_warnings():
            # pylance warns at every fork once it is imported; the fork here
            # is pyspark's launcher, which at once executes the JVM.
            warnings.filterwarnings("ignore", message="lance is not fork-safe")
            session = builder.getOrCreate()
    except Exception as error:  # py4j or the JVM launcher: the message is the whole story
        raise SparkError(f"could not start Spark on {master}: {error}") from error
    session.sparkContext.setLogLevel("ERROR")
    return session, True


def unreachable_masters(master: str, timeout: float = 5.0) -> list[str]:
    """The ``host:port`` addresses of a ``spark://`` master URL (several with
    standby masters) that refuse a connection; empty for other masters.
    Spark itself would retry an absent master for minutes before giving up."""
    if not master.startswith("spark://"):
        return []
    unreachable = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                pass
        except (OSError, ValueError):
            unreachable.append(address)
    return unreachable
