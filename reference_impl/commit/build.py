"""Building the next manifest (table format: committing datasets;
transaction specification: each operation's effect).

:func:`build_manifest` is step 3 of a commit: the manifest of the next version
as a pure function of (manifest read, indices read, transaction, settings). It
reads and writes no file, so the commit loop (:mod:`.loop`) can call it again
on the latest manifest after losing a race, with a rebased transaction
(:mod:`.conflicts`).

Each operation's effect on the manifest is a handler registered on
:func:`_apply` with ``functools.singledispatch`` next to its definition.
"""

from __future__ import annotations

import functools
import uuid as uuid_module
from dataclasses import dataclass, replace
from dataclasses import field as dc_field

from .. import feature_flags
from .._version import __version__
from ..errors import InvalidOperationError, LanceFormatError, UnsupportedFeatureError
from ..fragments import Fragment
from ..index_metadata import IndexMetadata, encode_fragment_bitmap
from ..manifest import DataStorageFormat, Manifest, WriterVersion
from ..manifest_file import ManifestFile
from ..newer_operations import DataOverlay, ReserveRowIds
from ..row_ids import encode_row_id_sequence, encode_version_sequence
from ..schema import Schema
from ..transactions import (
    Append,
    CreateIndex,
    DataReplacement,
    Delete,
    Merge,
    Operation,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    RewriteGroup,
    Transaction,
    Update,
    UpdateBases,
    UpdateConfig,
    UpdateMap,
    UpdateMapEntry,
    UpdateMemWalState,
    UpdateMode,
)
from ..wire import table_pb2

WRITER_LIBRARY = "lance-conformance"


def _writer_version() -> WriterVersion:
    return WriterVersion(WRITER_LIBRARY, __version__)


@dataclass(frozen=True)
class CommitSettings:
    """What a commit needs besides the manifest read and the transaction."""

    #: Commit time as (seconds, nanos) since the epoch, UTC; explicit so that
    #: building a manifest stays a pure function.
    timestamp: tuple[int, int]
    #: Name of the transaction file under _transactions/.
    transaction_file: str
    #: Only consulted when the dataset is created.
    stable_row_ids: bool = False
    data_storage_version: str = "2.0"
    writer_version: WriterVersion = dc_field(default_factory=_writer_version)


# -- building the manifest (pure) --------------------------------------------------


def build_manifest(
    read: Manifest | None,
    read_indices: list[IndexMetadata],
    transaction: Transaction,
    settings: CommitSettings,
    *,
    restore_source: ManifestFile | None = None,
) -> tuple[Manifest, list[IndexMetadata]]:
    """The manifest and indices of the version ``transaction`` creates on top
    of ``read`` (None when the dataset does not exist yet).

    ``restore_source`` is the manifest file of the version a Restore goes
    back to. Nothing is read or written: all inputs are arguments.
    """
    operation = transaction.operation
    if operation is None:
        raise InvalidOperationError("a transaction without an operation cannot be committed")
    if read is None and not isinstance(operation, Overwrite):
        raise InvalidOperationError(f"a dataset can only be created by an Overwrite, not {type(operation).__name__}")
    if isinstance(operation, Restore):
        if read is None or restore_source is None or restore_source.manifest.version != operation.version:
            raise InvalidOperationError(f"restoring version {operation.version} needs its manifest")
        return _restored(read, restore_source, transaction, settings)

    new_version = read.version + 1 if read else 1
    builder = _Builder(read, read_indices, new_version, settings, transaction.uuid)
    _apply(operation, builder)
    return builder.finish(transaction)


