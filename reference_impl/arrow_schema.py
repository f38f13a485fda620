"""Arrow <-> Lance schema conversion: one data type in either direction,
whole schemas with their ids, parents, nullability and metadata, and new
fields added to an existing schema (upstream
``docs/src/format/table/schema.md``, "Type Conversion Reference", "Field
IDs", "Field Metadata"; the choices this module makes where pylance and the
specification differ are listed in ``docs/spec-discrepancies.md``, "Schema and
logical types").

Public API: ``logical_type_of`` / ``arrow_type_of`` (one data type),
``schema_from_arrow`` / ``schema_to_arrow`` (whole schemas), ``add_fields``
(ids for fields added to an existing schema). The grammar of logical type
strings is :mod:`reference_impl.type_grammar`; field ids and primary keys of a
Lance schema are :mod:`reference_impl.schema`.

One cohesive concept (about 670 lines): both directions of the conversion
share the extension-type and metadata handling.
"""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
import re
import struct
from collections.abc import Iterable, Iterator

import pyarrow as pa

from .errors import CorruptFileError, UnsupportedFeatureError
from .schema import TOP_LEVEL_PARENT, Field, Schema, field_role, next_field_id
from .type_grammar import (
    ARROW_JSON_EXTENSION,
    BFLOAT16_EXTENSION,
    BLOB_METADATA_KEY,
    BLOB_V2_EXTENSION,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    KNOWN_KINDS,
    LANCE_JSON_EXTENSION,
    MAX_NESTING_DEPTH,
    PRIMARY_KEY_KEY,
    PRIMARY_KEY_POSITION_KEY,
    SIMPLE_KINDS,
    ParsedType,
    is_valid_logical_type,
    parse_logical_type,
)

#: The Arrow type of each single-word logical type (``type_grammar.SIMPLE_KINDS``).
SIMPLE_TYPES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "bool": pa.bool_(),
    "int8": pa.int8(),
    "uint8": pa.uint8(),
    "int16": pa.int16(),
    "uint16": pa.uint16(),
    "int32": pa.int32(),
    "uint32": pa.uint32(),
    "int64": pa.int64(),
    "uint64": pa.uint64(),
    "halffloat": pa.float16(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
    "large_string": pa.large_string(),
    "large_binary": pa.large_binary(),
}
assert tuple(SIMPLE_TYPES) == SIMPLE_KINDS

_SCHEMA = "schema"
_PK_TRUE_VALUES = ("true", "1", "yes")
_U32_MAX = 2**32 - 1


# --------------------------------------------------------------------------
# Arrow data type -> logical type string ("Type Conversion Reference")
# --------------------------------------------------------------------------


def logical_type_of(data_type: pa.DataType) -> str:
    """The logical type string of an Arrow data type (schema format page, "Type
    Conversion Reference").

    Extension types are described by their storage type, except Arrow's
    canonical JSON type, which is ``json``. Raises
    :class:`UnsupportedFeatureError` for Arrow types Lance has no logical type
    for (unions, intervals, list views, run-end encoding, 32/64-bit decimals,
    maps with sorted keys, fixed-size lists of lists or maps, dictionaries
    whose value type is not a single-word leaf type).
    """
    if isinstance(data_type, pa.BaseExtensionType) and _is_json(data_type.storage_type, data_type.extension_name):
        return "json"
    return _storage_logical_type(data_type, where="")


