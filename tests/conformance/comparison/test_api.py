"""The public shape of conformance.comparison: what verify and drivers code against."""

import dataclasses

import pyarrow as pa
import pytest

from conformance.comparison import Observation, ObservationKind, TableComparison, compare_tables


def test_identical_tables_are_equal_without_observations():
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", None, "c"]})
    result = compare_tables(table, table)
    assert result == TableComparison(differences=(), observations=())
    assert result.equal


def test_a_changed_value_fails_naming_column_row_and_both_values():
    expected = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    actual = pa.table({"id": pa.array([1, 5, 3], pa.int64())})
    result = compare_tables(expected, actual)
    assert not result.equal
    assert result.differences == ("column 'id' row 1: expected 2, got 5",)


def test_a_representation_difference_is_an_observation_not_a_failure():
    expected = pa.table({"name": pa.array(["a", "b"], pa.large_string())})
    actual = pa.table({"name": pa.array(["a", "b"], pa.string())})
    result = compare_tables(expected, actual)
    assert result.equal
    assert result.observations == (
        Observation("name", "offset-width", "large_string", "string", "schema.large-offset-types"),
    )


def test_results_are_frozen_and_kinds_compare_as_strings():
    result = compare_tables(pa.table({"a": [1]}), pa.table({"a": [1]}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.differences = ("x",)  # type: ignore[misc]
    assert ObservationKind.NULLABILITY == "nullability"


def test_results_render_as_json_and_observations_as_one_line():
    expected = pa.table({"a": pa.array([1], pa.int32()), "b": [1]})
    actual = pa.table({"a": pa.array([1], pa.int64()), "b": [2]})
    result = compare_tables(expected, actual)
    assert result.to_json() == {
        "equal": False,
        "differences": ["column 'b' row 0: expected 1, got 2"],
        "observations": [
            {
                "column": "a",
                "kind": "wider-type",
                "expected": "int32",
                "actual": "int64",
                "requirement": "schema.arrow-type-conversion",
            }
        ],
    }
    assert str(result.observations[0]) == "a: wider-type int32 -> int64 (schema.arrow-type-conversion)"
