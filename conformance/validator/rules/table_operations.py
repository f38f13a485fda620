"""Rules on what each version's transaction did around the table's rows
(transaction specification: transaction types CreateIndex, Restore,
ReserveFragments, ReserveRowIds, UpdateConfig, UpdateBases, Clone; conflict
resolution), and the checks that hold whatever the operation (rebased transactions, unknown
operations, unique transaction uuids).

Like :mod:`conformance.validator.rules.transactions`, every rule compares the
manifest of version ``v`` with that of ``v - 1`` through the operation
recorded for ``v``, on summaries built once per run; versions whose
neighbour is missing or does not decode are skipped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from reference_impl import feature_flags
from reference_impl.commit import apply_update_map
from reference_impl.manifest import BasePath
from reference_impl.newer_operations import ReserveRowIds
from reference_impl.schema import Schema
from reference_impl.transactions import (
    Clone,
    CreateIndex,
    ReserveFragments,
    Restore,
    UnknownOperation,
    UpdateBases,
    UpdateConfig,
    UpdateMap,
)

from ..context import DatasetView, VersionView
from ..facts.changes import (
    differing_keys,
    same_fields,
    same_fragments,
    same_schema,
)
from ..facts.text import listed
from ..facts.transactions import (
    VersionState,
    clone_source_bases,
    operation_of,
    recorded_transaction,
    version_state,
)
from ..registry import Scope, Severity, rule

# -- CreateIndex -----------------------------------------------------------------------


@rule(
    "transaction/create-index",
    severity=Severity.ERROR,
    requirements=("transaction.create-index-only-indices",),
    summary="A CreateIndex changes only index metadata, as recorded; fragments and schema stay as they were",
)
def create_index(view: VersionView):
    found = operation_of(view, CreateIndex)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: CreateIndex = transaction.operation
    for message in same_fragments(previous, current):
        yield message, view.at("fragments")
    if not same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s", view.at("schema")
    in_section = {i.uuid for i in current.indices}
    created = {i.uuid for i in operation.new_indices}
    removed = {i.uuid for i in operation.removed_indices} - created
    absent = created - in_section
    if absent:
        yield (
            f"index(es) {listed(absent, sort=True)} the CreateIndex adds are not in the index section",
            view.at("index_section"),
        )
    kept = removed & in_section
    if kept:
        yield f"index(es) {listed(kept, sort=True)} the CreateIndex removes are still listed", view.at("index_section")
    # An index replaced under its name (the reference writer's convention) may
    # go without being listed among removed_indices.
    replaced_names = {i.name for i in operation.new_indices}
    vanished = {
        i.uuid
        for i in previous.indices
        if i.uuid not in in_section and i.uuid not in removed and i.name not in replaced_names
    }
    if vanished:
        yield (
            f"index(es) {listed(vanished, sort=True)} of version {previous.version} disappeared, though the "
            "CreateIndex does not "
            "remove them",
            view.at("index_section"),
        )


# -- Restore ---------------------------------------------------------------------------


@rule(
    "transaction/restore",
    severity=Severity.ERROR,
    requirements=("transaction.restore-earlier-state",),
    summary="A Restore gives the version the schema, fragments, indices and config of the earlier version it names",
)
def restore(view: VersionView):
    found = operation_of(view, Restore)
    if found is None:
        return
    transaction, where, current, previous = found
    target = transaction.operation.version
    if target >= view.version:
        yield f"the Restore names version {target}, which is not earlier than {view.version}", where
        return
    source = version_state(view.dataset, target)
    if source is None:
        return  # cleaned up, or unreadable: nothing to compare with
    differences = []
    if not same_schema(current.schema, source.schema):
        differences.append("schema")
    if current.fragments != source.fragments:
        differences.append(f"fragments (ids {listed(differing_keys(source.fragments, current.fragments), sort=True)})")
    if {i.uuid for i in current.indices} != {i.uuid for i in source.indices}:
        differences.append("indices")
    if current.manifest.config != source.manifest.config:
        differences.append("config")
    if current.manifest.table_metadata != source.manifest.table_metadata:
        differences.append("table metadata")
    if differences:
        yield f"the restored content differs from version {target} in: {', '.join(differences)}", view.at("fragments")


# -- ReserveFragments ------------------------------------------------------------------


@rule(
    "transaction/reserve-fragments",
    severity=Severity.ERROR,
    requirements=("transaction.reserve-fragments-raises-max",),
    summary="A ReserveFragments raises max_fragment_id by exactly the number reserved and changes nothing else",
)
def reserve_fragments(view: VersionView):
    found = operation_of(view, ReserveFragments)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    number = transaction.operation.num_fragments
    before = previous.effective_max_fragment_id
    expected = (before if before is not None else -1) + number
    got = current.manifest.max_fragment_id
    if (got if got is not None else -1) != expected:
        yield (
            f"max_fragment_id is {got}, but version {previous.version}'s {before} plus the {number} reserved "
            f"fragment id(s) is {expected}",
            view.at("max_fragment_id"),
        )
    for message in same_fragments(previous, current):
        yield message, view.at("fragments")
    if not same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s", view.at("schema")


# -- ReserveRowIds ---------------------------------------------------------------------


@rule(
    "transaction/reserve-row-ids",
    severity=Severity.ERROR,
    requirements=(
        "transaction.reserve-row-ids-advances-next-row-id",
        "transaction.reserve-row-ids-needs-stable-row-ids",
    ),
    summary="A ReserveRowIds, on a table with stable row ids, raises next_row_id by exactly the number reserved and "
    "changes no fragment",
)
def reserve_row_ids(view: VersionView):
    # Transaction page, "ReserveRowIds" (newest state read 2026-11-29).
    found = operation_of(view, ReserveRowIds)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    if not previous.manifest.reader_feature_flags & feature_flags.STABLE_ROW_IDS:
        yield (
            f"a ReserveRowIds was committed on version {previous.version}, which has no stable row ids to reserve",
            where,
        )
    number = transaction.operation.num_row_ids
    expected = previous.manifest.next_row_id + number
    if current.manifest.next_row_id != expected:
        yield (
            f"next_row_id is {current.manifest.next_row_id}, but version {previous.version}'s "
            f"{previous.manifest.next_row_id} plus the {number} reserved row id(s) is {expected}",
            view.at("next_row_id"),
        )
    for message in same_fragments(previous, current):
        yield message, view.at("fragments")


# -- UpdateConfig ----------------------------------------------------------------------


def _apply(current: dict, update: UpdateMap | None, *, encode: bool = False) -> dict:
    """A copy of ``current`` with ``update`` applied as a commit applies it
    (the reference implementation's own function, so the two cannot drift)."""
    result = dict(current)
    apply_update_map(result, update, encode=encode)
    return result


def _encoded(values: dict[str, str]) -> dict[str, bytes]:
    return {k: v.encode() for k, v in values.items()}


def _without_metadata(schema: Schema) -> list:
    # The primary key flags go with the metadata: pylance declares a key by
    # field metadata (lance-schema:unenforced-primary-key[:position]) in an
    # UpdateConfig and mirrors it into the proto fields (table overview page).
    return [
        replace(f, metadata={}, unenforced_primary_key=False, unenforced_primary_key_position=0) for f in schema.fields
    ]


def _same_fields_but_metadata(a: Schema, b: Schema) -> bool:
    """Fields equal in everything but their metadata and their recorded
    ``type``: the role follows from the logical type, and pylance 14 writes
    every field as PARENT, so its UpdateConfig on top of a version that
    records the schema format page's roles rewrites them (see
    :func:`~conformance.validator.facts.changes.same_fields`)."""
    return same_fields(_without_metadata(a), _without_metadata(b))


@rule(
    "transaction/update-config",
    severity=Severity.ERROR,
    requirements=("transaction.update-config-no-data",),
    summary="An UpdateConfig changes config and metadata exactly as recorded, and no fragment or field type",
)
def update_config(view: VersionView):
    found = operation_of(view, UpdateConfig)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: UpdateConfig = transaction.operation
    for message in same_fragments(previous, current):
        yield message, view.at("fragments")
    if not _same_fields_but_metadata(current.schema, previous.schema):
        yield f"fields changed from version {previous.version} beyond their metadata", view.at("schema")

    config = _apply(previous.manifest.config, operation.config_updates)
    config.update(operation.upsert_values)
    for key in operation.delete_keys:
        config.pop(key, None)
    if current.manifest.config != config:
        yield (
            f"the config is not version {previous.version}'s with the recorded changes applied "
            f"(keys differing: {listed(differing_keys(config, current.manifest.config), sort=True)})",
            view.at("config"),
        )
    table_metadata = _apply(previous.manifest.table_metadata, operation.table_metadata_updates)
    if current.manifest.table_metadata != table_metadata:
        yield (
            f"the table metadata is not version {previous.version}'s with the recorded changes applied "
            f"(keys differing: {listed(differing_keys(table_metadata, current.manifest.table_metadata), sort=True)})",
            view.at("table_metadata"),
        )
    # The deprecated maps replace (older pylance) or merge (the reference
    # writer); either reading is accepted.
    merged = _apply(previous.schema.metadata, operation.schema_metadata_updates, encode=True)
    accepted = [{**merged, **_encoded(operation.schema_metadata)}]
    if operation.schema_metadata:
        accepted.append(_encoded(operation.schema_metadata))
    if current.schema.metadata not in accepted:
        yield (
            f"the schema metadata is not version {previous.version}'s with the recorded changes applied",
            view.at("schema_metadata"),
        )
    yield from _field_metadata(view, operation, previous, current)


def _field_metadata(view: VersionView, operation: UpdateConfig, previous: VersionState, current: VersionState):
    named = set(operation.field_metadata_updates) | set(operation.field_metadata)
    unknown = [i for i in named if previous.schema.field_by_id(i) is None]
    if unknown:
        yield (
            f"the UpdateConfig changes metadata of field(s) {listed(unknown, sort=True)}, which do not exist",
            view.at("schema"),
        )
    wrong = []
    for field in previous.schema.fields:
        after = current.schema.field_by_id(field.id)
        if after is None:
            continue  # the field comparison above reports it
        merged = _apply(field.metadata, operation.field_metadata_updates.get(field.id), encode=True)
        legacy = operation.field_metadata.get(field.id)
        accepted = [{**merged, **_encoded(legacy or {})}]
        if legacy:
            accepted.append(_encoded(legacy))
        if after.metadata not in accepted:
            wrong.append(field.id)
    if wrong:
        yield (
            f"the metadata of field(s) {listed(wrong, sort=True)} is not what the recorded changes make of it",
            view.at("schema"),
        )


# -- UpdateBases -----------------------------------------------------------------------


def _base_key(base: BasePath) -> tuple:
    """A base path as recorded: the id is assigned when the manifest is built."""
    return base.path, base.name, base.is_dataset_root


@rule(
    "transaction/update-bases",
    severity=Severity.ERROR,
    requirements=("transaction.update-bases-adds-only",),
    summary="An UpdateBases adds the recorded base paths and changes no existing entry or fragment",
)
def update_bases(view: VersionView):
    found = operation_of(view, UpdateBases)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    old = {b.id: b for b in previous.manifest.base_paths}
    new = {b.id: b for b in current.manifest.base_paths}
    altered = [i for i in old if new.get(i) != old[i]]
    if altered:
        yield (
            f"base path(s) {listed(altered, sort=True)} of version {previous.version} were removed or changed",
            view.at("base_paths"),
        )
    added = Counter(_base_key(b) for i, b in new.items() if i not in old)
    wanted = Counter(_base_key(b) for b in transaction.operation.new_bases)
    if added != wanted:
        yield (
            f"the version adds base path(s) {listed((p for p, _, _ in added), sort=True) or 'none'}, the UpdateBases "
            "records "
            f"{listed((p for p, _, _ in wanted), sort=True) or 'none'}",
            view.at("base_paths"),
        )
    for message in same_fragments(previous, current):
        yield message, view.at("fragments")


# -- Clone -----------------------------------------------------------------------------


@rule(
    "transaction/clone",
    severity=Severity.ERROR,
    requirements=("transaction.clone-shallow-or-deep",),
    summary="A shallow Clone declares a base path for its source and stores no data file of its own; "
    "a deep Clone copied the files and uses no base path of the source",
)
def clone(view: VersionView):
    found = recorded_transaction(view)
    if found is None or not isinstance(found[0].operation, Clone):
        return
    operation: Clone = found[0].operation
    manifest = view.manifest
    source = clone_source_bases(manifest, operation)
    files = [(f.id, d) for f in manifest.fragments for d in f.files]
    if operation.is_shallow:
        if operation.ref_path and not source:
            declared = listed((repr(b.path) for b in manifest.base_paths), sort=True) or "none"
            yield (
                f"the shallow Clone of '{operation.ref_path}' declares no base path for it (base paths: {declared}); "
                "a shallow clone reaches the source's files through base_paths",
                view.at("base_paths"),
            )
        local = sorted({fragment_id for fragment_id, d in files if d.base_id is None})
        if local:
            yield (
                f"fragment(s) {listed(local, sort=True)} of the shallow Clone have data files in the clone's own "
                "directory; a "
                "shallow clone copies metadata only and reaches every data file through a base path",
                view.at("fragments"),
            )
    elif source:
        using = sorted({fragment_id for fragment_id, d in files if d.base_id in source})
        yield (
            f"the deep Clone declares base path(s) {listed(source, sort=True)} for its source '{operation.ref_path}'"
            + (f", and fragment(s) {listed(using, sort=True)} read their data files from it" if using else "")
            + "; a deep clone copies the files themselves",
            view.at("base_paths"),
        )


# -- whatever the operation -------------------------------------------------------------


@rule(
    "transaction/unknown-operation",
    severity=Severity.WARNING,
    requirements=("transaction.single-operation",),
    summary="The transaction carries one known operation (concurrent writers must treat others as conflicting)",
)
def unknown_operation(view: VersionView):
    found = recorded_transaction(view)
    if found is None or not isinstance(found[0].operation, UnknownOperation):
        return
    numbers = found[0].operation.field_numbers
    what = (
        f"an operation this specification does not know (field {listed(numbers, sort=True)})"
        if numbers
        else "no operation"
    )
    yield f"the transaction carries {what}; concurrent writers must treat it as conflicting", found[1]


@rule(
    "transaction/uuid-unique",
    severity=Severity.ERROR,
    requirements=("transaction.uuid-unique",),
    summary="No two validated versions' transactions share a uuid (all of them with --all-versions)",
    scope=Scope.DATASET,
)
def uuid_unique(dataset: DatasetView):
    # The versions this run validates: with --all-versions the whole retained
    # history, without it no manifest beyond the selected ones is decoded.
    present = dataset.manifest_paths()
    owners: dict[str, list[int]] = {}
    for version in sorted(v for v in (dataset.selected_versions or present) if v in present):
        view = dataset.version_view(version)
        found = recorded_transaction(view) if view is not None else None
        if found is not None and found[0].uuid:
            owners.setdefault(found[0].uuid, []).append(version)
    for uuid, versions in sorted(owners.items(), key=lambda item: item[1]):
        if len(versions) > 1:
            yield (
                f"versions {listed(versions, sort=True)} record transactions with the same uuid {uuid}",
                "_transactions",
            )
