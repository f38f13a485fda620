"""Blob v2 columns in Arrow: reading the stored descriptors of a data file,
presenting them, and from them the values (upstream
``docs/src/format/table/blob.md``, "Stored Descriptor", "Null
Descriptors"). What a descriptor means and where it puts its bytes, which
needs no Arrow, is :mod:`reference_impl.blob_descriptors`.

What the reference presents, matching pylance 14: a scan
(:meth:`reference_impl.dataset.Dataset.to_table`) gives the descriptors of a
blob v2 column, a struct of the five descriptor children whose field carries
``lance-encoding:blob`` and ``lance-encoding:packed`` (pylance's
``to_table()`` does the same); with ``blob_values=True`` it gives the values
as ``large_binary`` (pylance's ``blob_handling="all_binary"``), and
:func:`take_blobs` gives the bytes of chosen rows as pylance's
``take_blobs(...)`` files read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from .blob_descriptors import Descriptor, blob_data_file, locate, read_location, top_level_blob_field
from .errors import UnsupportedFeatureError
from .file_format import LanceFileReader
from .fragments import DataFile
from .row_ids import split_row_address
from .schema import Field, FieldType
from .type_grammar import BLOB_METADATA_KEY

if TYPE_CHECKING:
    from .dataset import Dataset, FileLocation

PACKED_METADATA_KEY = "lance-encoding:packed"
#: Metadata of the field a scan presents a blob v2 column's descriptors under.
DESCRIPTOR_FIELD_METADATA = {BLOB_METADATA_KEY: "true", PACKED_METADATA_KEY: "true"}
#: The descriptor's children, in their durable order.
DESCRIPTOR_TYPE = pa.struct(
    [
        pa.field("kind", pa.uint8(), nullable=False),
        pa.field("position", pa.uint64(), nullable=False),
        pa.field("size", pa.uint64(), nullable=False),
        pa.field("blob_id", pa.uint32(), nullable=False),
        pa.field("blob_uri", pa.utf8(), nullable=False),
    ]
)
_LOGICAL_TYPES = {"kind": "uint8", "position": "uint64", "size": "uint64", "blob_id": "uint32", "blob_uri": "string"}
# Ids of the descriptor children handed to the file reader: the manifest
# gives them none (only the blob field itself is listed by its data file),
# and the reader only looks them up by name under the blob field.
_CHILD_IDS = range(-1000, -1000 - len(_LOGICAL_TYPES), -1)


# -- the schema ---------------------------------------------------------------------


def descriptor_read_fields(field: Field) -> list[Field]:
    """The fields to hand the file reader for the descriptor column of the
    top-level blob v2 ``field``: the field itself as a packed struct (its id,
    the one its data file lists), then the five descriptor children."""
    parent = Field(
        id=field.id,
        name=field.name,
        logical_type="struct",
        parent_id=field.parent_id,
        nullable=field.nullable,
        type=FieldType.PARENT,
        metadata={key: value.encode() for key, value in DESCRIPTOR_FIELD_METADATA.items()},
    )
    children = [
        Field(id=child_id, name=name, logical_type=logical, parent_id=field.id, nullable=False)
        for child_id, (name, logical) in zip(_CHILD_IDS, _LOGICAL_TYPES.items(), strict=True)
    ]
    return [parent, *children]


def descriptor_arrow_field(field: Field) -> pa.Field:
    """The Arrow field a scan presents ``field``'s descriptors under."""
    return pa.field(field.name, DESCRIPTOR_TYPE, nullable=field.nullable, metadata=DESCRIPTOR_FIELD_METADATA)


def value_arrow_field(field: Field) -> pa.Field:
    """The Arrow field of ``field``'s values (``large_binary``)."""
    return pa.field(field.name, pa.large_binary(), nullable=field.nullable)


# -- descriptors --------------------------------------------------------------------


