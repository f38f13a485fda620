"""The conflicts suite: the cells of the conflict matrix the driver can race.

Each check is one cell raced by the driver under test as both writers, from
one read version, and judged against the stored matrix: the race, the
translation of a cell into the write vocabulary and the oracle
(``reference/reference``) are :mod:`conformance.conflict_matrix.races`, which
``lance-conformance conflicts --driver DRIVER`` runs too. A cell the driver
cannot race (a capability it lacks, an operation it does not perform) is not
applicable, naming why; the implementation's expectations (suite
``conflicts``, case the cell id) apply as everywhere in the suite.
"""

from __future__ import annotations

from functools import partial

from ..conflict_matrix.races import Race, RaceStatus, races, run_race
from .checks import Check, Status, Suite, Verdict
from .run import SuiteRun


def race_verdict(run: SuiteRun, race: Race) -> Verdict:
    result = run_race(run.driver, run.info, race)
    if result.status is RaceStatus.AGREES:
        return Verdict.passed()
    if result.status in (RaceStatus.NOT_APPLICABLE, RaceStatus.UNSUPPORTED):
        return Verdict(Status.NOT_APPLICABLE, result.messages)
    return Verdict.failed(result.messages)


def checks() -> list[Check]:
    return [
        Check(
            Suite.CONFLICTS,
            race.cell.id,
            partial(race_verdict, race=race),
            f"{race.cell.first_action}, then {race.cell.second_action}",
        )
        for race in races()
    ]