class _Builder:
    """The state of the manifest being built."""

    def __init__(
        self, read: Manifest | None, read_indices, new_version: int, settings: CommitSettings, transaction_uuid: str
    ):
        self.read = read
        self.new_version = new_version
        self.settings = settings
        # Anything this commit names afresh is derived from the transaction's
        # uuid, so that building stays a pure function of the arguments.
        self.transaction_uuid = transaction_uuid
        self.schema = read.schema if read else Schema()
        self.fragments: list[Fragment] = list(read.fragments) if read else []
        # Copies: the builder edits index bitmaps, and its inputs stay untouched.
        self.indices: list[IndexMetadata] = [replace(i) for i in read_indices]
        # An absent max_fragment_id (older writers leave out a 0) must not
        # hand out an id a fragment already has.
        present = max((f.id for f in read.fragments), default=None) if read else None
        self.max_fragment_id = _max_or_none(read.max_fragment_id if read else None, present)
        if read is None:
            self.stable_row_ids = settings.stable_row_ids
        else:
            self.stable_row_ids = bool(read.reader_feature_flags & feature_flags.STABLE_ROW_IDS)
        self.next_row_id = read.next_row_id if read else 0
        self.config = dict(read.config) if read else {}
        self.table_metadata = dict(read.table_metadata) if read else {}
        self.base_paths = list(read.base_paths) if read else []
        self.data_format = (
            read.data_format if read and read.data_format else DataStorageFormat("lance", settings.data_storage_version)
        )

    # Fragment ids are assigned from the table's high-water mark, for every
    # operation, so that an id is never used twice in a table's history
    # (table format: fragments). pylance restarts at 0 on Overwrite; see
    # docs/spec-discrepancies.md.
    def assign_ids(self, new_fragments: list[Fragment]) -> list[Fragment]:
        next_id = 0 if self.max_fragment_id is None else self.max_fragment_id + 1
        assigned = []
        for fragment in new_fragments:
            fragment = replace(fragment, id=next_id)
            next_id += 1
            if self.stable_row_ids:
                fragment = self.with_new_row_ids(fragment)
            assigned.append(fragment)
        if assigned:
            self.max_fragment_id = next_id - 1
        return assigned

    def with_new_row_ids(self, fragment: Fragment) -> Fragment:
        """Fresh row ids (from next_row_id) and this version as the created and
        last-updated version of every row (row id & lineage)."""
        rows = fragment.physical_rows
        row_ids = range(self.next_row_id, self.next_row_id + rows)
        self.next_row_id += rows
        versions = [self.new_version] * rows
        return replace(
            fragment,
            row_id_sequence=encode_row_id_sequence(list(row_ids)),
            created_at_version_sequence=encode_version_sequence(versions),
            last_updated_at_version_sequence=encode_version_sequence(versions),
        )

    def replace_fragments(self, updated: list[Fragment], removed_ids=()) -> None:
        by_id = {f.id: f for f in updated}
        removed = set(removed_ids)
        self.fragments = [by_id.get(f.id, f) for f in self.fragments if f.id not in removed]

    def keep_indices_on_existing_fields(self) -> None:
        present = set(self.schema.field_ids())
        self.indices = [i for i in self.indices if all(field_id in present for field_id in i.fields)]

    def finish(self, transaction: Transaction) -> tuple[Manifest, list[IndexMetadata]]:
        self.fragments.sort(key=lambda f: f.id)
        if self.fragments:
            highest = max(f.id for f in self.fragments)
            if self.max_fragment_id is None or highest > self.max_fragment_id:
                self.max_fragment_id = highest
        manifest = Manifest(
            version=self.new_version,
            schema=self.schema,
            fragments=self.fragments,
            writer_version=self.settings.writer_version,
            data_format=self.data_format,
            max_fragment_id=self.max_fragment_id,
            next_row_id=self.next_row_id if self.stable_row_ids else 0,
            transaction_file=self.settings.transaction_file,
            timestamp=self.settings.timestamp,
            tag=transaction.tag,
            config=self.config,
            table_metadata=self.table_metadata,
            base_paths=self.base_paths,
            branch=self.read.branch if self.read else None,
        )
        manifest.reader_feature_flags, manifest.writer_feature_flags = content_feature_flags(
            manifest, stable_row_ids=self.stable_row_ids
        )
        return manifest, self.indices


