"""Rules on what each version's transaction did to the table's rows
(transaction specification: transaction types Append, Delete, Overwrite,
Rewrite, Merge, Project, Update, DataReplacement).

A version's manifest must be what its transaction's operation makes of the
version before it. These rules compare the manifest of version ``v`` with the
manifest of ``v - 1`` through the operation recorded for ``v`` (the transaction
file, else the copy embedded in the manifest). When the transaction was built
on an older version (its ``read_version`` is below ``v - 1``) the writer rebased
it; the committed result must still apply the operation to ``v - 1``, so the
comparison is the same, except that recorded deletion files may then differ
from the committed ones (a rebased delete merges the deletions committed in
between). A data file whose every field is tombstoned holds nothing a reader
reads; pylance 14 leaves such files out of the manifests it writes, so
fragments are compared without them (:func:`conformance.validator.facts.changes.live_paths`).

Each operation has its own rule, so a finding names what went wrong. Every
rule is bounded: per-version summaries are built once per run
(:mod:`conformance.validator.facts.transactions`) and fragments are compared
through dicts and multisets keyed by id or by (physical rows, data file
paths) (:mod:`conformance.validator.facts.changes`). Versions whose neighbour
is missing or does not decode are skipped; other rules report why. The
operations that leave the rows alone are checked in
:mod:`conformance.validator.rules.table_operations`.
"""

from __future__ import annotations

from reference_impl.fragments import Fragment
from reference_impl.transactions import (
    Append,
    DataReplacement,
    Delete,
    Merge,
    Overwrite,
    Project,
    Rewrite,
    Update,
    UpdateMode,
)

from ..context import VersionView
from ..facts.changes import (
    all_tombstoned,
    compare_new_fragments,
    differing_keys,
    fragment_paths,
    fragment_shape,
    live_paths,
    named_fragments,
    same_fields,
    same_rows_per_fragment,
    same_schema,
    untouched,
)
from ..facts.text import listed
from ..facts.transactions import (
    live_rows,
    operation_of,
    rebased,
    recorded_transaction,
    rewrite_groups,
    version_state,
)
from ..registry import Severity, rule

# -- Append ---------------------------------------------------------------------------


@rule(
    "transaction/append",
    severity=Severity.ERROR,
    requirements=("transaction.append-keeps-existing", "history.serial-history"),
    summary="An Append keeps every fragment of the version before and adds exactly the recorded fragments",
)
def append(view: VersionView):
    found = operation_of(view, Append)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    for message in untouched(previous, current, set()):
        yield message, view.at("fragments")
    added = [current.fragments[i] for i in sorted(set(current.fragments) - set(previous.fragments))]
    problem = compare_new_fragments(transaction.operation.fragments, added, "appends")
    if problem:
        yield problem, view.at("fragments")
    if not same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; an Append does not change it", view.at("schema")


# -- Delete ----------------------------------------------------------------------------


@rule(
    "transaction/delete",
    severity=Severity.ERROR,
    requirements=(
        "transaction.delete-only-deletes",
        "transaction.delete-fragments-exist",
        "transaction.concurrent-deletes-merge",
    ),
    summary="A Delete only removes the fragments it lists and adds deletions to the ones it updates",
)
def delete(view: VersionView):
    found = operation_of(view, Delete)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: Delete = transaction.operation
    removed = set(operation.deleted_fragment_ids)
    updated = {f.id: f for f in operation.updated_fragments}
    before, after = set(previous.fragments), set(current.fragments)

    yield from named_fragments(view, where, previous, current, removed, set(updated), "Delete", "updates")

    rebuilt, fewer, other_file = [], [], []
    for fragment_id in sorted((set(updated) - removed) & before & after):
        old, new = previous.fragments[fragment_id], current.fragments[fragment_id]
        if new.physical_rows != old.physical_rows or live_paths(new) != live_paths(old):
            rebuilt.append(fragment_id)
        if new.num_deleted_rows < old.num_deleted_rows:
            fewer.append(fragment_id)
        if not rebased(transaction, view.version) and new.deletion_file != updated[fragment_id].deletion_file:
            other_file.append(fragment_id)
    if rebuilt:
        yield (
            f"the Delete changed the data files or physical rows of fragment(s) {listed(rebuilt, sort=True)}",
            view.at("fragments"),
        )
    if fewer:
        yield (
            f"fragment(s) {listed(fewer, sort=True)} have fewer deleted rows than in version {previous.version}",
            view.at("fragments"),
        )
    if other_file:
        yield (
            f"fragment(s) {listed(other_file, sort=True)} do not have the deletion file the Delete records for them",
            view.at("fragments"),
        )
    added = after - before
    if added:
        yield f"the Delete added fragment(s) {listed(added, sort=True)}", view.at("fragments")
    for message in untouched(previous, current, removed | set(updated)):
        yield message, view.at("fragments")
    if not same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; a Delete does not change it", view.at("schema")


