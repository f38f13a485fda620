"""Transactions (transaction specification; ``transaction.proto``).

A :class:`Transaction` says what one commit changed: the version it was built
against (``read_version``), a ``uuid``, an optional ``tag``, free-form
``properties`` and exactly one *operation*. Each operation of
``transaction.proto`` has a plain dataclass here (the two the newest proto
adds, DataOverlay and ReserveRowIds, in :mod:`reference_impl.newer_operations`),
named after its message
(:class:`Append`, :class:`Delete`, ...); nested messages reuse the data model
(:class:`~reference_impl.fragments.Fragment`,
:class:`~reference_impl.fragments.DataFile`,
:class:`~reference_impl.schema.Schema`,
:class:`~reference_impl.index_metadata.IndexMetadata`,
:class:`~reference_impl.manifest.BasePath`). Each class has ``NAME``, the
field name of its oneof case (``"append"``, ``"create_index"``, ...).

Round trip. ``Transaction.from_proto(m).to_proto() == m`` for every message
this proto describes: optional fields and sub-messages keep their presence
(``None`` means absent), unknown enum values are kept as plain ints, and
top-level fields this proto does not know (a newer operation, say) are kept as
their serialized bytes in ``Transaction.unknown_fields`` and written back
unchanged. Unknown fields *inside* a known operation are not kept.

Unknown operations. A transaction whose operation is unset, or is a oneof
case this proto does not know, gets an :class:`UnknownOperation`;
``operation_name`` is then None. Conflict resolution cannot know what such a
transaction touched and must treat it as conflicting with everything
(:attr:`Transaction.has_known_operation` says which case applies).

Files. ``_transactions/{read_version}-{uuid}.txn`` holds one serialized
``Transaction`` with no length prefix or framing (:func:`read_transaction_file`,
:func:`write_transaction_file`). Manifests may also embed the transaction
(:mod:`reference_impl.manifest_file`).

Size. One cohesive concept (about 900 lines): the messages of
``transaction.proto``, one dataclass per operation, each with its own
conversion to and from protobuf; conflict resolution lives in
:mod:`reference_impl.commit.conflicts`, not here.
"""

from __future__ import annotations

import enum
import re
import uuid as uuid_module
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Union

from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet

from . import entropy
from .errors import CorruptFileError, PathEscapeError
from .fragments import DataFile, Fragment, FragmentDecoder
from .index_metadata import IndexFile, IndexMetadata, uuid_from_bytes
from .manifest import BasePath
from .newer_operations import DataOverlay, ReserveRowIds, foreign_operation
from .schema import Schema
from .storage import Storage
from .wire import table_pb2, transaction_pb2

TRANSACTIONS_DIR = "_transactions"
#: Reserved property key holding a commit message.
COMMIT_MESSAGE_KEY = "__lance_commit_message"

_PB = transaction_pb2.Transaction


class _Invalid(Exception):
    """Raised inside decoding; turned into a CorruptFileError with context."""


# -- shared helpers -------------------------------------------------------------


def _set_message(parent, field_name: str, value) -> None:
    """Make a sub-message present and give it ``value``'s content (presence
    survives even when ``value`` is empty)."""
    target = getattr(parent, field_name)
    target.SetInParent()
    target.MergeFrom(value)


def _fragments(msgs, decode: FragmentDecoder) -> list[Fragment]:
    # [:]: iterate a list, not the repeated field (see Fragment.from_proto).
    return list(map(decode, msgs[:]))


def _fragment_protos(fragments: list[Fragment]) -> list:
    return [f.to_proto() for f in fragments]


def _index(msg) -> IndexMetadata:
    try:
        return IndexMetadata.from_proto(msg)
    except ValueError as exc:
        raise _Invalid(f"index {msg.name!r}: {exc}") from None


def _uuid_or_none(parent, field_name: str) -> str | None:
    if not parent.HasField(field_name):
        return None
    try:
        return uuid_from_bytes(getattr(parent, field_name).uuid)
    except ValueError as exc:
        raise _Invalid(f"{field_name}: {exc}") from None


def _set_uuid(parent, field_name: str, value: str | None) -> None:
    if value is not None:
        _set_message(parent, field_name, table_pb2.UUID(uuid=uuid_module.UUID(value).bytes))


def _schema_from(fields, metadata) -> Schema:
    return Schema.from_protos(fields, metadata)


# -- operations -----------------------------------------------------------------