def _storage_logical_type(dt: pa.DataType, where: str) -> str:
    dt = _plain_type(dt)
    t = pa.types
    for name, simple in SIMPLE_TYPES.items():
        if dt == simple:
            return name
    if t.is_decimal128(dt):
        return f"decimal:128:{dt.precision}:{dt.scale}"
    if t.is_decimal256(dt):
        return f"decimal:256:{dt.precision}:{dt.scale}"
    if t.is_date32(dt):
        return "date32:day"
    if t.is_date64(dt):
        return "date64:ms"
    if t.is_time32(dt):
        return f"time32:{dt.unit}"
    if t.is_time64(dt):
        return f"time64:{dt.unit}"
    if t.is_timestamp(dt):
        return f"timestamp:{dt.unit}:{dt.tz if dt.tz else '-'}"
    if t.is_duration(dt):
        return f"duration:{dt.unit}"
    if t.is_struct(dt):
        return "struct"
    if t.is_map(dt):
        if dt.keys_sorted:
            raise _unsupported(where, "maps with sorted keys are not supported")
        return "map"
    if t.is_list(dt) or t.is_large_list(dt):
        family = "list" if t.is_list(dt) else "large_list"
        if t.is_struct(_plain_type(dt.value_type)):
            return family + ".struct"
        return family
    if t.is_fixed_size_list(dt):
        if dt.list_size <= 0:
            raise _unsupported(where, "fixed-size lists need a positive size")
        element = dt.value_field
        if _is_bfloat16_field(element):
            return f"fixed_size_list:{BFLOAT16_EXTENSION}:{dt.list_size}"
        inner = _storage_logical_type(element.type, where)
        if inner != "struct" and parse_logical_type(inner).expected_children != 0:
            raise _unsupported(where, f"fixed-size lists of {inner!r} are not supported")
        return f"fixed_size_list:{inner}:{dt.list_size}"
    if t.is_fixed_size_binary(dt):
        return f"fixed_size_binary:{dt.byte_width}"
    if t.is_dictionary(dt):
        value = _storage_logical_type(dt.value_type, where)
        key = _storage_logical_type(dt.index_type, where)
        text = f"dict:{value}:{key}:false"
        if not is_valid_logical_type(text):
            raise _unsupported(where, f"dictionary type {dt} gives {text!r}, which does not parse back")
        return text
    raise _unsupported(where, f"Arrow type {dt} has no Lance logical type")


def _plain_type(dt: pa.DataType) -> pa.DataType:
    """Strip extension types and replace view types by their plain
    counterparts, as pylance does before naming a type."""
    while isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    if _is_view(dt, "string_view"):
        return pa.string()
    if _is_view(dt, "binary_view"):
        return pa.binary()
    return dt


def _is_view(dt: pa.DataType, which: str) -> bool:
    check = getattr(pa.types, f"is_{which}", None)
    return bool(check and check(dt))


def _is_bfloat16_field(field: pa.Field) -> bool:
    """A bfloat16 element: ``fixed_size_binary(2)`` named ``lance.bfloat16``,
    either as a registered extension type or through field metadata."""
    dt = field.type
    if isinstance(dt, pa.BaseExtensionType):
        return dt.extension_name == BFLOAT16_EXTENSION and dt.storage_type == pa.binary(2)
    name = (field.metadata or {}).get(EXTENSION_NAME_KEY.encode())
    return dt == pa.binary(2) and name == BFLOAT16_EXTENSION.encode()


def _is_json(storage: pa.DataType, extension_name: str | None) -> bool:
    """pylance's two spellings of a JSON column: Arrow's ``arrow.json`` over
    (large) UTF-8, or Lance's own ``lance.json`` over large binary."""
    if extension_name == ARROW_JSON_EXTENSION:
        return pa.types.is_string(storage) or pa.types.is_large_string(storage)
    if extension_name == LANCE_JSON_EXTENSION:
        return pa.types.is_large_binary(storage)
    return False


def _unsupported(where: str, problem: str) -> UnsupportedFeatureError:
    prefix = f"field {where!r}: " if where else ""
    return UnsupportedFeatureError(_SCHEMA, prefix + problem)


# --------------------------------------------------------------------------
# Logical type string -> Arrow data type
# --------------------------------------------------------------------------


