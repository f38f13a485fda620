"""Writer conformance's grid: every writing driver (rows) by every step of
the script (columns, in script order).

Each cell is one step as :mod:`conformance.writer_conformance` reported it:
the operation, then every version it committed checked by the validator and
every reader of the run; its messages name the version and the check
(``v3 rows:pylance: ...``). A step the driver does not perform is not
applicable here, with the reason; one whose table the reference could not
prepare is skipped, naming the step it needs (``skipped: needs step X``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..drivers.writes import WriteKind
from ..writer_conformance import SCRIPT, StepResult, StepStatus, WriterReport
from .model import Cell, Grid, Outcome, Status

GRID_ID = "writers"

_STATUSES = {
    StepStatus.PASS: Status.PASS,
    StepStatus.FAIL: Status.FAIL,
    StepStatus.NOT_APPLICABLE: Status.NOT_APPLICABLE,
    StepStatus.SKIPPED: Status.NOT_APPLICABLE,
    StepStatus.EXPECTED_FAILURE: Status.EXPECTED_FAILURE,
    StepStatus.FIXED: Status.FIXED,
}

#: The feature (conformance.fixtures.features) each kind of write exercises, for the page's filter.
FEATURES: dict[WriteKind, tuple[str, ...]] = {
    WriteKind.CREATE: ("txn.overwrite",),
    WriteKind.APPEND: ("txn.append",),
    WriteKind.OVERWRITE: ("txn.overwrite",),
    WriteKind.DELETE: ("txn.delete",),
    WriteKind.UPDATE: ("txn.update",),
    WriteKind.UPSERT: ("txn.update",),
    WriteKind.ADD_COLUMNS: ("txn.merge",),
    WriteKind.DROP_COLUMNS: ("txn.project",),
    WriteKind.ALTER_COLUMNS: ("txn.project",),
    WriteKind.COMPACT: ("txn.rewrite",),
    WriteKind.CREATE_INDEX: ("txn.create_index",),
    WriteKind.TAG: ("refs.tags",),
    WriteKind.RESTORE: ("txn.restore",),
    WriteKind.CONFIG: ("txn.update_config",),
}


#: The column of the history check: every reader lists the versions the writer committed.
HISTORY = "history"


def _features(kind: str) -> tuple[str, ...]:
    try:
        return FEATURES.get(WriteKind(kind), ())
    except ValueError:  # a step kind this suite's vocabulary does not name
        return ()


def step_outcome(step: StepResult) -> Outcome:
    status = _STATUSES[step.status]
    notes = list(step.notes)
    if step.reason:
        notes.insert(0, f"{step.status.value}: {step.reason}")
    if step.versions:
        notes.append("versions committed: " + ", ".join(f"v{version}" for version in step.versions))
    expectation = None
    requirements = tuple(step.requirements)
    if step.expectation is not None:
        requirement = step.expectation.get("requirement")
        expectation = (
            f"{requirement}: {step.expectation.get('reason')}" if requirement else step.expectation.get("reason")
        )
        if requirement:
            requirements = (requirement, *(r for r in requirements if r != requirement))
    return Outcome(
        case=f"{step.id}: {step.description}",
        status=status,
        problems=tuple(step.messages()),
        notes=tuple(notes),
        requirements=requirements,
        features=_features(step.kind),
        expectation=expectation,
        skipped=step.reason if step.status is StepStatus.SKIPPED else None,
    )


def writers_grid(reports: Sequence[tuple[str, WriterReport]]) -> Grid:
    """The grid of one report per writing driver (named as the run asked for it)."""
    columns = [step.id for step in SCRIPT]
    for _, report in reports:
        columns += [step.id for step in report.steps if step.id not in columns]
    columns.append(HISTORY)
    cells = []
    for name, report in reports:
        cells += [Cell(name, step.id, (step_outcome(step),)) for step in report.steps]
        history = Outcome(
            "every reader lists the versions committed, in order",
            Status.FAIL if report.history_problems else Status.PASS,
            problems=tuple(report.history_problems),
            notes=(f"readers: {', '.join(report.readers)}",),
            features=("versions.history",),
        )
        cells.append(Cell(name, HISTORY, (history,)))
    readers = sorted({reader for _, report in reports for reader in report.readers})
    return Grid(
        id=GRID_ID,
        title="Writer conformance: every writing driver through the script",
        description=(
            "Each writing driver runs the script of operations on a fresh table; every version it commits is "
            f"checked by the validator and read back by {', '.join(readers) or 'the readers'} (rows compared by "
            "meaning, descriptions against the reference reader's)."
        ),
        row_label="writer",
        column_label="operation",
        rows=tuple(name for name, _ in reports),
        columns=tuple(columns),
        cells=tuple(cells),
    )
