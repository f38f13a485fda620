"""The manifest: one version of a table (table format: manifest).

:class:`Manifest` mirrors the ``Manifest`` message of the current
``table.proto`` (docs/spec-sources.md, table-proto). Manifests written under
the older revision (table-proto-2024-01) decode into the same class: the
renamed schema metadata field has the same number, and the fields added since take their defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field

from google.protobuf.unknown_fields import UnknownFieldSet

from .fragments import Fragment
from .schema import Schema
from .wire import table_pb2


@dataclass
class WriterVersion:
    library: str
    version: str
    prerelease: str | None = None
    build_metadata: str | None = None

    def full_version(self) -> str:
        text = self.version
        if self.prerelease:
            text += f"-{self.prerelease}"
        if self.build_metadata:
            text += f"+{self.build_metadata}"
        return text


@dataclass
class DataStorageFormat:
    file_format: str = "lance"
    version: str = "2.0"


@dataclass
class BasePath:
    id: int
    path: str
    is_dataset_root: bool = True
    name: str | None = None

    @classmethod
    def from_proto(cls, msg: table_pb2.BasePath) -> BasePath:
        return cls(
            id=msg.id,
            path=msg.path,
            is_dataset_root=msg.is_dataset_root,
            name=msg.name if msg.HasField("name") else None,
        )

    def to_proto(self) -> table_pb2.BasePath:
        msg = table_pb2.BasePath(id=self.id, path=self.path, is_dataset_root=self.is_dataset_root)
        if self.name is not None:
            msg.name = self.name
        return msg


#: Where pylance 14 records the transaction section position instead of 21.
PYLANCE_TRANSACTION_SECTION_FIELD = 23


def transaction_section_fields(msg: table_pb2.Manifest) -> dict:
    """The transaction section position: field 21 as the spec defines it, else
    the varint pylance 14 writes as field 23."""
    if msg.HasField("transaction_section"):
        return {"transaction_section": msg.transaction_section, "transaction_section_field": 21}
    for unknown in UnknownFieldSet(msg):
        if unknown.field_number == PYLANCE_TRANSACTION_SECTION_FIELD and unknown.wire_type == 0:
            return {"transaction_section": unknown.data, "transaction_section_field": unknown.field_number}
    return {"transaction_section": None, "transaction_section_field": None}


@dataclass
class Manifest:
    version: int
    schema: Schema
    fragments: list[Fragment] = dc_field(default_factory=list)
    writer_version: WriterVersion | None = None
    data_format: DataStorageFormat | None = None
    reader_feature_flags: int = 0
    writer_feature_flags: int = 0
    max_fragment_id: int | None = None
    next_row_id: int = 0
    transaction_file: str = ""
    index_section: int | None = None
    transaction_section: int | None = None
    #: The Manifest field number the transaction section position was read
    #: from: 21 (the spec) or 23 (pylance 14 writes it there; see
    #: docs/spec-discrepancies.md). None when there is no position.
    transaction_section_field: int | None = None
    #: Commit time as (seconds, nanos) since the Unix epoch, UTC.
    timestamp: tuple[int, int] | None = None
    tag: str = ""
    version_aux_data: int = 0
    config: dict[str, str] = dc_field(default_factory=dict)
    table_metadata: dict[str, str] = dc_field(default_factory=dict)
    base_paths: list[BasePath] = dc_field(default_factory=list)
    branch: str | None = None

    @property
    def num_rows(self) -> int:
        return sum(f.num_rows for f in self.fragments)

    def base_path(self, base_id: int) -> BasePath | None:
        for base in self.base_paths:
            if base.id == base_id:
                return base
        return None

    @classmethod
    def from_proto(
        cls,
        msg: table_pb2.Manifest,
        decode_fragment: Callable[[table_pb2.DataFragment], Fragment] | None = Fragment.from_proto,
    ) -> Manifest:
        """The manifest ``msg`` holds. ``decode_fragment`` decodes each
        fragment message: a reader of many versions passes one that returns
        the fragment it already decoded from the same bytes in an earlier
        version (see :func:`~reference_impl.manifest_file.read_manifest_file`).
        None leaves ``fragments`` empty, for a caller that reads the fragment
        messages itself (``read_manifest_file(..., with_fragments=False)``)."""
        return cls(
            version=msg.version,
            schema=Schema.from_protos(msg.fields, msg.schema_metadata),
            # [:]: iterate a list, not the repeated field (see Fragment.from_proto).
            fragments=list(map(decode_fragment, msg.fragments[:])) if decode_fragment else [],
            writer_version=(
                WriterVersion(
                    library=msg.writer_version.library,
                    version=msg.writer_version.version,
                    prerelease=msg.writer_version.prerelease if msg.writer_version.HasField("prerelease") else None,
                    build_metadata=(
                        msg.writer_version.build_metadata if msg.writer_version.HasField("build_metadata") else None
                    ),
                )
                if msg.HasField("writer_version")
                else None
            ),
            data_format=(
                DataStorageFormat(msg.data_format.file_format, msg.data_format.version)
                if msg.HasField("data_format")
                else None
            ),
            reader_feature_flags=msg.reader_feature_flags,
            writer_feature_flags=msg.writer_feature_flags,
            max_fragment_id=msg.max_fragment_id if msg.HasField("max_fragment_id") else None,
            next_row_id=msg.next_row_id,
            transaction_file=msg.transaction_file,
            index_section=msg.index_section if msg.HasField("index_section") else None,
            **transaction_section_fields(msg),
            timestamp=(msg.timestamp.seconds, msg.timestamp.nanos) if msg.HasField("timestamp") else None,
            tag=msg.tag,
            version_aux_data=msg.version_aux_data,
            config=dict(msg.config),
            table_metadata=dict(msg.table_metadata),
            base_paths=[BasePath.from_proto(b) for b in msg.base_paths],
            branch=msg.branch if msg.HasField("branch") else None,
        )

    def to_proto(self) -> table_pb2.Manifest:
        msg = table_pb2.Manifest(
            fields=self.schema.field_protos(),
            fragments=[f.to_proto() for f in self.fragments],
            version=self.version,
            version_aux_data=self.version_aux_data,
            tag=self.tag,
            reader_feature_flags=self.reader_feature_flags,
            writer_feature_flags=self.writer_feature_flags,
            transaction_file=self.transaction_file,
            next_row_id=self.next_row_id,
            base_paths=[b.to_proto() for b in self.base_paths],
        )
        for key, value in self.schema.metadata.items():
            msg.schema_metadata[key] = value
        for key, text in self.config.items():
            msg.config[key] = text
        for key, text in self.table_metadata.items():
            msg.table_metadata[key] = text
        if self.writer_version is not None:
            msg.writer_version.library = self.writer_version.library
            msg.writer_version.version = self.writer_version.version
            if self.writer_version.prerelease is not None:
                msg.writer_version.prerelease = self.writer_version.prerelease
            if self.writer_version.build_metadata is not None:
                msg.writer_version.build_metadata = self.writer_version.build_metadata
        if self.data_format is not None:
            msg.data_format.file_format = self.data_format.file_format
            msg.data_format.version = self.data_format.version
        if self.max_fragment_id is not None:
            msg.max_fragment_id = self.max_fragment_id
        if self.index_section is not None:
            msg.index_section = self.index_section
        if self.transaction_section is not None:
            msg.transaction_section = self.transaction_section
        if self.timestamp is not None:
            msg.timestamp.seconds, msg.timestamp.nanos = self.timestamp
        if self.branch is not None:
            msg.branch = self.branch
        return msg
