"""Deep validation at scale (issue 29): every page of every data file of a
10,000,000-row 2.2 dataset decoded by the reference reader, beside
pylance's ``lance.dataset(PATH).to_table()`` of the same dataset; and
``validate --deep`` as a Spark job on ``local[2]`` beside the local run.

Each side is a fresh process per repeat, timed from start to exit
(interpreter start-up and imports included), the two sides interleaved as
in :mod:`benchmarks.commands`: each repeat runs both, in alternating order,
after one untimed run of each that fills the page cache. Beside the wall
time each side's CPU time (user + system of the child, all its threads)
is recorded: pylance decodes on every core, the reference on one.

What "ours" runs (``--ours``):

* ``cli``: ``lance-conformance validate --deep PATH``, the command users
  run (exit 0 or 1: a report);
* ``reader``: a Python process that opens the dataset's latest version
  with the reference and reads every column of every data file with
  :class:`~reference_impl.file_format.LanceFileReader` (the decoding that
  ``validate --deep`` does, without the rules around it);
* ``auto`` (the default): ``cli`` when ``lance-conformance validate
  --help`` lists ``--deep``, else ``reader``. The first line printed says
  which ran.

The Spark rows (``validate --deep --spark --master local[2]`` beside
``validate --deep``) need the CLI's ``--deep``; without it they are left
out, saying so.

The datasets (:mod:`benchmarks.deep_data`) are written by pylance on first
use under the benchmark data directory and kept there.

``python -m benchmarks.deep [--ours auto|cli|reader] [--rows N] [--no-spark]``
prints the table; ``LANCE_CONFORMANCE_BENCH_REPEATS`` sets the repeats
(default 3). As for :mod:`benchmarks.commands`, ``PYTHONPATH`` names the
checkout whose code the children run.
"""

from __future__ import annotations

import argparse
import enum
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from .commands import child_environment, code_under_test, our_command
from .common import DATA_DIR, Measurement, table_header
from .deep_data import ROWS, dataset

REPEATS = int(os.environ.get("LANCE_CONFORMANCE_BENCH_REPEATS", "3"))
#: A wide guard against a hung child, never a measurement.
_TIMEOUT_SECONDS = 3600
SPARK_MASTER = "local[2]"

#: pylance reading every row of the latest version.
PYLANCE_TO_TABLE = "import lance, sys; lance.dataset(sys.argv[1]).to_table()"

#: The reference reading every column of every data file of the latest
#: version, as deep validation decodes them.
REFERENCE_READ_EVERY_FILE = """
import sys
from reference_impl.dataset import Dataset
from reference_impl.file_format import LanceFileReader
dataset = Dataset.open(sys.argv[1])
for fragment in dataset.fragments:
    for data_file in fragment.files:
        location = dataset.data_file_location(data_file)
        LanceFileReader(location.storage, location.relpath).read()
"""


class Ours(enum.Enum):
    """What the benchmark runs for lance-conformance."""

    AUTO = "auto"
    CLI = "cli"
    READER = "reader"


def cli_has_deep() -> bool:
    """Whether ``lance-conformance validate`` accepts ``--deep``."""
    done = subprocess.run(
        [*our_command(), "validate", "--help"],
        capture_output=True,
        text=True,
        cwd=DATA_DIR,
        env=child_environment(),
        timeout=_TIMEOUT_SECONDS,
        check=False,
    )
    return "--deep" in done.stdout


