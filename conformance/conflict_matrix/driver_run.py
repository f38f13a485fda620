"""``lance-conformance conflicts --driver DRIVER``: the matrix raced by one
writing driver (:mod:`.races`), judged against the stored matrix and the
implementation's expectations, as a text summary and a JSON report
(``conformance/schemas/conflict-races-report.schema.json``, format
:data:`REPORT_FORMAT`).

The expectations are the project's (:mod:`conformance.expectations`): suite
``conflicts``, case the cell id, the same entries the pytest plugin's
conflicts suite applies. A cell that differs and is listed is an *expected
difference*; a listed cell that agrees is *fixed* and fails the run, so the
file stays true. Without ``--expectations FILE`` the file shipped for the
driver's implementation applies (pylance's lists the cells where pylance 14
departs from the page, which the reference follows).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..drivers import DRIVERS, RELEASE_SEPARATOR, Driver, DriverError, close_driver, driver_info, load_driver
from ..drivers.protocol import DriverInfo, DriverInfoError
from ..expectations import Expectations, load_expectations, shipped_expectations
from .races import BESIDE, FAILING, ORACLE, Race, RaceResult, RaceStatus, races, run_race, select

#: The version of the report's JSON format.
REPORT_FORMAT = 1
REPORT_SCHEMA = "conflict-races-report.schema.json"
#: The expectations suite the cells belong to (``Expectation.suite``).
SUITE = "conflicts"
#: The statuses of a cell that was not raced.
NOT_RUN = frozenset({RaceStatus.NOT_APPLICABLE, RaceStatus.UNSUPPORTED})


class UnknownDriverError(ValueError):
    """A driver name that names nothing: no shipped driver, worker or importable module."""


class DriverUnavailableError(RuntimeError):
    """A driver that exists but cannot load or describe itself here."""


def _names_something(name: str) -> bool:
    """Whether ``name`` is a worker or release name, or names a module that
    exists (a module that exists but fails to import is unavailable, not unknown)."""
    from ..drivers import worker  # lazy: the worker package is needed only to read the name

    if worker.is_worker_name(name) or RELEASE_SEPARATOR in name:
        return True
    try:
        return importlib.util.find_spec(DRIVERS.get(name, name)) is not None
    except (ImportError, ValueError):  # a parent package missing, an empty or relative name
        return False


def open_driver(name: str) -> tuple[Driver, DriverInfo]:
    """The driver ``name`` and its declaration; :class:`UnknownDriverError`
    or :class:`DriverUnavailableError` naming the problem."""
    if not _names_something(name):
        known = ", ".join([*sorted(DRIVERS), "worker:NAME", "cmd:COMMAND LINE", "a module name"])
        raise UnknownDriverError(f"unknown driver {name!r} (known: {known})")
    try:
        driver = load_driver(name)
    except DriverError as exc:
        raise DriverUnavailableError(str(exc)) from None
    try:
        return driver, driver_info(driver, name)
    except (ImportError, OSError, DriverInfoError, DriverError) as exc:
        close_driver(driver)
        raise DriverUnavailableError(f"driver {name!r} cannot describe itself: {exc}") from None


def expectations_for(driver_name: str, info: DriverInfo, path: str | None) -> tuple[Expectations, str | None]:
    """The expectations file at ``path``, else those shipped for the driver's
    implementation (for its release), and a label saying which; raises
    :class:`~conformance.expectations.ExpectationsError`."""
    if path is not None:
        return load_expectations(path), path
    shipped = shipped_expectations(driver_name, info.version)
    return shipped, (f"shipped expectations of {shipped.implementation}" if shipped.entries else None)


def with_expectation(result: RaceResult, expectations: Expectations) -> RaceResult:
    entry = expectations.lookup(SUITE, result.race.cell.id)
    if entry is None:
        return result
    status = {RaceStatus.DIFFERS: RaceStatus.EXPECTED_DIFFERENCE, RaceStatus.AGREES: RaceStatus.FIXED}.get(
        result.status, result.status
    )
    messages = result.messages
    if status is RaceStatus.FIXED:
        messages = ("the expectations say it differs, and it agrees: remove the entry",)
    return dataclasses.replace(result, status=status, messages=messages, expectation=entry)


@dataclass(frozen=True)
class ConflictsReport:
    driver: DriverInfo
    expectations: str | None
    results: tuple[RaceResult, ...]

    @property
    def passed(self) -> bool:
        return not any(result.status in FAILING for result in self.results)

    def summary(self) -> dict[str, int]:
        return {status.value: sum(r.status is status for r in self.results) for status in RaceStatus}

    def to_json(self) -> dict[str, Any]:
        return {
            "report_format": REPORT_FORMAT,
            "suite": SUITE,
            "driver": self.driver.to_json(),
            "oracle": ORACLE.value,
            "beside": BESIDE.value,
            "expectations": self.expectations,
            "passed": self.passed,
            "summary": self.summary(),
            "cells": [_cell_json(result) for result in self.results],
        }


def _cell_json(result: RaceResult) -> dict[str, Any]:
    race = result.race
    return {
        "id": race.cell.id,
        "first": race.cell.first_action,
        "second": race.cell.second_action,
        "status": result.status.value,
        "observed": None if result.observed is None else result.observed.value,
        "stored": {ORACLE.value: race.expected.value, BESIDE.value: race.beside.value},
        "messages": list(result.messages),
        "expectation": None if result.expectation is None else result.expectation.to_json(),
    }


def run_conflicts(
    driver: Driver,
    info: DriverInfo,
    chosen: Iterable[Race],
    expectations: Expectations,
    *,
    expectations_label: str | None = None,
    progress: Callable[[RaceResult], None] | None = None,
) -> ConflictsReport:
    """Race every ``chosen`` cell with ``driver`` and judge it."""
    results = []
    for race in chosen:
        result = with_expectation(run_race(driver, info, race), expectations)
        if progress is not None:
            progress(result)
        results.append(result)
    return ConflictsReport(info, expectations_label, tuple(results))


def run_named(
    driver_name: str, *, cells: Iterable[str] | None = None, expectations_path: str | None = None
) -> ConflictsReport:
    """:func:`run_conflicts` for a driver name, the cells whose ids match
    ``cells`` (:func:`.races.select`), the driver closed afterwards.
    Raises :class:`UnknownDriverError`, :class:`DriverUnavailableError`,
    :class:`~.races.UnknownCellsError` or
    :class:`~conformance.expectations.ExpectationsError`."""
    chosen = select(races(), cells)
    driver, info = open_driver(driver_name)
    try:
        expectations, label = expectations_for(driver_name, info, expectations_path)
        return run_conflicts(driver, info, chosen, expectations, expectations_label=label)
    finally:
        close_driver(driver)


def to_json_text(report: ConflictsReport) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"


def to_text(report: ConflictsReport) -> str:
    info = report.driver
    lines = [
        f"conflicts: driver {info.name} ({info.implementation} {info.version}), "
        f"both writers from one read version; oracle: the stored matrix, {ORACLE.value} "
        f"({BESIDE.value} shown beside it)",
    ]
    if report.expectations:
        lines.append(f"expectations: {report.expectations}")
    width = max((len(r.race.cell.id) for r in report.results), default=0)
    for result in report.results:
        status, cell = f"{result.status.value:<19}", f"{result.race.cell.id:<{width}}"
        if result.status in NOT_RUN:
            lines.append(f"{status} {cell}  {'; '.join(result.messages)}")
            continue
        observed = "" if result.observed is None else result.observed.value
        lines.append(f"{status} {cell}  {observed:<12} stored {result.race.expected.value}")
        if result.expectation is not None:
            lines.append(f"    expectation: {result.expectation.requirement}: {result.expectation.reason}")
        lines += [f"    {message}" for message in result.messages if result.status is not RaceStatus.AGREES]
    summary = report.summary()
    counts = ", ".join(f"{count} {status}" for status, count in summary.items() if count)
    raced = len(report.results) - sum(summary[status.value] for status in NOT_RUN)
    verdict = "passed" if report.passed else "FAILED"
    if raced == 0:
        verdict += " (no cell raced)"
    lines.append(f"{len(report.results)} cells: {counts or 'none'}; {verdict}")
    return "\n".join(lines)
