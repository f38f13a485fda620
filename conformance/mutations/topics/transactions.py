"""Mutations for the rules comparing each version with the one before through
its transaction (conformance/validator/rules/transactions.py and
table_operations.py).

Most of them leave the manifests alone and make the recorded transaction
disagree with them: the transaction file and the copy embedded in the
manifest are edited together, so the two still agree and only the comparison
with the manifest breaks. Versions are found by their operation, not by
number, so the base datasets can grow.
"""

from __future__ import annotations

import uuid as uuid_module
from pathlib import Path

import pyarrow as pa

from reference_impl.fragments import DataFile, DeletionFile, DeletionFileType, Fragment
from reference_impl.manifest import BasePath
from reference_impl.newer_operations import ReserveRowIds
from reference_impl.transactions import (
    Append,
    Clone,
    CreateIndex,
    DataReplacement,
    DataReplacementGroup,
    Delete,
    Merge,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    Transaction,
    UnknownOperation,
    Update,
    UpdateBases,
    UpdateConfig,
    UpdateMode,
)

from ..edit import edit_manifest, edit_operation, edit_transaction, edit_untracked, transactions, versions_of
from ..registry import mutation

# -- one mutation per error rule ---------------------------------------------------------


@mutation("transaction/append", breaks="transaction.append-keeps-existing")
def record_more_rows_than_the_append_added(root):
    def edit(operation: Append):
        operation.fragments[0].physical_rows += 1

    edit_operation(root, Append, edit)


@mutation("transaction/delete", breaks="transaction.delete-only-deletes")
def record_a_removed_fragment_the_version_keeps(root):
    def edit(operation: Delete):
        operation.deleted_fragment_ids.append(1)

    edit_operation(root, Delete, edit)


@mutation("transaction/overwrite")
def rename_a_field_in_the_recorded_schema(root):
    def edit(operation: Overwrite):
        operation.schema.fields[0].name = "renamed"

    edit_operation(root, Overwrite, edit)


@mutation("transaction/create-index")
def record_an_index_the_version_lacks(root):
    def edit(operation: CreateIndex):
        operation.new_indices[0].uuid = str(uuid_module.uuid4())

    edit_operation(root, CreateIndex, edit)


@mutation("transaction/rewrite", base="evolution")
def record_other_rows_for_the_rewritten_fragment(root):
    def edit(operation: Rewrite):
        operation.groups[0].new_fragments[0].physical_rows += 5

    edit_operation(root, Rewrite, edit)


@mutation("transaction/rewrite-ids-reserved", base="evolution", also=("transaction/reserve-fragments",))
def undo_the_reservation_before_the_rewrite(root):
    version = versions_of(root, ReserveFragments)[0]
    reserved = transactions(root)[version].operation.num_fragments

    def edit(manifest_file):
        manifest_file.manifest.max_fragment_id -= reserved

    edit_manifest(root, edit, version)


@mutation("transaction/merge", base="evolution")
def record_another_data_file_for_the_new_column(root):
    def edit(operation: Merge):
        operation.fragments[0].files[-1].path = "elsewhere.lance"

    edit_operation(root, Merge, edit)


@mutation("transaction/project", base="evolution")
def record_a_projection_that_drops_one_more_column(root):
    def edit(operation: Project):
        operation.schema.fields = [f for f in operation.schema.fields if f.name != "name"]

    edit_operation(root, Project, edit)


@mutation("transaction/restore", base="evolution")
def record_a_restore_of_another_version(root):
    def edit(operation: Restore):
        operation.version = 1

    edit_operation(root, Restore, edit)


@mutation("transaction/reserve-fragments", base="evolution")
def record_more_reserved_ids_than_were_set_aside(root):
    def edit(operation: ReserveFragments):
        operation.num_fragments += 2

    edit_operation(root, ReserveFragments, edit)