def arrow_type_of(logical_type: str, children: list[pa.Field]) -> pa.DataType:
    """The Arrow data type of a logical type string, given the already
    converted child fields (schema format page, "Type Conversion Reference").

    ``children`` are used by ``struct`` (its fields), the list types (the
    element), ``map`` (the ``entries`` struct with key and value) and
    ``fixed_size_list:struct:<n>`` (the element); every other type must have
    none. ``json`` becomes Arrow's canonical JSON type and ``blob`` large
    binary. The element of any other fixed-size list is ``item``, nullable,
    and for ``lance.bfloat16`` carries the extension name in its metadata.

    Raises :class:`UnsupportedFeatureError` for a string whose leading word is
    not a known logical type, and :class:`CorruptFileError` for a malformed
    string of a known family or a wrong set of children.
    """
    return _arrow_type(logical_type, list(children), where="")


def _arrow_type(text: str, children: list[pa.Field], where: str) -> pa.DataType:
    prefix = f"field {where}: " if where else ""
    try:
        parsed = parse_logical_type(text)
    except ValueError as exc:
        head = text.partition(":")[0] if isinstance(text, str) else ""
        error = CorruptFileError if head in KNOWN_KINDS else UnsupportedFeatureError
        raise error(_SCHEMA, f"{prefix}{exc}") from None

    expected = parsed.expected_children
    if expected is not None and len(children) != expected:
        raise CorruptFileError(
            _SCHEMA, f"{prefix}logical type {text!r} needs {expected} child field(s), found {len(children)}"
        )
    if parsed.child_must_be_struct and not pa.types.is_struct(children[0].type):
        raise CorruptFileError(_SCHEMA, f"{prefix}the child of a {text!r} field must be a struct")
    try:
        return _build_type(parsed, children)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise CorruptFileError(_SCHEMA, f"{prefix}cannot build {text!r}: {exc}") from None


def _build_type(p: ParsedType, children: list[pa.Field]) -> pa.DataType:
    kind = p.kind
    if kind in SIMPLE_TYPES:
        return SIMPLE_TYPES[kind]
    if kind == "json":
        return _json_type()
    if kind == "blob":
        return pa.large_binary()
    if kind == "date32":
        return pa.date32()
    if kind == "date64":
        return pa.date64()
    if kind == "time32":
        return pa.time32(p.unit)
    if kind == "time64":
        return pa.time64(p.unit)
    if kind == "duration":
        return pa.duration(p.unit)
    if kind == "timestamp":
        return pa.timestamp(p.unit, tz=p.timezone)
    if kind == "decimal":
        make = pa.decimal128 if p.bit_width == 128 else pa.decimal256
        return make(p.precision, p.scale)
    if kind == "fixed_size_binary":
        return pa.binary(p.size)
    if kind == "struct":
        return pa.struct(children)
    if kind in ("list", "list.struct"):
        return pa.list_(children[0])
    if kind in ("large_list", "large_list.struct"):
        return pa.large_list(children[0])
    if kind == "map":
        entries = children[0].type
        if entries.num_fields != 2:
            raise ValueError(f"map entries must have a key and a value, found {entries.num_fields} fields")
        return pa.map_(entries.field(0), entries.field(1))
    if kind == "fixed_size_list":
        element = p.element
        assert element is not None, "the grammar gives every fixed_size_list an element type"
        if element.kind == "struct":
            item = children[0]
        elif element.kind == BFLOAT16_EXTENSION:
            item = pa.field(
                "item",
                pa.binary(2),
                nullable=True,
                metadata={EXTENSION_NAME_KEY: BFLOAT16_EXTENSION, EXTENSION_METADATA_KEY: ""},
            )
        else:
            item = pa.field("item", _build_type(element, []), nullable=True)
        return pa.list_(item, p.size)
    if kind == "dict":
        assert p.key is not None and p.value is not None, "the grammar gives every dict its key and value types"
        return pa.dictionary(_build_type(p.key, []), _build_type(p.value, []), ordered=bool(p.ordered))
    raise ValueError(f"no Arrow type for {p.text!r}")  # pragma: no cover - the parser admits nothing else


def _json_type() -> pa.DataType:
    """Arrow's canonical JSON type (pyarrow >= 19), else its UTF-8 storage."""
    make = getattr(pa, "json_", None)
    return make() if make is not None else pa.string()


# --------------------------------------------------------------------------
# Arrow schema -> Lance schema ("Field IDs", "Field Metadata")
# --------------------------------------------------------------------------


