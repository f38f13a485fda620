"""Rules on what each version's transaction did (transaction specification:
transaction types).

A version's manifest must be what its transaction's operation makes of the
version before it. These rules compare the manifest of version ``v`` with the
manifest of ``v - 1`` through the operation recorded for ``v`` (the transaction
file, else the copy embedded in the manifest). When the transaction was built
on an older version (its ``read_version`` is below ``v - 1``) the writer rebased
it; the committed result must still apply the operation to ``v - 1``, so the
comparison is the same, except that recorded deletion files may then differ
from the committed ones (a rebased delete merges the deletions committed in
between).

Each operation has its own rule, so a finding names what went wrong. Every
rule is bounded: per-version summaries are built once per run
(:meth:`DatasetView.cached`) and fragments are compared through dicts and
multisets keyed by id or by (physical rows, data file paths). Versions whose
neighbour is missing or does not decode are skipped; other rules report why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from reference_impl.fragments import Fragment
from reference_impl.indices import IndexMetadata
from reference_impl.manifest import BasePath, Manifest
from reference_impl.manifest_file import ManifestFile
from reference_impl.schema import Schema
from reference_impl.transactions import (
    Append,
    Clone,
    CreateIndex,
    DataReplacement,
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
    UpdateMap,
    UpdateMode,
)

from ..context import DatasetView, VersionView
from ..registry import Scope, Severity, rule
from .deletions import deletion_content
from .history import _transaction

#: How many ids a message lists before "...".
_SHOWN = 5


# -- what a version holds, summarised once per run ---------------------------------------


@dataclass
class _State:
    """The parts of one version's manifest these rules compare."""

    version: int
    manifest: Manifest
    #: Fragments by id (with duplicate ids, the last one; other rules report
    #: duplicates).
    fragments: dict[int, Fragment]
    indices: list[IndexMetadata]

    @property
    def schema(self) -> Schema:
        return self.manifest.schema

    @property
    def effective_max_fragment_id(self) -> int | None:
        """max_fragment_id, or the highest fragment id when it is absent
        (pylance 0.20 omits a zero; docs/spec-discrepancies.md)."""
        if self.manifest.max_fragment_id is not None:
            return self.manifest.max_fragment_id
        return max(self.fragments) if self.fragments else None



def _same_fields(a, b) -> bool:
    """Field lists equal in everything but ``type``: the role is implied by the
    logical type, and pylance rewrites every role as PARENT when it commits on
    top of a dataset that records the schema format page's roles (docs/spec-discrepancies.md)."""
    return len(a) == len(b) and all(replace(x, type=y.type) == y for x, y in zip(a, b))


def _same_schema(a, b) -> bool:
    return a.metadata == b.metadata and _same_fields(a.fields, b.fields)

def _summarise(version: int, manifest_file: ManifestFile) -> _State:
    manifest = manifest_file.manifest
    return _State(version, manifest, {f.id: f for f in manifest.fragments}, list(manifest_file.indices or []))


def _state(dataset: DatasetView, version: int) -> _State | None:
    """The summary of ``version``, or None when it has no decodable manifest."""
    if version not in dataset.manifest_paths():
        return None
    loaded = dataset.manifest_file(version)
    if not loaded.ok:
        return None
    summary = dataset.cached(("transactions.state", version), lambda: _summarise(version, loaded.value))
    return summary.value if summary.ok else None


def _recorded(view: VersionView) -> tuple[Transaction, str] | None:
    """The transaction of ``view`` and where it was read: the transaction
    file when it loads, else the embedded copy, else None."""
    name = view.manifest.transaction_file
    if name:
        try:
            loaded = _transaction(view)
        except ValueError:  # a name that is no file name; transaction/file-decodes reports it
            loaded = None
        if loaded is not None and loaded.ok and loaded.value is not None:
            return loaded.value, f"_transactions/{name}"
    if view.manifest_file.transaction is not None:
        return view.manifest_file.transaction, view.at("transaction_section")
    return None


def _operation_of(view: VersionView, kind: type):
    """(transaction, location, this version's state, previous state or None)
    when the version's operation is a ``kind``; None otherwise."""
    found = _recorded(view)
    if found is None or not isinstance(found[0].operation, kind):
        return None
    current = _state(view.dataset, view.version)
    if current is None:
        return None
    return found[0], found[1], current, _state(view.dataset, view.version - 1)


