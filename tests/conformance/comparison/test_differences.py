"""What fails: values that differ, values the reader's type cannot hold, and
schema differences; messages name the column, the row and both values, a few
per column."""

from datetime import datetime, timezone
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from conformance.comparison import MAX_ROWS_SHOWN, compare_tables


def column(data, type_=None, *, name="c", nullable=True) -> pa.Table:
    array = data if isinstance(data, pa.Array | pa.ChunkedArray) else pa.array(data, type=type_)
    return pa.Table.from_arrays([array], schema=pa.schema([pa.field(name, array.type, nullable=nullable)]))


def differences(expected: pa.Table, actual: pa.Table) -> tuple[str, ...]:
    result = compare_tables(expected, actual)
    assert result.equal == (result.differences == ())
    return result.differences


# -- values ------------------------------------------------------------------------------------


def test_nan_equals_nan_in_every_float_width_and_inside_lists():
    for type_ in (pa.float16(), pa.float32(), pa.float64()):
        data = np.array([np.nan, 1.0, -np.inf], dtype=type_.to_pandas_dtype())
        assert differences(column(pa.array(data)), column(pa.array(data))) == (), type_
    nested = [[float("nan"), 1.0], None]
    assert differences(column(nested, pa.list_(pa.float64())), column(nested, pa.list_(pa.float64()))) == ()


def test_nan_differs_from_a_number_and_from_null():
    assert differences(column([float("nan")]), column([1.0])) == ("column 'c' row 0: expected nan, got 1.0",)
    assert differences(column([float("nan")]), column([None], pa.float64())) == (
        "column 'c' row 0: expected nan, got None",
    )


def test_null_and_empty_list_differ_both_ways():
    lists = pa.list_(pa.int32())
    assert differences(column([None, [1]], lists), column([[], [1]], lists)) == (
        "column 'c' row 0: expected None, got []",
    )
    assert differences(column([[1], []], lists), column([[1], None], lists)) == (
        "column 'c' row 1: expected [], got None",
    )


def test_null_and_value_differ_both_ways():
    assert differences(column([1, None]), column([None, 2])) == (
        "column 'c' row 0: expected 1, got None",
        "column 'c' row 1: expected None, got 2",
    )


def test_a_list_element_difference_names_the_row_holding_it_after_lists_of_other_lengths():
    lists = pa.large_list(pa.string())
    expected = column([["a", "b"], ["c"], None, ["d", "e", "f"], []], lists)
    actual = column([["a"], ["c"], None, ["d", "x", "f"], []], pa.list_(pa.string()))
    assert differences(expected, actual) == (
        "column 'c' row 0: expected ['a', 'b'], got ['a']",
        "column 'c' row 3: expected ['d', 'e', 'f'], got ['d', 'x', 'f']",
    )


def test_nested_lists_of_structs_point_at_the_top_level_row():
    inner = pa.list_(pa.struct([pa.field("x", pa.int8()), pa.field("y", pa.list_(pa.int8()))]))
    expected = column([[{"x": 1, "y": [1]}], [{"x": 2, "y": [2, 3]}, {"x": 3, "y": []}]], inner)
    actual = column([[{"x": 1, "y": [1]}], [{"x": 2, "y": [2, 3]}, {"x": 3, "y": None}]], inner)
    (message,) = differences(expected, actual)
    assert message.startswith("column 'c' row 1: expected [{'x': 2")


def test_struct_values_compare_by_field_and_ignore_children_of_null_structs():
    point = pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.int32())])

    def points(xs, ys, mask=None):
        children = [pa.array(xs, pa.int32()), pa.array(ys, pa.int32())]
        return pa.StructArray.from_arrays(children, fields=list(point), mask=mask)

    hidden_child = points([1, 5], [2, 6], mask=pa.array([False, True]))
    other_hidden_child = points([1, 7], [2, 8], mask=pa.array([False, True]))
    assert differences(column(hidden_child), column(other_hidden_child)) == ()
    changed = points([1, 7], [3, 8])
    assert differences(column(hidden_child), column(changed)) == (
        "column 'c' row 0: expected {'x': 1, 'y': 2}, got {'x': 1, 'y': 3}",
        "column 'c' row 1: expected None, got {'x': 7, 'y': 8}",
    )