@dataclass
class Append:
    """New fragments; their ids are assigned when the commit is built."""

    NAME = "append"
    fragments: list[Fragment] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.Append, decode_fragment: FragmentDecoder = Fragment.from_proto) -> Append:
        return cls(_fragments(msg.fragments, decode_fragment))

    def to_proto(self) -> _PB.Append:
        return _PB.Append(fragments=_fragment_protos(self.fragments))


@dataclass
class Delete:
    """Fragments given a new deletion file, and fragments removed whole."""

    NAME = "delete"
    updated_fragments: list[Fragment] = dc_field(default_factory=list)
    deleted_fragment_ids: list[int] = dc_field(default_factory=list)
    predicate: str = ""

    @classmethod
    def from_proto(cls, msg: _PB.Delete, decode_fragment: FragmentDecoder = Fragment.from_proto) -> Delete:
        return cls(_fragments(msg.updated_fragments, decode_fragment), list(msg.deleted_fragment_ids), msg.predicate)

    def to_proto(self) -> _PB.Delete:
        return _PB.Delete(
            updated_fragments=_fragment_protos(self.updated_fragments),
            deleted_fragment_ids=self.deleted_fragment_ids,
            predicate=self.predicate,
        )


@dataclass
class Overwrite:
    """A whole new table (also how a table is created)."""

    NAME = "overwrite"
    fragments: list[Fragment] = dc_field(default_factory=list)
    #: ``schema`` plus ``schema_metadata`` of the message.
    schema: Schema = dc_field(default_factory=Schema)
    config_upsert_values: dict[str, str] = dc_field(default_factory=dict)
    initial_bases: list[BasePath] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.Overwrite, decode_fragment: FragmentDecoder = Fragment.from_proto) -> Overwrite:
        return cls(
            fragments=_fragments(msg.fragments, decode_fragment),
            schema=_schema_from(msg.schema, msg.schema_metadata),
            config_upsert_values=dict(msg.config_upsert_values),
            initial_bases=[BasePath.from_proto(b) for b in msg.initial_bases],
        )

    def to_proto(self) -> _PB.Overwrite:
        msg = _PB.Overwrite(
            fragments=_fragment_protos(self.fragments),
            schema=self.schema.field_protos(),
            initial_bases=[b.to_proto() for b in self.initial_bases],
        )
        msg.schema_metadata.update(self.schema.metadata)
        msg.config_upsert_values.update(self.config_upsert_values)
        return msg


@dataclass
class CreateIndex:
    """Indices added or replaced (``removed_indices`` are the replaced ones);
    with no new indices, indices removed."""

    NAME = "create_index"
    new_indices: list[IndexMetadata] = dc_field(default_factory=list)
    removed_indices: list[IndexMetadata] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.CreateIndex) -> CreateIndex:
        return cls([_index(m) for m in msg.new_indices], [_index(m) for m in msg.removed_indices])

    def to_proto(self) -> _PB.CreateIndex:
        return _PB.CreateIndex(
            new_indices=[i.to_proto() for i in self.new_indices],
            removed_indices=[i.to_proto() for i in self.removed_indices],
        )


@dataclass
class RewriteGroup:
    old_fragments: list[Fragment] = dc_field(default_factory=list)
    new_fragments: list[Fragment] = dc_field(default_factory=list)

    @classmethod
    def from_proto(
        cls, msg: _PB.Rewrite.RewriteGroup, decode_fragment: FragmentDecoder = Fragment.from_proto
    ) -> RewriteGroup:
        return cls(_fragments(msg.old_fragments, decode_fragment), _fragments(msg.new_fragments, decode_fragment))

    def to_proto(self) -> _PB.Rewrite.RewriteGroup:
        return _PB.Rewrite.RewriteGroup(
            old_fragments=_fragment_protos(self.old_fragments),
            new_fragments=_fragment_protos(self.new_fragments),
        )


