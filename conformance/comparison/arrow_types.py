"""Arrow types by name (:class:`conformance.type_capabilities.ArrowType`): the
name of one type, and the names of every type a field holds at any depth, so
that a reader's declared unsupported types select the columns they concern."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from ..type_capabilities import ArrowType

#: Extension name of bfloat16 values (schema format page, "BFloat16 Type").
BFLOAT16_EXTENSION = "lance.bfloat16"
_EXTENSION_NAME_KEY = b"ARROW:extension:name"

# pyarrow's predicates, one per name; the order matters only where two
# predicates accept one type (none do).
_PREDICATES: tuple[tuple[Callable[[pa.DataType], bool], ArrowType], ...] = (
    (pa.types.is_null, ArrowType.NULL),
    (pa.types.is_boolean, ArrowType.BOOL),
    (pa.types.is_int8, ArrowType.INT8),
    (pa.types.is_int16, ArrowType.INT16),
    (pa.types.is_int32, ArrowType.INT32),
    (pa.types.is_int64, ArrowType.INT64),
    (pa.types.is_uint8, ArrowType.UINT8),
    (pa.types.is_uint16, ArrowType.UINT16),
    (pa.types.is_uint32, ArrowType.UINT32),
    (pa.types.is_uint64, ArrowType.UINT64),
    (pa.types.is_float16, ArrowType.HALF_FLOAT),
    (pa.types.is_float32, ArrowType.FLOAT),
    (pa.types.is_float64, ArrowType.DOUBLE),
    (pa.types.is_decimal128, ArrowType.DECIMAL128),
    (pa.types.is_decimal256, ArrowType.DECIMAL256),
    (pa.types.is_string, ArrowType.STRING),
    (pa.types.is_large_string, ArrowType.LARGE_STRING),
    (pa.types.is_binary, ArrowType.BINARY),
    (pa.types.is_large_binary, ArrowType.LARGE_BINARY),
    (pa.types.is_fixed_size_binary, ArrowType.FIXED_SIZE_BINARY),
    (pa.types.is_date32, ArrowType.DATE32),
    (pa.types.is_date64, ArrowType.DATE64),
    (pa.types.is_time32, ArrowType.TIME32),
    (pa.types.is_time64, ArrowType.TIME64),
    (pa.types.is_timestamp, ArrowType.TIMESTAMP),
    (pa.types.is_duration, ArrowType.DURATION),
    (pa.types.is_list, ArrowType.LIST),
    (pa.types.is_large_list, ArrowType.LARGE_LIST),
    (pa.types.is_fixed_size_list, ArrowType.FIXED_SIZE_LIST),
    (pa.types.is_struct, ArrowType.STRUCT),
    (pa.types.is_map, ArrowType.MAP),
    (pa.types.is_dictionary, ArrowType.DICTIONARY),
)


def arrow_type(t: pa.DataType) -> ArrowType | None:
    """The name of ``t`` itself (not of its children); None for a type a
    Lance dataset does not hold (a view layout, an interval, a union)."""
    if isinstance(t, pa.BaseExtensionType):
        return ArrowType.BFLOAT16 if t.extension_name == BFLOAT16_EXTENSION else arrow_type(t.storage_type)
    return next((name for accepts, name in _PREDICATES if accepts(t)), None)


def is_bfloat16(f: pa.Field) -> bool:
    """Whether ``f`` holds bfloat16 values: two-byte fixed-size binary named
    ``lance.bfloat16`` by a registered extension type or by field metadata."""
    if isinstance(f.type, pa.BaseExtensionType):
        return f.type.extension_name == BFLOAT16_EXTENSION and f.type.storage_type.equals(pa.binary(2))
    return f.type.equals(pa.binary(2)) and (f.metadata or {}).get(_EXTENSION_NAME_KEY) == BFLOAT16_EXTENSION.encode()


def types_held(f: pa.Field) -> set[ArrowType]:
    """The names of ``f``'s type and of every type nested in it."""
    if is_bfloat16(f):
        return {ArrowType.BFLOAT16}
    t = f.type
    own = arrow_type(t)
    found = {own} if own is not None else set()
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_dictionary(t):
        return found | types_held(pa.field("values", t.value_type))
    if pa.types.is_map(t):
        return found | types_held(t.key_field) | types_held(t.item_field)
    children = [t.field(index) for index in range(t.num_fields)]
    for child in children:
        found |= types_held(child)
    return found
