"""Assemble measurements into a :class:`~.model.ConflictMatrix`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .cells import UNMEASURED_SUBCASES, CellSpec
from .discrepancies import KNOWN
from .measure import Observation, static_observation
from .model import Cell, ConflictMatrix, Mode, NotCovered, Outcome, SpecSource
from .page import PAGE_COMMIT, PAGE_PATH, PAGE_REPOSITORY, verdict

#: Operation types (or their races) the matrix cannot measure, and why.
NOT_COVERED_OPERATIONS = {
    "data_overlay": (
        "its cells carry the page's verdicts (DataOverlay Compatibility) and the reference's decide() applies "
        "them, but no cell can be raced: the reference does not commit DataOverlay (data overlay files are "
        "experimental, flag 64, and their page is not among the pages it restates), and pylance 14 commits "
        "LanceOperation.DataOverlay (field 115) on a version that sets reader feature flag 64, which pylance "
        "14's own reader refuses ('cannot be read by this version of Lance. Flags: 65')"
    ),
    "reserve_row_ids": (
        "pylance 14 has no ReserveRowIds operation, so its cells are measured where the reference commits it "
        "(reference/reference, and against pylance's operations in the mixed modes); its cells start from a "
        "table with stable row ids, the only kind the page allows it on"
    ),
    "append_fri_transitions": (
        "this matrix recorded operation field 116 as AppendFragmentReuseTransitions from an earlier upstream "
        "state (not among the stored protos); the newest protos/transaction.proto gives 116 to ReserveRowIds, "
        "and no pylance 14 call commits AppendFragmentReuseTransitions"
    ),
    "composite_operation": (
        "the experimental action-based transaction (protos/transaction/actions.proto), operation field 116 in "
        "protos/transaction/transaction.proto: upstream rejects it on load and has no write path; the "
        "reference keeps a field 116 that is not a ReserveRowIds message as an unknown operation, which "
        "conflicts with everything"
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