@dataclass
class RewrittenIndex:
    """An index rebuilt over rewritten fragments."""

    old_id: str | None = None
    new_id: str | None = None
    #: ``new_index_details`` (a ``google.protobuf.Any``): its type URL, or None
    #: when absent, and its payload.
    new_index_details_type_url: str | None = None
    new_index_details: bytes = b""
    new_index_version: int = 0
    new_index_files: list[IndexFile] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.Rewrite.RewrittenIndex) -> RewrittenIndex:
        has_details = msg.HasField("new_index_details")
        return cls(
            old_id=_uuid_or_none(msg, "old_id"),
            new_id=_uuid_or_none(msg, "new_id"),
            new_index_details_type_url=msg.new_index_details.type_url if has_details else None,
            new_index_details=bytes(msg.new_index_details.value) if has_details else b"",
            new_index_version=msg.new_index_version,
            new_index_files=[IndexFile(f.path, f.size_bytes) for f in msg.new_index_files],
        )

    def to_proto(self) -> _PB.Rewrite.RewrittenIndex:
        msg = _PB.Rewrite.RewrittenIndex(
            new_index_version=self.new_index_version,
            new_index_files=[table_pb2.IndexFile(path=f.path, size_bytes=f.size_bytes) for f in self.new_index_files],
        )
        _set_uuid(msg, "old_id", self.old_id)
        _set_uuid(msg, "new_id", self.new_id)
        if self.new_index_details_type_url is not None:
            msg.new_index_details.SetInParent()
            msg.new_index_details.type_url = self.new_index_details_type_url
            msg.new_index_details.value = self.new_index_details
        return msg


@dataclass
class Rewrite:
    """Rows moved without change (compaction). ``old_fragments`` and
    ``new_fragments`` are the older, ungrouped form; ``groups`` the current."""

    NAME = "rewrite"
    old_fragments: list[Fragment] = dc_field(default_factory=list)
    new_fragments: list[Fragment] = dc_field(default_factory=list)
    groups: list[RewriteGroup] = dc_field(default_factory=list)
    rewritten_indices: list[RewrittenIndex] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.Rewrite, decode_fragment: FragmentDecoder = Fragment.from_proto) -> Rewrite:
        return cls(
            old_fragments=_fragments(msg.old_fragments, decode_fragment),
            new_fragments=_fragments(msg.new_fragments, decode_fragment),
            groups=[RewriteGroup.from_proto(g, decode_fragment) for g in msg.groups],
            rewritten_indices=[RewrittenIndex.from_proto(r) for r in msg.rewritten_indices],
        )

    def to_proto(self) -> _PB.Rewrite:
        return _PB.Rewrite(
            old_fragments=_fragment_protos(self.old_fragments),
            new_fragments=_fragment_protos(self.new_fragments),
            groups=[g.to_proto() for g in self.groups],
            rewritten_indices=[r.to_proto() for r in self.rewritten_indices],
        )


@dataclass
class Merge:
    """New columns: every fragment with its new data files, and the new schema."""

    NAME = "merge"
    fragments: list[Fragment] = dc_field(default_factory=list)
    schema: Schema = dc_field(default_factory=Schema)
    preserves_nullability: bool = False

    @classmethod
    def from_proto(cls, msg: _PB.Merge, decode_fragment: FragmentDecoder = Fragment.from_proto) -> Merge:
        return cls(
            _fragments(msg.fragments, decode_fragment),
            _schema_from(msg.schema, msg.schema_metadata),
            msg.preserves_nullability,
        )

    def to_proto(self) -> _PB.Merge:
        msg = _PB.Merge(
            fragments=_fragment_protos(self.fragments),
            schema=self.schema.field_protos(),
            preserves_nullability=self.preserves_nullability,
        )
        msg.schema_metadata.update(self.schema.metadata)
        return msg


@dataclass
class Project:
    """A new schema over the same data (columns dropped, renamed, reordered).
    The message carries no schema metadata: ``schema.metadata`` stays empty."""

    NAME = "project"
    schema: Schema = dc_field(default_factory=Schema)
    preserves_nullability: bool = False

    @classmethod
    def from_proto(cls, msg: _PB.Project) -> Project:
        return cls(_schema_from(msg.schema, {}), msg.preserves_nullability)

    def to_proto(self) -> _PB.Project:
        if self.schema.metadata:
            raise ValueError("a Project operation cannot carry schema metadata")
        return _PB.Project(schema=self.schema.field_protos(), preserves_nullability=self.preserves_nullability)


@dataclass
class Restore:
    NAME = "restore"
    version: int = 0

    @classmethod
    def from_proto(cls, msg: _PB.Restore) -> Restore:
        return cls(msg.version)

    def to_proto(self) -> _PB.Restore:
        return _PB.Restore(version=self.version)


