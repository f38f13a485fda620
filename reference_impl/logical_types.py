"""Logical type strings and the Arrow <-> Lance schema conversion.

The schema format page describes how a Lance schema is stored: a flat,
depth-first list of ``Field`` messages whose ``logical_type`` strings stand for
Arrow data types ("Data Types", "Type Conversion Reference"), whose ids are
assigned depth-first from 0 and then incrementally ("Field IDs"), whose nesting
is carried by ``parent_id`` (-1 at the top level) and whose metadata is a map of
string to bytes ("Field Metadata"). The table overview page ("Unenforced Primary Key") says
how Arrow field metadata marks primary key columns and which columns may be
part of a primary key.

Where the seeds leave room, this module does what pylance 14 records in the
manifests it writes; every such choice is listed in
``docs/spec-discrepancies.md`` under "Schema and logical types". In short:

* pylance writes ``type = PARENT`` (0) for every field, leaves included;
  here every field gets the role the schema format page describes (:func:`field_role`),
  and readers accept either.
* Dictionaries are always written ``...:false`` (never ordered), and view
  types are written as their plain counterparts.
* A fixed-size list keeps a child field only when its element is a struct;
  otherwise the element is described entirely inside the logical type string.
* JSON columns are written ``json`` with extension name ``lance.json``; blob
  columns marked ``lance-encoding:blob`` are kept as they are, or (pylance's
  file version 2.2 and later, ``blob_v2=True`` here) rewritten into the
  ``lance.blob.v2`` struct. The ``blob`` logical type is only ever read.
* A primary key position that parses as an unsigned 32-bit number makes the
  field part of the primary key even without the boolean flag.

Public API
----------
``parse_logical_type`` / ``is_valid_logical_type``
    Grammar of logical type strings, for validators.
``logical_type_of`` / ``arrow_type_of``
    One data type in either direction.
``schema_from_arrow`` / ``schema_to_arrow``
    Whole schemas, including ids, parents, nullability and metadata.
``next_field_id`` / ``add_fields``
    Ids for fields added to an existing schema.
``field_role``, ``primary_key_fields``, ``primary_key_problems``
    Field roles and the unenforced primary key.
"""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
import re
import struct
from dataclasses import dataclass
from typing import Iterable, Iterator

import pyarrow as pa

from .errors import CorruptFileError, UnsupportedFeatureError
from .schema import TOP_LEVEL_PARENT, Field, FieldType, Schema

# --------------------------------------------------------------------------
# Metadata keys and extension names
# --------------------------------------------------------------------------

#: Arrow's key for the name of an extension type (schema format page, "Arrow Extension
#: Type Metadata").
EXTENSION_NAME_KEY = "ARROW:extension:name"
#: Arrow's key for the serialized parameters of an extension type.
EXTENSION_METADATA_KEY = "ARROW:extension:metadata"
#: Field metadata marking a (legacy) blob column (schema format page, "Blob Type").
BLOB_METADATA_KEY = "lance-encoding:blob"
#: Field metadata marking a primary key column (table overview page).
PRIMARY_KEY_KEY = "lance-schema:unenforced-primary-key"
#: Field metadata giving the 1-based position inside a composite key (table overview page).
PRIMARY_KEY_POSITION_KEY = "lance-schema:unenforced-primary-key:position"

#: Extension name of bfloat16 values (schema format page, "BFloat16 Type").
BFLOAT16_EXTENSION = "lance.bfloat16"
#: Extension name pylance stores on JSON columns.
LANCE_JSON_EXTENSION = "lance.json"
#: Arrow's canonical JSON extension name.
ARROW_JSON_EXTENSION = "arrow.json"
#: Extension name of the struct that pylance stores for blob v2 columns.
BLOB_V2_EXTENSION = "lance.blob.v2"

#: Deepest nesting accepted in either direction. It keeps recursion bounded on
#: hostile input; Arrow IPC itself refuses schemas nested deeper than 64.
MAX_NESTING_DEPTH = 64

