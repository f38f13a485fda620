"""The golden cases' grid: every writer (rows) by every reader (columns).

It is the view ``fixtures matrix`` prints, kept with each case's outcome, the
requirements and features its ``case.json`` names, and the expectation that
applied, so the page can open a cell on its failing cases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..expectations import version_key
from ..fixtures.case import Case
from ..fixtures.verify import EXPECTED_FAILURE, FAIL, FIXED, NOT_APPLICABLE, PASS, CaseResult
from .model import Cell, Grid, Outcome, Status

GRID_ID = "readers"

#: ``CaseResult.status`` values -> the matrix's statuses.
STATUSES: dict[str, Status] = {
    PASS: Status.PASS,
    FAIL: Status.FAIL,
    EXPECTED_FAILURE: Status.EXPECTED_FAILURE,
    NOT_APPLICABLE: Status.NOT_APPLICABLE,
    FIXED: Status.FIXED,
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
    """One case read by one reader, as the page shows it: the checks it could
    not run (a capability the driver lacks) and the representation
    differences of its rows are notes, which never fail."""
    requirements = tuple(sorted(case.requirements)) if case else ()
    expectation = None
    if result.expectation is not None:  # the requirement the expectation names comes first
        entry = result.expectation
        requirements = (entry.requirement, *(r for r in requirements if r != entry.requirement))
        expectation = f"{entry.requirement}: {entry.reason}"
        if entry.reproducer:
            expectation += f" (reproducer: {entry.reproducer})"
    notes = list(result.notes)
    if result.missing_capabilities:
        notes.append(f"capabilities the driver lacks: {', '.join(result.missing_capabilities)}")
    for observation in result.observations:
        notes.append(
            f"observation ({observation.get('requirement', '')}): column {observation.get('column')!r} "
            f"{observation.get('kind')}: expected {observation.get('expected')}, got {observation.get('actual')}"
        )
    return Outcome(
        case=result.case,
        status=STATUSES[result.status],
        problems=tuple(result.problems),
        notes=tuple(notes),
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