@dataclass
class ReserveFragments:
    NAME = "reserve_fragments"
    num_fragments: int = 0

    @classmethod
    def from_proto(cls, msg: _PB.ReserveFragments) -> ReserveFragments:
        return cls(msg.num_fragments)

    def to_proto(self) -> _PB.ReserveFragments:
        return _PB.ReserveFragments(num_fragments=self.num_fragments)


@dataclass
class Clone:
    """A copy of a table (or of one of its branches) at a version."""

    NAME = "clone"
    is_shallow: bool = False
    ref_name: str | None = None
    ref_version: int = 0
    ref_path: str = ""
    branch_name: str | None = None

    @classmethod
    def from_proto(cls, msg: _PB.Clone) -> Clone:
        return cls(
            is_shallow=msg.is_shallow,
            ref_name=msg.ref_name if msg.HasField("ref_name") else None,
            ref_version=msg.ref_version,
            ref_path=msg.ref_path,
            branch_name=msg.branch_name if msg.HasField("branch_name") else None,
        )

    def to_proto(self) -> _PB.Clone:
        msg = _PB.Clone(is_shallow=self.is_shallow, ref_version=self.ref_version, ref_path=self.ref_path)
        if self.ref_name is not None:
            msg.ref_name = self.ref_name
        if self.branch_name is not None:
            msg.branch_name = self.branch_name
        return msg


@dataclass
class MergedGeneration:
    """A MemWAL generation of one region that has been merged."""

    region_id: str | None = None
    generation: int = 0

    @classmethod
    def from_proto(cls, msg: table_pb2.MergedGeneration) -> MergedGeneration:
        return cls(_uuid_or_none(msg, "region_id"), msg.generation)

    def to_proto(self) -> table_pb2.MergedGeneration:
        msg = table_pb2.MergedGeneration(generation=self.generation)
        _set_uuid(msg, "region_id", self.region_id)
        return msg


@dataclass
class ExactKeySetFilter:
    key_hashes: list[int] = dc_field(default_factory=list)


@dataclass
class BloomFilter:
    bitmap: bytes = b""
    num_bits: int = 0
    number_of_items: int = 0
    probability: float = 0.0


@dataclass
class KeyExistenceFilter:
    """Keys an upsert inserted, exactly or as a Bloom filter (or neither)."""

    field_ids: list[int] = dc_field(default_factory=list)
    data: ExactKeySetFilter | BloomFilter | None = None

    @classmethod
    def from_proto(cls, msg: _PB.KeyExistenceFilter) -> KeyExistenceFilter:
        which = msg.WhichOneof("data")
        data: ExactKeySetFilter | BloomFilter | None = None
        if which == "exact":
            data = ExactKeySetFilter(list(msg.exact.key_hashes))
        elif which == "bloom":
            b = msg.bloom
            data = BloomFilter(bytes(b.bitmap), b.num_bits, b.number_of_items, b.probability)
        return cls(list(msg.field_ids), data)

    def to_proto(self) -> _PB.KeyExistenceFilter:
        msg = _PB.KeyExistenceFilter(field_ids=self.field_ids)
        if isinstance(self.data, ExactKeySetFilter):
            _set_message(msg, "exact", _PB.ExactKeySetFilter(key_hashes=self.data.key_hashes))
        elif isinstance(self.data, BloomFilter):
            _set_message(
                msg,
                "bloom",
                _PB.BloomFilter(
                    bitmap=self.data.bitmap,
                    num_bits=self.data.num_bits,
                    number_of_items=self.data.number_of_items,
                    probability=self.data.probability,
                ),
            )
        return msg


class UpdateMode(enum.IntEnum):
    REWRITE_ROWS = 0
    REWRITE_COLUMNS = 1


#: ``Update.update_mode`` as a transaction records it: an :class:`UpdateMode`,
#: or the plain int of a mode this proto does not know. proto3 enums are open,
#: so the field can hold any int32; keeping the number keeps the round trip
#: exact (module docstring) and lets the validator report it.
#: ``isinstance(value, UpdateMode)`` tells the two apart (an
#: :class:`UpdateMode` is an int too).
UpdateModeOrUnknown = UpdateMode | int