# -- small comparisons -----------------------------------------------------------------


def _few(values) -> str:
    values = sorted(values)
    shown = ", ".join(str(v) for v in values[:_SHOWN])
    return shown + (f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")


def _paths(fragment: Fragment) -> tuple[str, ...]:
    # tuple() of a list: faster than of a generator, and this runs per fragment.
    return tuple([d.path for d in fragment.files])


def _shape(fragment: Fragment) -> tuple[int, tuple[str, ...]]:
    """What identifies a new fragment whose id was assigned at commit."""
    return fragment.physical_rows, tuple([d.path for d in fragment.files])


def _describe_shapes(shapes: Counter) -> str:
    parts = [
        f"{rows} rows in {list(paths[:3])}" + (" ..." if len(paths) > 3 else "") + (f" (x{n})" if n > 1 else "")
        for (rows, paths), n in shapes.items()
    ]
    return "; ".join(parts[:_SHOWN]) + (" ..." if len(parts) > _SHOWN else "") if parts else "none"


def _compare_new_fragments(recorded: list[Fragment], added: list[Fragment], what: str):
    """A message when the fragments a version added are not the ones recorded
    (compared by physical rows and data file paths; ids are placeholders)."""
    # An Overwrite of a large table lists every fragment. Equal lists (the
    # usual case: the same fragments in the same order) are equal multisets,
    # and comparing them spares building and hashing two Counters.
    recorded_shapes, added_shapes = [_shape(f) for f in recorded], [_shape(f) for f in added]
    if recorded_shapes == added_shapes:
        return None
    want, got = Counter(recorded_shapes), Counter(added_shapes)
    if want == got:
        return None
    missing, extra = want - got, got - want
    return (
        f"the transaction {what} {len(recorded)} fragment(s) but the version added {len(added)}"
        f" (ids {_few(f.id for f in added) or 'none'}); recorded but not added: {_describe_shapes(missing)};"
        f" added but not recorded: {_describe_shapes(extra)}"
    )


def _untouched(previous: _State, current: _State, touched: set[int]):
    """Messages for fragments of ``previous`` outside ``touched`` that are
    missing from ``current`` or changed in it."""
    kept = set(previous.fragments) - touched
    missing = kept - set(current.fragments)
    changed = [i for i in kept - missing if current.fragments[i] != previous.fragments[i]]
    if missing:
        yield (
            f"fragment(s) {_few(missing)} of version {previous.version} are gone, though the operation does not "
            "touch them"
        )
    if changed:
        yield (
            f"fragment(s) {_few(changed)} changed from version {previous.version}, though the operation does not "
            "touch them"
        )


def _same_fragments(previous: _State, current: _State):
    """Messages when ``current`` does not hold exactly the fragments of ``previous``."""
    yield from _untouched(previous, current, set())
    added = set(current.fragments) - set(previous.fragments)
    if added:
        yield f"fragment(s) {_few(added)} were added, though the operation adds none"


def _named_fragments(view: VersionView, where: str, previous: _State, current: _State, removed: set[int],
                     changed: set[int], what: str, verb: str):
    """Findings when a Delete or an Update names fragments the version it
    read lacks, keeps a fragment it removes, or loses one it ``verb``
    (changes without removing)."""
    before, after = set(previous.fragments), set(current.fragments)
    unknown = (removed | changed) - before
    if unknown:
        yield f"the {what} names fragment(s) {_few(unknown)}, which version {previous.version} does not have", where
    still_there = removed & after
    if still_there:
        yield f"fragment(s) {_few(still_there)} the {what} removes are still in the version", view.at("fragments")
    lost = ((changed - removed) & before) - after
    if lost:
        yield f"fragment(s) {_few(lost)} the {what} {verb} are missing from the version", view.at("fragments")


def _same_rows_per_fragment(previous: _State, current: _State, what: str):
    before = {i: f.physical_rows for i, f in previous.fragments.items()}
    after = {i: f.physical_rows for i, f in current.fragments.items()}
    if before != after:
        gone, new = set(before) - set(after), set(after) - set(before)
        resized = [i for i in set(before) & set(after) if before[i] != after[i]]
        details = []
        if gone:
            details.append(f"removed {_few(gone)}")
        if new:
            details.append(f"added {_few(new)}")
        if resized:
            details.append(f"physical rows changed in {_few(resized)}")
        yield f"{what} keeps every fragment and its rows, but from version {previous.version}: " + ", ".join(details)


def _live_rows(dataset: DatasetView, state: _State) -> int | None:
    """Visible rows of a version; None when a deletion count is unknown and
    its deletion file cannot be read (or is not a valid list of offsets)."""
    total = 0
    view = None
    for fragment in state.fragments.values():
        deleted = fragment.num_deleted_rows
        if fragment.deletion_file is not None and not deleted:
            # A zero count means "not recorded": count the file itself,
            # through the bounded reader the deletion rules share (the
            # offsets stay a bitmap; only its size is taken).
            view = view or dataset.version_view(state.version)
            if view is None:
                return None
            content = deletion_content(view, fragment)
            if content.file is None or content.file.problem_for(fragment.physical_rows) is not None:
                return None
            deleted = len(content.offsets)
        total += fragment.physical_rows - deleted
    return total


def _rebased(transaction: Transaction, version: int) -> bool:
    return transaction.read_version != version - 1


# -- Append ---------------------------------------------------------------------------


@rule(
    "transaction/append",
    severity=Severity.ERROR,
    requirements=("transaction.append-keeps-existing", "history.serial-history"),
    summary="An Append keeps every fragment of the version before and adds exactly the recorded fragments",
)
def append(view: VersionView):
    found = _operation_of(view, Append)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    for message in _untouched(previous, current, set()):
        yield message, view.at("fragments")
    added = [current.fragments[i] for i in sorted(set(current.fragments) - set(previous.fragments))]
    problem = _compare_new_fragments(transaction.operation.fragments, added, "appends")
    if problem:
        yield problem, view.at("fragments")
    if not _same_schema(current.schema, previous.schema):
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
    found = _operation_of(view, Delete)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: Delete = transaction.operation
    removed = set(operation.deleted_fragment_ids)
    updated = {f.id: f for f in operation.updated_fragments}
    before, after = set(previous.fragments), set(current.fragments)

    yield from _named_fragments(view, where, previous, current, removed, set(updated), "Delete", "updates")

    rebuilt, fewer, other_file = [], [], []
    for fragment_id in sorted((set(updated) - removed) & before & after):
        old, new = previous.fragments[fragment_id], current.fragments[fragment_id]
        if new.physical_rows != old.physical_rows or _paths(new) != _paths(old):
            rebuilt.append(fragment_id)
        if new.num_deleted_rows < old.num_deleted_rows:
            fewer.append(fragment_id)
        if not _rebased(transaction, view.version) and new.deletion_file != updated[fragment_id].deletion_file:
            other_file.append(fragment_id)
    if rebuilt:
        yield f"the Delete changed the data files or physical rows of fragment(s) {_few(rebuilt)}", view.at("fragments")
    if fewer:
        yield (
            f"fragment(s) {_few(fewer)} have fewer deleted rows than in version {previous.version}",
            view.at("fragments"),
        )
    if other_file:
        yield (
            f"fragment(s) {_few(other_file)} do not have the deletion file the Delete records for them",
            view.at("fragments"),
        )
    added = after - before
    if added:
        yield f"the Delete added fragment(s) {_few(added)}", view.at("fragments")
    for message in _untouched(previous, current, removed | set(updated)):
        yield message, view.at("fragments")
    if not _same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; a Delete does not change it", view.at("schema")


@rule(
    "transaction/delete-predicate",
    severity=Severity.WARNING,
    requirements=("transaction.delete-records-predicate",),
    summary="A Delete records the predicate it evaluated",
)
def delete_predicate(view: VersionView):
    found = _recorded(view)
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
    found = _operation_of(view, Overwrite)
    if found is None:
        return
    transaction, where, current, previous = found
    operation: Overwrite = transaction.operation
    problem = _compare_new_fragments(operation.fragments, list(current.fragments.values()), "writes")
    if problem:
        yield problem, view.at("fragments")
    if not _same_fields(current.schema.fields, operation.schema.fields):
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
                f" (keys differing: {_few(_differing_keys(expected, current.manifest.config))})",
                view.at("config"),
            )
    declared = {(b.path, b.name, b.is_dataset_root) for b in current.manifest.base_paths}
    undeclared = [b.path for b in operation.initial_bases if (b.path, b.name, b.is_dataset_root) not in declared]
    if undeclared:
        yield f"base path(s) {_few(undeclared)} the Overwrite declares are not in the manifest", view.at("base_paths")


