"""Worker benchmarks (issue: isolated workers for any language).

The whole golden corpus verified through a worker (``worker:reference``: the
reference driver in a child process, every call a request over the worker
protocol, every table an Arrow IPC file) against the same driver in process.
The goal: at most 1.5 times the in-process time.

* ``verify_corpus`` in this process, imports done: the worker's time includes
  starting it (a Python process importing the reference implementation) and
  its ``hello``; the in-process time has nothing to start;
* the same with the worker started beforehand: what the protocol itself costs
  (a request and a response per call, an Arrow IPC file per read);
* the command a user runs, ``lance-conformance fixtures verify --driver ...``,
  each in a fresh process: both pay their imports, the worker's run twice over
  (the suite's process and the worker).

Every run must pass every case; the benchmark stops with an error otherwise.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conformance.drivers import Driver, close_driver, load_driver
from conformance.fixtures.verify import PASS, verify_corpus

from .common import Measurement, best_of

CORPUS = Path(__file__).resolve().parents[1] / "fixtures"
COLUMNS = ("worker:reference", "reference in process")


def _verified(driver: str, opened: Driver | None = None) -> None:
    results = verify_corpus(CORPUS, driver, driver=opened)
    failed = [(r.case, r.problems) for r in results if r.status != PASS]
    if failed:
        raise RuntimeError(f"{driver}: {len(failed)} cases failed: {failed[:3]}")


def bench_corpus_through_a_worker(repeats: int = 5) -> Measurement:
    _verified("reference")  # imports and page cache warm for both sides
    return Measurement(
        "golden corpus (verify_corpus), worker vs in process",
        best_of(repeats, lambda: _verified("worker:reference")),
        best_of(repeats, lambda: _verified("reference")),
        f"{len(list((CORPUS / 'cases').iterdir()))} cases; the worker's time includes starting it",
        columns=COLUMNS,
    )


def bench_corpus_through_a_started_worker(repeats: int = 5) -> Measurement:
    worker = load_driver("worker:reference")
    try:
        _verified("worker:reference", worker)  # the worker's own first-use imports, untimed
        return Measurement(
            "golden corpus (verify_corpus), worker started beforehand vs in process",
            best_of(repeats, lambda: _verified("worker:reference", worker)),
            best_of(repeats, lambda: _verified("reference")),
            "the protocol's own cost: a request and a response per call, an Arrow IPC file per read",
            columns=COLUMNS,
        )
    finally:
        close_driver(worker)


def _command(driver: str) -> None:
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "fixtures", "verify", "--driver", driver, "--corpus", str(CORPUS)],
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"fixtures verify --driver {driver} failed ({time.perf_counter() - started:.1f} s):\n"
            f"{completed.stdout[-2000:]}{completed.stderr[-2000:]}"
        )


def bench_verify_command_through_a_worker(repeats: int = 5) -> Measurement:
    return Measurement(
        "golden corpus (fixtures verify command), worker vs in process",
        best_of(repeats, lambda: _command("worker:reference")),
        best_of(repeats, lambda: _command("reference")),
        "each run a fresh process, imports included",
        columns=COLUMNS,
    )


BENCHMARKS = [
    bench_corpus_through_a_worker,
    bench_corpus_through_a_started_worker,
    bench_verify_command_through_a_worker,
]
