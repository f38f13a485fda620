"""Run the benchmarks: ``python -m benchmarks [NAME ...]`` (``./dev tox -e bench``).

Prints a Markdown table of reference time, pylance time and their ratio, for
benchmarks/README.md (a new table where a benchmark times two other things,
such as a driver through a worker and in process).
"""

from __future__ import annotations

import platform
import sys

from .common import DATA_DIR, table_header


def all_benchmarks():
    from . import (
        commands,
        commits,
        deep,
        files,
        indices,
        reader,
        validator_io,
        validator_scale,
        validator_spark,
        workers,
    )

    return [
        *reader.BENCHMARKS,
        *files.BENCHMARKS,
        *validator_io.BENCHMARKS,
        *validator_spark.BENCHMARKS,
        *validator_scale.BENCHMARKS,
        *deep.BENCHMARKS,
        *indices.BENCHMARKS,
        *commits.BENCHMARKS,
        *workers.BENCHMARKS,
        *commands.BENCHMARKS,
    ]


def main(argv: list[str]) -> int:
    import lance

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    wanted = set(argv)
    print(f"pylance {lance.__version__}, Python {platform.python_version()}, {platform.machine()}")
    columns = ("reference", "pylance")
    print(table_header(columns))
    for benchmark in all_benchmarks():
        if wanted and benchmark.__name__ not in wanted:
            continue
        measured = benchmark()
        # A benchmark that measures one thing at several sizes returns a row per size.
        for measurement in measured if isinstance(measured, list) else [measured]:
            if measurement.columns != columns:  # a benchmark that times something else: a table of its own
                columns = measurement.columns
                print(f"\n{table_header(columns)}")
            print(measurement.row(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
