"""Schema and fields (schema format: fields, field ids, field metadata).

A schema is a flat list of :class:`Field` in depth-first order; nesting is
expressed by ``parent_id`` (``-1`` at the top level). Beside the model:
the id of the next new field, the role of a field, and the unenforced primary
key. Conversion to and from Arrow lives in :mod:`reference_impl.arrow_schema`
(``schema_to_arrow`` / ``schema_from_arrow``), the grammar of logical type
strings in :mod:`reference_impl.type_grammar`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as dc_field

from .type_grammar import LIST_KINDS
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
    def from_proto(cls, msg: file_pb2.Field) -> Field:
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
            # protoc's stubs want the enums' own classes, which no int
            # converts to, although the runtime takes any int (proto3 enums
            # are open; ``encoding`` may hold a value this proto does not know).
            type=int(self.type),  # type: ignore[arg-type]
            unenforced_primary_key=self.unenforced_primary_key,
            unenforced_primary_key_position=self.unenforced_primary_key_position,
            encoding=self.encoding,  # type: ignore[arg-type]
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

    @classmethod
    def from_protos(cls, fields, metadata) -> Schema:
        return cls([Field.from_proto(f) for f in fields], dict(metadata))

    def field_protos(self) -> list[file_pb2.Field]:
        return [f.to_proto() for f in self.fields]


# --------------------------------------------------------------------------
# New fields of an existing schema ("New field assignment")
# --------------------------------------------------------------------------


def next_field_id(schema: Schema, used_field_ids: Iterable[int] = ()) -> int:
    """The id the next new field receives: one more than the largest id in
    the schema or in ``used_field_ids`` (schema format page, "New field assignment").

    pylance passes the field ids its data files still reference, so a column
    that was dropped but whose data is still on disk does not have its id
    handed out again; callers wanting the same behaviour pass the ``fields``
    of every data file of the current version.
    """
    used = [i for i in used_field_ids if i >= 0]
    return max([schema.max_field_id(), *used]) + 1


# --------------------------------------------------------------------------
# Field roles and the unenforced primary key
# --------------------------------------------------------------------------


def field_role(logical_type: str) -> FieldType:
    """The role the schema format page describes for a field of this logical type: PARENT
    for a struct, REPEATED for the list types, maps and fixed-size lists of
    structs (fields whose child repeats), LEAF for everything else.

    pylance 14 writes PARENT for every field regardless, so the stored
    ``type`` cannot be relied upon; this recomputes it.
    """
    if logical_type == "struct":
        return FieldType.PARENT
    if logical_type in LIST_KINDS or logical_type == "map":
        return FieldType.REPEATED
    if logical_type.startswith("fixed_size_list:struct:"):
        return FieldType.REPEATED
    return FieldType.LEAF


def _in_primary_key(f: Field) -> bool:
    # pylance treats a positive position as membership even without the flag.
    return f.unenforced_primary_key or f.unenforced_primary_key_position > 0


def primary_key_fields(schema: Schema) -> list[Field]:
    """The primary key columns in key order (table overview page, "Unenforced Primary
    Key"): fields with an explicit position first, by position (equal
    positions by field id), then the fields without one, by field id.

    A field belongs to the key when its ``unenforced_primary_key`` flag is
    set or its position is positive.
    """
    members = [f for f in schema.fields if _in_primary_key(f)]
    positioned = sorted(
        (f for f in members if f.unenforced_primary_key_position > 0),
        key=lambda f: (f.unenforced_primary_key_position, f.id),
    )
    unpositioned = sorted((f for f in members if f.unenforced_primary_key_position == 0), key=lambda f: f.id)
    return positioned + unpositioned


def primary_key_problems(schema: Schema) -> list[str]:
    """Every way the primary key columns break the rules of the table overview page.

    A primary key field, and all its ancestors, must not be nullable; it must
    be a leaf (no child fields, not a struct, list or map); and it must not be
    within a list or map type. Fixed-size lists count as list types here, as
    the table overview page's wording reads, although pylance 14 accepts key columns inside a
    fixed-size list of structs. Broken parent links are reported rather than
    followed. An empty list means no problem.
    """
    by_id = {f.id: f for f in schema.fields}
    has_children = {f.parent_id for f in schema.fields}
    problems: list[str] = []
    for f in primary_key_fields(schema):
        ancestors, broken = _ancestors(f, by_id)
        label = ".".join([a.name for a in reversed(ancestors)] + [f.name])
        label = f"primary key field {label!r} (id {f.id})"
        if broken:
            problems.append(f"{label}: {broken}")
        if f.nullable:
            problems.append(f"{label} is nullable")
        for a in ancestors:
            if a.nullable:
                problems.append(f"{label}: its ancestor {a.name!r} (id {a.id}) is nullable")
        if f.id in has_children or field_role(f.logical_type) != FieldType.LEAF:
            problems.append(f"{label} is not a leaf field (logical type {f.logical_type!r})")
        for a in ancestors:
            kind = _kind(a.logical_type)
            if kind in LIST_KINDS or kind in ("map", "fixed_size_list"):
                problems.append(f"{label} is within the {a.logical_type!r} field {a.name!r} (id {a.id})")
    return problems


def _kind(logical_type: str) -> str:
    return logical_type.partition(":")[0]


def _ancestors(f: Field, by_id: dict[int, Field]) -> tuple[list[Field], str]:
    """The chain of parents of ``f``, nearest first, and a description of a
    broken link (dangling parent or cycle), if any."""
    chain: list[Field] = []
    seen = {f.id}
    parent_id = f.parent_id
    while parent_id != TOP_LEVEL_PARENT:
        parent = by_id.get(parent_id)
        if parent is None:
            return chain, f"parent id {parent_id} names no field"
        if parent.id in seen:
            return chain, f"parent ids form a cycle through id {parent.id}"
        seen.add(parent.id)
        chain.append(parent)
        parent_id = parent.parent_id
    return chain, ""
