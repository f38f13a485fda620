"""Strategies for types and schemas: Arrow fields and schemas, Lance logical
type strings, Lance :class:`~reference_impl.schema.Schema` objects."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import strategies as st

from reference_impl.logical_types import logical_type_of, schema_from_arrow
from reference_impl.schema import Schema

from ._arguments import DEFAULT_MAX_LEAVES, check_count, size_range

_NAMES = st.text(alphabet="abcxyz_", min_size=1, max_size=5)
_METADATA = st.none() | st.dictionaries(
    st.text(alphabet="klmn", min_size=1, max_size=3), st.text(alphabet="uvé ", max_size=3), max_size=2
)
_UNITS = ["s", "ms", "us", "ns"]
_PRIMITIVES = [
    pa.bool_(),
    pa.int8(),
    pa.uint8(),
    pa.int16(),
    pa.uint16(),
    pa.int32(),
    pa.uint32(),
    pa.int64(),
    pa.uint64(),
    pa.float16(),
    pa.float32(),
    pa.float64(),
    pa.string(),
    pa.binary(),
    pa.large_string(),
    pa.large_binary(),
    pa.date32(),
    pa.date64(),
    pa.time32("s"),
    pa.time32("ms"),
    pa.time64("us"),
    pa.time64("ns"),
    *[pa.duration(u) for u in _UNITS],
]
_INDEX_TYPES = [pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(), pa.uint32(), pa.int64(), pa.uint64()]
#: The element of a bfloat16 vector, as Lance stores it.
_BF16_ITEM = pa.field(
    "item", pa.binary(2), metadata={"ARROW:extension:name": "lance.bfloat16", "ARROW:extension:metadata": ""}
)

_decimals = st.one_of(
    st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: pa.decimal128(p, s))),
    st.integers(1, 76).flatmap(lambda p: st.integers(0, p).map(lambda s: pa.decimal256(p, s))),
)
_timestamps = st.builds(
    pa.timestamp, st.sampled_from(_UNITS), st.sampled_from([None, "UTC", "America/New_York", "+01:00"])
)
_element_types = st.one_of(
    st.sampled_from(_PRIMITIVES + [pa.null()]), _decimals, _timestamps, st.integers(1, 32).map(pa.binary)
)
_dictionaries = st.builds(
    pa.dictionary,
    st.sampled_from(_INDEX_TYPES),
    st.sampled_from([pa.string(), pa.large_string(), pa.binary(), pa.int32(), pa.float64(), pa.bool_()]),
)
_fixed_size_lists = st.one_of(
    st.builds(pa.list_, st.one_of(_element_types, _dictionaries), st.integers(1, 8)),
    st.integers(1, 8).map(lambda n: pa.list_(_BF16_ITEM, n)),
    st.builds(pa.list_, st.builds(pa.list_, _element_types, st.integers(1, 4)), st.integers(1, 4)),
)
_leaf_types = st.one_of(
    st.sampled_from(_PRIMITIVES),
    _decimals,
    _timestamps,
    st.integers(0, 32).map(pa.binary),
    _dictionaries,
    _fixed_size_lists,
    st.just(pa.json_()),
    st.just(pa.uuid()),
)


def _field(name, type_, nullable, metadata):
    return pa.field(name, type_, nullable=nullable, metadata=metadata)


_leaf_fields = st.one_of(
    st.builds(_field, _NAMES, _leaf_types, st.booleans(), _METADATA),
    st.builds(_field, _NAMES, st.just(pa.null()), st.just(True), _METADATA),
)


@st.composite
def _nested(draw, children):
    """A struct, list, large list, map or fixed-size list of structs field
    whose children are drawn from ``children``."""

    def struct_type():
        return pa.struct(draw(st.lists(children, max_size=3, unique_by=lambda f: f.name)))

    kind = draw(st.sampled_from(["struct", "list", "large_list", "map", "fixed_size_list"]))
    if kind == "struct":
        nested_type = struct_type()
    elif kind == "list":
        nested_type = pa.list_(draw(children))
    elif kind == "large_list":
        nested_type = pa.large_list(draw(children))
    elif kind == "map":
        key_type = draw(st.sampled_from([pa.int32(), pa.string(), pa.int64()]))
        key = pa.field("key", key_type, nullable=False, metadata=draw(_METADATA))
        nested_type = pa.map_(key, draw(children).with_name("value"))
    else:
        element = _field(draw(_NAMES), struct_type(), draw(st.booleans()), draw(_METADATA))
        nested_type = pa.list_(element, draw(st.integers(1, 4)))
    return _field(draw(_NAMES), nested_type, draw(st.booleans()), draw(_METADATA))


def canonical(schema: pa.Schema) -> pa.Schema:
    """The schema as any Arrow consumer sees it after an IPC round trip
    (registered extension types materialised, map children named key/value)."""
    return pa.ipc.read_schema(pa.py_buffer(schema.serialize()))


def arrow_fields(*, max_leaves: int = DEFAULT_MAX_LEAVES) -> st.SearchStrategy[pa.Field]:
    """Arrow fields of every type family Lance stores losslessly: primitives,
    decimals, timestamps with and without zones, fixed-size binary,
    unordered dictionaries, fixed-size lists (bfloat16 vectors included),
    JSON, UUID, and structs / lists / large lists / maps / fixed-size lists of
    structs nesting them (at most ``max_leaves`` leaves), with random
    nullability and field metadata.

    Shrinks towards a leaf field (``null`` or ``bool``) without metadata."""
    check_count("max_leaves", max_leaves, at_least=1)
    return st.recursive(_leaf_fields, _nested, max_leaves=max_leaves)


def arrow_schemas(*, min_fields: int = 1, max_fields: int | None = None) -> st.SearchStrategy[pa.Schema]:
    """Arrow schemas in canonical form (as an IPC round trip leaves them) of
    ``min_fields..max_fields`` uniquely named top-level :func:`arrow_fields`,
    with optional schema metadata. Guarantee:
    ``schema_to_arrow(schema_from_arrow(s)) == s``.

    Shrinks towards ``min_fields`` leaf fields (``null`` or ``bool``) and
    no metadata."""
    low, high = size_range("fields", min_fields, max_fields, at_least=1)
    return st.builds(
        lambda fields, metadata: canonical(pa.schema(fields, metadata=metadata)),
        st.lists(arrow_fields(), min_size=low, max_size=high, unique_by=lambda f: f.name),
        _METADATA,
    )


def logical_types() -> st.SearchStrategy[str]:
    """Logical type strings of Lance schemas (``int32``, ``decimal:128:9:2``,
    ``timestamp:us:UTC``, ``dict:string:int8:false``, ``struct``, ``list``,
    ...). Guarantee: each is the logical type of an Arrow type, so
    ``parse_logical_type`` accepts it.

    Shrinks towards leaf types (``bool``, ``json``, ...), away from
    nested ones."""
    return st.one_of(
        _leaf_types.map(logical_type_of),
        st.sampled_from(["struct", "list", "large_list", "list.struct", "large_list.struct", "map"]),
    )


def schemas(*, min_fields: int = 1, max_fields: int | None = None, first_id: int = 0) -> st.SearchStrategy[Schema]:
    """Lance :class:`~reference_impl.schema.Schema` objects, converted from
    :func:`arrow_schemas` (``min_fields..max_fields`` top-level fields).
    Guarantee: ids are unique and depth-first from ``first_id``, every
    parent id is -1 or an earlier field's id, every logical type is known,
    and ``schema_from_arrow(schema_to_arrow(s)) == s`` up to ids.

    Shrinks towards ``min_fields`` leaf fields, the first with id
    ``first_id``."""
    check_count("first_id", first_id)
    fields = arrow_schemas(min_fields=min_fields, max_fields=max_fields)
    return fields.map(lambda s: schema_from_arrow(s, first_id=first_id))
