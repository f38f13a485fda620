"""The conflict matrix re-run live against pylance 14 and the reference.

Every cell is raced again (grouped by the first operation, so that the
groups spread over the test workers): by default in the three modes the
reference takes part in, which change with its code; pylance against
itself changes only with the pinned pylance and re-runs nightly (marker
slow, tox -e nightly).
"""

from __future__ import annotations

import pytest

from conformance.conflict_matrix.cells import all_cells
from conformance.conflict_matrix.measure import run_cell, workspace
from conformance.conflict_matrix.model import MEASURED, Cell, Implementation, Mode, Operation, Outcome, stored_matrix

CELLS = all_cells()

#: The modes in which the reference commits first or second.
WITH_REFERENCE = tuple(mode for mode in Mode if Implementation.REFERENCE in (mode.first, mode.second))


@pytest.fixture(scope="module")
def space():
    with workspace() as ws:
        yield ws


@pytest.mark.parametrize(
    "modes",
    [
        pytest.param(WITH_REFERENCE, id="with-reference"),
        pytest.param((Mode.PYLANCE_PYLANCE,), id="pylance-only", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("first", list(Operation), ids=lambda op: op.value)
def test_live_outcomes_equal_the_stored_ones(first, modes, space):
    """Racing each cell again gives the outcome stored for it in every mode,
    and a committed result fails its checks (readers agree, validator clean)
    exactly where the stored matrix records that it does."""
    stored = stored_matrix()
    differences = []
    for spec in (c for c in CELLS if c.first.operation is first):
        cell = stored.cell(spec.id)
        for mode in modes:
            if cell.outcomes[mode] is Outcome.PENDING:
                continue
            live = run_cell(spec, mode, space)
            if live.outcome is not cell.outcomes[mode]:
                differences.append(
                    f"{spec.id} {mode.value}: stored {cell.outcomes[mode].value}, live {live.outcome.value} {live.note}"
                )
            elif bool(live.problems) != (mode in cell.problems):
                differences.append(
                    f"{spec.id} {mode.value}: stored problems {cell.problems.get(mode)!r}, live {live.problems!r}"
                )
    assert differences == []


def _disagreements(cell: Cell) -> list[str]:
    """Modes whose measured outcome differs from the cell's yardstick:
    pylance/pylance where pylance alone can run the cell, else the page."""
    yardstick = cell.outcomes[Mode.PYLANCE_PYLANCE]
    if yardstick not in MEASURED:
        expected = cell.page.expects()
        if expected is None:
            return []
        yardstick = expected
    return [
        f"{cell.id} {mode.value}: {cell.outcomes[mode].value}, expected {yardstick.value}"
        for mode in Mode
        if cell.outcomes[mode] in MEASURED and cell.outcomes[mode] is not yardstick
    ]


def test_the_reference_agrees_with_pylance_except_recorded_discrepancies():
    """In every cell, every mode measured gives pylance's own outcome (the
    page's, where pylance cannot produce an operation), unless the cell is a
    known discrepancy; and a known discrepancy is one."""
    unexplained, stale = [], []
    for cell in stored_matrix().cells:
        found = _disagreements(cell)
        if found and cell.discrepancy is None:
            unexplained += found
        if not found and cell.discrepancy is not None:
            stale.append(cell.id)
    assert unexplained == []
    assert stale == []


def test_no_stored_cell_is_an_unexplained_error():
    """A cell whose second writer failed with something other than a
    conflict is a known discrepancy (its entry says why)."""
    errors = [
        f"{c.id} {m.value}: {c.notes.get(m)}"
        for c in stored_matrix().cells
        for m in Mode
        if c.outcomes[m] is Outcome.ERROR and c.discrepancy is None
    ]
    assert errors == []