@rule(
    "transaction/delete-predicate",
    severity=Severity.WARNING,
    requirements=("transaction.delete-records-predicate",),
    summary="A Delete records the predicate it evaluated",
)
def delete_predicate(view: VersionView):
    found = recorded_transaction(view)
    if found is not None and isinstance(found[0].operation, Delete) and not found[0].operation.predicate:
        yield "the Delete records no predicate (concurrent writers cannot check it for conflicts)", found[1]


# -- Overwrite -------------------------------------------------------------------------


@rule(
    "transaction/overwrite",
    severity=Severity.ERROR,
    requirements=("transaction.overwrite-replaces-table",),
    summary="An Overwrite leaves the recorded schema and fragments, and the previous config with its upserts",
)
def overwrite(view: VersionView):
    found = operation_of(view, Overwrite)
    if found is None:
        return
    transaction, where, current, previous = found
    operation: Overwrite = transaction.operation
    problem = compare_new_fragments(operation.fragments, list(current.fragments.values()), "writes")
    if problem:
        yield problem, view.at("fragments")
    if not same_fields(current.schema.fields, operation.schema.fields):
        yield "the schema's fields are not the ones the Overwrite records", view.at("schema")
    # pylance never fills Overwrite.schema_metadata (docs/spec-discrepancies.md):
    # empty recorded metadata says nothing.
    elif operation.schema.metadata and current.schema.metadata != operation.schema.metadata:
        yield "the schema metadata is not the one the Overwrite records", view.at("schema_metadata")
    if previous is not None:
        expected = {**previous.manifest.config, **operation.config_upsert_values}
        if current.manifest.config != expected:
            yield (
                f"the config is not version {previous.version}'s config with the Overwrite's upserts merged in"
                f" (keys differing: {listed(differing_keys(expected, current.manifest.config), sort=True)})",
                view.at("config"),
            )
    declared = {(b.path, b.name, b.is_dataset_root) for b in current.manifest.base_paths}
    undeclared = [b.path for b in operation.initial_bases if (b.path, b.name, b.is_dataset_root) not in declared]
    if undeclared:
        yield (
            f"base path(s) {listed(undeclared, sort=True)} the Overwrite declares are not in the manifest",
            view.at("base_paths"),
        )


# -- Rewrite ---------------------------------------------------------------------------


@rule(
    "transaction/rewrite",
    severity=Severity.ERROR,
    requirements=("transaction.rewrite-keeps-content",),
    summary="A Rewrite replaces its old fragments by the recorded new ones and keeps schema and visible rows",
)
def rewrite(view: VersionView):
    found = operation_of(view, Rewrite)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    old_ids, new_fragments = set(), {}
    for old, new in rewrite_groups(transaction.operation):
        old_ids |= {f.id for f in old}
        new_fragments.update({f.id: f for f in new})
    before, after = set(previous.fragments), set(current.fragments)

    still_there = (old_ids & after) - set(new_fragments)
    if still_there:
        yield (
            f"old fragment(s) {listed(still_there, sort=True)} the Rewrite replaces are still in the version",
            view.at("fragments"),
        )
    missing = set(new_fragments) - after
    if missing:
        yield (
            f"new fragment(s) {listed(missing, sort=True)} the Rewrite records are not in the version",
            view.at("fragments"),
        )
    differing = [
        i
        for i in set(new_fragments) & after
        if fragment_shape(current.fragments[i]) != fragment_shape(new_fragments[i])
    ]
    if differing:
        yield (
            f"new fragment(s) {listed(differing, sort=True)} differ from the Rewrite's record (physical rows or data "
            "files)",
            view.at("fragments"),
        )
    unrecorded = after - before - set(new_fragments)
    if unrecorded:
        yield (
            f"fragment(s) {listed(unrecorded, sort=True)} were added, though the Rewrite does not record them",
            view.at("fragments"),
        )
    for message in untouched(previous, current, old_ids | set(new_fragments)):
        yield message, view.at("fragments")
    if not same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; a Rewrite keeps it", view.at("schema")
    rows_before, rows_after = live_rows(view.dataset, previous), live_rows(view.dataset, current)
    if rows_before is not None and rows_after is not None and rows_before != rows_after:
        yield (
            f"the Rewrite changed the visible rows from {rows_before} (version {previous.version}) to {rows_after}",
            view.at("fragments"),
        )


