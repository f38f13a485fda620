"""``validate --spark`` on ``local[*]`` against the local run (issue 17,
validation as a Spark job), on the many-fragment dataset of
``reader._many_fragments`` (one-row fragments written by pylance).

The session is started once, untimed in the table (its start-up is in the
detail column), and warmed with one run, whose time is also in the detail:
the first job starts Spark's Python workers, which import the validator.
Then the latest version is validated ``repeats`` times each way, the Spark
runs with their per-file reads (data file footers) on executors; both
reports must be identical or the benchmark stops. The session is stopped at
the end, also after a failure.

Size (an environment variable, so that ``python -m benchmarks`` takes it):
``LANCE_CONFORMANCE_BENCH_SPARK_FRAGMENTS``, fragments (default 10,000; the
issue's large table is 100,000).
"""

from __future__ import annotations

import os
import time

from conformance.spark_session import DEFAULT_MASTER
from conformance.validator import validate

from .common import Measurement, best_of
from .reader import _many_fragments


def bench_validate_spark(repeats: int = 3) -> Measurement:
    from conformance.spark_session import start_session
    from conformance.validator.spark import SparkDistribution

    fragments = int(os.environ.get("LANCE_CONFORMANCE_BENCH_SPARK_FRAGMENTS", "10000"))
    path = _many_fragments(fragments)
    started = time.perf_counter()
    session, owned = start_session(DEFAULT_MASTER, "lance-conformance benchmark", {})
    start_up = time.perf_counter() - started
    try:
        context = session.sparkContext

        def on_spark() -> tuple[dict, SparkDistribution]:
            distribution = SparkDistribution(context, path=path)
            return validate(path, distribution=distribution).to_json(), distribution

        started = time.perf_counter()
        report, distribution = on_spark()
        first = time.perf_counter() - started
        if report != validate(path).to_json():
            raise AssertionError("validate --spark and the local run disagree")
        if distribution.loads_on_executors < fragments or distribution.redone_locally:
            done, redone = distribution.loads_on_executors, distribution.redone_locally
            raise AssertionError(f"the executors read {done} footers, the driver {redone}")
        spark_seconds = best_of(repeats, on_spark)
        local_seconds = best_of(repeats, lambda: validate(path))
        return Measurement(
            f"validate latest, {fragments} fragments, Spark {DEFAULT_MASTER} / local",
            spark_seconds,
            local_seconds,
            f"{context.defaultParallelism} task slots; {distribution.loads_on_executors} footers read by executors; "
            f"reports identical; session start {start_up:.1f} s, first (cold) run {first:.1f} s",
            columns=(f"spark {DEFAULT_MASTER}", "local"),
        )
    finally:
        if owned:
            session.stop()


BENCHMARKS = [bench_validate_spark]
