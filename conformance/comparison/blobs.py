"""Blob v2 columns compared by their bytes (upstream
``docs/src/format/table/blob.md``, "Logical Input", "Nesting and Schema
Preservation").

A blob v2 column has three Arrow shapes: the logical struct a writer takes
(``data``, ``uri`` and optionally ``position``, ``size``, marked
``lance.blob.v2``), the stored descriptors a scan returns by default
(``kind``, ``position``, ``size``, ``blob_id``, ``blob_uri``), and the values
a reader materialises (``large_binary``, blob.md: materialisation replaces the
blob leaf with ``LargeBinary``). Only values and the logical ``data`` child
are bytes. So that a reader returning the logical struct is compared on what
it holds (a reader whose blobs all come back null shows as many differing
rows, not as one type difference), a logical blob column whose counterpart
holds binary values is replaced by its ``data`` child before the comparison,
with a ``blob-payload`` observation; a row that names a ``uri`` instead of
bytes then reads as null and differs from the bytes on the other side.
Descriptors hold no bytes at all: against values they stay a type problem.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from .observations import Observation, ObservationKind

BLOB_V2_EXTENSION = "lance.blob.v2"
_EXTENSION_NAME_KEY = b"ARROW:extension:name"
#: The requirement a ``blob-payload`` observation concerns (conformance/data/requirements.json).
BLOB_PAYLOAD_REQUIREMENT = "blob.payload-as-large-binary"
_LOGICAL_CHILDREN = (("data", "uri"), ("data", "uri", "position", "size"))


def is_logical_blob(field: pa.Field) -> bool:
    """Whether ``field`` holds blob v2 values in their logical struct shape."""
    data_type = field.type
    if isinstance(data_type, pa.BaseExtensionType):
        if data_type.extension_name != BLOB_V2_EXTENSION:
            return False
        data_type = data_type.storage_type
    elif (field.metadata or {}).get(_EXTENSION_NAME_KEY) != BLOB_V2_EXTENSION.encode():
        return False
    return pa.types.is_struct(data_type) and tuple(f.name for f in data_type) in _LOGICAL_CHILDREN


def _holds_bytes(field: pa.Field) -> bool:
    data_type = field.type
    return pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type) or pa.types.is_binary_view(data_type)


def _payload(column: pa.ChunkedArray) -> pa.Array:
    """The ``data`` child of a logical blob column as ``large_binary``, null
    where the blob is null."""
    array = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if isinstance(array, pa.ExtensionArray):
        array = array.storage
    data = pc.struct_field(array, "data").cast(pa.large_binary())
    if array.null_count:
        data = pc.if_else(array.is_valid(), data, pa.scalar(None, pa.large_binary()))
    return data


def blob_payloads(expected: pa.Table, actual: pa.Table) -> tuple[pa.Table, pa.Table, list[Observation]]:
    """``expected`` and ``actual`` with each logical blob column whose
    counterpart holds binary values replaced by its ``data`` bytes, and an
    observation per column so replaced."""
    observations: list[Observation] = []
    for name in expected.column_names:
        if name not in actual.column_names:  # names are unique (compare_tables checked)
            continue
        left, right = expected.schema.field(name), actual.schema.field(name)
        if is_logical_blob(left) and _holds_bytes(right):
            expected = _replaced(expected, name)
        elif is_logical_blob(right) and _holds_bytes(left):
            actual = _replaced(actual, name)
        else:
            continue
        kind = ObservationKind.BLOB_PAYLOAD.value
        observations.append(Observation(name, kind, str(left.type), str(right.type), BLOB_PAYLOAD_REQUIREMENT))
    return expected, actual, observations


def _replaced(table: pa.Table, name: str) -> pa.Table:
    index = table.schema.get_field_index(name)
    field = table.schema.field(index)
    return table.set_column(index, pa.field(name, pa.large_binary(), field.nullable), _payload(table.column(index)))
