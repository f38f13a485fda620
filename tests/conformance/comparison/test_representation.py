"""Each kind of representation difference: the same values in another Arrow
shape compare equal and leave exactly the observation of that kind, with the
requirement it concerns."""

import numpy as np
import pyarrow as pa
import pytest

from conformance.comparison import Observation, compare_tables
from conformance.requirements import requirement


def one_column(data, field: pa.Field) -> pa.Table:
    return pa.Table.from_arrays([pa.array(data, type=field.type)], schema=pa.schema([field]))


def observations_of(expected: pa.Table, actual: pa.Table) -> tuple[Observation, ...]:
    result = compare_tables(expected, actual)
    assert result.differences == ()
    for observation in result.observations:
        requirement(observation.requirement)  # every id is in the catalog (KeyError otherwise)
    return result.observations


def test_a_dropped_not_null_flag_is_a_nullability_observation():
    expected = one_column([1, 2], pa.field("id", pa.int64(), nullable=False))
    actual = one_column([1, 2], pa.field("id", pa.int64()))
    assert observations_of(expected, actual) == (
        Observation("id", "nullability", "not null", "nullable", "schema.non-nullable-has-no-nulls"),
    )


def test_nullability_of_a_list_element_names_the_element_path():
    expected = one_column([[1], []], pa.field("tags", pa.list_(pa.field("item", pa.int32(), nullable=False))))
    actual = one_column([[1], []], pa.field("tags", pa.list_(pa.int32())))
    assert observations_of(expected, actual) == (
        Observation("tags.item", "nullability", "not null", "nullable", "schema.non-nullable-has-no-nulls"),
    )


def test_nullability_of_a_struct_field_names_the_field_path():
    expected_type = pa.struct([pa.field("x", pa.int32(), nullable=False)])
    expected = one_column([{"x": 1}], pa.field("point", expected_type))
    actual = one_column([{"x": 1}], pa.field("point", pa.struct([pa.field("x", pa.int32())])))
    assert [(o.column, o.kind) for o in observations_of(expected, actual)] == [("point.x", "nullability")]


def test_a_renamed_list_child_is_a_child_name_observation():
    expected = one_column([[1, 2], None], pa.field("v", pa.list_(pa.int16())))
    actual = one_column([[1, 2], None], pa.field("v", pa.list_(pa.field("element", pa.int16()))))
    assert observations_of(expected, actual) == (
        Observation("v", "child-name", "item", "element", "schema.list-element-child"),
    )


def test_renamed_map_children_are_child_name_observations():
    expected = one_column([[("a", 1)]], pa.field("m", pa.map_(pa.string(), pa.int64())))
    actual_type = pa.map_(pa.field("k", pa.string(), nullable=False), pa.field("v", pa.int64()))
    actual = one_column([[("a", 1)]], pa.field("m", actual_type))
    assert observations_of(expected, actual) == (
        Observation("m", "child-name", "key", "k", "schema.map-children"),
        Observation("m", "child-name", "value", "v", "schema.map-children"),
    )


def test_a_renamed_fixed_size_list_child_is_a_child_name_observation():
    expected = one_column([[1.0, 2.0]], pa.field("vec", pa.list_(pa.float32(), 2)))
    actual = one_column([[1.0, 2.0]], pa.field("vec", pa.list_(pa.field("element", pa.float32()), 2)))
    assert observations_of(expected, actual) == (
        Observation("vec", "child-name", "item", "element", "schema.fixed-size-list-format"),
    )


@pytest.mark.parametrize(
    ("expected_type", "actual_type", "data"),
    [
        (pa.large_string(), pa.string(), ["a", None, "ccc"]),
        (pa.string(), pa.large_string(), ["a", None, "ccc"]),
        (pa.large_binary(), pa.binary(), [b"\x00", None, b""]),
        (pa.large_list(pa.int8()), pa.list_(pa.int8()), [[1], None, []]),
        (pa.list_(pa.int8()), pa.large_list(pa.int8()), [[1], None, []]),
    ],
)
def test_offset_width_is_an_observation(expected_type, actual_type, data):
    expected = one_column(data, pa.field("c", expected_type))
    actual = one_column(data, pa.field("c", actual_type))
    (observation,) = observations_of(expected, actual)
    assert (observation.kind, observation.requirement) == ("offset-width", "schema.large-offset-types")
    assert observation.expected.replace("large_", "") == observation.actual.replace("large_", "")
    assert observation.expected != observation.actual


