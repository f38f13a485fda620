"""Conflict rules pylance 14 is measured to depart from.

The conflict matrix (``docs/conflicts.md``) races every pair of operations
with pylance 14; where pylance commits a pair the newest transaction page
says conflicts, the difference is recorded in docs/spec-discrepancies.md
("Conflict matrix"). A version pylance committed over such a conflict is a
known departure of that writer, reported apart, not a lost update: the
validator's ``history/lost-update`` reports it as an info and the harness's
checker lists it beside its anomalies. Both look it up here, by the
requirement id of the conflict rule :func:`reference_impl.commit.conflicts.decide`
applied.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: The library name pylance records in a manifest's ``writer_version``.
PYLANCE_LIBRARY = "lance"


@dataclass(frozen=True)
class KnownDeparture:
    requirement_id: str
    #: The title of its entry under "Conflict matrix" in docs/spec-discrepancies.md.
    entry: str
    #: What pylance does instead, in one sentence.
    behaviour: str


KNOWN_PYLANCE_DEPARTURES: dict[str, KnownDeparture] = {
    departure.requirement_id: departure
    for departure in (
        KnownDeparture(
            "conflict.update-config-after-overwrite-incompatible",
            "UpdateConfig after Overwrite",
            "pylance 14 commits an UpdateConfig of another key over an Overwrite",
        ),
    )
}


def pylance_departure(requirement_ids: Iterable[str], writer_library: str | None) -> KnownDeparture | None:
    """The known departure behind a conflict whose decision cited
    ``requirement_ids``, when pylance (``writer_library``) committed over it."""
    if writer_library != PYLANCE_LIBRARY:
        return None
    return next((KNOWN_PYLANCE_DEPARTURES[r] for r in requirement_ids if r in KNOWN_PYLANCE_DEPARTURES), None)
