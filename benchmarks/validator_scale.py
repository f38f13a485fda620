"""Validator benchmarks at the sizes of large tables (issue 17):

* the commands of :mod:`benchmarks.commands` (fresh processes, beside
  pylance's) on a 100,000-fragment dataset and a 2,000-version dataset
  (version v lists v fragments: 2,001,000 fragment listings, 2,000 distinct
  fragments);
* the peak resident memory of ``lance-conformance validate`` on the
  100,000-fragment dataset, in a fresh process, beside pylance's for the same
  open (goal: under 1 GB).

The datasets are written by pylance the first time (about a minute each, under
``benchmarks/data/``, never committed). ``LANCE_CONFORMANCE_BENCH_REPEATS``
sets the runs per timing (default 3; the median is kept).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from .commands import commands, interleaved
from .common import Measurement
from .reader import _many_fragments

REPEATS = int(os.environ.get("LANCE_CONFORMANCE_BENCH_REPEATS", "3"))

#: Runs ``sys.argv[1:]`` as a child and prints the child's peak resident set
#: size in KiB (``ru_maxrss`` of the children is the largest child's: the
#: wrapper has only this one).
_PEAK_RSS = textwrap.dedent(
    """
    import resource, subprocess, sys
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
    print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    """
)


def bench_commands_at_scale() -> list[Measurement]:
    return [interleaved(command, REPEATS) for command in commands(100_000, 2000)]


def _peak_rss_mib(command: list[str]) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, *command], capture_output=True, text=True, check=True, timeout=3600
    )
    returncode, kib = done.stdout.split()
    if int(returncode) not in (0, 1):  # 1: the report has errors, still a complete run
        raise RuntimeError(f"{command} exited with {returncode}: {done.stderr}")
    return int(kib) / 1024


def bench_validate_memory_100k(fragments: int = 100_000) -> Measurement:
    path = _many_fragments(fragments)
    pylance_open = "import lance, sys; d = lance.dataset(sys.argv[1]); d.validate(); d.count_rows()"
    ours = _peak_rss_mib([sys.executable, "-m", "conformance.cli", "validate", str(path)])
    theirs = _peak_rss_mib([sys.executable, "-c", pylance_open, str(path)])
    return Measurement(
        f"peak resident memory of validate, {fragments} fragments",
        ours,
        theirs,
        "fresh processes (ru_maxrss); reference: lance-conformance validate; pylance: open, validate(), "
        f"count_rows(); goal: reference under 1024 MiB ({'met' if ours < 1024 else 'not met'})",
        unit="MiB",
    )


BENCHMARKS = [bench_commands_at_scale, bench_validate_memory_100k]