@dataclass
class Update:
    """Rows changed in place or moved; the number of rows stays the same."""

    NAME = "update"
    removed_fragment_ids: list[int] = dc_field(default_factory=list)
    updated_fragments: list[Fragment] = dc_field(default_factory=list)
    new_fragments: list[Fragment] = dc_field(default_factory=list)
    fields_modified: list[int] = dc_field(default_factory=list)
    merged_generations: list[MergedGeneration] = dc_field(default_factory=list)
    fields_for_preserving_frag_bitmap: list[int] = dc_field(default_factory=list)
    update_mode: UpdateModeOrUnknown = UpdateMode.REWRITE_ROWS
    inserted_rows: KeyExistenceFilter | None = None
    #: fragment id -> updated row offsets.
    updated_fragment_offsets: dict[int, list[int]] = dc_field(default_factory=dict)
    #: fragment id -> updated row offsets as a serialized Roaring bitmap.
    updated_fragment_offset_bitmaps: dict[int, bytes] = dc_field(default_factory=dict)

    @classmethod
    def from_proto(cls, msg: _PB.Update, decode_fragment: FragmentDecoder = Fragment.from_proto) -> Update:
        mode = msg.update_mode
        return cls(
            removed_fragment_ids=list(msg.removed_fragment_ids),
            updated_fragments=_fragments(msg.updated_fragments, decode_fragment),
            new_fragments=_fragments(msg.new_fragments, decode_fragment),
            fields_modified=list(msg.fields_modified),
            merged_generations=[MergedGeneration.from_proto(g) for g in msg.merged_generations],
            fields_for_preserving_frag_bitmap=list(msg.fields_for_preserving_frag_bitmap),
            update_mode=UpdateMode(mode) if mode in UpdateMode._value2member_map_ else mode,
            inserted_rows=KeyExistenceFilter.from_proto(msg.inserted_rows) if msg.HasField("inserted_rows") else None,
            updated_fragment_offsets={k: list(v.values) for k, v in msg.updated_fragment_offsets.items()},
            updated_fragment_offset_bitmaps={k: bytes(v) for k, v in msg.updated_fragment_offset_bitmaps.items()},
        )

    def to_proto(self) -> _PB.Update:
        msg = _PB.Update(
            removed_fragment_ids=self.removed_fragment_ids,
            updated_fragments=_fragment_protos(self.updated_fragments),
            new_fragments=_fragment_protos(self.new_fragments),
            fields_modified=self.fields_modified,
            merged_generations=[g.to_proto() for g in self.merged_generations],
            fields_for_preserving_frag_bitmap=self.fields_for_preserving_frag_bitmap,
            # protoc's stubs want the enum's own class, which no int converts
            # to, although the runtime takes any int (proto3 enums are open).
            update_mode=int(self.update_mode),  # type: ignore[arg-type]
        )
        if self.inserted_rows is not None:
            _set_message(msg, "inserted_rows", self.inserted_rows.to_proto())
        for fragment_id, offsets in self.updated_fragment_offsets.items():
            msg.updated_fragment_offsets[fragment_id].values.extend(offsets)
        for fragment_id, bitmap in self.updated_fragment_offset_bitmaps.items():
            msg.updated_fragment_offset_bitmaps[fragment_id] = bitmap
        return msg


@dataclass
class UpdateMapEntry:
    """Set ``key`` to ``value``; remove ``key`` when ``value`` is None."""

    key: str
    value: str | None = None


@dataclass
class UpdateMap:
    entries: list[UpdateMapEntry] = dc_field(default_factory=list)
    #: Replace the whole map rather than merge into it.
    replace: bool = False

    @classmethod
    def from_proto(cls, msg: _PB.UpdateMap) -> UpdateMap:
        return cls(
            [UpdateMapEntry(e.key, e.value if e.HasField("value") else None) for e in msg.update_entries],
            msg.replace,
        )

    def to_proto(self) -> _PB.UpdateMap:
        msg = _PB.UpdateMap(replace=self.replace)
        for entry in self.entries:
            out = msg.update_entries.add(key=entry.key)
            if entry.value is not None:
                out.value = entry.value
        return msg

    def apply(self, current: dict[str, str]) -> dict[str, str]:
        """The map after this update."""
        result = {} if self.replace else dict(current)
        for entry in self.entries:
            if entry.value is None:
                result.pop(entry.key, None)
            else:
                result[entry.key] = entry.value
        return result


