"""How the Lance Rust core words a commit conflict, for the drivers whose
implementation embeds it (pylance, LanceDB) and does not always say the kind
of conflict through a typed error.

Measured (nothing here is documented upstream beyond the messages
themselves) with pylance 14 and LanceDB 0.40 (which embeds Lance 13), the
messages start:

- "Retryable commit conflict for version N: ..." for a retryable conflict
  (the second writer may retry from the newer version);
- "Too many concurrent writers. Attempted K retries." when an operation that
  re-runs itself on a retryable conflict (pylance's ``delete``, ``update``,
  ``merge_insert`` with ``conflict_retries``) gave up: retryable too;
- "Incompatible transaction: This <Op> transaction is incompatible with
  concurrent transaction <Op> at version N" for an incompatible conflict;
- "Commit conflict for version N: ..." for a conflict Lance does not offer
  to retry: incompatible.

LanceDB puts "lance error: " in front of the core's message; a driver strips
its own wrapping before asking :func:`conflict_from_message`. Standard
library only, like :mod:`.protocol`.
"""

from __future__ import annotations

from .protocol import WriteConflict

RETRYABLE_PREFIXES = ("Retryable commit conflict", "Too many concurrent writers")
INCOMPATIBLE_PREFIXES = ("Incompatible transaction", "Commit conflict for version")


def conflict_from_message(message: str, *, anywhere: bool = False) -> WriteConflict | None:
    """The conflict a Lance core error message says, None when it says none.
    With ``anywhere``, the core's words may stand inside a longer message (an
    engine's error that quotes the one it caught, as a Ray task's does)."""
    for prefixes, retryable in ((RETRYABLE_PREFIXES, True), (INCOMPATIBLE_PREFIXES, False)):
        found = any(p in message for p in prefixes) if anywhere else message.startswith(prefixes)
        if found:
            return WriteConflict(message, retryable=retryable)
    return None