@pytest.mark.parametrize(
    ("expected_type", "actual_type", "data"),
    [
        (pa.string(), pa.string_view(), ["a", None, "a longer string than twelve bytes"]),
        (pa.binary(), pa.binary_view(), [b"x", None, b"y" * 20]),
        (pa.list_(pa.int32()), pa.list_view(pa.int32()), [[1, 2], None, []]),
    ],
)
def test_a_view_layout_is_an_observation(expected_type, actual_type, data):
    expected = one_column(data, pa.field("c", expected_type))
    actual = one_column(data, pa.field("c", actual_type))
    (observation,) = observations_of(expected, actual)
    assert (observation.kind, observation.requirement) == ("view-layout", "schema.arrow-type-conversion")


def test_list_views_are_compared_by_their_values_wherever_the_view_points():
    # A list view's lists may sit anywhere in its values, in any order.
    view = pa.ListViewArray.from_arrays([3, 0, 0, 1], [1, 2, 0, 2], pa.array([7, 8, 9, 10]))
    expected = one_column([[10], [7, 8], [], [8, 9]], pa.field("c", pa.list_(pa.int64())))
    assert compare_tables(expected, pa.table({"c": view})).equal
    changed = one_column([[10], [7, 8], [], [8, 8]], pa.field("c", pa.list_(pa.int64())))
    assert compare_tables(changed, pa.table({"c": view})).differences == (
        "column 'c' row 3: expected [8, 8], got [8, 9]",
    )


def test_a_decoded_dictionary_is_a_dictionary_observation():
    values = pa.array(["x", "y", None, "x"])
    expected = pa.table({"tag": values.dictionary_encode()})
    actual = pa.table({"tag": values})
    (observation,) = observations_of(expected, actual)
    assert (observation.column, observation.kind, observation.actual) == ("tag", "dictionary", "string")
    assert observation.requirement == "schema.dictionary-format"


def test_a_dictionary_encoded_reply_and_another_index_type_are_dictionary_observations():
    values = pa.array(["x", "y", None, "x"])
    plain = pa.table({"tag": values})
    encoded = pa.table({"tag": values.dictionary_encode()})
    wide_indices = pa.table({"tag": values.dictionary_encode().cast(pa.dictionary(pa.int64(), pa.string()))})
    assert [o.kind for o in observations_of(plain, encoded)] == ["dictionary"]
    assert [o.kind for o in observations_of(encoded, wide_indices)] == ["dictionary"]


@pytest.mark.parametrize(
    ("expected_type", "actual_type", "data", "requirement_id"),
    [
        (pa.int8(), pa.int64(), [-128, 127, None], "schema.arrow-type-conversion"),
        (pa.uint32(), pa.int64(), [0, 2**32 - 1], "schema.arrow-type-conversion"),
        (pa.uint8(), pa.uint16(), [0, 255], "schema.arrow-type-conversion"),
        (pa.int16(), pa.float32(), [-(2**15), 2**15 - 1], "schema.arrow-type-conversion"),
        (pa.int32(), pa.float64(), [-(2**31), 2**31 - 1], "schema.arrow-type-conversion"),
        (pa.uint8(), pa.float16(), [0, 255], "schema.arrow-type-conversion"),
        (pa.float16(), pa.float32(), [np.float16(0.1), np.float16(65504)], "schema.arrow-type-conversion"),
        (pa.float16(), pa.float64(), [np.float16(-2.5), None], "schema.arrow-type-conversion"),
        (pa.float32(), pa.float64(), [np.float32(0.1), np.float32(3e38)], "schema.arrow-type-conversion"),
        (pa.int32(), pa.decimal128(12, 2), [-(2**31), 7], "schema.arrow-type-conversion"),
        (pa.decimal128(9, 2), pa.decimal128(12, 3), ["1234567.89", "-0.01"], "schema.decimal-format"),
        (pa.decimal128(9, 2), pa.decimal256(40, 2), ["1234567.89", None], "schema.decimal-format"),
        (pa.timestamp("s", "UTC"), pa.timestamp("ns", "UTC"), [0, 1_700_000_000], "schema.timestamp-format"),
        (pa.timestamp("ms"), pa.timestamp("us"), [0, 1_700_000_000_123], "schema.timestamp-format"),
        (pa.time32("s"), pa.time64("ns"), [0, 86_399], "schema.date-time-units"),
        (pa.duration("ms"), pa.duration("us"), [-5, 5], "schema.date-time-units"),
        (pa.date32(), pa.date64(), [0, 19_000], "schema.date-time-units"),
        (pa.null(), pa.int32(), [None, None], "schema.arrow-type-conversion"),
    ],
)
def test_a_wider_type_holding_every_value_exactly_is_an_observation(expected_type, actual_type, data, requirement_id):
    if pa.types.is_decimal(expected_type):
        from decimal import Decimal

        data = [None if v is None else Decimal(v) for v in data]
    expected = pa.table({"c": pa.array(data, type=expected_type)})
    actual = pa.table({"c": expected.column("c").cast(actual_type)})
    assert observations_of(expected, actual) == (
        Observation("c", "wider-type", str(expected_type), str(actual_type), requirement_id),
    )


