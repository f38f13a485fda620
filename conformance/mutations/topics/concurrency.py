"""Mutations for the rules on concurrent commits in history
(conformance/validator/rules/concurrency.py).

Each plants a lost update: it rewrites one version's transaction so that its
writer appears to have read an older version, with a version it conflicts
with committed in between; the manifests stay as they are, so the version
looks committed over a change it had to fail on. The transaction file and
the copy embedded in the manifest are edited together. Versions are found by
their operation, not by number, so the base datasets can grow.
"""

from __future__ import annotations

from pathlib import Path

from reference_impl.newer_operations import ReserveRowIds
from reference_impl.transactions import (
    Append,
    CreateIndex,
    Delete,
    Merge,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    Transaction,
    Update,
)

from ..edit import edit_transaction, edit_untracked, versions_of
from ..registry import mutation

RULE = "history/lost-update"


def _read_just_before(root: Path, kind: type, crossed: type, *, which: int = 0, back: int = 0) -> None:
    """Make the ``which``-th version of operation ``kind`` that follows a
    version of operation ``crossed`` read the version before that one (or
    ``back`` versions earlier still): it then seems to have been committed
    over the ``crossed`` version without seeing it."""
    crossing = versions_of(root, crossed)
    version = [v for v in versions_of(root, kind) if any(c < v for c in crossing)][which]
    crossed_version = max(c for c in crossing if c < version)

    def edit(transaction: Transaction):
        transaction.read_version = max(0, crossed_version - 1 - back)

    edit_transaction(root, version, edit)


# -- over an Overwrite (the table's creation) ---------------------------------------------


@mutation(RULE, base="evolution", breaks="conflict.append-after-overwrite-incompatible")
def append_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, Append, Overwrite)


@mutation(RULE, breaks="conflict.delete-after-overwrite-incompatible")
def delete_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, Delete, Overwrite)


@mutation(RULE, breaks="conflict.create-index-after-overwrite-incompatible")
def index_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, CreateIndex, Overwrite)


@mutation(RULE, base="evolution", breaks="conflict.reserve-fragments-after-overwrite-or-restore-incompatible")
def reserve_ids_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, ReserveFragments, Overwrite)


@mutation(RULE, base="reserved_row_ids", breaks="conflict.reserve-row-ids-after-overwrite-or-restore-incompatible")
def reserve_row_ids_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, ReserveRowIds, Overwrite)


@mutation(
    RULE,
    base="evolution",
    breaks=(
        "conflict.merge-after-overwrite-restore-project-or-mem-wal-incompatible",
        "conflict.merge-after-fragment-change-retryable",
    ),
)
def add_a_column_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, Merge, Overwrite)


@mutation(
    RULE,
    base="evolution",
    breaks=(
        "conflict.project-after-overwrite-restore-or-mem-wal-incompatible",
        "conflict.project-after-project-or-merge-retryable",
    ),
)
def drop_a_column_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, Project, Overwrite)


@mutation(
    RULE,
    base="evolution",
    breaks=(
        "conflict.rewrite-after-overwrite-incompatible",
        "conflict.rewrite-after-fragment-change-overlapping-retryable",
        "conflict.rewrite-after-merge-retryable",
    ),
)
def compact_as_if_the_table_did_not_exist_yet(root):
    _read_just_before(root, Rewrite, Overwrite)


# -- over schema and fragment changes ----------------------------------------------------


@mutation(RULE, base="evolution", breaks="conflict.merge-after-fragment-change-retryable")
def add_a_column_over_an_update_it_did_not_see(root):
    _read_just_before(root, Merge, Update)


@mutation(RULE, base="evolution", breaks="conflict.project-after-project-or-merge-retryable")
def drop_a_column_over_an_added_one_it_did_not_see(root):
    _read_just_before(root, Project, Merge)


@mutation(RULE, base="evolution", breaks="conflict.rewrite-after-merge-retryable")
def compact_over_an_added_column_it_did_not_see(root):
    _read_just_before(root, Rewrite, Merge)


@mutation(RULE, base="legacy", breaks="conflict.delete-after-merge-overlapping-retryable")
def delete_over_an_added_column_it_did_not_see(root):
    _read_just_before(root, Delete, Merge)


@mutation(
    RULE,
    base="evolution",
    breaks=(
        "conflict.update-after-merge-retryable",
        "conflict.update-after-fragment-change-overlapping-retryable",
        "conflict.update-after-overwrite-or-restore-incompatible",
    ),
)
def update_over_an_added_column_it_did_not_see(root):
    _read_just_before(root, Update, Merge, which=-1)


# -- over a Restore and a Rewrite ----------------------------------------------------------


@mutation(
    RULE,
    base="evolution",
    breaks=("conflict.delete-after-restore-incompatible", "transaction.delete-after-restore-incompatible"),
)
def delete_over_a_restore_it_did_not_see(root):
    _read_just_before(root, Delete, Restore)


@mutation(
    RULE,
    base="evolution",
    breaks=(
        "conflict.delete-after-rewrite-overlapping-retryable",
        "conflict.delete-after-restore-incompatible",
        "transaction.delete-after-restore-incompatible",
    ),
)
def delete_over_a_compaction_it_did_not_see(root):
    _read_just_before(root, Delete, Rewrite, which=-1)


@mutation(RULE, base="evolution", breaks="conflict.update-after-overwrite-or-restore-incompatible")
def update_over_a_restore_it_did_not_see(root):
    _read_just_before(root, Update, Restore)


@mutation(
    RULE,
    base="evolution",
    breaks=(
        "conflict.update-after-fragment-change-overlapping-retryable",
        "transaction.update-after-rewrite-retryable",
        "conflict.update-after-overwrite-or-restore-incompatible",
    ),
)
def update_over_a_compaction_it_did_not_see(root):
    _read_just_before(root, Update, Rewrite, which=-1)


# -- over a version that records no transaction -------------------------------------------


@mutation("history/rebased-over-unrecorded", base="evolution")
def forget_the_reservation_a_compaction_was_committed_over(root):
    """The evolution base's Rewrite read the version before its
    ReserveFragments; that version now records no transaction."""
    (reserved,) = versions_of(root, ReserveFragments)
    edit_untracked(root, lambda manifest_file: None, reserved)
