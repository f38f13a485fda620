"""Schema and fields (schema format: fields, field ids, field metadata).

A schema is a flat list of :class:`Field` in depth-first order; nesting is
expressed by ``parent_id`` (``-1`` at the top level). Conversion to and from
Arrow lives in :mod:`reference_impl.logical_types`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field as dc_field

from .wire import file_pb2

TOP_LEVEL_PARENT = -1


class FieldType(enum.IntEnum):
    """Role of a field in the tree (``lance.file.Field.Type``)."""

    PARENT = 0
    REPEATED = 1
    LEAF = 2


@dataclass
class Field:
    """One column of the table, nested ones included (``lance.file.Field``)."""

    id: int
    name: str
    logical_type: str
    parent_id: int = TOP_LEVEL_PARENT
    nullable: bool = True
    type: FieldType = FieldType.LEAF
    metadata: dict[str, bytes] = dc_field(default_factory=dict)
    unenforced_primary_key: bool = False
    unenforced_primary_key_position: int = 0
    # Legacy (v1 data file) attributes, kept so that reading and re-writing a
    # manifest preserves them.
    encoding: int = 0
    dictionary: tuple[int, int] | None = None
    extension_name: str = ""

    @classmethod
    def from_proto(cls, msg: file_pb2.Field) -> "Field":
        return cls(
            id=msg.id,
            name=msg.name,
            logical_type=msg.logical_type,
            parent_id=msg.parent_id,
            nullable=msg.nullable,
            type=FieldType(msg.type) if msg.type in FieldType._value2member_map_ else FieldType.LEAF,
            metadata=dict(msg.metadata),
            unenforced_primary_key=msg.unenforced_primary_key,
            unenforced_primary_key_position=msg.unenforced_primary_key_position,
            encoding=msg.encoding,
            dictionary=(msg.dictionary.offset, msg.dictionary.length) if msg.HasField("dictionary") else None,
            extension_name=msg.extension_name,
        )

    def to_proto(self) -> file_pb2.Field:
        msg = file_pb2.Field(
            id=self.id,
            name=self.name,
            logical_type=self.logical_type,
            parent_id=self.parent_id,
            nullable=self.nullable,
            type=int(self.type),
            unenforced_primary_key=self.unenforced_primary_key,
            unenforced_primary_key_position=self.unenforced_primary_key_position,
            encoding=self.encoding,
            extension_name=self.extension_name,
        )
        for key, value in self.metadata.items():
            msg.metadata[key] = value
        if self.dictionary is not None:
            msg.dictionary.offset, msg.dictionary.length = self.dictionary
        return msg


@dataclass
class Schema:
    """The fields of a table plus schema-level metadata."""

    fields: list[Field] = dc_field(default_factory=list)
    metadata: dict[str, bytes] = dc_field(default_factory=dict)

    def top_level(self) -> list[Field]:
        return [f for f in self.fields if f.parent_id == TOP_LEVEL_PARENT]

    def children(self, parent: Field) -> list[Field]:
        return [f for f in self.fields if f.parent_id == parent.id]

    def field_by_id(self, field_id: int) -> Field | None:
        for f in self.fields:
            if f.id == field_id:
                return f
        return None

    def field_ids(self) -> list[int]:
        return [f.id for f in self.fields]

    def max_field_id(self) -> int:
        return max((f.id for f in self.fields), default=-1)

    def to_arrow(self):
        from .logical_types import schema_to_arrow

        return schema_to_arrow(self)

    @classmethod
    def from_arrow(cls, arrow_schema, *, first_id: int = 0) -> "Schema":
        from .logical_types import schema_from_arrow

        return schema_from_arrow(arrow_schema, first_id=first_id)

    @classmethod
    def from_protos(cls, fields, metadata) -> "Schema":
        return cls([Field.from_proto(f) for f in fields], dict(metadata))

    def field_protos(self) -> list[file_pb2.Field]:
        return [f.to_proto() for f in self.fields]
