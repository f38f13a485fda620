"""How each implementation tells the second writer that it lost.

pylance 14 (measured; nothing here is documented upstream beyond the
exception class):

- ``lance.LanceDataset.commit(uri, operation, read_version=v)`` raises
  ``lance.commit.CommitConflictError`` (a subclass of ``OSError``) whose
  ``retryable`` attribute is True for a retryable conflict; its message
  starts "Retryable commit conflict for version N: ...".
- An incompatible conflict arrives as a plain ``OSError`` whose message starts
  "Incompatible transaction: This <Op> transaction is incompatible with
  concurrent transaction <Op> at version N", from ``commit`` and from the
  high-level calls alike.
- The high-level ``delete`` and ``update`` re-run the whole operation on a
  retryable conflict (``conflict_retries``, 10 by default). The matrix passes
  ``conflict_retries=0``: a retryable conflict then surfaces as a plain
  ``OSError`` "Too many concurrent writers. Attempted 0 retries."

The reference (``reference_impl.errors``): ``RetryableConflictError`` and
``IncompatibleConflictError``, both subclasses of ``CommitConflictError``
whose ``retryable`` attribute says which (an exhausted commit loop is a
``CommitAttemptsExhaustedError``, retryable).
"""

from __future__ import annotations

from reference_impl.errors import CommitConflictError

from .model import Outcome

_PYLANCE_RETRYABLE_PREFIXES = ("Retryable commit conflict", "Too many concurrent writers")
_PYLANCE_INCOMPATIBLE_PREFIXES = ("Incompatible transaction", "Commit conflict for version")


def pylance_outcome(error: BaseException) -> Outcome | None:
    """The conflict ``error`` (raised by pylance 14) signals, None when it is
    not a conflict."""
    retryable = getattr(error, "retryable", None)
    if isinstance(retryable, bool) and isinstance(error, OSError):
        return Outcome.RETRYABLE if retryable else Outcome.INCOMPATIBLE
    if isinstance(error, OSError):
        message = str(error)
        if message.startswith(_PYLANCE_RETRYABLE_PREFIXES):
            return Outcome.RETRYABLE
        if message.startswith(_PYLANCE_INCOMPATIBLE_PREFIXES):
            return Outcome.INCOMPATIBLE
    return None


def reference_outcome(error: BaseException) -> Outcome | None:
    """The conflict ``error`` (raised by the reference) signals, None when it
    is not a conflict."""
    if not isinstance(error, CommitConflictError):
        return None
    return Outcome.RETRYABLE if error.retryable else Outcome.INCOMPATIBLE


def outcome_of(implementation: str, error: BaseException) -> Outcome | None:
    return pylance_outcome(error) if implementation == "pylance" else reference_outcome(error)