@dataclass
class UpdateConfig:
    """Changes to config, table metadata, schema metadata or field metadata.

    The last four attributes are the older form of the same changes
    (``upsert_values``, ``delete_keys``, ``schema_metadata``,
    ``field_metadata``), still found in older transactions.
    """

    NAME = "update_config"
    config_updates: UpdateMap | None = None
    table_metadata_updates: UpdateMap | None = None
    schema_metadata_updates: UpdateMap | None = None
    field_metadata_updates: dict[int, UpdateMap] = dc_field(default_factory=dict)
    upsert_values: dict[str, str] = dc_field(default_factory=dict)
    delete_keys: list[str] = dc_field(default_factory=list)
    schema_metadata: dict[str, str] = dc_field(default_factory=dict)
    field_metadata: dict[int, dict[str, str]] = dc_field(default_factory=dict)

    @classmethod
    def from_proto(cls, msg: _PB.UpdateConfig) -> UpdateConfig:
        def optional_map(name: str) -> UpdateMap | None:
            return UpdateMap.from_proto(getattr(msg, name)) if msg.HasField(name) else None

        return cls(
            config_updates=optional_map("config_updates"),
            table_metadata_updates=optional_map("table_metadata_updates"),
            schema_metadata_updates=optional_map("schema_metadata_updates"),
            field_metadata_updates={k: UpdateMap.from_proto(v) for k, v in msg.field_metadata_updates.items()},
            upsert_values=dict(msg.upsert_values),
            delete_keys=list(msg.delete_keys),
            schema_metadata=dict(msg.schema_metadata),
            field_metadata={k: dict(v.metadata) for k, v in msg.field_metadata.items()},
        )

    def to_proto(self) -> _PB.UpdateConfig:
        msg = _PB.UpdateConfig(delete_keys=self.delete_keys)
        for name in ("config_updates", "table_metadata_updates", "schema_metadata_updates"):
            value = getattr(self, name)
            if value is not None:
                _set_message(msg, name, value.to_proto())
        for field_id, update in self.field_metadata_updates.items():
            msg.field_metadata_updates[field_id].MergeFrom(update.to_proto())
        msg.upsert_values.update(self.upsert_values)
        msg.schema_metadata.update(self.schema_metadata)
        for field_id, metadata in self.field_metadata.items():
            msg.field_metadata[field_id].metadata.update(metadata)
        return msg


@dataclass
class DataReplacementGroup:
    fragment_id: int = 0
    new_file: DataFile | None = None

    @classmethod
    def from_proto(cls, msg: _PB.DataReplacementGroup) -> DataReplacementGroup:
        return cls(msg.fragment_id, DataFile.from_proto(msg.new_file) if msg.HasField("new_file") else None)

    def to_proto(self) -> _PB.DataReplacementGroup:
        msg = _PB.DataReplacementGroup(fragment_id=self.fragment_id)
        if self.new_file is not None:
            _set_message(msg, "new_file", self.new_file.to_proto())
        return msg


@dataclass
class DataReplacement:
    """Data files that take over some fields of some fragments."""

    NAME = "data_replacement"
    replacements: list[DataReplacementGroup] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.DataReplacement) -> DataReplacement:
        return cls([DataReplacementGroup.from_proto(g) for g in msg.replacements])

    def to_proto(self) -> _PB.DataReplacement:
        return _PB.DataReplacement(replacements=[g.to_proto() for g in self.replacements])


@dataclass
class UpdateMemWalState:
    NAME = "update_mem_wal_state"
    merged_generations: list[MergedGeneration] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.UpdateMemWalState) -> UpdateMemWalState:
        return cls([MergedGeneration.from_proto(g) for g in msg.merged_generations])

    def to_proto(self) -> _PB.UpdateMemWalState:
        return _PB.UpdateMemWalState(merged_generations=[g.to_proto() for g in self.merged_generations])


@dataclass
class UpdateBases:
    """Base paths added to the table."""

    NAME = "update_bases"
    new_bases: list[BasePath] = dc_field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: _PB.UpdateBases) -> UpdateBases:
        return cls([BasePath.from_proto(b) for b in msg.new_bases])

    def to_proto(self) -> _PB.UpdateBases:
        return _PB.UpdateBases(new_bases=[b.to_proto() for b in self.new_bases])


@dataclass
class UnknownOperation:
    """The operation is unset, or a kind this proto does not know.

    ``field_numbers`` lists the top-level fields of the transaction this
    implementation did not recognise (empty when the operation is simply
    unset); their bytes are in ``Transaction.unknown_fields``.
    """

    NAME = None
    field_numbers: tuple[int, ...] = ()