@mutation(
    "transaction/reserve-row-ids", base="reserved_row_ids", breaks="transaction.reserve-row-ids-advances-next-row-id"
)
def record_more_reserved_row_ids_than_were_set_aside(root):
    def edit(operation: ReserveRowIds):
        operation.num_row_ids += 7

    edit_operation(root, ReserveRowIds, edit)


@mutation("transaction/reserve-row-ids", base="plain", breaks="transaction.reserve-row-ids-needs-stable-row-ids")
def record_a_row_id_reservation_on_a_table_without_stable_row_ids(root):
    """The plain base has no stable row ids; its last version (an
    UpdateConfig, which changes no fragment and leaves next_row_id at 0) is
    recorded as a reservation of no ids instead."""
    (version,) = versions_of(root, UpdateConfig)[-1:]
    edit_transaction(root, version, lambda transaction: setattr(transaction, "operation", ReserveRowIds(0)))


@mutation("transaction/update", base="evolution", breaks="transaction.enough-to-rebuild")
def record_more_rewritten_rows_than_the_update_added(root):
    def edit(operation: Update):
        operation.new_fragments[0].physical_rows += 1

    edit_operation(root, Update, edit)


@mutation("transaction/update-config")
def record_another_config_value(root):
    def edit(operation: UpdateConfig):
        assert operation.config_updates is not None  # the base dataset's UpdateConfig sets config
        operation.config_updates.entries[0].value = "someone-else"

    edit_operation(root, UpdateConfig, edit)


@mutation("transaction/data-replacement")
def record_a_data_replacement_the_version_lacks(root):
    def edit(transaction: Transaction):
        replacement = DataFile("replacement.lance", fields=[1], column_indices=[0])
        transaction.operation = DataReplacement([DataReplacementGroup(0, replacement)])

    edit_transaction(root, versions_of(root, UpdateConfig)[0], edit)


@mutation("transaction/update-bases")
def record_a_base_path_the_version_lacks(root):
    def edit(transaction: Transaction):
        transaction.operation = UpdateBases([BasePath(id=0, path="/elsewhere/data", is_dataset_root=False, name="x")])

    edit_transaction(root, versions_of(root, UpdateConfig)[0], edit)


@mutation("transaction/uuid-unique")
def reuse_the_first_transactions_uuid(root):
    recorded = transactions(root)
    first, second = sorted(recorded)[:2]

    def edit(transaction: Transaction):
        transaction.uuid = recorded[first].uuid

    edit_transaction(root, second, edit)


@mutation("transaction/clone", base="shallow_clone")
def call_the_shallow_clone_deep(root):
    (version,) = versions_of(root, Clone)

    def edit(transaction):
        transaction.operation.is_shallow = False

    edit_transaction(root, version, edit)


@mutation("transaction/append", breaks="history.serial-history")
def record_an_append_for_the_delete(root):
    """The Delete's version changed a fragment's deletions, which an Append
    of nothing does not do: the version is not its transaction applied to
    the version before."""

    def edit(transaction: Transaction):
        transaction.operation = Append(fragments=[])

    edit_transaction(root, versions_of(root, Delete)[0], edit)


@mutation("transaction/delete", breaks="transaction.delete-fragments-exist")
def record_a_removed_fragment_that_never_existed(root):
    def edit(operation: Delete):
        operation.deleted_fragment_ids.append(99)

    edit_operation(root, Delete, edit)