def schema_from_arrow(arrow_schema: pa.Schema, first_id: int = 0, *, blob_v2: bool = False) -> Schema:
    """Convert an Arrow schema into a Lance :class:`Schema`.

    Fields are numbered depth-first (a field, then its children in order)
    starting at ``first_id`` (schema format page, "Field ID Assignment"); top-level
    fields get ``parent_id`` -1. Each field records the logical type of its
    Arrow type, its nullability and its metadata (as bytes); extension types
    contribute ``ARROW:extension:name`` / ``ARROW:extension:metadata`` as
    they do over the Arrow C data interface, and the extension name is also
    copied into the legacy ``extension_name``. The primary key flags come from
    the table overview page metadata (see :func:`_primary_key_from_metadata`).

    The result is what pylance 14 stores in the manifest, except ``type``:
    this gives each field the role the schema format page describes (:func:`field_role`),
    where pylance writes ``PARENT`` for every field. The legacy ``encoding``
    is filled in, JSON columns become ``json`` with
    extension name ``lance.json``. With ``blob_v2=True`` every field carrying
    ``lance-encoding:blob`` is rewritten into the ``lance.blob.v2`` struct
    (``data: large_binary``, ``uri: string``), as pylance does when writing
    files of version 2.2 or later; its parent keeps the logical type computed
    before the rewrite.

    Raises :class:`UnsupportedFeatureError` for Arrow types without a logical
    type, metadata keys that are not UTF-8, and nesting deeper than
    :data:`MAX_NESTING_DEPTH`.
    """
    fields: list[Field] = []
    ids = itertools.count(first_id)
    for arrow_field in arrow_schema:
        _append_field(fields, arrow_field, TOP_LEVEL_PARENT, ids, arrow_field.name, 1, blob_v2)
    return Schema(fields=fields, metadata=_metadata_dict(arrow_schema.metadata, "schema metadata"))


def _append_field(
    out: list[Field],
    arrow_field: pa.Field,
    parent_id: int,
    ids: Iterator[int],
    path: str,
    depth: int,
    blob_v2: bool,
) -> None:
    if depth > MAX_NESTING_DEPTH:
        raise _unsupported(path, f"nested deeper than {MAX_NESTING_DEPTH} levels")
    metadata = _metadata_dict(arrow_field.metadata, f"metadata of field {path!r}")
    dt = arrow_field.type
    if isinstance(dt, pa.BaseExtensionType):
        metadata.update(_extension_metadata(dt))
    storage = _plain_type(dt)

    extension_name = metadata.get(EXTENSION_NAME_KEY, b"").decode("utf-8", "replace")
    if _is_json(storage, extension_name):
        logical_type = "json"
        metadata[EXTENSION_NAME_KEY] = LANCE_JSON_EXTENSION.encode()
        children: list[pa.Field] = []
    else:
        logical_type = _storage_logical_type(dt, path)
        children = _arrow_children(storage)

    if blob_v2 and BLOB_METADATA_KEY in metadata:
        del metadata[BLOB_METADATA_KEY]
        metadata[EXTENSION_NAME_KEY] = BLOB_V2_EXTENSION.encode()
        logical_type = "struct"
        children = [pa.field("data", pa.large_binary()), pa.field("uri", pa.string())]

    in_key, position = _primary_key_from_metadata(metadata)
    field = Field(
        id=next(ids),
        name=arrow_field.name,
        logical_type=logical_type,
        parent_id=parent_id,
        nullable=arrow_field.nullable,
        type=field_role(logical_type),
        metadata=metadata,
        unenforced_primary_key=in_key,
        unenforced_primary_key_position=position,
        encoding=_legacy_encoding(logical_type),
        extension_name=metadata.get(EXTENSION_NAME_KEY, b"").decode("utf-8", "replace"),
    )
    out.append(field)
    for child in children:
        _append_field(out, child, field.id, ids, f"{path}.{child.name}", depth + 1, blob_v2)