def content_feature_flags(manifest: Manifest, *, stable_row_ids: bool) -> tuple[int, int]:
    """Reader and writer feature flags implied by what the manifest holds
    (versioning: feature flags). Table config concerns writers only."""
    reader = writer = 0
    if any(f.deletion_file is not None for f in manifest.fragments):
        reader |= feature_flags.DELETION_FILES
        writer |= feature_flags.DELETION_FILES
    if stable_row_ids:
        reader |= feature_flags.STABLE_ROW_IDS
        writer |= feature_flags.STABLE_ROW_IDS
    if manifest.config:
        writer |= feature_flags.TABLE_CONFIG
    if manifest.base_paths:
        reader |= feature_flags.BASE_PATHS
        writer |= feature_flags.BASE_PATHS
    return reader, writer


# Each operation's effect on the manifest being built is registered beside
# its handler; an operation without one is refused.
@functools.singledispatch
def _apply(operation: Operation, b: _Builder) -> None:
    raise UnsupportedFeatureError(
        "commit", f"the reference writer does not commit {type(operation).__name__} operations"
    )


@_apply.register(Append)
def _apply_append(op: Append, b: _Builder) -> None:
    b.fragments.extend(b.assign_ids(op.fragments))


@_apply.register(Overwrite)
def _apply_overwrite(op: Overwrite, b: _Builder) -> None:
    b.schema = op.schema
    b.fragments = b.assign_ids(op.fragments)
    b.indices = []
    b.config.update(op.config_upsert_values)
    if op.initial_bases:
        if b.read is not None:
            raise InvalidOperationError("base paths can only be declared when the dataset is created")
        b.base_paths = list(op.initial_bases)


@_apply.register(Delete)
def _apply_delete(op: Delete, b: _Builder) -> None:
    b.replace_fragments(op.updated_fragments, op.deleted_fragment_ids)
    _drop_from_index_bitmaps(b, set(op.deleted_fragment_ids))


@_apply.register(Update)
def _apply_update(op: Update, b: _Builder) -> None:
    """Rows moved to new fragments (REWRITE_ROWS: the old fragments only gain
    deletions, so indices still cover what is left of them), or columns
    rewritten in place (REWRITE_COLUMNS: indices on those columns stop
    covering the rewritten fragments). Merged MemWAL generations it carries
    are recorded as an UpdateMemWalState records them."""
    b.replace_fragments(op.updated_fragments, op.removed_fragment_ids)
    _drop_from_index_bitmaps(b, set(op.removed_fragment_ids))
    if op.fields_modified and op.update_mode == UpdateMode.REWRITE_COLUMNS:
        modified = set(op.fields_modified)
        touched = {f.id for f in op.updated_fragments}
        for index in b.indices:
            if modified & set(index.fields):
                _drop_from_index_bitmaps(b, touched, only=index)
    b.fragments.extend(b.assign_ids(op.new_fragments))
    # A merge-insert that merged MemWAL generations records them in the same
    # commit (upstream mem_wal.md, MemTable Merger).
    _record_merged_generations(b, op.merged_generations, "Update")


@_apply.register(Merge)
def _apply_merge(op: Merge, b: _Builder) -> None:
    """New columns over the same rows. With stable row ids every row counts as
    updated by this version (row id & lineage: last-updated-at versions)."""
    b.schema = op.schema
    b.fragments = list(op.fragments)
    if b.stable_row_ids:
        b.fragments = [
            replace(f, last_updated_at_version_sequence=encode_version_sequence([b.new_version] * f.physical_rows))
            for f in b.fragments
        ]
    b.keep_indices_on_existing_fields()


@_apply.register(Project)
def _apply_project(op: Project, b: _Builder) -> None:
    # The Project message carries fields only: schema metadata is unchanged.
    b.schema = Schema(list(op.schema.fields), dict(b.schema.metadata))
    remaining = set(op.schema.field_ids())
    b.fragments = [
        replace(f, files=[d for d in f.files if any(field_id in remaining for field_id in d.fields)])
        for f in b.fragments
    ]
    b.keep_indices_on_existing_fields()