OPERATION_CLASSES = (
    Append,
    Delete,
    Overwrite,
    CreateIndex,
    Rewrite,
    Merge,
    Restore,
    ReserveFragments,
    Update,
    Project,
    UpdateConfig,
    DataReplacement,
    UpdateMemWalState,
    Clone,
    UpdateBases,
    DataOverlay,
    ReserveRowIds,
)
#: oneof case name -> operation class.
OPERATIONS = {cls.NAME: cls for cls in OPERATION_CLASSES}

#: The operations whose messages list fragments (decoded through a
#: ``FragmentDecoder``).
_LISTING_FRAGMENTS = frozenset({Append, Delete, Overwrite, Rewrite, Merge, Update})


Operation = Union[
    Append,
    Delete,
    Overwrite,
    CreateIndex,
    Rewrite,
    Merge,
    Restore,
    ReserveFragments,
    Update,
    Project,
    UpdateConfig,
    DataReplacement,
    UpdateMemWalState,
    Clone,
    UpdateBases,
    DataOverlay,
    ReserveRowIds,
    UnknownOperation,
]


def _operation_from_proto(name: str, msg, decode_fragment: FragmentDecoder) -> Operation:
    """The operation of oneof case ``name`` held in ``msg``."""
    operation_class: Any = OPERATIONS[name]  # their from_proto signatures differ, as _LISTING_FRAGMENTS says
    if operation_class in _LISTING_FRAGMENTS:
        return operation_class.from_proto(msg, decode_fragment)
    return operation_class.from_proto(msg)


# -- the transaction ----------------------------------------------------------------


@dataclass
class Transaction:
    read_version: int
    uuid: str
    operation: Operation | None
    tag: str = ""
    properties: dict[str, str] = dc_field(default_factory=dict)
    #: Serialized top-level fields this proto does not know, written back as is.
    unknown_fields: bytes = b""

    @property
    def operation_name(self) -> str | None:
        """The oneof case of the operation (``"append"``, ...); None when the
        operation is unset or unknown."""
        return getattr(self.operation, "NAME", None)

    @property
    def has_known_operation(self) -> bool:
        """False for an unset or unknown operation, which conflict resolution
        must treat as conflicting with every other transaction."""
        return self.operation_name is not None

    @property
    def commit_message(self) -> str | None:
        return self.properties.get(COMMIT_MESSAGE_KEY)

    @classmethod
    def create(cls, read_version: int, operation: Operation, *, tag: str = "", properties=None) -> Transaction:
        """A new transaction with a fresh random UUID."""
        return cls(read_version, str(entropy.current().uuid4()), operation, tag, dict(properties or {}))

    @classmethod
    def from_proto(
        cls,
        msg: transaction_pb2.Transaction,
        context: str = "transaction",
        decode_fragment: FragmentDecoder = Fragment.from_proto,
    ) -> Transaction:
        """Decode; :class:`CorruptFileError` (naming ``context``) when a
        nested value is invalid, such as a UUID that is not 16 bytes. The
        fragments an operation lists are decoded through ``decode_fragment``
        (as a manifest's are: :meth:`Manifest.from_proto`)."""
        which = msg.WhichOneof("operation")
        unknown = b""
        # The numbers of the top-level fields this proto does not know, in
        # the order they came, each once.
        unknown_numbers = tuple(dict.fromkeys(field.field_number for field in UnknownFieldSet(msg)))
        if which is not None and foreign_operation(which, getattr(msg, which)):
            # Kept whole as an unknown operation (newer_operations.foreign_operation).
            unknown_numbers = (msg.DESCRIPTOR.fields_by_name[which].number, *unknown_numbers)
            which = None
        # Every top-level field this proto knows is one of those cleared
        # below, so without unknown fields nothing is left: the copy (of
        # every fragment an Overwrite lists, say) is made only when there is
        # something to keep.
        if unknown_numbers:
            leftover = transaction_pb2.Transaction()
            leftover.CopyFrom(msg)
            for name in ("read_version", "uuid", "tag", "transaction_properties"):
                leftover.ClearField(name)
            if which is not None:
                leftover.ClearField(which)
            unknown = leftover.SerializeToString()
        try:
            if which is None:
                operation: Operation = UnknownOperation(unknown_numbers)
            else:
                operation = _operation_from_proto(which, getattr(msg, which), decode_fragment)
        except _Invalid as exc:
            raise CorruptFileError(context, f"{which} operation is invalid: {exc}") from None
        return cls(
            read_version=msg.read_version,
            uuid=msg.uuid,
            operation=operation,
            tag=msg.tag,
            properties=dict(msg.transaction_properties),
            unknown_fields=unknown,
        )

    def to_proto(self) -> transaction_pb2.Transaction:
        msg = transaction_pb2.Transaction(read_version=self.read_version, uuid=self.uuid, tag=self.tag)
        msg.transaction_properties.update(self.properties)
        operation = self.operation
        # An unset or unknown operation has no oneof case to fill; the fields
        # of an unknown one come back from ``unknown_fields``.
        if operation is not None and not isinstance(operation, UnknownOperation):
            _set_message(msg, operation.NAME, operation.to_proto())
        if self.unknown_fields:
            msg.MergeFromString(self.unknown_fields)
        return msg

    def file_name(self) -> str:
        """``{read_version}-{uuid}.txn``."""
        return f"{self.read_version}-{self.uuid}.txn"