def test_a_null_struct_differs_from_a_struct_of_nulls():
    point = pa.struct([pa.field("x", pa.int32())])
    assert differences(column([None], point), column([{"x": None}], point)) == (
        "column 'c' row 0: expected None, got {'x': None}",
    )


def test_map_values_and_keys_are_compared():
    maps = pa.map_(pa.string(), pa.int64())
    expected = column([[("a", 1), ("b", 2)], None, []], maps)
    assert differences(expected, column([[("a", 1), ("b", 2)], None, []], maps)) == ()
    assert differences(expected, column([[("a", 1), ("b", 3)], None, []], maps)) == (
        "column 'c' row 0: expected [('a', 1), ('b', 2)], got [('a', 1), ('b', 3)]",
    )
    assert differences(expected, column([[("a", 1), ("z", 2)], None, []], maps))[0].startswith("column 'c' row 0")


def test_fixed_size_list_values_are_compared():
    vectors = pa.list_(pa.float32(), 2)
    assert differences(column([[1, 2], [3, 4]], vectors), column([[1, 2], [3, 5]], vectors)) == (
        "column 'c' row 1: expected [3.0, 4.0], got [3.0, 5.0]",
    )


def test_dictionary_values_are_compared_decoded():
    expected = column(pa.array(["x", "y", "x"]).dictionary_encode())
    actual = column(pa.array(["x", "y", "y"]))
    assert differences(expected, actual) == ("column 'c' row 2: expected 'x', got 'y'",)


def test_a_widened_halffloat_that_is_not_the_halffloat_value_is_a_difference():
    expected = column(pa.array(np.array([0.5, 0.1], dtype=np.float16)))
    actual = column([0.5, 0.1], pa.float64())  # 0.1 itself, not the halffloat nearest it
    assert differences(expected, actual) == ("column 'c' row 1: expected 0.0999755859375, got 0.1",)


def test_a_timestamp_that_overflows_the_finer_unit_is_a_value_difference_on_its_row_only():
    far = 10**12  # seconds: year 33658, beyond what int64 nanoseconds reach
    expected = column([0, far], pa.timestamp("s"))
    actual = column(pa.array([0, 0], pa.timestamp("ns")))
    assert differences(expected, actual) == (
        "column 'c' row 1: expected <value out of range: 1000000000000>, got datetime.datetime(1970, 1, 1, 0, 0)",
    )


def test_a_message_is_bounded_per_column_and_counts_the_rest():
    expected = column(list(range(100)))
    actual = column([v + 1 for v in range(100)])
    found = differences(expected, actual)
    assert len(found) == MAX_ROWS_SHOWN + 1
    assert found[-1] == f"column 'c': 100 rows differ, the first {MAX_ROWS_SHOWN} shown"


def test_a_long_value_is_cut_in_the_message():
    (message,) = differences(column(["a" * 1000]), column(["b" * 1000]))
    assert message == f"column 'c' row 0: expected '{'a' * 116}..., got '{'b' * 116}..."


# -- types that change what the column holds ---------------------------------------------------


@pytest.mark.parametrize(
    ("expected_type", "actual_type"),
    [
        (pa.int64(), pa.int32()),
        (pa.int32(), pa.uint32()),
        (pa.uint64(), pa.int64()),
        (pa.float64(), pa.float32()),
        (pa.int64(), pa.float64()),
        (pa.int32(), pa.float32()),
        (pa.decimal128(9, 2), pa.decimal128(9, 3)),
        (pa.decimal128(9, 2), pa.decimal128(8, 1)),
        (pa.timestamp("ns"), pa.timestamp("us")),
        (pa.time64("ns"), pa.time64("us")),
        (pa.date64(), pa.date32()),
    ],
)
def test_a_narrower_type_fails_even_when_these_values_fit(expected_type, actual_type):
    values = [Decimal(1), Decimal(2)] if pa.types.is_decimal(expected_type) else [1, 2]
    expected = column(values, expected_type)
    actual = column(values, actual_type)
    (message,) = differences(expected, actual)
    assert message.startswith(f"column 'c': expected type {expected_type}, got {actual_type}")


