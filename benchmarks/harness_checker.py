"""How long the harness's history checker takes on 100,000 operations.

``python -m benchmarks.harness_checker [OPERATIONS]`` generates a history of
OPERATIONS operations by 8 writers from the serial model
(``conformance.harness.serial_model``: appends, deletes, updates, upserts,
compactions, config changes, rare overwrites and restores; conflicts and
writers that died included) with the observation of every version, and
times :func:`conformance.harness.checker.analyze` on it: the checker's whole
analysis, without reading a dataset from disk (reading costs what each
version changed; see ``conformance/harness/observe.py``).
"""

from __future__ import annotations

import sys
import time

from conformance.harness.checker import analyze
from conformance.harness.serial_model import serial_run

#: The issue's budget: 100,000 operations checked in under 30 s on 2 cores.
BUDGET_SECONDS = 30.0


def main(argv: list[str]) -> int:
    operations = int(argv[0]) if argv else 100_000
    started = time.perf_counter()
    run = serial_run(operations, seed=1)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    anomalies = analyze(run.history, run.observations)
    checked = time.perf_counter() - started
    print(
        f"{operations} operations ({len(run.observations.versions)} versions, {len(run.history)} attempts): "
        f"generated in {generated:.1f} s, checked in {checked:.1f} s (budget {BUDGET_SECONDS:.0f} s), "
        f"{len(anomalies)} anomalies"
    )
    return 0 if not anomalies and checked < BUDGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
