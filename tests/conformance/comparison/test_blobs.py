"""Blob v2 columns compared by their bytes (conformance/comparison/blobs.py):
a reader returning the logical blob struct is compared on its ``data``
bytes, so a reader whose blobs all come back null fails row by row, and
stored descriptors never pass for values."""

from __future__ import annotations

import pyarrow as pa
import pytest
from lance.blob import blob_array

from conformance.comparison import compare_tables
from conformance.comparison.observations import ObservationKind
from reference_impl.blobs import DESCRIPTOR_FIELD_METADATA, DESCRIPTOR_TYPE

VALUES = [b"first", None, b"", b"last"]


def _values() -> pa.Table:
    return pa.table({"blob": pa.array(VALUES, pa.large_binary())})


def _logical(values: list) -> pa.Table:
    return pa.table({"blob": blob_array(values)})


@pytest.mark.requirements("blob.payload-as-large-binary")
def test_the_logical_struct_with_the_same_bytes_is_equal_with_an_observation():
    comparison = compare_tables(_values(), _logical(VALUES))
    assert comparison.equal, comparison.differences
    assert [o.kind for o in comparison.observations] == [ObservationKind.BLOB_PAYLOAD.value]
    reverse = compare_tables(_logical(VALUES), _values())
    assert reverse.equal, reverse.differences


@pytest.mark.requirements("blob.payload-as-large-binary")
def test_a_reader_returning_null_blobs_differs_row_by_row():
    storage = pa.StructArray.from_arrays(
        [pa.nulls(4, pa.large_binary()), pa.nulls(4, pa.utf8()), pa.nulls(4, pa.uint64()), pa.nulls(4, pa.uint64())],
        names=["data", "uri", "position", "size"],
    )
    field = pa.field("blob", storage.type, metadata={"ARROW:extension:name": "lance.blob.v2"})
    nulls = pa.Table.from_arrays([storage], schema=pa.schema([field]))
    comparison = compare_tables(_values(), nulls)
    assert not comparison.equal
    assert any("row 0" in d and "b'first'" in d for d in comparison.differences), comparison.differences
    assert any("row 3" in d for d in comparison.differences)


def test_a_changed_byte_differs():
    changed = compare_tables(_values(), _logical([b"first", None, b"", b"lost"]))
    assert changed.differences == ("column 'blob' row 3: expected b'last', got b'lost'",)


def test_a_uri_is_not_bytes():
    comparison = compare_tables(_values(), _logical([b"first", None, b"", "file:///elsewhere"]))
    assert not comparison.equal


def test_descriptors_never_pass_for_values():
    descriptors = pa.array([{"kind": 0, "position": 0, "size": 5, "blob_id": 0, "blob_uri": ""}] * 4, DESCRIPTOR_TYPE)
    table = pa.Table.from_arrays(
        [descriptors], schema=pa.schema([pa.field("blob", DESCRIPTOR_TYPE, metadata=DESCRIPTOR_FIELD_METADATA)])
    )
    assert not compare_tables(_values(), table).equal