def _differing_keys(a: dict, b: dict) -> list:
    return [k for k in set(a) | set(b) if a.get(k) != b.get(k)]


# -- CreateIndex -----------------------------------------------------------------------


@rule(
    "transaction/create-index",
    severity=Severity.ERROR,
    requirements=("transaction.create-index-only-indices",),
    summary="A CreateIndex changes only index metadata, as recorded; fragments and schema stay as they were",
)
def create_index(view: VersionView):
    found = _operation_of(view, CreateIndex)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: CreateIndex = transaction.operation
    for message in _same_fragments(previous, current):
        yield message, view.at("fragments")
    if not _same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s", view.at("schema")
    listed = {i.uuid for i in current.indices}
    created = {i.uuid for i in operation.new_indices}
    removed = {i.uuid for i in operation.removed_indices} - created
    absent = created - listed
    if absent:
        yield f"index(es) {_few(absent)} the CreateIndex adds are not in the index section", view.at("index_section")
    kept = removed & listed
    if kept:
        yield f"index(es) {_few(kept)} the CreateIndex removes are still listed", view.at("index_section")
    # An index replaced under its name (the reference writer's convention) may
    # go without being listed among removed_indices.
    replaced_names = {i.name for i in operation.new_indices}
    vanished = {
        i.uuid for i in previous.indices
        if i.uuid not in listed and i.uuid not in removed and i.name not in replaced_names
    }
    if vanished:
        yield (
            f"index(es) {_few(vanished)} of version {previous.version} disappeared, though the CreateIndex does not "
            "remove them",
            view.at("index_section"),
        )