def test_a_lost_or_changed_time_zone_fails():
    when = [datetime(2024, 1, 1, tzinfo=timezone.utc)]
    expected = column(when, pa.timestamp("us", tz="UTC"))
    (lost,) = differences(expected, column(expected.column("c").cast(pa.timestamp("us"))))
    assert "time zone UTC became none" in lost
    (changed,) = differences(expected, column(expected.column("c").cast(pa.timestamp("us", tz="Europe/Paris"))))
    assert "time zone UTC became Europe/Paris" in changed


@pytest.mark.parametrize(
    ("expected_type", "actual_type"),
    [
        (pa.string(), pa.binary()),
        (pa.binary(4), pa.binary()),
        (pa.list_(pa.int8(), 2), pa.list_(pa.int8())),
        (pa.list_(pa.int8(), 2), pa.list_(pa.int8(), 3)),
        (pa.int32(), pa.date32()),
        (pa.bool_(), pa.int8()),
    ],
)
def test_another_kind_of_type_fails(expected_type, actual_type):
    (message,) = differences(column([None], expected_type), column([None], actual_type))
    assert message.startswith("column 'c': expected")


def test_another_extension_type_fails():
    expected = column(pa.array(["00000000-0000-0000-0000-000000000000"]).cast(pa.json_()))
    actual = column(pa.array([b"\x00" * 16], pa.binary(16)).cast(pa.uuid()))
    assert differences(expected, actual) == ("column 'c': expected extension type arrow.json, got arrow.uuid",)


def test_struct_field_order_names_and_count_fail():
    expected = column([{"x": 1, "y": 2}])
    assert differences(expected, column([{"y": 2, "x": 1}])) == (
        "column 'c': struct fields in order ['x', 'y'], got ['y', 'x']",
    )
    assert differences(expected, column([{"x": 1}])) == ("column 'c': struct fields ['y'] missing",)
    assert differences(expected, column([{"x": 1, "y": 2, "z": 3}])) == ("column 'c': unexpected struct fields ['z']",)


# -- tables ------------------------------------------------------------------------------------


def test_missing_unexpected_and_reordered_columns_fail():
    expected = pa.table({"a": [1], "b": [2], "c": [3]})
    assert differences(expected, pa.table({"a": [1], "c": [3]})) == ("column 'b' missing",)
    assert differences(expected, pa.table({"a": [1], "b": [2], "c": [3], "d": [4]})) == ("unexpected column 'd'",)
    assert differences(expected, pa.table({"c": [3], "a": [1], "b": [2]})) == (
        "columns in order ['a', 'b', 'c'], got ['c', 'a', 'b']",
    )


def test_a_different_row_count_fails_once_without_row_messages():
    assert differences(pa.table({"a": [1, 2]}), pa.table({"a": [1, 2, 3]})) == ("expected 2 rows, got 3",)


def test_duplicate_column_names_fail_without_a_traceback():
    duplicated = pa.Table.from_arrays([pa.array([1]), pa.array([1])], names=["a", "a"])
    assert differences(pa.table({"a": [1]}), duplicated) == ("column names are not unique: ['a']",)


def test_other_columns_are_still_compared_when_one_column_fails_on_its_type():
    expected = pa.table({"a": pa.array([1], pa.int64()), "b": ["x"]})
    actual = pa.table({"a": pa.array([1], pa.int32()), "b": ["y"]})
    assert differences(expected, actual) == (
        "column 'a': expected type int64, got int32 (narrower: int32 cannot hold every int64 value)",
        "column 'b' row 0: expected 'x', got 'y'",
    )


def test_values_without_a_compute_kernel_for_equality_are_compared_in_python():
    # pyarrow's `equal` has no kernel for month/day/nanosecond intervals.
    intervals = pa.month_day_nano_interval()
    expected = column([pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([0, 0, 0])], intervals)
    actual = column([pa.MonthDayNano([1, 2, 4]), None, pa.MonthDayNano([0, 0, 0])], intervals)
    assert differences(expected, expected) == ()
    assert differences(expected, actual) == (
        "column 'c' row 0: expected MonthDayNano(months=1, days=2, nanoseconds=3), "
        "got MonthDayNano(months=1, days=2, nanoseconds=4)",
    )