@rule(
    "transaction/rewrite-ids-reserved",
    severity=Severity.ERROR,
    requirements=("transaction.rewrite-ids-reserved",),
    summary="A Rewrite's new fragment ids were reserved: none exceeds the previous version's max_fragment_id",
)
def rewrite_ids_reserved(view: VersionView):
    found = operation_of(view, Rewrite)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    new_ids = {f.id for _, new in rewrite_groups(transaction.operation) for f in new}
    new_ids = {i for i in new_ids if i not in previous.fragments}
    limit = previous.effective_max_fragment_id
    unreserved = {i for i in new_ids if limit is None or i > limit}
    if unreserved:
        yield (
            f"new fragment id(s) {listed(unreserved, sort=True)} exceed max_fragment_id {limit} of version "
            f"{previous.version}: "
            "no ReserveFragments set them aside before the Rewrite",
            where,
        )


@rule(
    "transaction/rewrite-old-fragments-exist",
    severity=Severity.WARNING,
    requirements=("transaction.rewrite-old-fragments-exist",),
    summary="The old fragments of a Rewrite exist in the version it read",
)
def rewrite_old_fragments_exist(view: VersionView):
    found = operation_of(view, Rewrite)
    if found is None:
        return
    transaction, where, current, previous = found
    read = version_state(view.dataset, transaction.read_version) if transaction.read_version < view.version else None
    basis = read or previous
    if basis is None:
        return
    old_ids = {f.id for old, _ in rewrite_groups(transaction.operation) for f in old}
    absent = old_ids - set(basis.fragments)
    if absent:
        yield f"old fragment(s) {listed(absent, sort=True)} of the Rewrite are not in version {basis.version}", where


# -- Merge and Project -----------------------------------------------------------------


@rule(
    "transaction/merge",
    severity=Severity.ERROR,
    requirements=("transaction.merge-covers-every-fragment",),
    summary="A Merge keeps every fragment and its rows and leaves the recorded data files and schema",
)
def merge(view: VersionView):
    found = operation_of(view, Merge)
    if found is None:
        return
    transaction, where, current, previous = found
    operation: Merge = transaction.operation
    if previous is not None:
        for message in same_rows_per_fragment(previous, current, "a Merge"):
            yield message, view.at("fragments")
    recorded = {f.id: f for f in operation.fragments}
    unrecorded = set(current.fragments) - set(recorded)
    if unrecorded:
        yield (
            f"fragment(s) {listed(unrecorded, sort=True)} are not among the fragments the Merge records",
            view.at("fragments"),
        )
    dropped = set(recorded) - set(current.fragments)
    if dropped:
        yield f"fragment(s) {listed(dropped, sort=True)} the Merge records are not in the version", view.at("fragments")
    differing = [
        i for i in set(recorded) & set(current.fragments) if live_paths(current.fragments[i]) != live_paths(recorded[i])
    ]
    if differing:
        yield (
            f"fragment(s) {listed(differing, sort=True)} do not have the data files the Merge records",
            view.at("fragments"),
        )
    if not same_fields(current.schema.fields, operation.schema.fields):
        yield "the schema's fields are not the ones the Merge records", view.at("schema")
    # pylance never fills Merge.schema_metadata and keeps the previous
    # metadata (docs/spec-discrepancies.md); the reference writer applies the
    # recorded (then empty) map. Recorded metadata must be the result.
    accepted = [operation.schema.metadata]
    if not operation.schema.metadata and previous is not None:
        accepted.append(previous.schema.metadata)
    if current.schema.metadata not in accepted:
        yield (
            "the schema metadata is neither the one the Merge records nor the previous one",
            view.at("schema_metadata"),
        )


