"""Mutations for the rules comparing each version with the one before through
its transaction (conformance/validator/rules/transactions.py).

Most of them leave the manifests alone and make the recorded transaction
disagree with them: the transaction file and the copy embedded in the
manifest are edited together, so the two still agree and only the comparison
with the manifest breaks. Versions are found by their operation, not by
number, so the base datasets can grow.
"""

from __future__ import annotations

import uuid as uuid_module

from reference_impl.fragments import DataFile
from reference_impl.manifest import BasePath
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
    Update,
    UpdateBases,
    UpdateConfig,
)

from ..edit import edit_manifest, edit_operation, edit_transaction, transactions, versions_of
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


@mutation("transaction/update", base="evolution", breaks="transaction.enough-to-rebuild")
def record_more_rewritten_rows_than_the_update_added(root):
    def edit(operation: Update):
        operation.new_fragments[0].physical_rows += 1

    edit_operation(root, Update, edit)


@mutation("transaction/update-config")
def record_another_config_value(root):
    def edit(operation: UpdateConfig):
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


@mutation("transaction/rebase-conflicts", base="evolution", breaks="transaction.delete-after-restore-incompatible")
def pretend_the_last_delete_raced_the_restore(root):
    restored = versions_of(root, Restore)[0]
    later_delete = [v for v in versions_of(root, Delete) if v > restored][0]

    def edit(transaction: Transaction):
        transaction.read_version = restored - 1

    edit_transaction(root, later_delete, edit)


@mutation("transaction/rebase-conflicts", base="evolution", breaks="transaction.update-after-rewrite-retryable")
def pretend_the_last_update_raced_the_compaction(root):
    rewritten = versions_of(root, Rewrite)[0]
    later_update = [v for v in versions_of(root, Update) if v > rewritten][0]

    def edit(transaction: Transaction):
        transaction.read_version = rewritten - 1

    edit_transaction(root, later_update, edit)


@mutation("transaction/clone", base="shallow_clone")
def call_the_shallow_clone_deep(root):
    (version,) = versions_of(root, Clone)

    def edit(transaction):
        transaction.operation.is_shallow = False

    edit_transaction(root, version, edit)
