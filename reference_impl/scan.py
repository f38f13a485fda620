"""Reading the rows of a version (table format: fragments, data evolution,
deletion files).

A fragment's columns are spread over its data files: each top-level field is
read from the data file that lists its id (a later file wins, and the ``-2``
tombstone marks ids an older file no longer provides). A field that no data
file lists reads as nulls. Rows whose offsets are in the fragment's deletion
file are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from . import blobs, jsonb
from .arrow_schema import schema_to_arrow
from .blob_descriptors import is_blob_v2, nested_blob_v2_fields
from .errors import CorruptFileError, LanceFormatError, UnsupportedFeatureError
from .file_format import LanceFileReader
from .fragments import TOMBSTONE_FIELD_ID, Fragment
from .row_ids import row_address
from .row_lineage import LineageColumnSpec, lineage_file, lineage_values
from .schema import Field, Schema

if TYPE_CHECKING:
    from .dataset import Dataset

ROW_ID = "_rowid"
ROW_ADDRESS = "_rowaddr"


def field_with_descendants(schema: Schema, top: Field) -> list[Field]:
    """``top`` and every field nested under it, in schema order."""
    wanted = {top.id}
    fields = []
    for field in schema.fields:  # depth first: a child follows its parent
        if field.id in wanted or field.parent_id in wanted:
            wanted.add(field.id)
            fields.append(field)
    return fields


def arrow_schema_of(dataset: Dataset) -> pa.Schema:
    """The version's schema as Arrow; an error in it names the manifest
    holding it (the schema module knows no file)."""
    try:
        return schema_to_arrow(dataset.schema)
    except LanceFormatError as exc:
        raise type(exc)(dataset.manifest_file.path, f"schema: {exc.problem}") from None


def presented_schema(dataset: Dataset, *, blob_values: bool = False) -> pa.Schema:
    """The Arrow schema a scan gives: the version's, with each blob v2 column
    as its descriptors (as pylance's ``to_table()``) or, with
    ``blob_values``, as ``large_binary`` values."""
    arrow_schema = arrow_schema_of(dataset)
    nested = nested_blob_v2_fields(dataset.schema.fields)
    if nested:
        raise UnsupportedFeatureError(
            dataset.manifest_file.path, f"blob v2 field {nested[0].name!r} nested below the top level is not read"
        )
    for position, top in enumerate(dataset.schema.top_level()):
        if is_blob_v2(top):
            presented = blobs.value_arrow_field(top) if blob_values else blobs.descriptor_arrow_field(top)
            arrow_schema = arrow_schema.set(position, presented)
    return arrow_schema


def fragment_table(
    dataset: Dataset,
    fragment: Fragment,
    *,
    with_row_id: bool = False,
    with_row_address: bool = False,
    include_deleted: bool = False,
    blob_values: bool = False,
    external_roots: tuple[str, ...] = (),
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """The visible rows of ``fragment``, every column of the schema (or the
    top-level ``columns`` named, in schema order); with ``include_deleted``,
    every physical row (data evolution writes values for deleted rows too,
    so that new data files line up with the old ones). ``blob_values`` and
    ``external_roots``: see :func:`scan`."""
    schema = dataset.schema
    arrow_schema = presented_schema(dataset, blob_values=blob_values)
    source_of: dict[int, int] = {}
    for position, data_file in enumerate(fragment.files):
        for field_id in data_file.fields:
            if field_id != TOMBSTONE_FIELD_ID:
                source_of[field_id] = position

    readers: dict[int, LanceFileReader] = {}
    arrays = []
    wanted = [
        (top, arrow_field)
        for top, arrow_field in zip(schema.top_level(), arrow_schema, strict=True)
        if columns is None or top.name in columns
    ]
    if columns is not None:
        arrow_schema = pa.schema([arrow_field for _, arrow_field in wanted], metadata=arrow_schema.metadata)
    for top, arrow_field in wanted:
        index = source_of.get(top.id)
        if index is None:
            # In 2.1+ files only leaves own columns: a struct or list field
            # is stored in the file that stores its descendants.
            index = next(
                (source_of[f.id] for f in field_with_descendants(schema, top) if f.id in source_of),
                None,
            )
        if index is None:
            arrays.append(pa.nulls(fragment.physical_rows, arrow_field.type))
            continue
        data_file = fragment.files[index]
        if index not in readers:
            location = dataset.data_file_location(data_file)
            readers[index] = LanceFileReader(location.storage, location.relpath)
            if readers[index].num_rows != fragment.physical_rows:
                raise CorruptFileError(
                    str(location),
                    f"holds {readers[index].num_rows} rows but fragment {fragment.id} has "
                    f"{fragment.physical_rows} physical rows",
                )
        reader = readers[index]
        column_indices = data_file.column_indices or list(range(len(data_file.fields)))
        blob = is_blob_v2(top)
        # JSON values are stored as binary documents and shown as text.
        stored_field = arrow_field.with_type(jsonb.stored_type(arrow_field.type))
        part = reader.read(
            blobs.descriptor_read_fields(top) if blob else field_with_descendants(schema, top),
            file_field_ids=list(data_file.fields),
            column_indices=list(column_indices),
            arrow_schema=pa.schema([blobs.descriptor_arrow_field(top)]) if blob else pa.schema([stored_field]),
        )
        column = part.column(0)
        if blob:
            if blob_values:
                column = blobs.values_of(dataset, data_file, column, external_roots)
        else:
            try:
                column = jsonb.present(column, arrow_field.type)
            except jsonb.JsonbError as exc:
                raise CorruptFileError(str(reader.path), f"field {top.name!r}: a JSON value: {exc.problem}") from None
        arrays.append(column)
    table = pa.Table.from_arrays(arrays, schema=arrow_schema) if arrays else pa.table({})

    if with_row_id:
        row_ids = dataset.row_ids(fragment)
        if row_ids is None:  # without stable row ids, the row id is the row address
            row_ids = [row_address(fragment.id, offset) for offset in range(fragment.physical_rows)]
        table = table.append_column(ROW_ID, pa.array(row_ids, pa.uint64()))
    if with_row_address:
        addresses = [row_address(fragment.id, offset) for offset in range(fragment.physical_rows)]
        table = table.append_column(ROW_ADDRESS, pa.array(addresses, pa.uint64()))

    deleted = [] if include_deleted else dataset.deleted_offsets(fragment)
    if deleted:
        visible = [True] * fragment.physical_rows
        for offset in deleted:
            visible[offset] = False
        table = table.filter(pa.array(visible))
    return table


def scan(
    dataset: Dataset,
    *,
    with_row_id: bool = False,
    with_row_address: bool = False,
    blob_values: bool = False,
    external_roots: tuple[str, ...] = (),
) -> pa.Table:
    """Every visible row of the version, fragment by fragment in manifest
    order. A blob v2 column holds its descriptors, or with ``blob_values``
    its values, an absolute external URI read only inside the dataset root,
    its declared base paths and ``external_roots`` (:mod:`.blobs`)."""
    parts = [
        fragment_table(
            dataset,
            fragment,
            with_row_id=with_row_id,
            with_row_address=with_row_address,
            blob_values=blob_values,
            external_roots=external_roots,
        )
        for fragment in dataset.fragments
    ]
    if not parts:
        empty = presented_schema(dataset, blob_values=blob_values)
        if with_row_id:
            empty = empty.append(pa.field(ROW_ID, pa.uint64()))
        if with_row_address:
            empty = empty.append(pa.field(ROW_ADDRESS, pa.uint64()))
        return empty.empty_table()
    return pa.concat_tables(parts)


def lineage_column(dataset: Dataset, fragment: Fragment, spec: LineageColumnSpec, context: str) -> list[int]:
    """The values of a sequence of ``fragment`` spilled to the hidden column
    ``spec`` (reference_impl.row_lineage): the column of the one data file
    listing its field id, read as a non-null UInt64 with one value per
    physical row; CorruptFileError otherwise."""
    data_file = lineage_file(fragment, spec, context)
    location = dataset.data_file_location(data_file)
    reader = LanceFileReader(location.storage, location.relpath)
    where = f"{reader.path} ({spec.name} of fragment {fragment.id})"
    if len(data_file.column_indices) != len(data_file.fields):
        raise CorruptFileError(where, "the data file's fields and column_indices differ in length")
    try:
        table = reader.read(
            [Field(spec.field_id, spec.name, "uint64", nullable=False)],
            file_field_ids=list(data_file.fields),
            column_indices=list(data_file.column_indices),
            arrow_schema=pa.schema([pa.field(spec.name, pa.uint64(), nullable=False)]),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise CorruptFileError(where, f"the column does not read as UInt64: {exc}") from None
    return lineage_values(table.column(0), fragment, where)
