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
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.storage import Storage
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
    TRANSACTIONS_DIR,
    Transaction,
    Update,
    UpdateBases,
    UpdateConfig,
    read_transaction_file,
)

from .mutate import edit_manifest, manifest_relpath, mutation


def _transactions(root) -> dict[int, Transaction]:
    storage = Storage(root)
    found = {}
    for version, relpath in sorted(list_versions(storage).manifests().items()):
        name = read_manifest_file(storage, relpath).manifest.transaction_file
        found[version] = read_transaction_file(storage, name)
    return found


def _versions_of(root, kind: type) -> list[int]:
    """Versions whose transaction is a ``kind``, oldest first."""
    return [v for v, t in _transactions(root).items() if isinstance(t.operation, kind)]


def _write_transaction(root, version: int, transaction: Transaction, *, old_name: str | None = None) -> None:
    """Store ``transaction`` as ``version``'s transaction, in its file and in
    the manifest's embedded copy (renaming the file when its name changes)."""
    name = transaction.file_name()
    directory = root / TRANSACTIONS_DIR
    if old_name and old_name != name:
        (directory / old_name).unlink()
    (directory / name).write_bytes(transaction.to_proto().SerializeToString())

    def edit(manifest_file):
        manifest_file.manifest.transaction_file = name
        if manifest_file.transaction is not None:
            manifest_file.transaction = transaction

    edit_manifest(root, edit, version)


def edit_transaction(root, version: int, edit) -> None:
    """Let ``edit`` change ``version``'s Transaction, then store it."""
    storage = Storage(root)
    name = read_manifest_file(storage, manifest_relpath(root, version)).manifest.transaction_file
    transaction = read_transaction_file(storage, name)
    edit(transaction)
    _write_transaction(root, version, transaction, old_name=name)


def edit_operation(root, kind: type, edit, *, which: int = 0) -> None:
    """Edit the operation of the ``which``-th version whose operation is a ``kind``."""
    version = _versions_of(root, kind)[which]
    edit_transaction(root, version, lambda transaction: edit(transaction.operation))


# -- one mutation per error rule ---------------------------------------------------------


@mutation("transaction/append")
def record_more_rows_than_the_append_added(root):
    def edit(operation: Append):
        operation.fragments[0].physical_rows += 1

    edit_operation(root, Append, edit)


@mutation("transaction/delete")
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
    version = _versions_of(root, ReserveFragments)[0]
    reserved = _transactions(root)[version].operation.num_fragments

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


@mutation("transaction/update", base="evolution")
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

    edit_transaction(root, _versions_of(root, UpdateConfig)[0], edit)


@mutation("transaction/update-bases")
def record_a_base_path_the_version_lacks(root):
    def edit(transaction: Transaction):
        transaction.operation = UpdateBases([BasePath(id=0, path="/elsewhere/data", is_dataset_root=False, name="x")])

    edit_transaction(root, _versions_of(root, UpdateConfig)[0], edit)


@mutation("transaction/uuid-unique")
def reuse_the_first_transactions_uuid(root):
    transactions = _transactions(root)
    first, second = sorted(transactions)[:2]

    def edit(transaction: Transaction):
        transaction.uuid = transactions[first].uuid

    edit_transaction(root, second, edit)


@mutation("transaction/rebase-conflicts", base="evolution")
def pretend_the_last_delete_raced_the_restore(root):
    restored = _versions_of(root, Restore)[0]
    later_delete = [v for v in _versions_of(root, Delete) if v > restored][0]

    def edit(transaction: Transaction):
        transaction.read_version = restored - 1

    edit_transaction(root, later_delete, edit)


@mutation("transaction/rebase-conflicts", base="evolution")
def pretend_the_last_update_raced_the_compaction(root):
    rewritten = _versions_of(root, Rewrite)[0]
    later_update = [v for v in _versions_of(root, Update) if v > rewritten][0]

    def edit(transaction: Transaction):
        transaction.read_version = rewritten - 1

    edit_transaction(root, later_update, edit)


@mutation("transaction/clone", base="shallow_clone")
def call_the_shallow_clone_deep(root):
    (version,) = _versions_of(root, Clone)

    def edit(transaction):
        transaction.operation.is_shallow = False

    edit_transaction(root, version, edit)
