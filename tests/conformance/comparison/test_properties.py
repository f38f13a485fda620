"""Properties of the comparison over generated Arrow tables (the project's
:func:`conformance.strategies.arrow_tables`): representation-only rewrites
compare equal with exactly the matching observations, and one changed value is
exactly one difference at its column and row."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance import strategies as lst
from conformance.comparison import compare_tables
from conformance.requirements import requirement

# A rewrite changes the representation of a column and never a value; each is
# observed as one kind.
KIND_OF_REWRITE = {
    "large-offsets": "offset-width",
    "small-offsets": "offset-width",
    "child-names": "child-name",
    "widen": "wider-type",
    "dictionary": "dictionary",
    "nullability": "nullability",
}
_WIDER = [
    (pa.int8(), pa.int16()),
    (pa.uint16(), pa.uint32()),
    (pa.int32(), pa.int64()),
    (pa.int64(), pa.decimal128(19, 0)),
    (pa.uint64(), pa.decimal256(22, 1)),
    (pa.float32(), pa.float64()),
    (pa.decimal128(9, 2), pa.decimal128(11, 3)),
    (pa.date32(), pa.date64()),
    (pa.timestamp("us", tz="UTC"), pa.timestamp("ns", tz="UTC")),
    (pa.time64("us"), pa.time64("ns")),
    (pa.duration("s"), pa.duration("ms")),
]
_LEAF_REWRITES = {
    "large-offsets": [(pa.string(), pa.large_string()), (pa.binary(), pa.large_binary())],
    "small-offsets": [(pa.large_string(), pa.string()), (pa.large_binary(), pa.binary())],
    "widen": _WIDER,
}


def rewritten_type(t: pa.DataType, rewrite: str) -> pa.DataType:
    """``t`` with ``rewrite`` applied wherever it applies, at every depth."""
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(rewritten_type(f.type, rewrite)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        child = t.value_field.with_type(rewritten_type(t.value_type, rewrite))
        if rewrite == "child-names":
            child = child.with_name("element")
        if pa.types.is_fixed_size_list(t):
            return pa.list_(child, t.list_size)
        large = pa.types.is_large_list(t)
        large = {"large-offsets": True, "small-offsets": False}.get(rewrite, large)
        return pa.large_list(child) if large else pa.list_(child)
    for narrow, wide in _LEAF_REWRITES.get(rewrite, []):
        if t.equals(narrow):
            return wide
    return t


def _dictionary_encodable(t: pa.DataType) -> bool:
    return any(
        check(t) for check in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_integer)
    ) or pa.types.is_floating(t)


def rewrite_table(table: pa.Table, rewrites: list[set[str]]) -> tuple[pa.Table, pa.Table, set[tuple[str, str]]]:
    """(expected, actual, the (column, kind) pairs that changed): ``rewrites``
    holds the rewrites of each column. A dropped not-null flag needs one on the
    expected side: columns without nulls are marked not null there."""
    expected_fields, actual_columns, actual_fields, changed = [], [], [], set()
    for field, data, wanted in zip(table.schema, table.columns, rewrites, strict=True):
        expected_field = field
        if "nullability" in wanted and data.null_count == 0:
            expected_field = field.with_nullable(False)
            changed.add((field.name, "nullability"))
        new_type = field.type
        for rewrite in sorted(wanted & {"large-offsets", "small-offsets", "child-names", "widen"}):
            after = rewritten_type(new_type, rewrite)
            if not after.equals(new_type, check_metadata=False) or str(after) != str(new_type):
                changed.add((field.name, KIND_OF_REWRITE[rewrite]))
            new_type = after
        data = data.cast(new_type)
        if "dictionary" in wanted and _dictionary_encodable(new_type):
            data = data.dictionary_encode()
            changed.add((field.name, "dictionary"))
        expected_fields.append(expected_field)
        actual_columns.append(data)
        actual_fields.append(pa.field(field.name, data.type))
    expected = table.cast(pa.schema(expected_fields))
    actual = pa.Table.from_arrays(actual_columns, schema=pa.schema(actual_fields))
    return expected, actual, changed


def tables(*, min_rows: int = 0) -> st.SearchStrategy[pa.Table]:
    """:func:`lst.arrow_tables` whose columns are as often leaves as nested
    (its own schemas are mostly nested)."""
    leaves = lst.arrow_data_types(max_leaves=1).filter(lambda t: t.num_fields == 0)
    column_types = st.one_of(leaves, lst.arrow_data_types())
    return st.lists(column_types, min_size=1, max_size=3).flatmap(
        lambda types: lst.arrow_tables(
            pa.schema([pa.field(f"c{i}", t) for i, t in enumerate(types)]), min_rows=min_rows
        )
    )


def column_rewrites(columns: int) -> st.SearchStrategy[list[set[str]]]:
    one = st.sets(st.sampled_from(sorted(KIND_OF_REWRITE))).filter(
        lambda s: not {"large-offsets", "small-offsets"} <= s
    )
    return st.lists(one, min_size=columns, max_size=columns)


@given(tables(), st.data())
def test_representation_rewrites_compare_equal_with_their_observations(table, data):
    """Property: for any generated table and any representation-only rewrite
    of its columns (offset widths either way, list children renamed, wider
    types, dictionary encoding, a not-null flag dropped), the comparison finds
    no difference, and the observations are exactly one per changed
    (column, kind), each citing a catalogued requirement."""
    expected, actual, changed = rewrite_table(table, data.draw(column_rewrites(table.num_columns)))
    result = compare_tables(expected, actual)
    assert result.differences == ()
    assert {(o.column.split(".")[0], o.kind) for o in result.observations} == changed
    for observation in result.observations:
        requirement(observation.requirement)


@given(tables(min_rows=1), st.data())
def test_one_changed_value_is_exactly_one_difference_at_its_column_and_row(table, data):
    """Property: replacing one value of a generated table by a different one
    (then rewriting the representation of any columns) gives exactly one
    difference, naming that column and row."""
    index = data.draw(st.integers(0, table.num_columns - 1), label="column")
    row = data.draw(st.integers(0, table.num_rows - 1), label="row")
    field = table.schema.field(index)
    old = table.column(index)[row].as_py()
    new = pa.array([data.draw(lst.arrow_values(field.type, field.nullable), label="value")], field.type)[0].as_py()
    assume(new != old)
    values = table.column(index).to_pylist()
    values[row] = new
    changed = table.set_column(index, field, pa.array(values, field.type))
    _, actual, _ = rewrite_table(changed, data.draw(column_rewrites(table.num_columns)))
    result = compare_tables(table, actual)
    assert len(result.differences) == 1, result.differences
    assert result.differences[0].startswith(f"column {field.name!r} row {row}: expected "), result.differences
