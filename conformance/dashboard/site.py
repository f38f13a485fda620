"""The static site: what its pages show, computed from the results, and the
files written.

* ``index.html``: implementations by suites today: for each implementation
  and suite, the latest run's pass rate (the latest by the day filed under,
  then by end time), with its release and day;
* ``implementations/<name>.html``: one implementation's pass rate by release
  (its releases by suites, the latest run of each) and over time (the run
  days by suites, with an inline SVG chart: one line per suite), and every
  run with a link to the input it came from;
* ``results.json``: the normalised results and the problems (format
  :data:`~.model.DASHBOARD_FORMAT`, ``conformance/schemas/dashboard-results.schema.json``);
* ``inputs/``: a copy of every input that gave results, at its path under
  the results directory, so that each run's link opens its document.

The pages are rendered from ``conformance/templates/dashboard-*.html``
(escaped, self-contained: the project's stylesheet inline, no script, nothing
fetched). Elements the browser tests rely on: ``td.rate`` with
``data-implementation``, ``data-suite``, ``data-release``, ``data-date``,
``data-passed``, ``data-applied``; ``#latest``, ``#by-release``,
``#over-time``, ``#runs``, ``svg.chart``.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..describe import schema_validator
from ..templates import render
from .model import DASHBOARD_FORMAT, SCHEMA_NAME, Problem, Result

#: Suites in the order the pages show them (others after, by name).
SUITE_ORDER = ("readers", "writers", "conflicts", "queries", "properties", "harness", "compat")
#: A line colour per suite in the chart (cycled).
PALETTE = ("#1c7ed6", "#e8590c", "#2f9e44", "#ae3ec9", "#f59f00", "#0c8599", "#c92a2a")
INPUTS_DIR = "inputs"
IMPLEMENTATIONS_DIR = "implementations"
RESULTS_FILE = "results.json"


def rate_text(result: Result | None) -> str:
    """A pass rate as the pages print it: ``93.8%``, or ``n/a`` when no check applied."""
    if result is None or result.pass_rate is None:
        return "n/a"
    return f"{result.pass_rate * 100:.1f}%"


def band(result: Result | None) -> str:
    """The colour class of a pass-rate cell (page.css)."""
    if result is None or result.pass_rate is None:
        return "rate-none"
    if result.pass_rate == 1:
        return "rate-full"
    return "rate-high" if result.pass_rate >= 0.9 else "rate-mid" if result.pass_rate >= 0.5 else "rate-low"


def suites_of(results: Iterable[Result]) -> list[str]:
    present = {r.suite for r in results}
    return [s for s in SUITE_ORDER if s in present] + sorted(present - set(SUITE_ORDER))


def release_key(release: str) -> tuple[int, Version | str]:
    """Releases in version order; one that is not a version after them, by name."""
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, release)


def latest(results: Iterable[Result]) -> Result | None:
    return max(results, key=lambda r: r.order, default=None)


def slug(name: str, taken: set[str]) -> str:
    """A file name for ``name`` (a driver may be a module path or a command line), unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "implementation"
    chosen, n = base, 1
    while chosen in taken:
        n += 1
        chosen = f"{base}-{n}"
    taken.add(chosen)
    return chosen


@dataclass(frozen=True)
class Chart:
    """An inline SVG chart: pass rate (0-100%) over the run days, a line per suite."""

    width: int
    height: int
    #: (suite, colour, points "x,y x,y", [(x, y, tooltip)]).
    lines: list[tuple[str, str, str, list[tuple[float, float, str]]]]
    #: (x, label) of each day on the axis.
    ticks: list[tuple[float, str]]
    #: (y, label) of the horizontal grid lines (0, 50, 100%), and where they start and end.
    levels: list[tuple[float, str]]
    x_start: float
    x_end: float


def chart(by_day: dict[str, dict[str, Result]], days: Sequence[str], suites: Sequence[str]) -> Chart:
    width, height, left, right, top, bottom = 680, 220, 44, 48, 12, 36
    span = max(len(days) - 1, 1)

    def x(index: int) -> float:
        inner = width - left - right
        return left + (inner * index / span if len(days) > 1 else inner / 2)

    def y(rate: float) -> float:
        return top + (height - top - bottom) * (1 - rate)

    lines = []
    for n, suite in enumerate(suites):
        marks = []
        for index, day in enumerate(days):
            found = by_day.get(day, {}).get(suite)
            if found is not None and found.pass_rate is not None:
                tip = f"{suite} {day}: {rate_text(found)} ({found.passed}/{found.applied}, release {found.release})"
                marks.append((round(x(index), 1), round(y(found.pass_rate), 1), tip))
        if marks:
            points = " ".join(f"{px},{py}" for px, py, _ in marks)
            lines.append((suite, PALETTE[n % len(PALETTE)], points, marks))
    ticks = [(round(x(i), 1), day) for i, day in enumerate(days)]
    levels = [(round(y(level / 100), 1), f"{level}%") for level in (0, 50, 100)]
    return Chart(width, height, lines, ticks, levels, left, width - right)