@_apply.register(ReserveFragments)
def _apply_reserve(op: ReserveFragments, b: _Builder) -> None:
    b.max_fragment_id = (b.max_fragment_id if b.max_fragment_id is not None else -1) + op.num_fragments


@_apply.register(ReserveRowIds)
def _apply_reserve_row_ids(op: ReserveRowIds, b: _Builder) -> None:
    """Transaction page, "ReserveRowIds": next_row_id moves past the
    reserved ids, nothing else changes; a table without stable row ids has
    no row ids to reserve."""
    if not b.stable_row_ids:
        raise InvalidOperationError("ReserveRowIds needs a table with stable row ids; this one has none")
    b.next_row_id += op.num_row_ids


@_apply.register(DataOverlay)
def _refuse_data_overlay(op: DataOverlay, b: _Builder) -> None:
    raise UnsupportedFeatureError(
        "commit",
        "the reference writer does not commit DataOverlay operations: data overlay files are experimental "
        "(feature flag 64) and their page is not among the pages the reference restates",
    )


@_apply.register(Rewrite)
def _apply_rewrite(op: Rewrite, b: _Builder) -> None:
    """Compaction: each group's old fragments are replaced by new ones whose
    ids were reserved earlier. With stable row ids the new fragments carry the
    moved rows' ids and versions. Indices stop covering the rewritten
    fragments in every case: index payloads locate rows by row address
    (upstream row_id_lineage.md), and the addresses changed."""
    groups = op.groups or [_legacy_group(op)]
    for group in groups:
        old_ids = {f.id for f in group.old_fragments}
        if b.stable_row_ids and any(f.row_id_sequence is None for f in group.new_fragments):
            raise InvalidOperationError("rewritten fragments must carry the row ids of the rows they moved")
        b.fragments = [f for f in b.fragments if f.id not in old_ids] + list(group.new_fragments)
        _drop_from_index_bitmaps(b, old_ids)


def _legacy_group(op: Rewrite) -> RewriteGroup:
    return RewriteGroup(old_fragments=op.old_fragments, new_fragments=op.new_fragments)


@_apply.register(CreateIndex)
def _apply_create_index(op: CreateIndex, b: _Builder) -> None:
    replaced_names = {i.name for i in op.new_indices}
    removed = {i.uuid for i in op.removed_indices}
    b.indices = [i for i in b.indices if i.name not in replaced_names and i.uuid not in removed]
    b.indices.extend(op.new_indices)


@_apply.register(UpdateConfig)
def _apply_update_config(op: UpdateConfig, b: _Builder) -> None:
    apply_update_map(b.config, op.config_updates)
    apply_update_map(b.table_metadata, op.table_metadata_updates)
    # The deprecated form of the same changes.
    b.config.update(op.upsert_values)
    for key in op.delete_keys:
        b.config.pop(key, None)

    field_updates = {
        field_id: UpdateMap([UpdateMapEntry(k, v) for k, v in values.items()])
        for field_id, values in op.field_metadata.items()
    }
    field_updates.update(op.field_metadata_updates)
    if not (op.schema_metadata_updates or op.schema_metadata or field_updates):
        return
    # Schema and field metadata hold bytes; updates carry UTF-8 text.
    fields = [replace(f, metadata=dict(f.metadata)) for f in b.schema.fields]
    schema = Schema(fields, dict(b.schema.metadata))
    apply_update_map(schema.metadata, op.schema_metadata_updates, encode=True)
    schema.metadata.update({k: v.encode() for k, v in op.schema_metadata.items()})
    for field_id, update in field_updates.items():
        field = schema.field_by_id(field_id)
        if field is None:
            raise InvalidOperationError(f"field metadata update names field {field_id}, which does not exist")
        apply_update_map(field.metadata, update, encode=True)
    b.schema = schema


def apply_update_map(target: dict, update: UpdateMap | None, *, encode: bool = False) -> None:
    """Apply an UpdateMap to ``target`` in place: replace or merge, and remove
    keys whose value is absent (public: the validator checks recorded
    UpdateConfig operations with it)."""
    if update is None:
        return
    if update.replace:
        target.clear()
    for entry in update.entries:
        if entry.value is None:
            target.pop(entry.key, None)
        else:
            target[entry.key] = entry.value.encode() if encode else entry.value