@rule(
    "transaction/project",
    severity=Severity.ERROR,
    requirements=("transaction.project-metadata-only",),
    summary="A Project changes the schema alone: same fragments, no data file new or changed",
)
def project(view: VersionView):
    found = operation_of(view, Project)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    for message in same_rows_per_fragment(previous, current, "a Project"):
        yield message, view.at("fragments")
    remaining = set(current.schema.field_ids())
    changed, dropped, deletions = [], [], []
    for fragment_id in sorted(set(previous.fragments) & set(current.fragments)):
        old, new = previous.fragments[fragment_id], current.fragments[fragment_id]
        old_files = {d.path: d for d in old.files}
        if any(old_files.get(d.path) != d for d in new.files):
            changed.append(fragment_id)
        kept = {d.path for d in new.files}
        if any(d.path not in kept and remaining & set(d.fields) for d in old.files):
            dropped.append(fragment_id)
        if new.deletion_file != old.deletion_file:
            deletions.append(fragment_id)
    if changed:
        yield (
            f"fragment(s) {listed(changed, sort=True)} have new or changed data files after a Project",
            view.at("fragments"),
        )
    if dropped:
        yield (
            f"fragment(s) {listed(dropped, sort=True)} lost a data file that still holds fields of the schema after a "
            "Project",
            view.at("fragments"),
        )
    if deletions:
        yield (
            f"fragment(s) {listed(deletions, sort=True)} have other deletion files after a Project",
            view.at("fragments"),
        )
    if not same_fields(current.schema.fields, transaction.operation.schema.fields):
        yield "the schema's fields are not the ones the Project records", view.at("schema")
    if current.schema.metadata != previous.schema.metadata:
        yield (
            f"the schema metadata differs from version {previous.version}'s; a Project carries none",
            view.at("schema_metadata"),
        )


# -- Update ----------------------------------------------------------------------------


#: Symptom of transaction/update: a rewritten fragment as the transaction
#: records it still holds data files of columns the version before had
#: dropped (and left out of that fragment); the version has the fragment
#: without them.
RECORDS_DROPPED_COLUMN_FILES = "records-dropped-column-files"
#: Symptom of transaction/update: a REWRITE_ROWS Update gave a fragment back
#: data files that hold no field of the schema (columns dropped before it),
#: and changed its data files in no other way.
RESTORES_DROPPED_COLUMN_FILES = "restores-dropped-column-files"


@rule(
    "transaction/update",
    severity=Severity.ERROR,
    requirements=("transaction.update-modes", "transaction.enough-to-rebuild"),
    summary="An Update removes, rewrites and adds exactly the fragments it records, and keeps the schema",
    symptoms={
        RECORDS_DROPPED_COLUMN_FILES: "a rewritten fragment's record holds data files of columns the version before "
        "had dropped, which the version does not have",
        RESTORES_DROPPED_COLUMN_FILES: "a REWRITE_ROWS Update gives a fragment back data files that hold no field of "
        "the schema, and changes its data files in no other way",
    },
)
def update(view: VersionView):
    found = operation_of(view, Update)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: Update = transaction.operation
    removed = set(operation.removed_fragment_ids)
    updated = {f.id: f for f in operation.updated_fragments}
    before, after = set(previous.fragments), set(current.fragments)

    yield from named_fragments(view, where, previous, current, removed, set(updated), "Update", "rewrites")

    rows_only = operation.update_mode == UpdateMode.REWRITE_ROWS
    resized, rebuilt, restored, fewer, unlike, stale = [], [], [], [], [], []
    schema_fields = set(previous.schema.field_ids())
    for fragment_id in sorted((set(updated) - removed) & before & after):
        old, new, wanted = previous.fragments[fragment_id], current.fragments[fragment_id], updated[fragment_id]
        if new.physical_rows != old.physical_rows:
            resized.append(fragment_id)
        if rows_only and live_paths(new) != live_paths(old):
            if _without_dropped_columns(new, old, schema_fields) == live_paths(old):
                restored.append(fragment_id)
            else:
                rebuilt.append(fragment_id)
        if rows_only and new.num_deleted_rows < old.num_deleted_rows:
            fewer.append(fragment_id)
        if not rebased(transaction, view.version) and (
            live_paths(new) != live_paths(wanted) or new.deletion_file != wanted.deletion_file
        ):
            if new.deletion_file == wanted.deletion_file and _without_dropped_columns(
                wanted, old, schema_fields
            ) == live_paths(new):
                stale.append(fragment_id)
            else:
                unlike.append(fragment_id)
    if resized:
        yield f"the Update changed the physical rows of fragment(s) {listed(resized, sort=True)}", view.at("fragments")
    if rebuilt:
        yield (
            f"a REWRITE_ROWS Update changed the data files of fragment(s) {listed(rebuilt, sort=True)}; "
            "it only deletes the old rows",
            view.at("fragments"),
        )
    if restored:
        yield (
            f"a REWRITE_ROWS Update gave fragment(s) {listed(restored, sort=True)} back data files that hold no field "
            f"of the schema (columns version {previous.version} no longer has); it only deletes the old rows",
            view.at("fragments"),
            RESTORES_DROPPED_COLUMN_FILES,
        )
    if fewer:
        yield (
            f"fragment(s) {listed(fewer, sort=True)} have fewer deleted rows than in version {previous.version}",
            view.at("fragments"),
        )
    if unlike:
        yield (
            f"fragment(s) {listed(unlike, sort=True)} do not have the data and deletion files the Update records for "
            "them",
            view.at("fragments"),
        )
    if stale:
        yield (
            f"the Update records fragment(s) {listed(stale, sort=True)} with data files of columns version "
            f"{previous.version} had dropped, which the version does not have: the record is not what was committed",
            view.at("fragments"),
            RECORDS_DROPPED_COLUMN_FILES,
        )
    added = [current.fragments[i] for i in sorted(after - before)]
    problem = compare_new_fragments(operation.new_fragments, added, "adds")
    if problem:
        yield problem, view.at("fragments")
    for message in untouched(previous, current, removed | set(updated)):
        yield message, view.at("fragments")
    if not same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; an Update does not change it", view.at("schema")