@mutation("transaction/delete", breaks="transaction.concurrent-deletes-merge")
def keep_the_later_deletes_vector_unmerged(root):
    """Two pylance Deletes read the same version and delete rows of fragment
    0 (which already has deletions, ids 0..2): the first commits ids 5..8,
    the second (id 9) conflicts and is rebased, merging the first's vector
    into its own. pylance leaves the second's unmerged deletion file in
    ``_deletions``; the second version is pointed at it, as if it had not
    merged, so the rows 5..8 come back."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    deletions = Path(root) / "_deletions"
    first, second = lance.dataset(root), lance.dataset(root)
    first.delete("id >= 5 AND id < 9")
    before = {p.name for p in deletions.iterdir()}
    second.delete("id = 9")
    (unmerged,) = [p.name for p in deletions.iterdir() if p.name not in before and p.suffix == ".arrow"]
    fragment_id, read_version, file_id = (int(part) for part in unmerged.removesuffix(".arrow").split("-"))

    def edit(manifest_file):
        fragment = next(f for f in manifest_file.manifest.fragments if f.id == fragment_id)
        fragment.deletion_file = DeletionFile(DeletionFileType.ARROW_ARRAY, read_version, file_id, 4)

    edit_manifest(root, edit)


@mutation("transaction/update", breaks="transaction.update-modes")
def record_a_column_rewrite_as_a_row_rewrite(root):
    """pylance commits a merge_insert that only updates the ``name`` of
    matched rows as a REWRITE_COLUMNS Update: fragment 0 gets a data file
    for the column. Recorded as REWRITE_ROWS, the Update must not have
    touched the fragment's data files."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    changed = pa.table({"id": pa.array([10, 11], pa.int64()), "name": ["ten", "eleven"]})
    lance.dataset(root).merge_insert("id").when_matched_update_all().execute(changed)

    def edit(operation: Update):
        assert operation.update_mode == UpdateMode.REWRITE_COLUMNS
        operation.update_mode = UpdateMode.REWRITE_ROWS

    edit_operation(root, Update, edit, which=-1)


@mutation("transaction/file-decodes", breaks="transaction.name-read-version-matches")
def name_the_transaction_file_after_another_read_version(root):
    # The reference reader refuses a transaction file whose name and content
    # disagree, so it is transaction/file-decodes that reports this.
    version = versions_of(root, UpdateConfig)[0]
    transaction = transactions(root)[version]
    old_name = transaction.file_name()
    new_name = f"{transaction.read_version - 1}-{transaction.uuid}.txn"
    directory = Path(root) / "_transactions"
    (directory / old_name).rename(directory / new_name)

    def edit(manifest_file):
        manifest_file.manifest.transaction_file = new_name

    edit_manifest(root, edit, version)


# -- warnings and infos ----------------------------------------------------------------


@mutation("transaction/delete-predicate")
def drop_the_delete_predicate(root):
    def edit(operation: Delete):
        operation.predicate = ""

    edit_operation(root, Delete, edit)


@mutation("transaction/unknown-operation")
def record_no_operation_for_the_config_update(root):
    """Only in the transaction file: pylance 14 also embeds the transaction
    in the manifest, where a transaction without an operation is a defect of
    its own (manifest/transaction-section-not-empty), so that copy goes."""
    version = versions_of(root, UpdateConfig)[0]

    def forget_the_embedded_copy(manifest_file):
        manifest_file.transaction = None

    edit_manifest(root, forget_the_embedded_copy, version)

    def edit(transaction: Transaction):
        transaction.operation = UnknownOperation()

    edit_transaction(root, version, edit)


@mutation("transaction/rewrite-old-fragments-exist", base="evolution")
def rewrite_a_fragment_that_never_existed(root):
    def edit(operation: Rewrite):
        operation.groups[0].old_fragments.append(Fragment(99, [DataFile("gone.lance", [0])], 5))

    edit_operation(root, Rewrite, edit)


@mutation("transaction/update-row-count", base="evolution")
def upsert_rows_through_an_update(root):
    """pylance commits a merge_insert that updates two rows and inserts two
    as one Update (the latest version restores version 3's columns ``id``,
    ``name`` and ``point``; ids 0..39 exist)."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    ids = [38, 39, 40, 41]
    incoming = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"upserted {i}" for i in ids],
            "point": [{"x": float(i), "y": -float(i)} for i in ids],
        }
    )
    lance.dataset(root).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(incoming)


@mutation("transaction/file-missing", breaks=("transaction.file-written", "transaction.file-may-be-absent"))
def commit_the_latest_version_without_a_transaction(root):
    edit_untracked(root, lambda manifest_file: None)