def test_an_extension_type_read_as_its_storage_is_an_extension_observation():
    expected = pa.table({"doc": pa.array(['{"a": 1}', None]).cast(pa.json_())})
    actual = pa.table({"doc": pa.array(['{"a": 1}', None])})
    assert observations_of(expected, actual) == (
        Observation("doc", "extension", "extension<arrow.json>", "string", "schema.extension-metadata-namespace"),
    )


def test_metadata_is_ignored():
    expected = pa.table({"a": [1]}).cast(pa.schema([pa.field("a", pa.int64(), metadata={"lance-encoding:x": "1"})]))
    actual = pa.table({"a": [1]}).replace_schema_metadata({"k": "v"})
    assert observations_of(expected, actual) == ()


def test_chunking_and_slicing_are_not_observed():
    expected = pa.table({"a": pa.chunked_array([[1, 2], [3]])})
    actual = pa.table({"a": pa.array([0, 1, 2, 3]).slice(1)})
    assert observations_of(expected, actual) == ()


def test_several_kinds_at_once_each_observed_once():
    expected_type = pa.large_list(pa.field("item", pa.float16(), nullable=False))
    expected = one_column([[np.float16(1.5)], [], None], pa.field("v", expected_type, nullable=True))
    actual_type = pa.list_(pa.field("element", pa.float64()))
    actual = pa.table({"v": expected.column("v").cast(actual_type)})
    kinds = sorted((o.column, o.kind) for o in observations_of(expected, actual))
    assert kinds == [
        ("v", "child-name"),
        ("v", "offset-width"),
        ("v.item", "nullability"),
        ("v.item", "wider-type"),
    ]


def test_dictionaries_inside_lists_and_chunks_with_their_own_dictionaries_are_decoded():
    nested = pa.array([["a"], ["b", "a"]], pa.list_(pa.dictionary(pa.int8(), pa.string())))
    assert [
        (o.column, o.kind) for o in observations_of(pa.table({"l": [["a"], ["b", "a"]]}), pa.table({"l": nested}))
    ] == [("l.item", "dictionary")]
    chunks = pa.chunked_array([pa.array(["x", "y"]).dictionary_encode(), pa.array(["z", "x"]).dictionary_encode()])
    assert [o.kind for o in observations_of(pa.table({"d": ["x", "y", "z", "x"]}), pa.table({"d": chunks}))] == [
        "dictionary"
    ]


def bfloat16_vectors(floats: list[list[float]], size: int) -> pa.Array:
    """Fixed-size lists of bfloat16 as Lance stores them: two little-endian
    bytes each, the upper half of the float32 (exact for these values)."""
    halves = (np.array(floats, dtype="<f4").view("<u4") >> 16).astype("<u2")
    element = pa.field("item", pa.binary(2), metadata={"ARROW:extension:name": "lance.bfloat16"})
    storage = pa.array([h.tobytes() for h in halves.reshape(-1)], pa.binary(2))
    return pa.FixedSizeListArray.from_arrays(storage, type=pa.list_(element, size))


def test_bfloat16_read_as_float32_is_a_wider_type_observation_and_values_are_compared():
    expected = pa.table({"emb": bfloat16_vectors([[1.5, -2.0], [3.140625, 0.0]], 2)})
    actual = pa.table({"emb": pa.array([[1.5, -2.0], [3.140625, 0.0]], pa.list_(pa.float32(), 2))})
    assert observations_of(expected, actual) == (
        Observation("emb.item", "wider-type", "lance.bfloat16", "float", "schema.bfloat16-in-fixed-size-list"),
    )
    changed = pa.table({"emb": pa.array([[1.5, -2.0], [3.14159, 0.0]], pa.list_(pa.float32(), 2))})
    assert compare_tables(expected, changed).differences == (
        "column 'emb' row 1: expected [3.140625, 0.0], got [3.141590118408203, 0.0]",
    )


def test_bfloat16_read_as_plain_bytes_is_compared_as_bytes():
    expected = pa.table({"emb": bfloat16_vectors([[1.5]], 1)})
    actual = pa.table(
        {
            "emb": pa.array(
                [[np.array([1.5], "<f4").view("<u4")[0].item().to_bytes(4, "little")[2:]]], pa.list_(pa.binary(2), 1)
            )
        }
    )
    assert observations_of(expected, actual) == ()