@_apply.register(DataReplacement)
def _apply_data_replacement(op: DataReplacement, b: _Builder) -> None:
    by_fragment: dict[int, list] = {}
    for group in op.replacements:
        by_fragment.setdefault(group.fragment_id, []).append(group.new_file)
    updated = []
    for fragment in b.fragments:
        new_files = by_fragment.pop(fragment.id, None)
        if not new_files:
            updated.append(fragment)
            continue
        files = list(fragment.files)
        for new_file in new_files:
            same = [i for i, d in enumerate(files) if sorted(d.fields) == sorted(new_file.fields)]
            if not same:
                raise InvalidOperationError(f"fragment {fragment.id} has no data file with fields {new_file.fields}")
            files[same[0]] = new_file
        updated.append(replace(fragment, files=files))
    if by_fragment:
        raise InvalidOperationError(f"data replacement names missing fragments {sorted(by_fragment)}")
    b.fragments = updated


@_apply.register(UpdateBases)
def _apply_update_bases(op: UpdateBases, b: _Builder) -> None:
    taken = {base.id for base in b.base_paths}
    for base in op.new_bases:
        if base.id in taken or any(base.path == other.path for other in b.base_paths):
            raise InvalidOperationError(f"base path {base.id} ({base.path}) is already declared")
        b.base_paths.append(base)
        taken.add(base.id)


#: The name of a table's MemWAL index entry (upstream mem_wal.md: "MemWAL Index").
MEM_WAL_INDEX_NAME = "__lance_mem_wal"
MEM_WAL_DETAILS_TYPE = "lance.table.MemWalIndexDetails"


@_apply.register(UpdateMemWalState)
def _apply_update_mem_wal_state(op: UpdateMemWalState, b: _Builder) -> None:
    """Record merge progress in the MemWAL index (upstream mem_wal.md: "MemWAL
    Index Details", merge progress; "Background Job Expectations", MemTable
    Merger; "Appendix 2: Concurrent Merger Example"; table.proto,
    ``MemWalIndexDetails.merged_generations``).

    ``merged_generations`` keeps, per region, the last generation merged into
    the base table. Each entry of the operation raises its region's generation,
    or adds the region when it is not listed yet; every other field of the
    details (region specs, maintained indices, catch-up, snapshots, and fields
    this proto does not know) is carried over as it is. The index entry is
    written anew, as upstream does whenever the details change: a fresh uuid,
    this version as its ``dataset_version``, the commit time as ``created_at``;
    still no fields, fragment bitmap or files.

    Refused: a table without exactly one MemWAL index (merges record progress
    of regions that index configures; upstream would create a bare index
    instead: docs/spec-discrepancies.md, "Choices of the reference
    implementation", item 8); a region named twice or not by a
    version-4 UUID; a generation at or below the one recorded, because merge
    progress never goes back and an equal generation was merged already (the
    second merger of Appendix 2 aborts). An empty list changes nothing.
    """
    _record_merged_generations(b, op.merged_generations, "UpdateMemWalState")


def _record_merged_generations(b: _Builder, merged_generations: list, operation: str) -> None:
    """Raise each named region's merged generation in the table's MemWAL
    index (see :func:`_apply_update_mem_wal_state`, whose rules and refusals
    these are); an Update made by a merge-insert carries the same list."""
    if not merged_generations:
        return
    position, entry, details = _mem_wal_index(b.indices)
    recorded = {bytes(m.region_id.uuid): m for m in details.merged_generations}
    seen: set[bytes] = set()
    for merged in merged_generations:
        region = _region_id_bytes(merged.region_id)
        if region in seen:
            raise InvalidOperationError(f"region {merged.region_id} is named twice in one {operation}")
        seen.add(region)
        current = recorded.get(region)
        floor = current.generation if current is not None else 0
        if merged.generation <= floor:
            raise InvalidOperationError(
                f"region {merged.region_id}: generation {merged.generation} is not above the merged generation "
                f"{floor} already recorded; merge progress never goes back",
            )
        if current is None:
            current = details.merged_generations.add()
            current.region_id.uuid = region
            recorded[region] = current
        current.generation = merged.generation
    seconds, nanos = b.settings.timestamp
    b.indices[position] = replace(
        entry,
        # Derived, not drawn: the transaction's uuid is already fresh, and a
        # drawn one would make building depend on more than its arguments.
        uuid=str(uuid_module.uuid5(uuid_module.NAMESPACE_OID, f"{b.transaction_uuid}/{MEM_WAL_INDEX_NAME}")),
        dataset_version=b.new_version,
        details=details.SerializeToString(deterministic=True),
        created_at=seconds * 1000 + nanos // 1_000_000,
    )


