"""Results over time: ``lance-conformance dashboard RESULTS_DIR --out SITE``.

The package turns the JSON results the project's commands write (``matrix
--json``, ``writer-check --format json``, ``harness run``'s ``report.json``,
the pytest plugin's ``--lance-json``, ``compat``), from any number of
implementations, releases and days, into one static site, as the
conformance dashboards of other formats do (test262.fyi, wpt.fyi,
bowtie.report): implementations by suites today, and each implementation's
pass rate over suite and implementation releases and over time.

* :mod:`.model`: the one normalised :class:`~.model.Result` (suite,
  implementation, release, suite version, run day, passed, failed, total,
  the input it came from) and how checks count;
* :mod:`.adapters`: one adapter per input kind: its format marker, its
  schema, its normalisation; :mod:`.compat` the compat documents' (one
  result per reader release);
* :mod:`.inputs`: finding the results under a directory, and a problem per
  file that cannot be read;
* :mod:`.site`: the pages (templates ``dashboard-*.html``) and ``results.json``.

A run's day is the day it is filed under (:mod:`conformance.run_stamp`):
``--run-date`` on the command that wrote it, else the day it ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..run_stamp import now_utc
from .inputs import Inputs, read_results
from .site import write_site


class NoResultsError(Exception):
    """The results directory is missing, or holds no result the dashboard can read."""


@dataclass(frozen=True)
class Built:
    index: Path
    inputs: Inputs


def build_dashboard(results_dir: str | Path, out: str | Path) -> Built:
    """Read every result under ``results_dir`` and write the site into ``out``."""
    root = Path(results_dir)
    if not root.is_dir():
        raise NoResultsError(f"{root} is not a directory")
    inputs = read_results(root, skip=[Path(out)])
    if not inputs.results:
        raise NoResultsError(f"{root} holds no results the dashboard can read")
    index = write_site(Path(out), root, inputs.results, inputs.sources, inputs.problems, now_utc())
    return Built(index, inputs)


__all__ = ["Built", "NoResultsError", "build_dashboard"]