def resolve(ours: Ours) -> Ours:
    if ours is Ours.AUTO:
        return Ours.CLI if cli_has_deep() else Ours.READER
    return ours


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def _run(command: list[str], ok: tuple[int, ...]) -> Timing:
    """Wall and CPU seconds of ``command`` as a child process (its output
    discarded); an exit status outside ``ok`` is an error, not a time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=DATA_DIR,  # no checkout in the working directory: PYTHONPATH decides
        env=child_environment(),
        timeout=_TIMEOUT_SECONDS,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        raise RuntimeError(f"{command} exited with {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Timing(wall, cpu)


#: Exit statuses of a complete validation: 0 (clean), 1 (findings).
_VALIDATED = (0, 1)


@dataclass(frozen=True)
class Pair:
    """One row: two commands on one dataset, and the exit statuses that
    mean each completed."""

    name: str
    first: list[str]
    second: list[str]
    columns: tuple[str, str]
    first_ok: tuple[int, ...] = _VALIDATED
    second_ok: tuple[int, ...] = (0,)


def interleaved(pair: Pair, repeats: int) -> Measurement:
    _run(pair.first, pair.first_ok)  # untimed: the page cache filled for both
    _run(pair.second, pair.second_ok)
    firsts: list[Timing] = []
    seconds: list[Timing] = []
    for repeat in range(repeats):
        if repeat % 2 == 0:
            firsts.append(_run(pair.first, pair.first_ok))
            seconds.append(_run(pair.second, pair.second_ok))
        else:
            seconds.append(_run(pair.second, pair.second_ok))
            firsts.append(_run(pair.first, pair.first_ok))
    ratios = sorted(a.wall / b.wall for a, b in zip(firsts, seconds, strict=True))
    first_cpu = statistics.median(t.cpu for t in firsts)
    second_cpu = statistics.median(t.cpu for t in seconds)
    return Measurement(
        pair.name,
        statistics.median(t.wall for t in firsts),
        statistics.median(t.wall for t in seconds),
        f"median of {repeats}; ratio per repeat {ratios[0]:.2f}-{ratios[-1]:.2f}; "
        f"CPU {first_cpu:.1f} s / {second_cpu:.1f} s (ratio {first_cpu / second_cpu:.2f})",
        columns=pair.columns,
    )


def deep_rows(ours: Ours, rows: int) -> list[Pair]:
    """Deep decoding beside pylance's ``to_table()``, on the dataset with
    default compression and on the one with zstd."""
    pairs = []
    for zstd in (False, True):
        path = str(dataset(rows, zstd=zstd))
        data = f"{rows:,} rows of 2.2{', zstd' if zstd else ''}"
        pylance = [sys.executable, "-c", PYLANCE_TO_TABLE, path]
        columns = ("lance-conformance", "pylance to_table()")
        if ours is Ours.CLI:
            command = [*our_command(), "validate", "--deep", path]
            pairs.append(Pair(f"validate --deep, {data}", command, pylance, columns))
        else:
            command = [sys.executable, "-c", REFERENCE_READ_EVERY_FILE, path]
            pairs.append(Pair(f"every data file read, {data}", command, pylance, columns, first_ok=(0,)))
    return pairs


def spark_rows(rows: int) -> list[Pair]:
    """``validate --deep`` as a Spark job beside the local run."""
    path = str(dataset(rows))
    local = [*our_command(), "validate", "--deep", path]
    spark = [*our_command(), "validate", "--deep", "--spark", "--master", SPARK_MASTER, path]
    return [
        Pair(
            f"validate --deep, {rows:,} rows of 2.2, Spark {SPARK_MASTER} / local",
            spark,
            local,
            (f"spark {SPARK_MASTER}", "local"),
            second_ok=_VALIDATED,
        )
    ]


def bench_deep() -> list[Measurement]:
    """``python -m benchmarks bench_deep``: the default rows."""
    ours = resolve(Ours.AUTO)
    measured = [interleaved(pair, REPEATS) for pair in deep_rows(ours, ROWS)]
    if ours is Ours.CLI:
        measured += [interleaved(pair, REPEATS) for pair in spark_rows(ROWS)]
    return measured


BENCHMARKS = [bench_deep]


def main(argv: list[str]) -> int:
    import lance

    parser = argparse.ArgumentParser(prog="python -m benchmarks.deep", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", choices=[o.value for o in Ours], default=Ours.AUTO.value)
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--no-spark", action="store_true", help="leave out the Spark rows")
    args = parser.parse_args(argv)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    ours = resolve(Ours(args.ours))
    print(
        f"pylance {lance.__version__}, Python {sys.version.split()[0]}; code from {code_under_test()}; "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; ours: "
        + ("lance-conformance validate --deep" if ours is Ours.CLI else "the reference reading every data file"),
        flush=True,
    )
    columns: tuple[str, str] | None = None
    pairs = deep_rows(ours, args.rows)
    if args.no_spark:
        pass
    elif ours is Ours.CLI:
        pairs += spark_rows(args.rows)
    else:
        print("(the Spark rows need `validate --deep`, which this CLI does not accept: left out)")
    for pair in pairs:
        measured = interleaved(pair, REPEATS)
        if measured.columns != columns:
            columns = measured.columns
            print(f"\n{table_header(columns)}")
        print(measured.row(), flush=True)
    print(f"\nload at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
