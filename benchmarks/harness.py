"""Throughput of the harness on Spark: acknowledged commits per second.

``python -m benchmarks.harness [WRITERS ...]`` runs, for each implementation
(pylance and the reference) and each number of concurrent writers (2, 8 and
32 by default), one harness run on ``local[N]`` (N Spark tasks at once: the
writers wait on storage, not on cores) over a local directory, and prints
one Markdown table row per run for benchmarks/README.md. The figure is the
runner's: acknowledged commits divided by the seconds the writers ran (the
Spark job, from submission to the last attempt back on the driver). The
dataset's setup and the checker are outside it.
"""

from __future__ import annotations

import platform
import sys
import tempfile
import time
from pathlib import Path

#: The workload of every run: appends with deletes and updates (what a
#: table being loaded and corrected sees), in the proportions of ``mixed``.
WORKLOAD = {"append": 4.0, "delete": 2.0, "update": 2.0}
OPERATIONS_PER_WRITER = 10
DEFAULT_WRITERS = (2, 8, 32)
IMPLEMENTATIONS = ("pylance", "reference")


def measure(implementation: str, writers: int, root: Path) -> str:
    from conformance.harness.history import AttemptOutcome
    from conformance.harness.runner import run
    from conformance.harness.spark import SparkExecutor
    from conformance.harness.spec import RunSpec

    spec = RunSpec(
        uri=str(root / f"{implementation}-{writers}.lance"),
        storage_options={},
        writer=implementation,
        writers=writers,
        operations=OPERATIONS_PER_WRITER,
        workloads=dict(WORKLOAD),
        seed=2026,
        stable_row_ids=True,
        naming="v2",
    )
    with SparkExecutor(f"local[{writers}]", app_name="lance-conformance harness benchmark") as executor:
        executor.session()  # started before the clock: the figure is the writers', not the JVM's
        started = time.monotonic()
        result = run(spec, executor, root / f"{implementation}-{writers}-out", validate=False)
        total = time.monotonic() - started
    attempts = [a for a in result.history if a.writer >= 0]
    acknowledged = sum(a.outcome is AttemptOutcome.ACKNOWLEDGED for a in attempts)
    conflicts = sum(a.outcome is AttemptOutcome.CONFLICT for a in attempts)
    per_second = acknowledged / result.seconds if result.seconds > 0 else 0.0
    verdict = "clean" if result.report.clean else f"{len(result.report.anomalies)} anomalies"
    return (
        f"| {implementation} | {writers} | `local[{writers}]` | {len(attempts)} | {acknowledged} | {conflicts} | "
        f"{result.seconds:.1f} | **{per_second:.2f}** | {total:.1f} | {verdict} |"
    )


def main(argv: list[str]) -> int:
    import lance
    import pyspark

    counts = [int(arg) for arg in argv] or list(DEFAULT_WRITERS)
    print(
        f"pylance {lance.__version__}, pyspark {pyspark.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}; {OPERATIONS_PER_WRITER} operations per writer, workload "
        + ", ".join(f"{kind}:{weight:g}" for kind, weight in WORKLOAD.items())
    )
    print(
        "| implementation | writers | master | attempts | acknowledged | conflicts | writers' seconds "
        "| acknowledged commits per second | run seconds (with the checker, validator off) | checker |"
    )
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as scratch:
        for implementation in IMPLEMENTATIONS:
            for writers in counts:
                print(measure(implementation, writers, Path(scratch)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
