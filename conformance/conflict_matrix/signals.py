"""How a lost race reads in the matrix: a driver's
:class:`~conformance.drivers.protocol.WriteConflict` as an :class:`Outcome`.

Each implementation's own conflict signal (pylance's ``CommitConflictError``
and messages, the reference's ``CommitConflictError``, LanceDB's messages) is
read in one place, its driver's ``conflict_from``
(:func:`conformance.drivers.pylance_driver.conflict_from` documents what was
measured with pylance 14); this module only names the outcome.
"""

from __future__ import annotations

from collections.abc import Callable

from ..drivers import pylance_driver
from ..drivers import reference as reference_driver
from ..drivers.protocol import WriteConflict
from .model import Implementation, Outcome

#: The driver function that reads each measured implementation's conflict signal.
CONFLICT_SIGNALS: dict[Implementation, Callable[[BaseException], WriteConflict | None]] = {
    Implementation.PYLANCE: pylance_driver.conflict_from,
    Implementation.REFERENCE: reference_driver.conflict_from,
}


def conflict_outcome(conflict: WriteConflict) -> Outcome | None:
    """RETRYABLE or INCOMPATIBLE as the conflict says; None when it does not
    say which (a driver whose implementation does not tell)."""
    retryable = getattr(conflict, "retryable", None)  # a worker's conflict may not carry it
    if retryable is None:
        return None
    return Outcome.RETRYABLE if retryable else Outcome.INCOMPATIBLE


def outcome_of(implementation: Implementation, error: BaseException) -> Outcome | None:
    """The conflict ``error`` (raised by ``implementation``) signals, None
    when it is not a conflict."""
    conflict = CONFLICT_SIGNALS[implementation](error)
    return None if conflict is None else conflict_outcome(conflict)