_SCHEMA = "schema"
_PK_TRUE_VALUES = ("true", "1", "yes")
_U32_MAX = 2**32 - 1
_I32_MAX = 2**31 - 1

# --------------------------------------------------------------------------
# The grammar of logical type strings (schema format page, "Data Types")
# --------------------------------------------------------------------------

#: Logical types that are a single word and map to one Arrow type.
_SIMPLE_TYPES: dict[str, pa.DataType] = {
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

_INTEGER_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")

#: The units each temporal family accepts ("Date and Time Types").
_TEMPORAL_UNITS: dict[str, tuple[str, ...]] = {
    "date32": ("day",),
    "date64": ("ms",),
    "time32": ("s", "ms"),
    "time64": ("us", "ns"),
    "duration": ("s", "ms", "us", "ns"),
    "timestamp": ("s", "ms", "us", "ns"),
}

_LIST_KINDS = ("list", "list.struct", "large_list", "large_list.struct")
#: Logical types whose children are separate fields of the schema.
_NESTED_KINDS = ("struct", "map") + _LIST_KINDS
#: Logical types that stand for a field-level extension, never for an element.
_FIELD_ONLY_KINDS = ("json", "blob")

#: Every leading word a logical type may start with; a string starting with
#: anything else is an unknown (rather than malformed) logical type.
KNOWN_KINDS = frozenset(
    list(_SIMPLE_TYPES)
    + list(_TEMPORAL_UNITS)
    + list(_NESTED_KINDS)
    + list(_FIELD_ONLY_KINDS)
    + ["decimal", "fixed_size_binary", "fixed_size_list", "dict"]
)

_CANONICAL_UNSIGNED = re.compile(r"0|[1-9][0-9]*")
_CANONICAL_SIGNED = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class ParsedType:
    """A logical type string taken apart.

    ``kind`` is the family: a simple type name (``"int32"``, ``"string"``,
    ...), one of ``date32 date64 time32 time64 duration timestamp decimal
    fixed_size_binary fixed_size_list dict struct list list.struct large_list
    large_list.struct map json blob``, or ``lance.bfloat16`` (only ever as the
    element of a fixed-size list). The other attributes are the parameters of
    that family and ``None`` where they do not apply.
    """

    text: str
    kind: str
    unit: str | None = None
    #: Timestamp time zone; ``None`` when the string says ``-`` (no zone).
    timezone: str | None = None
    bit_width: int | None = None
    precision: int | None = None
    scale: int | None = None
    #: Byte width of ``fixed_size_binary`` or length of ``fixed_size_list``.
    size: int | None = None
    #: Element of a ``fixed_size_list``.
    element: ParsedType | None = None
    #: Value and key (index) types of a ``dict``.
    value: ParsedType | None = None
    key: ParsedType | None = None
    ordered: bool | None = None

    @property
    def expected_children(self) -> int | None:
        """How many child fields a field of this type has in the schema.

        ``None`` means any number (a struct). Lists and maps have exactly one
        child (the element, or the ``entries`` struct of a map); a fixed-size
        list has one only when its element is a struct.
        """
        if self.kind == "struct":
            return None
        if self.kind in _LIST_KINDS or self.kind == "map":
            return 1
        if self.kind == "fixed_size_list" and self.element is not None and self.element.kind == "struct":
            return 1
        return 0

    @property
    def child_must_be_struct(self) -> bool:
        """True when the single child field must itself be a struct."""
        return self.kind in ("list.struct", "large_list.struct", "map") or (
            self.kind == "fixed_size_list" and self.element is not None and self.element.kind == "struct"
        )


def parse_logical_type(text: str, *, strict: bool = False) -> ParsedType:
    """Parse a logical type string, raising :class:`ValueError` if it is not
    well formed.

    The grammar is the one of the schema format page ("Data Types" and "Type Conversion
    Reference"), with numbers written in canonical decimal (no sign, no
    leading zeros) as every writer produces them:

    * a simple name: ``null bool int8 .. uint64 halffloat float double string
      binary large_string large_binary``, and the field-level extensions
      ``json`` and ``blob``;
    * ``date32:day``, ``date64:ms``, ``time32:s|ms``, ``time64:us|ns``,
      ``duration:s|ms|us|ns``;
    * ``timestamp:<unit>:<tz>`` where ``<tz>`` is a non-empty zone name (which
      may itself contain ``:``, e.g. ``+01:00``) or ``-`` for none;
    * ``decimal:128:<P>:<S>`` with 1 <= P <= 38, ``decimal:256:<P>:<S>`` with
      1 <= P <= 76; S is any integer Arrow accepts, and with ``strict=True``
      must satisfy the schema format page's 0 <= S <= P;
    * ``fixed_size_binary:<n>``;
    * ``fixed_size_list:<element>:<n>`` with n >= 1, where the element is
      ``lance.bfloat16``, ``struct``, or any leaf type that needs no child
      fields (a nested fixed-size list of a leaf included);
    * ``dict:<value>:<key>:<true|false>`` where the value is a single-word
      leaf type (the ``:`` separated form cannot carry anything longer) and the
      key an integer type;
    * ``struct``, ``list``, ``list.struct``, ``large_list``,
      ``large_list.struct``, ``map``.
    """
    if not isinstance(text, str):
        raise ValueError(f"logical type must be a string, not {type(text).__name__}")
    return _parse(text, strict=strict)


def is_valid_logical_type(text: str, *, strict: bool = False) -> bool:
    """True if :func:`parse_logical_type` accepts ``text``."""
    try:
        parse_logical_type(text, strict=strict)
    except ValueError:
        return False
    return True


def _parse(text: str, *, strict: bool) -> ParsedType:
    if text in _SIMPLE_TYPES or text in _NESTED_KINDS or text in _FIELD_ONLY_KINDS:
        return ParsedType(text=text, kind=text)

    head, sep, rest = text.partition(":")
    if not sep:
        raise ValueError(f"unknown logical type {text!r}")

    if head in _TEMPORAL_UNITS:
        if head == "timestamp":
            unit, sep, zone = rest.partition(":")
            if not sep:
                raise ValueError(f"{text!r}: a timestamp needs a unit and a time zone ('-' for none)")
            if unit not in _TEMPORAL_UNITS[head]:
                raise ValueError(f"{text!r}: unknown timestamp unit {unit!r}")
            if zone == "":
                raise ValueError(f"{text!r}: empty time zone (write '-' for none)")
            return ParsedType(text=text, kind=head, unit=unit, timezone=None if zone == "-" else zone)
        if rest not in _TEMPORAL_UNITS[head]:
            allowed = "|".join(_TEMPORAL_UNITS[head])
            raise ValueError(f"{text!r}: {head} takes the unit {allowed}")
        return ParsedType(text=text, kind=head, unit=rest)

    if head == "decimal":
        parts = rest.split(":")
        if len(parts) != 3:
            raise ValueError(f"{text!r}: expected decimal:<bits>:<precision>:<scale>")
        bits_text, precision_text, scale_text = parts
        if bits_text not in ("128", "256"):
            raise ValueError(f"{text!r}: decimal bit width must be 128 or 256")
        bits = int(bits_text)
        precision = _canonical_int(precision_text, text, "precision")
        scale = _canonical_int(scale_text, text, "scale", signed=True)
        max_precision = 38 if bits == 128 else 76
        if not 1 <= precision <= max_precision:
            raise ValueError(f"{text!r}: precision must be between 1 and {max_precision}")
        if abs(scale) > _I32_MAX:
            raise ValueError(f"{text!r}: scale out of range")
        if strict and not 0 <= scale <= precision:
            raise ValueError(f"{text!r}: the schema format page requires 0 <= scale <= precision")
        return ParsedType(text=text, kind="decimal", bit_width=bits, precision=precision, scale=scale)

    if head == "fixed_size_binary":
        size = _canonical_int(rest, text, "byte width")
        _check_i32(size, text)
        return ParsedType(text=text, kind=head, size=size)

    if head == "fixed_size_list":
        inner, sep, size_text = rest.rpartition(":")
        if not sep or not inner:
            raise ValueError(f"{text!r}: expected fixed_size_list:<element>:<size>")
        size = _canonical_int(size_text, text, "list size")
        _check_i32(size, text)
        if size == 0:
            raise ValueError(f"{text!r}: a fixed-size list needs a positive size")
        if inner == BFLOAT16_EXTENSION:
            element = ParsedType(text=inner, kind=inner)
        else:
            element = _parse(inner, strict=strict)
            if element.kind in _FIELD_ONLY_KINDS:
                raise ValueError(f"{text!r}: {element.kind!r} cannot be the element of a fixed-size list")
            if element.kind != "struct" and element.expected_children != 0:
                raise ValueError(f"{text!r}: element {inner!r} would need child fields a fixed-size list cannot carry")
        return ParsedType(text=text, kind=head, size=size, element=element)

    if head == "dict":
        parts = rest.split(":")
        if len(parts) != 3:
            raise ValueError(f"{text!r}: expected dict:<value>:<key>:<ordered> with a single-word value type")
        value_text, key_text, ordered_text = parts
        value = _parse(value_text, strict=strict)
        if value.expected_children != 0 or value.kind in _FIELD_ONLY_KINDS:
            raise ValueError(f"{text!r}: {value_text!r} cannot be a dictionary value type")
        if key_text not in _INTEGER_TYPES:
            raise ValueError(f"{text!r}: dictionary key type must be an integer type, not {key_text!r}")
        if ordered_text not in ("true", "false"):
            raise ValueError(f"{text!r}: dictionary ordered flag must be 'true' or 'false'")
        return ParsedType(
            text=text,
            kind=head,
            value=value,
            key=ParsedType(text=key_text, kind=key_text),
            ordered=ordered_text == "true",
        )

    raise ValueError(f"unknown logical type {text!r}")


def _canonical_int(text: str, whole: str, what: str, *, signed: bool = False) -> int:
    pattern = _CANONICAL_SIGNED if signed else _CANONICAL_UNSIGNED
    if not pattern.fullmatch(text):
        raise ValueError(f"{whole!r}: {what} {text!r} is not a canonical decimal number")
    return int(text)


def _check_i32(value: int, whole: str) -> None:
    if value > _I32_MAX:
        raise ValueError(f"{whole!r}: size {value} does not fit in 32 bits")


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
    for name, simple in _SIMPLE_TYPES.items():
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
        if inner != "struct" and _parse(inner, strict=False).expected_children != 0:
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
    if kind in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[kind]
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
    """Primary key flags of the table overview page, read the way pylance 14 reads them.

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
    if logical_type in _LIST_KINDS or logical_type == "map":
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
    the overview page's wording reads, although pylance 14 accepts key columns inside a
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
            if kind in _LIST_KINDS or kind in ("map", "fixed_size_list"):
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


__all__ = [
    "ARROW_JSON_EXTENSION",
    "BFLOAT16_EXTENSION",
    "BLOB_METADATA_KEY",
    "BLOB_V2_EXTENSION",
    "EXTENSION_METADATA_KEY",
    "EXTENSION_NAME_KEY",
    "KNOWN_KINDS",
    "LANCE_JSON_EXTENSION",
    "MAX_NESTING_DEPTH",
    "PRIMARY_KEY_KEY",
    "PRIMARY_KEY_POSITION_KEY",
    "ParsedType",
    "add_fields",
    "arrow_type_of",
    "field_role",
    "is_valid_logical_type",
    "logical_type_of",
    "next_field_id",
    "parse_logical_type",
    "primary_key_fields",
    "primary_key_problems",
    "schema_from_arrow",
    "schema_to_arrow",
]
