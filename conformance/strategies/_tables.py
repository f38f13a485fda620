"""Strategies for Arrow data: the types the Lance v2.0 file format writes,
values of those types, and tables of them."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._arguments import DEFAULT_MAX_LEAVES, check_count, size_range

# bool first: sampled_from shrinks towards its first choice (the docstrings say so).
_TABLE_LEAF_TYPES = [
    pa.bool_(),
    pa.int8(),
    pa.uint16(),
    pa.int32(),
    pa.int64(),
    pa.uint64(),
    pa.float32(),
    pa.float64(),
    pa.string(),
    pa.large_string(),
    pa.binary(),
    pa.binary(3),
    pa.decimal128(9, 2),
    pa.date32(),
    pa.timestamp("us", tz="UTC"),
    pa.time64("us"),
    pa.duration("s"),
]
_FIXED_WIDTH = [t for t in _TABLE_LEAF_TYPES if t not in (pa.string(), pa.large_string(), pa.binary())]


def arrow_data_types(*, max_leaves: int = DEFAULT_MAX_LEAVES) -> st.SearchStrategy[pa.DataType]:
    """Arrow data types the Lance v2.0 file format writes: booleans,
    integers, floats, strings, binary, fixed-size binary, a decimal, a date,
    a timestamp, a time and a duration, fixed-size-list vectors of the
    fixed-width ones, and lists / large lists / structs nesting them (at
    most ``max_leaves`` leaves).

    Shrinks towards ``bool``."""
    check_count("max_leaves", max_leaves, at_least=1)
    leaves = st.sampled_from(_TABLE_LEAF_TYPES)
    vectors = st.builds(lambda t, n: pa.list_(t, n), st.sampled_from(_FIXED_WIDTH), st.integers(1, 3))

    def extend(children):
        return st.one_of(
            st.builds(pa.list_, children),
            st.builds(pa.large_list, children),
            st.lists(children, min_size=1, max_size=3).map(
                lambda ts: pa.struct([(f"f{i}", t) for i, t in enumerate(ts)])
            ),
        )

    return st.recursive(st.one_of(leaves, vectors), extend, max_leaves=max_leaves)


def arrow_values(data_type: pa.DataType, nullable: bool = True) -> st.SearchStrategy:
    """Python values of ``data_type`` (one of :func:`arrow_data_types`), and
    None when ``nullable``. Structs are never null: version 2.0 cannot store
    struct validity.

    Shrinks towards None when ``nullable``, otherwise towards the type's
    simplest value (False, 0, an empty string or list, 2000-01-01)."""
    if not isinstance(data_type, pa.DataType):
        raise InvalidArgument(f"data_type={data_type!r} must be a pyarrow DataType")
    if pa.types.is_struct(data_type):
        fields = [data_type.field(i) for i in range(data_type.num_fields)]
        return st.fixed_dictionaries({f.name: arrow_values(f.type, f.nullable) for f in fields})
    inner: st.SearchStrategy[Any]
    if pa.types.is_fixed_size_list(data_type):
        inner = st.lists(arrow_values(data_type.value_type), min_size=data_type.list_size, max_size=data_type.list_size)
    elif pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        inner = st.lists(arrow_values(data_type.value_type), max_size=3)
    elif pa.types.is_boolean(data_type):
        inner = st.booleans()
    elif pa.types.is_integer(data_type):
        bits = data_type.bit_width
        signed = pa.types.is_signed_integer(data_type)
        inner = st.integers(-(2 ** (bits - 1)) if signed else 0, 2 ** (bits - 1) - 1 if signed else 2**bits - 1)
    elif pa.types.is_floating(data_type):
        inner = st.floats(allow_nan=False, width=data_type.bit_width)
    elif pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        inner = st.text(max_size=4)
    elif pa.types.is_fixed_size_binary(data_type):
        inner = st.binary(min_size=data_type.byte_width, max_size=data_type.byte_width)
    elif pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        inner = st.binary(max_size=4)
    elif pa.types.is_decimal(data_type):
        inner = st.decimals(min_value=-9999999, max_value=9999999, places=2, allow_nan=False, allow_infinity=False)
    elif pa.types.is_date(data_type):
        inner = st.dates()
    else:  # timestamps, times, durations: their integer storage
        inner = st.integers(0, 86_399_999_999)
    return st.one_of(st.none(), inner) if nullable else inner


@st.composite
def _tables(draw, schema: pa.Schema | None, min_rows: int, max_rows: int):
    if schema is None:
        types = draw(st.lists(arrow_data_types(), min_size=1, max_size=3))
        schema = pa.schema([pa.field(f"c{i}", t) for i, t in enumerate(types)])
    num_rows = draw(st.integers(min_rows, max_rows))
    columns = {}
    for f in schema:
        nullable = f.nullable and not pa.types.is_struct(f.type)
        values = draw(st.lists(arrow_values(f.type, nullable), min_size=num_rows, max_size=num_rows))
        columns[f.name] = pa.array(values, type=f.type)
    table = pa.Table.from_arrays(list(columns.values()), schema=schema) if columns else pa.table({})
    if num_rows > 2 and num_rows > min_rows and draw(st.booleans()):
        table = table.slice(1)  # arrays that start at an offset
    return table


def arrow_tables(
    schema: pa.Schema | None = None, *, min_rows: int = 0, max_rows: int | None = None
) -> st.SearchStrategy[pa.Table]:
    """Arrow tables of ``min_rows..max_rows`` rows (sometimes sliced, so
    arrays start at an offset), with nulls and nesting. With ``schema`` the
    columns follow it (its types must be :func:`arrow_data_types`);
    otherwise 1..3 columns ``c0, c1, ...`` of random
    :func:`arrow_data_types`. Guarantee: the reference v2.0 writer can write
    every table, and top-level structs hold no nulls (v2.0 cannot store
    struct validity).

    Shrinks towards ``min_rows`` rows, unsliced, of one ``bool`` column
    ``c0`` (or of ``schema``), with nulls where they are allowed."""
    if schema is not None and not isinstance(schema, pa.Schema):
        raise InvalidArgument(f"schema={schema!r} must be a pyarrow Schema or None")
    low, high = size_range("rows", min_rows, max_rows)
    return _tables(schema, low, high)