def _without_dropped_columns(fragment: Fragment, before: Fragment, schema_fields: set[int]) -> tuple[str, ...]:
    """:func:`live_paths` of a fragment (recorded or committed) without the
    data files that hold no field of the schema and that the fragment no
    longer had in the version before (a Project had dropped them)."""
    kept = {d.path for d in before.files}
    return tuple(
        [
            d.path
            for d in fragment.files
            if not all_tombstoned(d) and (d.path in kept or schema_fields.intersection(d.fields))
        ]
    )


@rule(
    "transaction/update-row-count",
    severity=Severity.INFO,
    requirements=("transaction.update-keeps-row-count",),
    summary="An Update keeps the number of visible rows (pylance's merge_insert inserts and deletes through Updates)",
)
def update_row_count(view: VersionView):
    found = operation_of(view, Update)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    before, after = live_rows(view.dataset, previous), live_rows(view.dataset, current)
    if before is not None and after is not None and before != after:
        yield (
            f"the Update by {view.writer} changed the visible rows from {before} (version {previous.version}) to "
            f"{after}: an upsert (merge_insert) committed as an Update inserts and deletes this way "
            "(docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


# -- DataReplacement and UpdateBases ---------------------------------------------------


@rule(
    "transaction/data-replacement",
    severity=Severity.ERROR,
    requirements=("transaction.data-replacement-same-rows",),
    summary="A DataReplacement swaps in the recorded data files; fragment ids, rows and schema stay",
)
def data_replacement(view: VersionView):
    found = operation_of(view, DataReplacement)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    replacements: dict[int, list] = {}
    for group in transaction.operation.replacements:
        replacements.setdefault(group.fragment_id, []).append(group.new_file)
    for message in same_rows_per_fragment(previous, current, "a DataReplacement"):
        yield message, view.at("fragments")
    unknown = set(replacements) - set(previous.fragments)
    if unknown:
        yield (
            f"the DataReplacement names fragment(s) {listed(unknown, sort=True)}, which version {previous.version} "
            "does not have",
            where,
        )
    absent = [
        i
        for i, files in replacements.items()
        if i in current.fragments
        and any(f is None or f.path not in fragment_paths(current.fragments[i]) for f in files)
    ]
    if absent:
        yield (
            f"fragment(s) {listed(absent, sort=True)} do not hold the data files the DataReplacement records",
            view.at("fragments"),
        )
    for message in untouched(previous, current, set(replacements)):
        yield message, view.at("fragments")
    if not same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; a DataReplacement keeps it", view.at("schema")