def _arrow_children(dt: pa.DataType) -> list[pa.Field]:
    """The Arrow fields that become child fields of a Lance field."""
    t = pa.types
    if t.is_struct(dt):
        return [dt.field(i) for i in range(dt.num_fields)]
    if t.is_map(dt):
        entries = pa.struct([dt.key_field, dt.item_field])
        return [pa.field("entries", entries, nullable=False)]
    if t.is_list(dt) or t.is_large_list(dt):
        return [dt.value_field]
    if t.is_fixed_size_list(dt) and t.is_struct(_plain_type(dt.value_type)):
        return [dt.value_field]
    return []


def _legacy_encoding(logical_type: str) -> int:
    """The deprecated v1 ``encoding`` pylance still fills in: DICTIONARY (3)
    for dictionaries, VAR_BINARY (2) for strings, binaries and JSON, NONE (0)
    for structs and ``null``, PLAIN (1) for everything else."""
    kind = logical_type.partition(":")[0]
    if kind == "dict":
        return 3
    if kind in ("string", "binary", "large_string", "large_binary", "json", "blob"):
        return 2
    if kind in ("struct", "null"):
        return 0
    return 1


def _metadata_dict(metadata: dict | None, what: str) -> dict[str, bytes]:
    """Arrow metadata (bytes to bytes) as the manifest stores it (string keys,
    byte values)."""
    out: dict[str, bytes] = {}
    for key, value in (metadata or {}).items():
        if isinstance(key, bytes):
            try:
                key = key.decode("utf-8")
            except UnicodeDecodeError:
                raise UnsupportedFeatureError(_SCHEMA, f"{what}: key {key!r} is not UTF-8") from None
        out[key] = value if isinstance(value, bytes) else str(value).encode("utf-8")
    return out


def _primary_key_from_metadata(metadata: dict[str, bytes]) -> tuple[bool, int]:
    """The table overview page's primary key flags, read the way pylance 14 reads them.

    The flag counts when its value is ``true``, ``1`` or ``yes`` in any case
    (no surrounding blanks). A position counts when it is an unsigned 32-bit
    decimal number (an optional ``+`` allowed); it then makes the field part
    of the key even without the flag. Any other position is ignored (0).
    """
    flag = metadata.get(PRIMARY_KEY_KEY)
    in_key = flag is not None and flag.decode("utf-8", "replace").lower() in _PK_TRUE_VALUES
    raw = metadata.get(PRIMARY_KEY_POSITION_KEY)
    if raw is not None and re.fullmatch(rb"\+?[0-9]+", raw):
        position = int(raw)
        if position <= _U32_MAX:
            return True, position
    return in_key, 0


# Reading the metadata an extension type carries over the Arrow C data
# interface. pyarrow only exposes the serialized parameters of extension types
# written in Python, so for the built-in ones (JSON, UUID, tensors, ...) the
# exported ArrowSchema struct is the one place they can be read from.


class _ArrowSchemaStruct(ctypes.Structure):
    pass


_ArrowSchemaStruct._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_void_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.c_void_p),
    ("dictionary", ctypes.c_void_p),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


# PyCapsule_GetPointer with its own prototype, so that the shared
# ``ctypes.pythonapi`` attribute is left as other code may have configured it.
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


def _extension_metadata(dt: pa.BaseExtensionType) -> dict[str, bytes]:
    """``ARROW:extension:name`` and ``ARROW:extension:metadata`` of an
    extension type, exactly as an Arrow C data interface consumer sees them."""
    serialized = _exported_extension_parameters(dt)
    if serialized is None:
        serialize = getattr(dt, "__arrow_ext_serialize__", None)
        serialized = serialize() if serialize is not None else b""
    return {EXTENSION_NAME_KEY: dt.extension_name.encode("utf-8"), EXTENSION_METADATA_KEY: bytes(serialized)}


