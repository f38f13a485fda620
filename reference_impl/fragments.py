"""Fragments and data files (table format: fragments, data files, data evolution).

A fragment is a set of rows spread over one or more data files, each holding
some of the columns, plus at most one deletion file. Row id and row version
sequences are kept here as raw bytes or external references; they are decoded
by :mod:`reference_impl.row_ids`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field

from .errors import UnsupportedFeatureError
from .wire import table_pb2

#: ``DataFile.fields`` entry of a field no longer read from the file.
TOMBSTONE_FIELD_ID = -2
#: ``DataFile.fields`` value of an unassigned id; must never be stored.
UNASSIGNED_FIELD_ID = -1
#: ``DataFile.column_indices`` entry of a field without a top-level column.
NO_COLUMN = -1


class DeletionFileType(enum.IntEnum):
    ARROW_ARRAY = 0
    BITMAP = 1

    @property
    def extension(self) -> str:
        return "arrow" if self is DeletionFileType.ARROW_ARRAY else "bin"


#: ``DeletionFile.file_type`` as a manifest records it: a
#: :class:`DeletionFileType`, or the plain int of a kind this proto does not
#: know. proto3 enums are open, so the field can hold any int32; keeping the
#: number (rather than refusing the manifest or guessing a kind) lets a reader
#: refuse just that fragment's deletions, the validator report the value, and
#: a rewritten manifest keep it. ``isinstance(value, DeletionFileType)`` tells
#: the two apart (a :class:`DeletionFileType` is an int too).
DeletionFileTypeOrUnknown = DeletionFileType | int


@dataclass
class ExternalFile:
    """A byte range of a file relative to the table root."""

    path: str
    offset: int
    size: int

    @classmethod
    def from_proto(cls, msg: table_pb2.ExternalFile) -> ExternalFile:
        return cls(msg.path, msg.offset, msg.size)

    def to_proto(self) -> table_pb2.ExternalFile:
        return table_pb2.ExternalFile(path=self.path, offset=self.offset, size=self.size)


@dataclass(frozen=True)
class LineageColumn:
    """A sequence spilled to a hidden column of one of the fragment's own
    data files (the column arm, ``RowLineageColumn``, DataFragment fields 12
    to 14): it names nothing, the file is found by the column's reserved
    field id (:mod:`reference_impl.row_lineage`)."""


#: A sequence kept inline (serialized bytes), in an external file (the
#: seeds' arms, reserved from revision upstream-2026-11-29 on) or spilled to
#: a hidden column (:class:`LineageColumn`).
StoredSequence = bytes | ExternalFile | LineageColumn


#: What releases before pylance 0.17 recorded for a 2.0 data file: the
#: version number of its trailer, where the table format records 2.0.
RECORDED_2_0_AS_FOOTER = (0, 3)


def format_version_of(major: int, minor: int) -> tuple[int, int]:
    """The file version a data file recorded as ``major.minor`` is
    (requirement data-file.version-matches-file): 2.0 for a 2.0 file
    recorded with its trailer number 0.3, the recorded numbers otherwise."""
    return (2, 0) if (major, minor) == RECORDED_2_0_AS_FOOTER else (major, minor)


def is_legacy_version(major: int, minor: int) -> bool:
    """Whether a data file recorded as version ``major.minor`` is a legacy
    (v0.1/v0.2) file: :attr:`DataFile.is_legacy` for a recorded pair (a
    2.0 file recorded as its trailer's 0.3 is not)."""
    return major == 0 and minor < RECORDED_2_0_AS_FOOTER[1]


# slots=True (here, on DeletionFile and on Fragment): a large table's manifest
# holds hundreds of thousands of these, and without a dict per object they
# take less memory and are built faster.
@dataclass(slots=True)
class DataFile:
    path: str
    fields: list[int]
    column_indices: list[int] = dc_field(default_factory=list)
    file_major_version: int = 2
    file_minor_version: int = 0
    file_size_bytes: int = 0
    base_id: int | None = None

    @property
    def is_legacy(self) -> bool:
        """A legacy (v0.1/v0.2) file. The spec records these as version 0.0;
        pylance records 0.2 (docs/spec-discrepancies.md), so 0.0, 0.1 and 0.2
        count. 0.3 is not legacy: it is the trailer's number for a 2.0 file,
        which pylance releases before 0.17 recorded in the manifest (the
        writer defect ``pylance-2-0-recorded-as-0-3``). (:func:`is_legacy_version`
        written out: asked of every data file, where the call would cost
        more than the test.)"""
        return self.file_major_version == 0 and self.file_minor_version < RECORDED_2_0_AS_FOOTER[1]

    @property
    def format_version(self) -> tuple[int, int]:
        """The file version the record means (:func:`format_version_of`)."""
        return format_version_of(self.file_major_version, self.file_minor_version)

    @classmethod
    def from_proto(cls, msg: table_pb2.DataFile) -> DataFile:
        # Hot (every data file of every manifest and transaction decoded):
        # positional arguments, and ``[:]`` copies a repeated field into a
        # list several times faster than ``list()`` does.
        return cls(
            msg.path,
            msg.fields[:],
            msg.column_indices[:],
            msg.file_major_version,
            msg.file_minor_version,
            msg.file_size_bytes,
            msg.base_id if msg.HasField("base_id") else None,
        )

    def to_proto(self) -> table_pb2.DataFile:
        msg = table_pb2.DataFile(
            path=self.path,
            fields=self.fields,
            column_indices=self.column_indices,
            file_major_version=self.file_major_version,
            file_minor_version=self.file_minor_version,
            file_size_bytes=self.file_size_bytes,
        )
        if self.base_id is not None:
            msg.base_id = self.base_id
        return msg


@dataclass(slots=True)
class DeletionFile:
    file_type: DeletionFileTypeOrUnknown
    read_version: int
    id: int
    num_deleted_rows: int
    base_id: int | None = None

    def path(self, fragment_id: int) -> str:
        """``_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}``.

        The extension follows from the kind, so a file of unknown kind has no
        path: :class:`~reference_impl.errors.UnsupportedFeatureError`.
        """
        stem = f"_deletions/{fragment_id}-{self.read_version}-{self.id}"
        if not isinstance(self.file_type, DeletionFileType):
            raise UnsupportedFeatureError(
                stem, f"deletion file type {self.file_type} is neither ARROW_ARRAY (0) nor BITMAP (1)"
            )
        return f"{stem}.{self.file_type.extension}"

    @classmethod
    def from_proto(cls, msg: table_pb2.DeletionFile) -> DeletionFile:
        file_type = DeletionFileType(msg.file_type) if msg.file_type in (0, 1) else msg.file_type
        return cls(
            file_type=file_type,
            read_version=msg.read_version,
            id=msg.id,
            num_deleted_rows=msg.num_deleted_rows,
            base_id=msg.base_id if msg.HasField("base_id") else None,
        )

    def to_proto(self) -> table_pb2.DeletionFile:
        msg = table_pb2.DeletionFile(
            # protoc's stubs want the enum's own class, which no int converts
            # to, although the runtime takes any int (proto3 enums are open).
            file_type=int(self.file_type),  # type: ignore[arg-type]
            read_version=self.read_version,
            id=self.id,
            num_deleted_rows=self.num_deleted_rows,
        )
        if self.base_id is not None:
            msg.base_id = self.base_id
        return msg


def _stored_from_proto(msg, which: str) -> StoredSequence:
    """The sequence held in oneof case ``which`` (as ``WhichOneof`` names it):
    inline bytes, a range of an external file, or the spilled-column marker."""
    if which.startswith("inline_"):
        return bytes(getattr(msg, which))
    if which.startswith("column_"):
        return LineageColumn()
    return ExternalFile.from_proto(getattr(msg, which))


def _stored_to_proto(msg, value: StoredSequence | None, name: str) -> None:
    """Set the oneof case of ``value`` for the sequence whose arms end in ``name``
    (``inline_{name}``, ``external_{name}``, ``column_{name}``)."""
    if isinstance(value, ExternalFile):
        getattr(msg, f"external_{name}").CopyFrom(value.to_proto())
    elif isinstance(value, LineageColumn):
        getattr(msg, f"column_{name}").SetInParent()
    elif value is not None:
        setattr(msg, f"inline_{name}", value)


@dataclass(slots=True)
class Fragment:
    id: int
    files: list[DataFile]
    physical_rows: int
    deletion_file: DeletionFile | None = None
    row_id_sequence: StoredSequence | None = None
    last_updated_at_version_sequence: StoredSequence | None = None
    created_at_version_sequence: StoredSequence | None = None

    @property
    def num_deleted_rows(self) -> int:
        return self.deletion_file.num_deleted_rows if self.deletion_file else 0

    @property
    def num_rows(self) -> int:
        """Rows still visible: physical rows less deleted ones."""
        return self.physical_rows - self.num_deleted_rows

    @classmethod
    def from_proto(cls, msg: table_pb2.DataFragment) -> Fragment:
        # Hot, like DataFile.from_proto: positional arguments, the three
        # sequences (most fragments store none) converted only when present,
        # and the files iterated as a list: protobuf's repeated fields have no
        # iterator of their own, so a for loop over one indexes it until an
        # IndexError is raised and caught, which costs more than the copy.
        row_ids = msg.WhichOneof("row_id_sequence")
        updated = msg.WhichOneof("last_updated_at_version_sequence")
        created = msg.WhichOneof("created_at_version_sequence")
        return cls(
            msg.id,
            list(map(DataFile.from_proto, msg.files[:])),
            msg.physical_rows,
            DeletionFile.from_proto(msg.deletion_file) if msg.HasField("deletion_file") else None,
            _stored_from_proto(msg, row_ids) if row_ids else None,
            _stored_from_proto(msg, updated) if updated else None,
            _stored_from_proto(msg, created) if created else None,
        )

    def to_proto(self) -> table_pb2.DataFragment:
        msg = table_pb2.DataFragment(
            id=self.id,
            files=[f.to_proto() for f in self.files],
            physical_rows=self.physical_rows,
        )
        if self.deletion_file is not None:
            msg.deletion_file.CopyFrom(self.deletion_file.to_proto())
        _stored_to_proto(msg, self.row_id_sequence, "row_ids")
        _stored_to_proto(msg, self.last_updated_at_version_sequence, "last_updated_at_versions")
        _stored_to_proto(msg, self.created_at_version_sequence, "created_at_versions")
        return msg


#: Decodes one ``DataFragment`` message. Manifests and transactions take one
#: (``Fragment.from_proto`` by default), so that a reader of many of them can
#: decode a fragment listed again only once.
FragmentDecoder = Callable[[table_pb2.DataFragment], Fragment]
