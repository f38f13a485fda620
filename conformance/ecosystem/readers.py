"""The golden cases' grid: every writer (rows) by every reader (columns).

It is the view ``fixtures matrix`` prints, kept with each case's outcome, the
requirements and features its ``case.json`` names, and the expectation that
applied, so the page can open a cell on its failing cases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..fixtures.case import Case, version_key
from ..fixtures.verify import CaseResult
from .model import Cell, Grid, Outcome, Status

GRID_ID = "readers"

#: ``CaseResult.status`` values -> the matrix's statuses (the older names of
#: an expected failure and of a stale one included).
STATUSES: dict[str, Status] = {
    "pass": Status.PASS,
    "fail": Status.FAIL,
    "expected-failure": Status.EXPECTED_FAILURE,
    "known-deviation": Status.EXPECTED_FAILURE,
    "not-applicable": Status.NOT_APPLICABLE,
    "fixed": Status.FIXED,
    "stale-deviation": Status.FIXED,
}


def reader_order(readers: Iterable[str]) -> list[str]:
    """The reference first, then the others by name, each implementation's
    releases (``pylance@0.20.0``) after it, oldest first."""

    def key(name: str) -> tuple:
        implementation, _, release = name.partition("@")
        numeric = release.replace(".", "").isdigit()
        return (name != "reference", implementation, bool(release), version_key(release) if numeric else (), name)

    return sorted(set(readers), key=key)


def outcome(result: CaseResult, case: Case | None) -> Outcome:
    """One case read by one reader, as the page shows it."""
    requirements = tuple(sorted(case.requirements)) if case else ()
    if result.deviation:  # the requirement the expectation names comes first
        requirements = (result.deviation, *(r for r in requirements if r != result.deviation))
    expectation = None
    if result.deviation:
        deviation = case.deviation_for(result.driver) if case else None
        expectation = result.deviation + (f": {deviation.explanation}" if deviation else "")
    return Outcome(
        case=result.case,
        status=STATUSES[result.status],
        problems=tuple(result.problems),
        notes=tuple(result.notes),
        requirements=requirements,
        features=tuple(sorted(case.features)) if case else (),
        expectation=expectation,
    )


def readers_grid(results: Iterable[CaseResult], cases: Mapping[str, Case]) -> Grid:
    """The grid of ``results`` (every case read by every reader); ``cases``
    by name gives their features and requirements."""
    results = list(results)
    readers = reader_order(r.driver for r in results)
    writers = sorted({r.writer for r in results})
    cells = []
    for writer in writers:
        for reader in readers:
            mine = sorted((r for r in results if r.writer == writer and r.driver == reader), key=lambda r: r.case)
            if mine:
                cells.append(Cell(writer, reader, tuple(outcome(r, cases.get(r.case)) for r in mine)))
    return Grid(
        id=GRID_ID,
        title="Golden cases: every writer by every reader",
        description=(
            "Each cell holds the golden cases one writer wrote, read by one driver: its versions, "
            "its canonical description of each version and its rows, compared with the expected results."
        ),
        row_label="writer",
        column_label="reader",
        rows=tuple(writers),
        columns=tuple(readers),
        cells=tuple(cells),
    )