# -- transaction files ----------------------------------------------------------------

_FILE_NAME = re.compile(r"^(\d+)-(.+)\.txn$")


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", ".."):
        raise ValueError(f"{name!r} is not a transaction file name")


def decode_transaction(
    data: bytes, path: str, name: str | None = None, *, embedded: tuple[bytes, Transaction] | None = None
) -> Transaction:
    """Decode a transaction file's bytes.

    Besides bytes that do not parse, refuses a transaction without a uuid and,
    when ``name`` has the ``{read_version}-{uuid}.txn`` form, one whose
    content does not match its name.

    ``embedded`` is a copy the manifest embeds, as (message bytes, decoded
    transaction). When ``data`` are the same bytes, that transaction is
    returned after the same checks instead of decoding them a second time:
    identical bytes decode to an equal transaction, and a writer's Overwrite
    of a large table lists every fragment in both copies.
    """
    data = bytes(data)
    if embedded is not None and data == embedded[0]:
        transaction = embedded[1]
        read_version, uuid = transaction.read_version, transaction.uuid
    else:
        transaction = None
        msg = transaction_pb2.Transaction()
        try:
            msg.ParseFromString(data)
        except (DecodeError, RuntimeError, ValueError) as exc:
            raise CorruptFileError(path, f"not a Transaction message: {exc}") from None
        read_version, uuid = msg.read_version, msg.uuid
    if not uuid:
        raise CorruptFileError(path, "transaction has no uuid")
    match = _FILE_NAME.match(name or "")
    if match and (int(match.group(1)) != read_version or match.group(2) != uuid):
        raise CorruptFileError(
            path,
            f"file name says read version {match.group(1)} and uuid {match.group(2)}, "
            f"content says {read_version} and {uuid}",
        )
    return transaction if transaction is not None else Transaction.from_proto(msg, path)


def read_transaction_file(
    storage: Storage, name: str, *, embedded: tuple[bytes, Transaction] | None = None
) -> Transaction:
    """Read ``_transactions/{name}`` (``name`` as a manifest's
    ``transaction_file`` gives it). A name that is not a plain file name is a
    :class:`PathEscapeError`: it comes from the dataset, not from the caller.
    ``embedded``: see :func:`decode_transaction`."""
    try:
        _check_name(name)
    except ValueError as exc:
        raise PathEscapeError(f"{TRANSACTIONS_DIR}/{name}", str(exc)) from None
    relpath = f"{TRANSACTIONS_DIR}/{name}"
    return decode_transaction(storage.read(relpath), str(storage.path(relpath)), name, embedded=embedded)


def write_transaction_file(storage: Storage, txn: Transaction) -> str:
    """Write ``_transactions/{read_version}-{uuid}.txn`` (put-if-not-exists)
    and return the file name, for the manifest's ``transaction_file``.

    Not fsynced: every writer here embeds the same message in the manifest
    that commits it (transaction section), and the manifest is fsynced, so a
    transaction file a power failure loses or empties is read from that copy
    (the commit loop, and pylance, which honours field 21). A writer that
    dies before its manifest leaves an unreferenced file either way."""
    if not txn.uuid:
        raise ValueError("a transaction needs a uuid")
    name = txn.file_name()
    _check_name(name)
    storage.put_if_not_exists(
        f"{TRANSACTIONS_DIR}/{name}", txn.to_proto().SerializeToString(deterministic=True), durable=False
    )
    return name