def descriptors_of(array: pa.Array | pa.ChunkedArray) -> list[Descriptor | None]:
    """The descriptors of a descriptor column, None for a null blob: the
    outer struct null, or (released writers) its ``kind`` null (blob.md,
    "Null Descriptors")."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], DESCRIPTOR_TYPE)
    if not pa.types.is_struct(array.type) or [f.name for f in array.type] != list(_LOGICAL_TYPES):
        raise ValueError(f"not a blob descriptor column: {array.type}")
    out: list[Descriptor | None] = []
    for row in array.to_pylist():
        if row is None or row["kind"] is None:
            out.append(None)
            continue
        out.append(
            Descriptor(
                int(row["kind"]),
                int(row["position"] or 0),
                int(row["size"] or 0),
                int(row["blob_id"] or 0),
                row["blob_uri"] or "",
            )
        )
    return out


# -- reading a dataset's blobs ------------------------------------------------------


def read_descriptors(dataset: Dataset, data_file: DataFile, field: Field) -> list[Descriptor | None]:
    """The descriptors of top-level blob v2 ``field`` in ``data_file``, one
    per physical row (deleted rows too), None for a null blob."""
    location = dataset.data_file_location(data_file)
    reader = LanceFileReader(location.storage, location.relpath)
    column_indices = data_file.column_indices or list(range(len(data_file.fields)))
    table = reader.read(
        descriptor_read_fields(field),
        file_field_ids=list(data_file.fields),
        column_indices=list(column_indices),
        arrow_schema=pa.schema([descriptor_arrow_field(field)]),
    )
    return descriptors_of(table.column(0))


def values_of(
    dataset: Dataset,
    data_file: DataFile,
    descriptors: pa.Array | pa.ChunkedArray,
    external_roots: Sequence[str] = (),
) -> pa.Array:
    """The ``large_binary`` values of the descriptor column ``descriptors``
    read from ``data_file`` (null where the blob is null)."""
    location = dataset.data_file_location(data_file)
    values = [
        None if d is None else read_location(locate(dataset, location, d, external_roots))
        for d in descriptors_of(descriptors)
    ]
    return pa.array(values, pa.large_binary())


def take_blobs(
    dataset: Dataset,
    descriptors: pa.ChunkedArray | pa.Array,
    addresses: pa.ChunkedArray | pa.Array,
    column: str,
    indices: Sequence[int],
    *,
    external_roots: Sequence[str] = (),
) -> list[bytes | None]:
    """The bytes of blob column ``column`` at row ``indices`` (offsets among
    the visible rows of the version), None for a null blob: what pylance's
    ``take_blobs(column, indices=...)`` gives, each file read whole.
    ``descriptors`` and ``addresses`` are the column and the row addresses of
    the version's scan: an address tells which fragment's data file owns a
    row."""
    field = top_level_blob_field(dataset, column)
    total = len(descriptors)
    for index in indices:
        if not 0 <= index < total:
            raise IndexError(f"row index {index} is outside the version's {total} rows")
    taken = pa.array(list(indices), pa.int64())
    picked = descriptors_of(descriptors.take(taken))
    fragments = {fragment.id: fragment for fragment in dataset.fragments}
    locations: dict[int, FileLocation] = {}
    out: list[bytes | None] = []
    for descriptor, address in zip(picked, addresses.take(taken).to_pylist(), strict=True):
        if descriptor is None:
            out.append(None)
            continue
        fragment_id, _ = split_row_address(address)
        if fragment_id not in locations:
            data_file = blob_data_file(fragments[fragment_id], field)
            if data_file is None:  # a scan gives null descriptors for such a fragment
                raise UnsupportedFeatureError(str(dataset.uri), f"fragment {fragment_id} stores no {column!r} column")
            locations[fragment_id] = dataset.data_file_location(data_file)
        out.append(read_location(locate(dataset, locations[fragment_id], descriptor, external_roots)))
    return out
