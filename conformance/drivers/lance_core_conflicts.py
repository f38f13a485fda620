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


def conflict_from_message(message: str) -> WriteConflict | None:
    """The conflict a Lance core error message says, None when it says none."""
    if message.startswith(RETRYABLE_PREFIXES):
        return WriteConflict(message, retryable=True)
    if message.startswith(INCOMPATIBLE_PREFIXES):
        return WriteConflict(message, retryable=False)
    return None
