"""Validator benchmarks at the sizes of large tables (issue 17):

* ``validate`` (latest version) of a 100,000-fragment dataset, against
  pylance opening it with ``validate()`` and ``count_rows()``;
* ``validate --all-versions`` of a 2,000-version dataset (version v lists v
  fragments: 2,001,000 fragment listings, 2,000 distinct fragments), against
  pylance opening every version with ``validate()`` and ``count_rows()``;
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

from conformance.validator import validate

from .common import Measurement, best_of
from .reader import _many_fragments, _many_versions

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


def bench_validate_100k_fragments(fragments: int = 100_000) -> Measurement:
    import lance

    path = _many_fragments(fragments)

    def with_pylance():
        dataset = lance.dataset(path)
        dataset.validate()
        dataset.count_rows()

    report = validate(path)
    return Measurement(
        f"validate latest, {fragments} fragments",
        best_of(REPEATS, lambda: validate(path)),
        best_of(REPEATS, with_pylance),
        f"{len(report.rules)} rules, {len(report.findings)} findings; pylance: validate() and count_rows()",
    )


def bench_validate_2000_versions(versions: int = 2000) -> Measurement:
    import lance

    path = _many_versions(versions)

    def with_pylance():
        for version in range(1, versions + 1):
            dataset = lance.dataset(path, version=version)
            dataset.validate()
            dataset.count_rows()

    report = validate(path, all_versions=True)
    return Measurement(
        f"validate --all-versions, {versions} versions",
        best_of(REPEATS, lambda: validate(path, all_versions=True)),
        best_of(REPEATS, with_pylance),
        f"{len(report.rules)} rules, {len(report.findings)} findings; pylance: validate() and count_rows() per version",
    )


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


BENCHMARKS = [bench_validate_100k_fragments, bench_validate_2000_versions, bench_validate_memory_100k]
