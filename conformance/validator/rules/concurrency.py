"""Rules on concurrent commits as the retained history shows them (table
format: conflict resolution; transaction specification: conflict resolution,
the compatibility of each operation with the others).

A transaction records the version its writer read. When that is older than
the version before the one it created, other writers committed in between,
and the writer had to check its transaction against each of theirs before
committing: compatible or rebased, it may commit; a retryable or an
incompatible conflict means it must fail. A version that committed anyway
overwrote, or silently built on, a change it never saw: a *lost update*.

The outcome of each pair is :func:`reference_impl.commit.conflicts.decide`,
the reference's reading of the compatibility tables, given the manifest the
writer read. A version in between whose transaction is not retained cannot
be decided; writers must treat it as a conflict, but older writers did not
always record transactions, so that is a warning, not an error.

Two limits. The same-rows sub-case of two Deletes or Updates is not decided
here: without the rows, ``decide`` judges deletions on a shared fragment
rebaseable (transaction/delete checks that the merged deletion files keep
every row deleted in between). And writers that rebase may record the
version they rebased onto as their read version (pylance 14 does for a
Delete, and so does the reference), so such a race leaves no trace to check.
"""

from __future__ import annotations

from reference_impl.commit.conflicts import Outcome, decide
from reference_impl.transactions import Clone, Transaction

from ..context import VersionView
from ..facts.transactions import recorded_transaction
from ..registry import Severity, rule

#: Outcomes that forbid committing on top of the other transaction.
CONFLICTS = (Outcome.RETRYABLE, Outcome.INCOMPATIBLE)

#: The conflicts whose outcome forbids committing that a lost update in
#: history can show (the conflict.* entries of the catalog with a planted
#: example in conformance/mutations/topics/concurrency.py; the finding names
#: the entry of the pair it reports, whichever it is).
LOST_UPDATE_REQUIREMENTS = (
    "conflict.append-after-overwrite-incompatible",
    "conflict.create-index-after-overwrite-incompatible",
    "conflict.delete-after-merge-overlapping-retryable",
    "conflict.delete-after-overwrite-incompatible",
    "conflict.delete-after-restore-incompatible",
    "conflict.delete-after-rewrite-overlapping-retryable",
    "conflict.merge-after-fragment-change-retryable",
    "conflict.merge-after-overwrite-restore-project-or-mem-wal-incompatible",
    "conflict.project-after-overwrite-restore-or-mem-wal-incompatible",
    "conflict.project-after-project-or-merge-retryable",
    "conflict.reserve-fragments-after-overwrite-or-restore-incompatible",
    "conflict.rewrite-after-fragment-change-overlapping-retryable",
    "conflict.rewrite-after-merge-retryable",
    "conflict.rewrite-after-overwrite-incompatible",
    "conflict.update-after-fragment-change-overlapping-retryable",
    "conflict.update-after-merge-retryable",
    "conflict.update-after-overwrite-or-restore-incompatible",
    "conflict.update-config-after-overwrite-incompatible",
    "transaction.delete-after-restore-incompatible",
    "transaction.update-after-rewrite-retryable",
)


def _rebased(view: VersionView) -> tuple[Transaction, str, list[int]] | None:
    """(transaction, where it was read, the retained versions committed
    between its read version and ``view``'s) when ``view``'s transaction was
    built on an older version than the one before it; None otherwise."""
    found = recorded_transaction(view)
    if found is None:
        return None
    transaction, where = found
    # A Clone's read version is a version of the dataset it was cloned from.
    if isinstance(transaction.operation, Clone) or transaction.read_version >= view.version - 1:
        return None
    # An operation this validator does not know may have been judged by a
    # writer that knows it (transaction/unknown-operation reports it).
    if not transaction.has_known_operation:
        return None
    between = sorted(v for v in view.dataset.manifest_paths() if transaction.read_version < v < view.version)
    return transaction, where, between


@rule(
    "history/lost-update",
    severity=Severity.ERROR,
    requirements=LOST_UPDATE_REQUIREMENTS,
    summary="A version built on an older version is compatible with, or rebased over, every version committed "
    "in between (a conflicting pair is a lost update)",
)
def lost_update(view: VersionView):
    found = _rebased(view)
    if found is None:
        return
    transaction, where, between = found
    read_view = view.dataset.version_view(transaction.read_version)
    read = read_view.manifest if read_view is not None else None
    mine = transaction.operation_name
    for other_version in between:
        other_view = view.dataset.version_view(other_version)
        other = recorded_transaction(other_view) if other_view is not None else None
        if other is None or not other[0].has_known_operation:
            # A missing transaction: history/rebased-over-unrecorded reports
            # it. An operation this validator does not know may be one the
            # writer knew to be compatible (transaction/unknown-operation
            # reports it).
            continue
        decision = decide(transaction, other[0], read=read)
        if decision.outcome in CONFLICTS:
            yield (
                f"version {view.version} ({mine}) read version {transaction.read_version}, but version "
                f"{other_version} ({other[0].operation_name}) was committed in between and the two conflict "
                f"({decision.outcome.value}: {decision.reason}); version {view.version} had to fail, and "
                f"committing it lost an update ({', '.join(decision.requirement_ids)})",
                where,
            )


@rule(
    "history/rebased-over-unrecorded",
    severity=Severity.WARNING,
    requirements=("commit.missing-transaction-conflicts",),
    summary="A version built on an older version was not committed over a version whose transaction is not "
    "retained (writers must treat such a version as a conflict)",
)
def rebased_over_unrecorded(view: VersionView):
    found = _rebased(view)
    if found is None:
        return
    transaction, where, between = found
    unrecorded = []
    for other_version in between:
        other_view = view.dataset.version_view(other_version)
        if other_view is not None and recorded_transaction(other_view) is None:
            unrecorded.append(other_version)
    if unrecorded:
        yield (
            f"version {view.version} ({transaction.operation_name}) read version {transaction.read_version} and "
            f"was committed over version(s) {', '.join(map(str, unrecorded))}, which record no transaction; "
            "a writer cannot know whether they conflict and must assume they do",
            where,
        )