@dataclass(frozen=True)
class ImplementationPage:
    name: str
    path: str
    suites: list[str]
    #: Each release (version order) and its latest result per suite.
    by_release: list[tuple[str, dict[str, Result]]]
    #: Each run day (oldest first) and its latest result per suite.
    by_day: list[tuple[str, dict[str, Result]]]
    chart: Chart
    runs: list[Result]

    @property
    def latest_release(self) -> str:
        return self.by_release[-1][0]


def _latest_by(results: Sequence[Result], key) -> dict[str, dict[str, Result]]:
    grouped: dict[str, dict[str, Result]] = {}
    for found in sorted(results, key=lambda r: r.order):
        grouped.setdefault(key(found), {})[found.suite] = found
    return grouped


def implementation_page(name: str, path: str, results: Sequence[Result]) -> ImplementationPage:
    suites = suites_of(results)
    releases = _latest_by(results, lambda r: r.release)
    days = _latest_by(results, lambda r: r.run_date)
    ordered_days = sorted(days)
    return ImplementationPage(
        name=name,
        path=path,
        suites=suites,
        by_release=[(release, releases[release]) for release in sorted(releases, key=release_key)],
        by_day=[(day, days[day]) for day in ordered_days],
        chart=chart(days, ordered_days, suites),
        runs=sorted(results, key=lambda r: r.order, reverse=True),
    )


def document(results: Sequence[Result], problems: Sequence[Problem], generated: str) -> dict:
    return {
        "dashboard_format": DASHBOARD_FORMAT,
        "generated": generated,
        "results": [r.to_json() for r in sorted(results, key=lambda r: (r.implementation, r.suite, r.order))],
        "problems": [p.to_json() for p in problems],
    }


def write_site(
    out: Path,
    root: Path,
    results: Sequence[Result],
    sources: Sequence[str],
    problems: Sequence[Problem],
    generated: str,
) -> Path:
    """Write the site for ``results`` (read from ``root``) into ``out``; the
    index page's path. The site's own directories are written afresh, so a
    rebuild leaves no page of an implementation no longer in the results."""
    out.mkdir(parents=True, exist_ok=True)
    for owned in (INPUTS_DIR, IMPLEMENTATIONS_DIR):
        shutil.rmtree(out / owned, ignore_errors=True)
    for source in sources:
        copy = out / INPUTS_DIR / source
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / source, copy)
    names = sorted({r.implementation for r in results})
    taken: set[str] = set()
    pages = []
    (out / IMPLEMENTATIONS_DIR).mkdir(exist_ok=True)
    for name in names:
        page = implementation_page(
            name, f"{IMPLEMENTATIONS_DIR}/{slug(name, taken)}.html", [r for r in results if r.implementation == name]
        )
        pages.append(page)
        text = render(
            "dashboard-implementation.html",
            title=f"{name}: conformance over releases and time",
            page=page,
            rate=rate_text,
            band=band,
            root="../",
            inputs=f"../{INPUTS_DIR}/",
        )
        (out / page.path).write_text(text, encoding="utf-8")
    suites = suites_of(results)
    latest_cells = {
        (page.name, suite): latest(r for r in page.runs if r.suite == suite) for page in pages for suite in suites
    }
    index = out / "index.html"
    index.write_text(
        render(
            "dashboard-index.html",
            title="Lance conformance: implementations by suites",
            pages=pages,
            suites=suites,
            cells=latest_cells,
            rate=rate_text,
            band=band,
            problems=problems,
            generated=generated,
            runs=len({r.source for r in results}),
            days=sorted({r.run_date for r in results}),
            inputs=f"{INPUTS_DIR}/",
        ),
        encoding="utf-8",
    )
    normalised = document(results, problems, generated)
    schema_validator(SCHEMA_NAME).validate(normalised)
    (out / RESULTS_FILE).write_text(json.dumps(normalised, indent=2) + "\n", encoding="utf-8")
    return index
