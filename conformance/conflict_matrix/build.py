"""Assemble measurements into a :class:`~.model.ConflictMatrix`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .cells import UNMEASURED_SUBCASES, CellSpec
from .discrepancies import KNOWN
from .measure import Observation, static_observation
from .model import Cell, ConflictMatrix, Mode, NotCovered, Outcome, SpecSource
from .page import PAGE_COMMIT, PAGE_PATH, PAGE_REPOSITORY, verdict

#: Operation types the newest page defines that ``protos/transaction.proto`` lacks.
NOT_COVERED_OPERATIONS = {
    "data_overlay": (
        "DataOverlay is not in protos/transaction.proto, so the reference cannot write or read it. pylance 14 "
        "has LanceOperation.DataOverlay and commits it, but the version it commits sets reader feature flag 64, "
        "which pylance 14's own reader refuses ('cannot be read by this version of Lance. Flags: 65'): no "
        "writer can race on the table afterwards, so no cell with it can be measured"
    ),
    "append_fri_transitions": (
        "operation field 116 (AppendFragmentReuseTransitions) is not in protos/transaction.proto, and pylance "
        "14 has no Python call that commits it"
    ),
}


def pylance_version() -> str:
    import lance  # pylance, imported lazily as the drivers do

    return str(lance.__version__)


def assemble(
    measured: Iterable[tuple[CellSpec, Mapping[Mode, Observation]]],
    *,
    previous: ConflictMatrix | None = None,
) -> ConflictMatrix:
    """The matrix of ``measured`` cells. A mode a cell was not measured in
    keeps its outcome from ``previous`` (when it has the cell), else is
    :attr:`~.model.Outcome.PENDING` (unless it cannot be raced in that mode)."""
    cells = []
    for spec, observations in measured:
        page, reason = verdict(spec.first.operation, spec.second.operation, spec.subcase)
        old = None
        if previous is not None:
            old = next((c for c in previous.cells if c.id == spec.id), None)
        outcomes, notes, problems = {}, {}, {}
        for mode in Mode:
            static = static_observation(spec, mode)
            if mode in observations or static is not None:
                observation = observations.get(mode) or static
                assert observation is not None
                outcomes[mode] = observation.outcome
                if observation.note:
                    notes[mode] = observation.note
                if observation.problems:
                    problems[mode] = observation.problems
            elif old is not None:
                outcomes[mode] = old.outcomes[mode]
                if mode in old.notes:
                    notes[mode] = old.notes[mode]
                if mode in old.problems:
                    problems[mode] = old.problems[mode]
            else:
                outcomes[mode] = Outcome.PENDING
        cells.append(
            Cell(
                first=spec.first.operation,
                second=spec.second.operation,
                subcase=spec.subcase.value,
                first_action=spec.first.summary,
                second_action=spec.second.summary,
                page=page,
                page_reason=reason,
                outcomes=outcomes,
                notes=notes,
                problems=problems,
                discrepancy=KNOWN.get(spec.id),
            )
        )
    not_covered = [NotCovered(name, reason) for name, reason in NOT_COVERED_OPERATIONS.items()]
    not_covered += [NotCovered(name, reason) for name, reason in UNMEASURED_SUBCASES.items()]
    return ConflictMatrix(
        pylance=pylance_version(),
        spec=SpecSource(PAGE_REPOSITORY, PAGE_PATH, PAGE_COMMIT),
        cells=tuple(cells),
        not_covered=tuple(not_covered),
    )
