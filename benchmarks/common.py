"""Timing helpers shared by the benchmarks.

Each benchmark times the reference implementation and pylance on the same
data in the same process run, and reports their ratio: absolute seconds vary
from machine to machine, the ratio much less.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(os.environ.get("LANCE_CONFORMANCE_BENCH_DATA", Path(__file__).parent / "data"))


@dataclass
class Measurement:
    name: str
    reference_seconds: float
    pylance_seconds: float
    detail: str = ""
    #: What the two timed columns are, when not the reference and pylance
    #: (the worker benchmarks time one driver two ways).
    columns: tuple[str, str] = ("reference", "pylance")
    #: What the two figures measure ("s", or "MiB" for peak memory).
    unit: str = "s"

    @property
    def ratio(self) -> float:
        """First column's time over the second's: for the default columns, below 1
        means the reference is faster."""
        return self.reference_seconds / self.pylance_seconds if self.pylance_seconds else float("inf")

    def row(self) -> str:
        return (
            f"| {self.name} | {self.reference_seconds:.3f} {self.unit} | {self.pylance_seconds:.3f} {self.unit} | "
            f"{self.ratio:.2f} | {self.detail} |"
        )


def best_of(repeats: int, action: Callable[[], object], setup: Callable[[], object] | None = None) -> float:
    """The median wall time of ``repeats`` runs of ``action``, in seconds.
    ``setup``, when given, runs untimed before each run."""
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table_header(columns: tuple[str, str] = ("reference", "pylance")) -> str:
    first, second = columns
    ratio = "ref/pylance" if columns == ("reference", "pylance") else f"{first} / {second}"
    return f"| benchmark | {first} | {second} | ratio ({ratio}) | detail |\n| --- | --- | --- | --- | --- |"