# -- Rewrite ---------------------------------------------------------------------------


def _groups(operation: Rewrite):
    """(old fragments, new fragments) per group, the legacy ungrouped form included."""
    groups = [(g.old_fragments, g.new_fragments) for g in operation.groups]
    if operation.old_fragments or operation.new_fragments:
        groups.append((operation.old_fragments, operation.new_fragments))
    return groups


@rule(
    "transaction/rewrite",
    severity=Severity.ERROR,
    requirements=("transaction.rewrite-keeps-content",),
    summary="A Rewrite replaces its old fragments by the recorded new ones and keeps schema and visible rows",
)
def rewrite(view: VersionView):
    found = _operation_of(view, Rewrite)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    old_ids, new_fragments = set(), {}
    for old, new in _groups(transaction.operation):
        old_ids |= {f.id for f in old}
        new_fragments.update({f.id: f for f in new})
    before, after = set(previous.fragments), set(current.fragments)

    still_there = (old_ids & after) - set(new_fragments)
    if still_there:
        yield f"old fragment(s) {_few(still_there)} the Rewrite replaces are still in the version", view.at("fragments")
    missing = set(new_fragments) - after
    if missing:
        yield f"new fragment(s) {_few(missing)} the Rewrite records are not in the version", view.at("fragments")
    differing = [i for i in set(new_fragments) & after if _shape(current.fragments[i]) != _shape(new_fragments[i])]
    if differing:
        yield (
            f"new fragment(s) {_few(differing)} differ from the Rewrite's record (physical rows or data files)",
            view.at("fragments"),
        )
    unrecorded = after - before - set(new_fragments)
    if unrecorded:
        yield (
            f"fragment(s) {_few(unrecorded)} were added, though the Rewrite does not record them",
            view.at("fragments"),
        )
    for message in _untouched(previous, current, old_ids | set(new_fragments)):
        yield message, view.at("fragments")
    if not _same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; a Rewrite keeps it", view.at("schema")
    rows_before, rows_after = _live_rows(view.dataset, previous), _live_rows(view.dataset, current)
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
    found = _operation_of(view, Rewrite)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    new_ids = {f.id for _, new in _groups(transaction.operation) for f in new}
    new_ids = {i for i in new_ids if i not in previous.fragments}
    limit = previous.effective_max_fragment_id
    unreserved = {i for i in new_ids if limit is None or i > limit}
    if unreserved:
        yield (
            f"new fragment id(s) {_few(unreserved)} exceed max_fragment_id {limit} of version {previous.version}: "
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
    found = _operation_of(view, Rewrite)
    if found is None:
        return
    transaction, where, current, previous = found
    read = _state(view.dataset, transaction.read_version) if transaction.read_version < view.version else None
    basis = read or previous
    if basis is None:
        return
    old_ids = {f.id for old, _ in _groups(transaction.operation) for f in old}
    absent = old_ids - set(basis.fragments)
    if absent:
        yield f"old fragment(s) {_few(absent)} of the Rewrite are not in version {basis.version}", where


# -- Merge and Project -----------------------------------------------------------------


@rule(
    "transaction/merge",
    severity=Severity.ERROR,
    requirements=("transaction.merge-covers-every-fragment",),
    summary="A Merge keeps every fragment and its rows and leaves the recorded data files and schema",
)
def merge(view: VersionView):
    found = _operation_of(view, Merge)
    if found is None:
        return
    transaction, where, current, previous = found
    operation: Merge = transaction.operation
    if previous is not None:
        for message in _same_rows_per_fragment(previous, current, "a Merge"):
            yield message, view.at("fragments")
    recorded = {f.id: f for f in operation.fragments}
    unrecorded = set(current.fragments) - set(recorded)
    if unrecorded:
        yield f"fragment(s) {_few(unrecorded)} are not among the fragments the Merge records", view.at("fragments")
    dropped = set(recorded) - set(current.fragments)
    if dropped:
        yield f"fragment(s) {_few(dropped)} the Merge records are not in the version", view.at("fragments")
    differing = [
        i for i in set(recorded) & set(current.fragments) if _paths(current.fragments[i]) != _paths(recorded[i])
    ]
    if differing:
        yield f"fragment(s) {_few(differing)} do not have the data files the Merge records", view.at("fragments")
    if not _same_fields(current.schema.fields, operation.schema.fields):
        yield "the schema's fields are not the ones the Merge records", view.at("schema")
    # pylance never fills Merge.schema_metadata and keeps the previous
    # metadata (docs/spec-discrepancies.md); the reference writer applies the
    # recorded (then empty) map. Recorded metadata must be the result.
    accepted = [operation.schema.metadata]
    if not operation.schema.metadata and previous is not None:
        accepted.append(previous.schema.metadata)
    if current.schema.metadata not in accepted:
        yield "the schema metadata is neither the one the Merge records nor the previous one", view.at(
            "schema_metadata"
        )


@rule(
    "transaction/project",
    severity=Severity.ERROR,
    requirements=("transaction.project-metadata-only",),
    summary="A Project changes the schema alone: same fragments, no data file new or changed",
)
def project(view: VersionView):
    found = _operation_of(view, Project)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    for message in _same_rows_per_fragment(previous, current, "a Project"):
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
        yield f"fragment(s) {_few(changed)} have new or changed data files after a Project", view.at("fragments")
    if dropped:
        yield (
            f"fragment(s) {_few(dropped)} lost a data file that still holds fields of the schema after a Project",
            view.at("fragments"),
        )
    if deletions:
        yield f"fragment(s) {_few(deletions)} have other deletion files after a Project", view.at("fragments")
    if not _same_fields(current.schema.fields, transaction.operation.schema.fields):
        yield "the schema's fields are not the ones the Project records", view.at("schema")
    if current.schema.metadata != previous.schema.metadata:
        yield f"the schema metadata differs from version {previous.version}'s; a Project carries none", view.at(
            "schema_metadata"
        )


# -- Restore ---------------------------------------------------------------------------


@rule(
    "transaction/restore",
    severity=Severity.ERROR,
    requirements=("transaction.restore-earlier-state",),
    summary="A Restore gives the version the schema, fragments, indices and config of the earlier version it names",
)
def restore(view: VersionView):
    found = _operation_of(view, Restore)
    if found is None:
        return
    transaction, where, current, previous = found
    target = transaction.operation.version
    if target >= view.version:
        yield f"the Restore names version {target}, which is not earlier than {view.version}", where
        return
    source = _state(view.dataset, target)
    if source is None:
        return  # cleaned up, or unreadable: nothing to compare with
    differences = []
    if not _same_schema(current.schema, source.schema):
        differences.append("schema")
    if current.fragments != source.fragments:
        differences.append(f"fragments (ids {_few(_differing_keys(source.fragments, current.fragments))})")
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
    found = _operation_of(view, ReserveFragments)
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
    for message in _same_fragments(previous, current):
        yield message, view.at("fragments")
    if not _same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s", view.at("schema")


# -- Update ----------------------------------------------------------------------------


@rule(
    "transaction/update",
    severity=Severity.ERROR,
    requirements=("transaction.update-modes", "transaction.enough-to-rebuild"),
    summary="An Update removes, rewrites and adds exactly the fragments it records, and keeps the schema",
)
def update(view: VersionView):
    found = _operation_of(view, Update)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: Update = transaction.operation
    removed = set(operation.removed_fragment_ids)
    updated = {f.id: f for f in operation.updated_fragments}
    before, after = set(previous.fragments), set(current.fragments)

    yield from _named_fragments(view, where, previous, current, removed, set(updated), "Update", "rewrites")

    rows_only = operation.update_mode == UpdateMode.REWRITE_ROWS
    resized, rebuilt, fewer, unlike = [], [], [], []
    for fragment_id in sorted((set(updated) - removed) & before & after):
        old, new, wanted = previous.fragments[fragment_id], current.fragments[fragment_id], updated[fragment_id]
        if new.physical_rows != old.physical_rows:
            resized.append(fragment_id)
        if rows_only and _paths(new) != _paths(old):
            rebuilt.append(fragment_id)
        if rows_only and new.num_deleted_rows < old.num_deleted_rows:
            fewer.append(fragment_id)
        if not _rebased(transaction, view.version) and (
            _paths(new) != _paths(wanted) or new.deletion_file != wanted.deletion_file
        ):
            unlike.append(fragment_id)
    if resized:
        yield f"the Update changed the physical rows of fragment(s) {_few(resized)}", view.at("fragments")
    if rebuilt:
        yield (
            f"a REWRITE_ROWS Update changed the data files of fragment(s) {_few(rebuilt)}; "
            "it only deletes the old rows",
            view.at("fragments"),
        )
    if fewer:
        yield (
            f"fragment(s) {_few(fewer)} have fewer deleted rows than in version {previous.version}",
            view.at("fragments"),
        )
    if unlike:
        yield (
            f"fragment(s) {_few(unlike)} do not have the data and deletion files the Update records for them",
            view.at("fragments"),
        )
    added = [current.fragments[i] for i in sorted(after - before)]
    problem = _compare_new_fragments(operation.new_fragments, added, "adds")
    if problem:
        yield problem, view.at("fragments")
    for message in _untouched(previous, current, removed | set(updated)):
        yield message, view.at("fragments")
    if not _same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; an Update does not change it", view.at("schema")


@rule(
    "transaction/update-row-count",
    severity=Severity.INFO,
    requirements=("transaction.update-keeps-row-count",),
    summary="An Update keeps the number of visible rows (pylance's merge_insert inserts and deletes through Updates)",
)
def update_row_count(view: VersionView):
    found = _operation_of(view, Update)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    before, after = _live_rows(view.dataset, previous), _live_rows(view.dataset, current)
    if before is not None and after is not None and before != after:
        yield (
            f"the Update by {view.writer} changed the visible rows from {before} (version {previous.version}) to "
            f"{after}: an upsert (merge_insert) committed as an Update inserts and deletes this way "
            "(docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


# -- UpdateConfig ----------------------------------------------------------------------


def _apply(current: dict, update: UpdateMap | None, *, encode: bool = False) -> dict:
    if update is None:
        return dict(current)
    result = {} if update.replace else dict(current)
    for entry in update.entries:
        if entry.value is None:
            result.pop(entry.key, None)
        else:
            result[entry.key] = entry.value.encode() if encode else entry.value
    return result


def _encoded(values: dict[str, str]) -> dict[str, bytes]:
    return {k: v.encode() for k, v in values.items()}


def _without_metadata(schema: Schema) -> list:
    return [replace(f, metadata={}) for f in schema.fields]


@rule(
    "transaction/update-config",
    severity=Severity.ERROR,
    requirements=("transaction.update-config-no-data",),
    summary="An UpdateConfig changes config and metadata exactly as recorded, and no fragment or field type",
)
def update_config(view: VersionView):
    found = _operation_of(view, UpdateConfig)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    operation: UpdateConfig = transaction.operation
    for message in _same_fragments(previous, current):
        yield message, view.at("fragments")
    if _without_metadata(current.schema) != _without_metadata(previous.schema):
        yield f"fields changed from version {previous.version} beyond their metadata", view.at("schema")

    config = _apply(previous.manifest.config, operation.config_updates)
    config.update(operation.upsert_values)
    for key in operation.delete_keys:
        config.pop(key, None)
    if current.manifest.config != config:
        yield (
            f"the config is not version {previous.version}'s with the recorded changes applied "
            f"(keys differing: {_few(_differing_keys(config, current.manifest.config))})",
            view.at("config"),
        )
    table_metadata = _apply(previous.manifest.table_metadata, operation.table_metadata_updates)
    if current.manifest.table_metadata != table_metadata:
        yield (
            f"the table metadata is not version {previous.version}'s with the recorded changes applied "
            f"(keys differing: {_few(_differing_keys(table_metadata, current.manifest.table_metadata))})",
            view.at("table_metadata"),
        )
    # The deprecated maps replace (older pylance) or merge (the reference
    # writer); either reading is accepted.
    merged = _apply(previous.schema.metadata, operation.schema_metadata_updates, encode=True)
    accepted = [{**merged, **_encoded(operation.schema_metadata)}]
    if operation.schema_metadata:
        accepted.append(_encoded(operation.schema_metadata))
    if current.schema.metadata not in accepted:
        yield f"the schema metadata is not version {previous.version}'s with the recorded changes applied", view.at(
            "schema_metadata"
        )
    yield from _field_metadata(view, operation, previous, current)


def _field_metadata(view: VersionView, operation: UpdateConfig, previous: _State, current: _State):
    named = set(operation.field_metadata_updates) | set(operation.field_metadata)
    unknown = [i for i in named if previous.schema.field_by_id(i) is None]
    if unknown:
        yield f"the UpdateConfig changes metadata of field(s) {_few(unknown)}, which do not exist", view.at("schema")
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
        yield f"the metadata of field(s) {_few(wrong)} is not what the recorded changes make of it", view.at("schema")


# -- DataReplacement and UpdateBases ---------------------------------------------------


@rule(
    "transaction/data-replacement",
    severity=Severity.ERROR,
    requirements=("transaction.data-replacement-same-rows",),
    summary="A DataReplacement swaps in the recorded data files; fragment ids, rows and schema stay",
)
def data_replacement(view: VersionView):
    found = _operation_of(view, DataReplacement)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    replacements: dict[int, list] = {}
    for group in transaction.operation.replacements:
        replacements.setdefault(group.fragment_id, []).append(group.new_file)
    for message in _same_rows_per_fragment(previous, current, "a DataReplacement"):
        yield message, view.at("fragments")
    unknown = set(replacements) - set(previous.fragments)
    if unknown:
        yield (
            f"the DataReplacement names fragment(s) {_few(unknown)}, which version {previous.version} does not have",
            where,
        )
    absent = [
        i for i, files in replacements.items()
        if i in current.fragments
        and any(f is None or f.path not in _paths(current.fragments[i]) for f in files)
    ]
    if absent:
        yield f"fragment(s) {_few(absent)} do not hold the data files the DataReplacement records", view.at("fragments")
    for message in _untouched(previous, current, set(replacements)):
        yield message, view.at("fragments")
    if not _same_schema(current.schema, previous.schema):
        yield f"the schema differs from version {previous.version}'s; a DataReplacement keeps it", view.at("schema")


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
    found = _operation_of(view, UpdateBases)
    if found is None or found[3] is None:
        return
    transaction, where, current, previous = found
    old = {b.id: b for b in previous.manifest.base_paths}
    new = {b.id: b for b in current.manifest.base_paths}
    altered = [i for i in old if new.get(i) != old[i]]
    if altered:
        yield f"base path(s) {_few(altered)} of version {previous.version} were removed or changed", view.at(
            "base_paths"
        )
    added = Counter(_base_key(b) for i, b in new.items() if i not in old)
    wanted = Counter(_base_key(b) for b in transaction.operation.new_bases)
    if added != wanted:
        yield (
            f"the version adds base path(s) {_few(p for p, _, _ in added) or 'none'}, the UpdateBases records "
            f"{_few(p for p, _, _ in wanted) or 'none'}",
            view.at("base_paths"),
        )
    for message in _same_fragments(previous, current):
        yield message, view.at("fragments")


# -- Clone -----------------------------------------------------------------------------


def same_location(a: str, b: str) -> bool:
    """Two spellings of one base location (a trailing separator aside)."""
    return bool(a) and bool(b) and a.rstrip("/\\") == b.rstrip("/\\")


def clone_source_bases(manifest: Manifest, operation: Clone) -> set[int]:
    """Ids of the base paths of ``manifest`` that name the Clone's source."""
    return {b.id for b in manifest.base_paths if same_location(b.path, operation.ref_path)}


@rule(
    "transaction/clone",
    severity=Severity.ERROR,
    requirements=("transaction.clone-shallow-or-deep",),
    summary="A shallow Clone declares a base path for its source and stores no data file of its own; "
    "a deep Clone copied the files and uses no base path of the source",
)
def clone(view: VersionView):
    found = _recorded(view)
    if found is None or not isinstance(found[0].operation, Clone):
        return
    operation: Clone = found[0].operation
    manifest = view.manifest
    source = clone_source_bases(manifest, operation)
    files = [(f.id, d) for f in manifest.fragments for d in f.files]
    if operation.is_shallow:
        if operation.ref_path and not source:
            declared = _few(repr(b.path) for b in manifest.base_paths) or "none"
            yield (
                f"the shallow Clone of '{operation.ref_path}' declares no base path for it (base paths: {declared}); "
                "a shallow clone reaches the source's files through base_paths",
                view.at("base_paths"),
            )
        local = sorted({fragment_id for fragment_id, d in files if d.base_id is None})
        if local:
            yield (
                f"fragment(s) {_few(local)} of the shallow Clone have data files in the clone's own directory; a "
                "shallow clone copies metadata only and reaches every data file through a base path",
                view.at("fragments"),
            )
    elif source:
        using = sorted({fragment_id for fragment_id, d in files if d.base_id in source})
        yield (
            f"the deep Clone declares base path(s) {_few(source)} for its source '{operation.ref_path}'"
            + (f", and fragment(s) {_few(using)} read their data files from it" if using else "")
            + "; a deep clone copies the files themselves",
            view.at("base_paths"),
        )


# -- rebased transactions ---------------------------------------------------------------


@rule(
    "transaction/rebase-conflicts",
    severity=Severity.ERROR,
    requirements=("transaction.delete-after-restore-incompatible", "transaction.update-after-rewrite-retryable"),
    summary="A rebased Delete did not cross a Restore; a rebased Update spares fragments a Rewrite in between removed",
)
def rebase_conflicts(view: VersionView):
    found = _recorded(view)
    if found is None:
        return
    transaction, where = found
    operation = transaction.operation
    if not isinstance(operation, (Delete, Update)) or transaction.read_version >= view.version - 1:
        return
    if isinstance(operation, Update):
        touched = set(operation.removed_fragment_ids) | {f.id for f in operation.updated_fragments}
    between = sorted(u for u in view.dataset.manifest_paths() if transaction.read_version < u < view.version)
    for other_version in between:
        other_view = view.dataset.version_view(other_version)
        other = _recorded(other_view) if other_view is not None else None
        if other is None:
            continue
        other_operation = other[0].operation
        if isinstance(operation, Delete) and isinstance(other_operation, Restore):
            yield (
                f"the Delete read version {transaction.read_version} but committed after the Restore of version "
                f"{other_version}; it had to fail with a non-retryable conflict",
                where,
            )
        elif isinstance(operation, Update) and isinstance(other_operation, Rewrite):
            removed = {f.id for old, _ in _groups(other_operation) for f in old}
            if touched & removed:
                yield (
                    f"the Update read version {transaction.read_version} and changes fragment(s) "
                    f"{_few(touched & removed)}, which the Rewrite of version {other_version} removed; it had to "
                    "fail with a retryable conflict",
                    where,
                )


# -- whatever the operation -------------------------------------------------------------


@rule(
    "transaction/unknown-operation",
    severity=Severity.WARNING,
    requirements=("transaction.single-operation",),
    summary="The transaction carries one known operation (concurrent writers must treat others as conflicting)",
)
def unknown_operation(view: VersionView):
    found = _recorded(view)
    if found is None or not isinstance(found[0].operation, UnknownOperation):
        return
    numbers = found[0].operation.field_numbers
    what = f"an operation this specification does not know (field {_few(numbers)})" if numbers else "no operation"
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
        found = _recorded(view) if view is not None else None
        if found is not None and found[0].uuid:
            owners.setdefault(found[0].uuid, []).append(version)
    for uuid, versions in sorted(owners.items(), key=lambda item: item[1]):
        if len(versions) > 1:
            yield f"versions {_few(versions)} record transactions with the same uuid {uuid}", "_transactions"
