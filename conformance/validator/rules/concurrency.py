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

from reference_impl.commit.conflicts import FRAGMENT_REUSE_INDEX_NAME, Outcome, decide
from reference_impl.transactions import Clone, CreateIndex, Rewrite, Transaction

from ..context import VersionView
from ..facts.pylance_departures import pylance_departure
from ..facts.transactions import recorded_transaction
from ..registry import Severity, registered_rule, rule

LOST_UPDATE = "history/lost-update"

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
    "conflict.reserve-row-ids-after-overwrite-or-restore-incompatible",
    "conflict.rewrite-after-fragment-change-overlapping-retryable",
    "conflict.rewrite-after-merge-retryable",
    "conflict.rewrite-after-overwrite-incompatible",
    "conflict.update-after-fragment-change-overlapping-retryable",
    "conflict.update-after-merge-retryable",
    "conflict.update-after-overwrite-or-restore-incompatible",
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
    LOST_UPDATE,
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
        if other_view is None or other is None or not other[0].has_known_operation:
            # A missing transaction: history/rebased-over-unrecorded reports
            # it. An operation this validator does not know may be one the
            # writer knew to be compatible (transaction/unknown-operation
            # reports it).
            continue
        decision = decide(transaction, other[0], read=read)
        if decision.outcome not in CONFLICTS or _reuse_index_pair(view, transaction, other_view, other[0]):
            continue
        message = (
            f"version {view.version} ({mine}) read version {transaction.read_version}, but version "
            f"{other_version} ({other[0].operation_name}) was committed in between and the two conflict "
            f"({decision.outcome.value}: {decision.reason}); version {view.version} had to fail, and "
            f"committing it lost an update ({', '.join(decision.requirement_ids)})"
        )
        writer = view.manifest.writer_version
        departure = pylance_departure(decision.requirement_ids, writer.library if writer else None)
        if departure is not None:
            yield registered_rule(LOST_UPDATE).finding(
                f"{message}; pylance commits this pair, departing from the page "
                f'(docs/spec-discrepancies.md, "{departure.entry}")',
                version=view.version,
                location=where,
                severity=Severity.INFO,
            )
        else:
            yield message, where


def _carries_reuse_index(view: VersionView, transaction: Transaction) -> bool:
    """Whether ``transaction`` is a Rewrite that recorded a fragment reuse
    index: its version's manifest has that index. (``Rewrite.frag_reuse_index``
    is not in the transaction proto this validator reads, so the version's
    indices are what tells.)"""
    if not isinstance(transaction.operation, Rewrite):
        return False
    return any(index.name == FRAGMENT_REUSE_INDEX_NAME for index in (view.manifest_file.indices or []))


def _reuse_index_pair(view: VersionView, mine: Transaction, other_view: VersionView, theirs: Transaction) -> bool:
    """A CreateIndex and a Rewrite carrying a fragment reuse index, in either
    order: compatible by the page's CreateIndex and Rewrite sections (the
    index is remapped later through the reuse index), although ``decide``
    cannot see the field (docs/spec-discrepancies.md, "A Rewrite carrying a
    fragment reuse index")."""
    if isinstance(mine.operation, CreateIndex):
        return _carries_reuse_index(other_view, theirs)
    if isinstance(theirs.operation, CreateIndex):
        return _carries_reuse_index(view, mine)
    return False


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
