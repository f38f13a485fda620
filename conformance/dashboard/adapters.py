"""One adapter per results document the project's commands write: how it is
recognised (its format marker), the JSON Schema it is validated with, and how
it becomes :class:`~.model.Result` rows. The markers:

* **matrix** (``matrix --json``): ``format`` and ``grids``;
* **writer-check** (``writer-check --format json``): ``report_format`` and ``suite: writers``;
* **harness** (``harness run``'s ``OUT/report.json``): ``report_format``, ``writer`` and ``anomalies``;
* **pytest** (the plugin's ``--lance-json``): ``report: suite-run``;
* **compat** (``compat``): see :mod:`.compat`.

What each holds:

* **matrix**: the readers grid (golden cases: each reader's column) and the
  writers grid (each writing driver's row) give one result per driver and
  suite; the implementation and release are what the driver reported about
  itself. The conflicts grid is left out: it judges the *stored*
  measurements of ``conformance/data/conflict_matrix.json``, not anything
  the run measured, so it would repeat the same numbers on every date.
* **writer-check**: one result (suite ``writers``), a check per script step.
* **harness**: one result (suite ``harness``) whose one check is the run:
  passed when the checker found no anomaly. The report does not name the
  writer's release or the day; the run's directory does: ``writer.json``
  holds the writer's ``DriverInfo`` and ``history.jsonl`` the attempts' wall
  clock times (the run's day is the day its first attempt started, UTC).
* **pytest**: one result per suite the run collected.

A document without a run date (a writer-check report written before reports
had a ``run`` stamp) is a problem, not a guess.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model import Result, RunOf, result, tally, tally_counts

#: The suite's distribution name, as ``matrix`` records its version.
SUITE_DISTRIBUTION = "lance-conformance"


class InputError(ValueError):
    """A recognised document that cannot be normalised (says why)."""


@dataclass(frozen=True)
class Adapter:
    kind: str
    #: Whether a document carries this kind's format marker (cheap; validation follows).
    recognises: Callable[[Mapping[str, Any]], bool]
    #: The shipped schema's file name (conformance/schemas/).
    schema: str
    #: The results of a valid document at ``path``, named ``source`` in the site.
    results: Callable[[Mapping[str, Any], Path, str], list[Result]]


def _release_of(info: Mapping[str, Any] | None, fallback: str) -> tuple[str, str]:
    """(implementation, release) as a driver reported itself."""
    info = info or {}
    return str(info.get("implementation") or info.get("name") or fallback), str(info.get("version") or "unknown")


def _stamped(stamp: Mapping[str, Any] | None) -> RunOf:
    if not stamp:
        raise InputError("no run date: the report predates run stamps (run the command again, with --run-date DAY)")
    return RunOf(stamp["run_date"], stamp["generated"], stamp["suite_version"])


# -- matrix --------------------------------------------------------------------------------------

#: The matrix grids that measure the drivers of the run, and how a cell names its driver.
_DRIVER_AXIS = {"readers": "column", "writers": "row"}


def _matrix_results(document: Mapping[str, Any], path: Path, source: str) -> list[Result]:
    run = RunOf(
        document.get("run_date") or document["generated"][:10],
        document["generated"],
        document["versions"].get(SUITE_DISTRIBUTION, "unknown"),
    )
    infos = {driver["name"]: driver["info"] for driver in document["drivers"] if driver["error"] is None}
    results = []
    for grid in document["grids"]:
        axis = _DRIVER_AXIS.get(grid["id"])
        if axis is None:
            continue
        statuses: dict[str, list[str]] = {}
        for cell in grid["cells"]:
            statuses.setdefault(cell[axis], []).extend(outcome["status"] for outcome in cell["outcomes"])
        for name, found in statuses.items():
            if name not in infos:
                continue  # a corpus writer of the readers grid, or a driver that did not load
            implementation, release = _release_of(infos[name], name)
            results.append(
                result(grid["id"], implementation, release, tally(found), run=run, source=source, kind="matrix")
            )
    return results


MATRIX = Adapter(
    kind="matrix",
    recognises=lambda d: "format" in d and "grids" in d,
    schema="ecosystem-matrix.schema.json",
    results=_matrix_results,
)


# -- writer-check --------------------------------------------------------------------------------


def _writer_results(document: Mapping[str, Any], path: Path, source: str) -> list[Result]:
    implementation, release = _release_of(document["driver"], document["driver"]["name"])
    counts = tally(step["status"] for step in document["steps"])
    run = _stamped(document.get("run"))
    return [result("writers", implementation, release, counts, run=run, source=source, kind="writer-check")]


WRITER_CHECK = Adapter(
    kind="writer-check",
    recognises=lambda d: "report_format" in d and d.get("suite") == "writers",
    schema="writer-conformance-report.schema.json",
    results=_writer_results,
)


# -- harness -------------------------------------------------------------------------------------

#: The files of a harness run's directory (conformance/harness/runner.py) the adapter reads.
HARNESS_HISTORY = "history.jsonl"
HARNESS_WRITER = "writer.json"


def _harness_run(directory: Path) -> RunOf:
    """The run's day and end from its history's wall clock times."""
    history = directory / HARNESS_HISTORY
    try:
        lines = [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines() if line.strip()]
        start = min(float(attempt["start"]) for attempt in lines)
        end = max(float(attempt["end"]) for attempt in lines)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"no run date: {history} cannot be read ({type(exc).__name__}: {exc})") from None
    utc = datetime.timezone.utc
    day = datetime.datetime.fromtimestamp(start, utc).date().isoformat()
    return RunOf(day, datetime.datetime.fromtimestamp(end, utc).isoformat(timespec="seconds"))


def _harness_results(document: Mapping[str, Any], path: Path, source: str) -> list[Result]:
    run = _harness_run(path.parent)
    info = None
    try:
        info = json.loads((path.parent / HARNESS_WRITER).read_text(encoding="utf-8")).get("driver")
    except (OSError, ValueError, AttributeError):
        pass  # a faulty writer or a run saved before writer.json: the writer's name, release unknown
    implementation, release = _release_of(info, document["writer"])
    counts = tally(["pass" if document["clean"] else "fail"])
    return [result("harness", implementation, release, counts, run=run, source=source, kind="harness")]


HARNESS = Adapter(
    kind="harness",
    recognises=lambda d: "report_format" in d and "writer" in d and "anomalies" in d,
    schema="harness-report.schema.json",
    results=_harness_results,
)


# -- the pytest plugin ---------------------------------------------------------------------------


def _plugin_results(document: Mapping[str, Any], path: Path, source: str) -> list[Result]:
    implementation, release = _release_of(document["driver"], document["driver"]["name"])
    run = _stamped(document["run"])
    return [
        result(
            suite,
            implementation,
            release,
            tally_counts(document["summary"].get(suite, {})),
            run=run,
            source=source,
            kind="pytest",
        )
        for suite in document["suites"]
    ]


PYTEST = Adapter(
    kind="pytest",
    recognises=lambda d: d.get("report") == "suite-run",
    schema="suite-run-report.schema.json",
    results=_plugin_results,
)