def _exported_extension_parameters(dt: pa.DataType) -> bytes | None:
    export = getattr(dt, "__arrow_c_schema__", None)
    if export is None:
        return None
    try:
        capsule = export()
        exported = _ArrowSchemaStruct.from_address(_capsule_pointer(capsule, b"arrow_schema"))
        # The metadata block: an int32 pair count, then for each pair an
        # int32 length and the key bytes, an int32 length and the value bytes.
        base = exported.metadata
        if not base:
            return None
        offset = 0

        def read_int32() -> int:
            nonlocal offset
            (value,) = struct.unpack("=i", ctypes.string_at(base + offset, 4))
            offset += 4
            return value

        def read_bytes() -> bytes:
            nonlocal offset
            length = read_int32()
            data = ctypes.string_at(base + offset, length)
            offset += length
            return data

        pairs = {}
        for _ in range(read_int32()):
            key = read_bytes()
            pairs[key] = read_bytes()
        return pairs.get(EXTENSION_METADATA_KEY.encode())
    except Exception:  # noqa: BLE001 - fall back to the Python-level serializer
        return None


def add_fields(
    schema: Schema,
    new_fields: Iterable[pa.Field] | pa.Schema,
    *,
    parent_id: int = TOP_LEVEL_PARENT,
    used_field_ids: Iterable[int] = (),
    blob_v2: bool = False,
) -> Schema:
    """Return a copy of ``schema`` with ``new_fields`` added.

    The new fields (and their children) get ids depth-first from
    :func:`next_field_id`. With ``parent_id`` they are added to that struct
    field, after its existing children; the flat list stays in depth-first
    order. Raises :class:`ValueError` if the parent is missing or not a
    struct, or if a new name is already taken among its siblings.
    """
    new_list = list(new_fields)
    if parent_id != TOP_LEVEL_PARENT:
        parent = schema.field_by_id(parent_id)
        if parent is None:
            raise ValueError(f"no field with id {parent_id}")
        if parent.logical_type != "struct":
            raise ValueError(f"field {parent.name!r} (id {parent_id}) is a {parent.logical_type!r}, not a struct")
    taken = {f.name for f in schema.fields if f.parent_id == parent_id}
    for arrow_field in new_list:
        if arrow_field.name in taken:
            raise ValueError(f"a field named {arrow_field.name!r} already exists there")
        taken.add(arrow_field.name)

    added = schema_from_arrow(
        pa.schema(new_list), first_id=next_field_id(schema, used_field_ids), blob_v2=blob_v2
    ).fields
    added = [dataclasses.replace(f, parent_id=parent_id) if f.parent_id == TOP_LEVEL_PARENT else f for f in added]

    fields = list(schema.fields)
    insert_at = len(fields)
    if parent_id != TOP_LEVEL_PARENT:
        subtree = _descendant_ids(schema, parent_id) | {parent_id}
        insert_at = max(i for i, f in enumerate(fields) if f.id in subtree) + 1
    fields[insert_at:insert_at] = added
    return Schema(fields=fields, metadata=dict(schema.metadata))


def _descendant_ids(schema: Schema, root_id: int) -> set[int]:
    found: set[int] = set()
    frontier = [root_id]
    while frontier:
        current = frontier.pop()
        for f in schema.fields:
            if f.parent_id == current and f.id not in found and f.id != root_id:
                found.add(f.id)
                frontier.append(f.id)
    return found


# --------------------------------------------------------------------------
# Lance schema -> Arrow schema
# --------------------------------------------------------------------------