def _mem_wal_index(indices: list[IndexMetadata]) -> tuple[int, IndexMetadata, table_pb2.MemWalIndexDetails]:
    """The position, entry and decoded details of the table's one MemWAL index."""
    found = [(i, index) for i, index in enumerate(indices) if index.name == MEM_WAL_INDEX_NAME]
    if not found:
        raise InvalidOperationError(f"the table has no MemWAL index ({MEM_WAL_INDEX_NAME}) to record merges in")
    if len(found) > 1:
        raise LanceFormatError("commit", f"the table has {len(found)} MemWAL indices; it may have at most one")
    position, entry = found[0]
    if (entry.type_url or "").rsplit("/", 1)[-1].lower() != MEM_WAL_DETAILS_TYPE.lower():
        raise LanceFormatError(
            "commit", f"index {MEM_WAL_INDEX_NAME} has details of type {entry.type_url!r}, not {MEM_WAL_DETAILS_TYPE}"
        )
    details = table_pb2.MemWalIndexDetails()
    try:
        details.ParseFromString(entry.details)
    except Exception as exc:  # noqa: BLE001 - protobuf raises several types on bad bytes
        raise LanceFormatError("commit", f"the details of index {MEM_WAL_INDEX_NAME} do not decode: {exc}") from None
    return position, entry, details


def _region_id_bytes(region_id: str | None) -> bytes:
    """A region id as its 16 bytes; regions are named by version-4 UUIDs
    (table.proto, ``MergedGeneration.region_id``)."""
    if region_id is None:
        raise InvalidOperationError("a merged generation names no region")
    try:
        parsed = uuid_module.UUID(region_id)
    except ValueError:
        raise InvalidOperationError(f"region id {region_id!r} is not a UUID") from None
    if parsed.version != 4 or parsed.variant != uuid_module.RFC_4122:
        raise InvalidOperationError(f"region id {region_id} is not a version-4 UUID")
    return parsed.bytes


def _drop_from_index_bitmaps(b: _Builder, fragment_ids: set[int], *, only: IndexMetadata | None = None) -> None:
    if not fragment_ids:
        return
    for index in [only] if only else b.indices:
        covered = index.fragment_ids()
        if covered is not None and fragment_ids & set(covered):
            index.fragment_bitmap = encode_fragment_bitmap(set(covered) - fragment_ids)


def _restored(read: Manifest, source: ManifestFile, transaction: Transaction, settings: CommitSettings):
    """A Restore: the content of the old version under a new version number.
    The high-water marks (max_fragment_id, next_row_id) never go back."""
    old = source.manifest
    manifest = replace(
        old,
        version=read.version + 1,
        transaction_file=settings.transaction_file,
        timestamp=settings.timestamp,
        writer_version=settings.writer_version,
        tag=transaction.tag,
        max_fragment_id=_max_or_none(read.max_fragment_id, old.max_fragment_id),
        next_row_id=max(read.next_row_id, old.next_row_id),
        index_section=None,
        transaction_section=None,
        transaction_section_field=None,
    )
    return manifest, [replace(i) for i in (source.indices or [])]


def _max_or_none(a: int | None, b: int | None) -> int | None:
    values = [v for v in (a, b) if v is not None]
    return max(values) if values else None
