"""The grammar of logical type strings, and the metadata keys that mark
types and keys on fields (upstream ``docs/src/format/table/schema.md``,
"Data Types" and "Type Conversion Reference").

This is the bottom of the schema topic: it imports nothing else from the
project, so validators can check a logical type without loading anything
more. :mod:`reference_impl.arrow_schema` builds Arrow types from the parsed
form; :mod:`reference_impl.schema` uses it for field roles and primary keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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

_I32_MAX = 2**31 - 1

# --------------------------------------------------------------------------
# The grammar of logical type strings (schema format page, "Data Types")
# --------------------------------------------------------------------------

#: Logical types that are a single word and map to one Arrow type. Names
#: only: the Arrow types are in :data:`reference_impl.arrow_schema.SIMPLE_TYPES`,
#: so that checking a type string (the validator's schema rules) never loads
#: pyarrow.
SIMPLE_KINDS: tuple[str, ...] = (
    "null",
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "halffloat",
    "float",
    "double",
    "string",
    "binary",
    "large_string",
    "large_binary",
)

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

LIST_KINDS = ("list", "list.struct", "large_list", "large_list.struct")
#: Logical types whose children are separate fields of the schema.
_NESTED_KINDS = ("struct", "map") + LIST_KINDS
#: Logical types that stand for a field-level extension, never for an element.
_FIELD_ONLY_KINDS = ("json", "blob")

#: Every leading word a logical type may start with; a string starting with
#: anything else is an unknown (rather than malformed) logical type.
KNOWN_KINDS = frozenset(
    list(SIMPLE_KINDS)
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
        if self.kind in LIST_KINDS or self.kind == "map":
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
    if text in SIMPLE_KINDS or text in _NESTED_KINDS or text in _FIELD_ONLY_KINDS:
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


__all__ = [
    "ARROW_JSON_EXTENSION",
    "BFLOAT16_EXTENSION",
    "BLOB_METADATA_KEY",
    "BLOB_V2_EXTENSION",
    "EXTENSION_METADATA_KEY",
    "EXTENSION_NAME_KEY",
    "KNOWN_KINDS",
    "LANCE_JSON_EXTENSION",
    "LIST_KINDS",
    "MAX_NESTING_DEPTH",
    "PRIMARY_KEY_KEY",
    "PRIMARY_KEY_POSITION_KEY",
    "ParsedType",
    "SIMPLE_KINDS",
    "is_valid_logical_type",
    "parse_logical_type",
]