def schema_to_arrow(schema: Schema) -> pa.Schema:
    """Rebuild the nested Arrow schema from the flat field list.

    A field's children are the fields whose ``parent_id`` is its id, in list
    order. Field and schema metadata are restored; a legacy
    ``extension_name`` is written into ``ARROW:extension:name`` (as pylance
    does, it wins over the metadata); ``json`` fields become Arrow's JSON type (their stored
    extension keys removed) and ``blob`` fields large binary marked
    ``lance-encoding:blob``. Finally the schema goes through an Arrow IPC round
    trip, so that extension types registered with pyarrow (bfloat16, blob v2,
    UUID, ...) come back as those types and map keys and values are named
    ``key`` and ``value``, as any Arrow consumer, pylance included, sees them.
    Fields whose registered extension type rejects its storage stay in their
    metadata form.

    Raises :class:`CorruptFileError` for duplicate ids, a ``parent_id`` that
    names no field, parent cycles, nesting deeper than
    :data:`MAX_NESTING_DEPTH`, malformed logical types or a wrong set of
    children, and :class:`UnsupportedFeatureError` for unknown logical types.
    """
    by_id: dict[int, Field] = {}
    for f in schema.fields:
        if f.id in by_id:
            raise CorruptFileError(_SCHEMA, f"field id {f.id} is used by both {by_id[f.id].name!r} and {f.name!r}")
        by_id[f.id] = f

    top: list[Field] = []
    children: dict[int, list[Field]] = {}
    for f in schema.fields:
        if f.parent_id == TOP_LEVEL_PARENT:
            top.append(f)
        elif f.parent_id in by_id:
            children.setdefault(f.parent_id, []).append(f)
        else:
            raise CorruptFileError(
                _SCHEMA, f"field {f.name!r} (id {f.id}) has parent_id {f.parent_id}, which names no field"
            )

    # Walk down from the top level without recursion; anything not reached has
    # a parent chain that never gets to the top, i.e. a cycle.
    reached: set[int] = set()
    frontier = [(f, 1) for f in top]
    while frontier:
        f, depth = frontier.pop()
        if depth > MAX_NESTING_DEPTH:
            raise CorruptFileError(_SCHEMA, f"field {f.name!r} (id {f.id}) is nested deeper than {MAX_NESTING_DEPTH}")
        reached.add(f.id)
        frontier.extend((c, depth + 1) for c in children.get(f.id, []))
    stranded = [f for f in schema.fields if f.id not in reached]
    if stranded:
        names = ", ".join(f"{f.name!r} (id {f.id})" for f in stranded[:5])
        raise CorruptFileError(_SCHEMA, f"parent ids form a cycle: {names} never reach the top level")

    arrow_fields = [_to_arrow_field(f, children, f.name) for f in top]
    metadata = dict(schema.metadata) or None
    return _materialize_extensions(pa.schema(arrow_fields, metadata=metadata))


def _to_arrow_field(f: Field, children: dict[int, list[Field]], path: str) -> pa.Field:
    kids = [_to_arrow_field(c, children, f"{path}.{c.name}") for c in children.get(f.id, [])]
    metadata = dict(f.metadata)
    if f.extension_name:
        metadata[EXTENSION_NAME_KEY] = f.extension_name.encode("utf-8")
    if f.logical_type == "json":
        if kids:
            raise CorruptFileError(_SCHEMA, f"field {path!r} (id {f.id}): a json field has no children")
        metadata.pop(EXTENSION_NAME_KEY, None)
        metadata.pop(EXTENSION_METADATA_KEY, None)
        data_type = _json_type()
    else:
        data_type = _arrow_type(f.logical_type, kids, where=f"{path!r} (id {f.id})")
    if f.logical_type == "blob":
        metadata.setdefault(BLOB_METADATA_KEY, b"true")
    try:
        return pa.field(f.name, data_type, nullable=f.nullable, metadata=metadata or None)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise CorruptFileError(_SCHEMA, f"field {path!r} (id {f.id}): {exc}") from None


def _materialize_extensions(schema: pa.Schema) -> pa.Schema:
    try:
        return _ipc_round_trip(schema)
    except Exception:  # noqa: BLE001 - retry field by field below
        pass
    fields = []
    for arrow_field in schema:
        try:
            fields.append(_ipc_round_trip(pa.schema([arrow_field])).field(0))
        except Exception:  # noqa: BLE001 - keep the metadata form of this field
            fields.append(arrow_field)
    return pa.schema(fields, metadata=schema.metadata)


def _ipc_round_trip(schema: pa.Schema) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(schema.serialize()))


__all__ = [
    "add_fields",
    "arrow_type_of",
    "logical_type_of",
    "schema_from_arrow",
    "schema_to_arrow",
]
