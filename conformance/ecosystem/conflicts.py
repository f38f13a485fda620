"""The conflict matrix's grid: the first writer's operation (rows) by the
second's (columns).

Each cell gathers the sub-cases of one ordered pair in every mode measured
(``conformance/data/conflict_matrix.json``), judged against the upstream
transaction page's verdict for the second writer: the measured outcome must
be the one the page implies. A known difference recorded in
``docs/spec-discrepancies.md`` is an expected failure; a pair that cannot
race, or that an implementation cannot produce, is not applicable, as is a
pair the page says nothing about.

The measurements are stored, not raced by the run: a mode is judged only
when its second writer's implementation is under test (:func:`judged_modes`), so a
run of another driver is never failed by pylance's own cells.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from ..conflict_matrix.model import Cell as ConflictCell
from ..conflict_matrix.model import ConflictMatrix, Mode, Operation
from ..conflict_matrix.model import Outcome as Measured
from ..expectations import Expectations
from .model import Cell, Grid, Outcome, Status

GRID_ID = "conflicts"
#: The expectations files' name of this suite.
SUITE = "conflicts"
#: The requirement every cell concerns: a writer that loses a race fails with a conflict of the right kind.
REQUIREMENT = "transaction.conflict-errors"

_UNMEASURED = {
    Measured.NOT_APPLICABLE: "the pair cannot race",
    Measured.NOT_REACHABLE: "an implementation cannot produce its operation",
    Measured.PENDING: "not measured yet",
}


def cited(cell: ConflictCell, catalog: Iterable[str]) -> tuple[str, ...]:
    """The catalog's rule for the second operation after the first, when one
    names both (``conflict.delete-after-overwrite-incompatible``), and the
    general one."""
    first, second = cell.first.value.replace("_", "-"), cell.second.value.replace("_", "-")
    prefix = f"conflict.{second}-after-"
    specific = sorted(r for r in catalog if r.startswith(prefix) and first in r[len(prefix) :].split("-or-")[0])
    return (*specific[:1], REQUIREMENT)


def judge(
    cell: ConflictCell,
    mode: Mode,
    requirements: tuple[str, ...] = (REQUIREMENT,),
    expectations: Mapping[str, Expectations] | None = None,
) -> Outcome:
    """One sub-case in one mode. The second writer decides the outcome, so an
    expectation of its implementation (suite ``conflicts``, case the cell id)
    turns a departure from the page into an expected failure, and is stale
    (fixed) when the cell agrees with the page."""
    measured = cell.outcomes[mode]
    expected = cell.page.expects()
    problems: list[str] = []
    notes = [f"{cell.first_action}, then {cell.second_action}", f"page: {cell.page.value} ({cell.page_reason})"]
    if mode in cell.notes:
        notes.append(cell.notes[mode])
    expectation = None
    if measured in _UNMEASURED:
        status = Status.NOT_APPLICABLE
        notes.append(_UNMEASURED[measured])
    elif expected is None:
        status = Status.NOT_APPLICABLE
        notes.append(f"the page is silent on this pair; measured {measured.value}")
    else:
        if measured is not expected:
            problems.append(f"second writer: {measured.value}, the page implies {expected.value}")
        if mode in cell.problems:
            problems.append(f"after the race: {cell.problems[mode]}")
        shipped = (expectations or {}).get(mode.second.value)
        entry = shipped.lookup(SUITE, cell.id) if shipped is not None else None
        if entry is not None:
            expectation = f"{entry.requirement}: {entry.reason}"
            status = Status.EXPECTED_FAILURE if problems else Status.FIXED
            if not problems:
                problems.append(f"agrees with the page, but {mode.second.value}'s expectations list the cell")
        elif problems and cell.discrepancy is not None:
            status = Status.EXPECTED_FAILURE
            expectation = (
                f"{REQUIREMENT}: docs/spec-discrepancies.md, {cell.discrepancy.entry!r} "
                f"(follows the page: {cell.discrepancy.follows_page})"
            )
        else:
            status = Status.FAIL if problems else Status.PASS
    return Outcome(
        case=f"{cell.subcase} [{mode.value}]",
        status=status,
        problems=tuple(problems),
        notes=tuple(notes),
        requirements=requirements,
        features=tuple(sorted({f"txn.{cell.first.value}", f"txn.{cell.second.value}"})),
        expectation=expectation,
    )


def judged_modes(implementations: Collection[str]) -> tuple[Mode, ...]:
    """The modes whose second writer (the one the outcome concerns) is one of
    ``implementations``, the implementations under test."""
    return tuple(mode for mode in Mode if mode.second.value in implementations)


def conflicts_grid(
    matrix: ConflictMatrix,
    catalog: Iterable[str] = (),
    expectations: Mapping[str, Expectations] | None = None,
    modes: Sequence[Mode] = tuple(Mode),
) -> Grid:
    """The grid of the stored ``matrix``; ``catalog``: the requirement ids to
    cite from; ``expectations``: by implementation (``pylance``,
    ``reference``), those of the implementations measured; ``modes``: the
    modes judged (:func:`judged_modes`), every one by default."""
    catalog = list(catalog)
    operations = [op.value for op in Operation if any(op in (c.first, c.second) for c in matrix.cells)]
    cells = []
    for first in operations:
        for second in operations:
            mine = [c for c in matrix.cells if c.first.value == first and c.second.value == second]
            if mine:
                cells.append(
                    Cell(
                        first,
                        second,
                        tuple(judge(c, mode, cited(c, catalog), expectations) for c in mine for mode in modes),
                    )
                )
    seconds = sorted({mode.second.value for mode in modes})
    return Grid(
        id=GRID_ID,
        title="Conflict matrix: two writers racing",
        description=(
            f"The stored measurements (pylance {matrix.pylance} and the reference, in every order) of a second "
            "writer committing after a first on the same read version, against the upstream transaction page "
            f"({matrix.spec.repository} {matrix.spec.path} at {matrix.spec.commit[:12]}); judged where the second "
            f"writer is {' or '.join(seconds)}."
        ),
        row_label="first writer",
        column_label="second writer",
        rows=tuple(operations),
        columns=tuple(operations),
        cells=tuple(cells),
    )
