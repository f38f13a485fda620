"""Recording and removing indices (table.proto, ``IndexMetadata``; transaction
specification: ``CreateIndex``).

The table format treats an index's payload as a plugin's business (table.proto:
"Indexes are plugins, and so the format of the details message is flexible
and not fully defined by the table format"). Every index is recorded as:

* ``uuid``: a fresh random UUID (table.proto: "unique across all the dataset
  versions");
* ``fields``: the field ids of the indexed columns;
* ``name``: given, or ``{column}_idx`` with the columns joined by ``_`` (the
  name pylance picks); table.proto: "Must be unique within one dataset version";
* ``dataset_version``: the version the index is built from, which is the
  version read (pylance records the same);
* ``fragment_bitmap``: every fragment of that version;
* ``index_details``: an ``Any`` whose type URL is the one pylance 14 writes
  for the index type (table.proto: a name like "btree" converts to
  ``/lance.table.BTreeIndexDetails``) and whose payload is empty (every
  field of the details message at its default);
* ``index_version`` 0, ``created_at`` the commit time in milliseconds, no
  ``files`` (table.proto: "If this is empty, the index files sizes are
  unknown").

The types in :data:`PAYLOAD_WRITERS` are written whole, over one column: the
segment's files under ``_indices/{uuid}/``, listed in ``files`` with their
sizes, built from the visible rows of every fragment (deleted rows left out,
as index.md allows), with the ``index_version`` and details pylance 14
writes; pylance plans queries through them. BTREE:
:mod:`reference_impl.indices.btree`; BITMAP and LABEL_LIST:
:mod:`reference_impl.indices.bitmap` and :mod:`.label_list`; ZONEMAP:
:mod:`reference_impl.indices.zonemap`; IVF_FLAT:
:mod:`reference_impl.indices.vector.ivf_flat_writer` (options
``num_partitions`` and ``metric``).

The other types are recorded without files: pylance opens, scans and
describes a dataset holding such an index and lists it, but a query that it
plans through the index fails, because the payload files do not exist;
``to_table(filter=..., use_scalar_index=False)`` answers it
(docs/spec-discrepancies.md).

Replacing an index of the same name lists the old one in ``removed_indices``
(pylance does the same); dropping an index is a ``CreateIndex`` with no new
index and the dropped one removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import entropy
from ..errors import InvalidOperationError
from ..index_metadata import IndexFile, IndexMetadata, encode_fragment_bitmap
from ..indices import bitmap, btree, label_list
from ..indices.bitmap import RowIdentifiers, identifiers_of
from ..indices.files import index_file_version
from ..indices.vector.ivf_flat_writer import TYPE_URL as VECTOR_TYPE_URL
from ..indices.vector.ivf_flat_writer import VectorIndexError, write_ivf_flat
from ..indices.zonemap import write_zone_map
from ..scan import ROW_ADDRESS, ROW_ID, fragment_table, presented_schema
from ..schema import TOP_LEVEL_PARENT, Field, Schema
from ..transactions import CreateIndex

if TYPE_CHECKING:
    from ..dataset import Dataset

#: Index type -> type URL of its details message, as pylance 14 writes them.
INDEX_TYPE_URLS = {
    "BTREE": "/lance.table.BTreeIndexDetails",
    "BITMAP": "/lance.table.BitmapIndexDetails",
    "LABEL_LIST": "/lance.table.LabelListIndexDetails",
    "INVERTED": "/lance.table.InvertedIndexDetails",
    "NGRAM": "/lance.table.NGramIndexDetails",
    "ZONEMAP": "/lance.table.ZoneMapIndexDetails",
    "BLOOMFILTER": "/lance.index.pb.BloomFilterIndexDetails",
}


class IndexOperationError(InvalidOperationError):
    """An index operation that cannot be done (unknown column, name taken,
    no such index): a caller's mistake. The message starts with the dataset
    or column it names."""

    def __init__(self, path: str, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


# -- public API ----------------------------------------------------------------


def create_index(
    dataset: Dataset,
    columns,
    *,
    name: str | None = None,
    index_type: str = "BTREE",
    replace: bool = True,
    **options,
) -> Dataset:
    """Commit a ``CreateIndex`` recording a new index over ``columns`` (a
    column name or a list; nested fields by dotted path). ``index_type`` is
    a key of :data:`INDEX_TYPE_URLS` (any case), ``IVF_FLAT``, or a type URL
    starting with ``/``. An index of the same name is replaced, or refused
    when ``replace`` is False. The types of :data:`PAYLOAD_WRITERS` get
    their files; ``options`` go to the writer (IVF_FLAT's ``num_partitions``
    and ``metric``), and no other type takes any."""
    columns = [columns] if isinstance(columns, str) else list(columns)
    if not columns:
        raise InvalidOperationError("an index needs at least one column")
    field_ids = [field_id_of(dataset.schema, column) for column in columns]
    if len(set(field_ids)) != len(field_ids):
        raise InvalidOperationError(f"columns {columns} name a field twice")
    name = name if name is not None else "_".join(columns) + "_idx"
    if not name:
        raise InvalidOperationError("an index name cannot be empty")
    existing = [index for index in dataset.indices if index.name == name]
    if existing and not replace:
        raise IndexOperationError(dataset.uri, f"an index named {name!r} already exists (pass replace=True)")
    index = IndexMetadata(
        uuid=str(entropy.current().uuid4()),
        name=name,
        fields=field_ids,
        dataset_version=dataset.version,
        fragment_bitmap=encode_fragment_bitmap(f.id for f in dataset.fragments),
        type_url=VECTOR_TYPE_URL if index_type.upper() == "IVF_FLAT" else type_url_of(index_type),
        details=b"",
        index_version=0,
        created_at=entropy.current().time_ns() // 1_000_000,
    )
    writer = None if index_type.startswith("/") else PAYLOAD_WRITERS.get(index_type.upper())
    if writer is not None:
        if len(columns) != 1:
            raise IndexOperationError(dataset.uri, f"a {index_type.upper()} index is over one column, not {columns}")
        index = writer(dataset, index, columns[0], **options)
    elif options:
        raise InvalidOperationError(f"{index_type} takes no options ({sorted(options)})")
    return dataset.commit(CreateIndex(new_indices=[index], removed_indices=existing))


def drop_index(dataset: Dataset, name: str) -> Dataset:
    """Commit a ``CreateIndex`` that removes every index named ``name``."""
    dropped = [index for index in dataset.indices if index.name == name]
    if not dropped:
        raise IndexOperationError(dataset.uri, f"there is no index named {name!r}")
    return dataset.commit(CreateIndex(new_indices=[], removed_indices=dropped))


# -- helpers ---------------------------------------------------------------------


def _no_options(index_type: str, options: dict) -> None:
    if options:
        raise InvalidOperationError(f"{index_type} takes no options ({sorted(options)})")


def _write_btree(dataset: Dataset, index: IndexMetadata, column: str, **options) -> IndexMetadata:
    _no_options("BTREE", options)
    index.index_version = btree.ROW_ADDRESS_VERSION if dataset.uses_stable_row_ids else 0
    index.files = btree.write_btree(dataset, index, column.split("."))
    return index


def _write_bitmap(dataset: Dataset, index: IndexMetadata, column: str, **options) -> IndexMetadata:
    _no_options("BITMAP", options)
    _write_payload(
        dataset, index, column, bitmap.write_bitmap_segment, bitmap.WRITTEN_VERSION, bitmap.ADDRESSES_FROM_VERSION
    )
    return index


def _write_label_list(dataset: Dataset, index: IndexMetadata, column: str, **options) -> IndexMetadata:
    _no_options("LABEL_LIST", options)
    _write_payload(
        dataset,
        index,
        column,
        label_list.write_label_list_segment,
        label_list.WRITTEN_VERSION,
        label_list.ADDRESSES_FROM_VERSION,
    )
    return index


def _write_zonemap(dataset: Dataset, index: IndexMetadata, column: str, **options) -> IndexMetadata:
    _no_options("ZONEMAP", options)
    return write_zone_map(dataset, index, column.split("."))


def _write_ivf_flat(dataset: Dataset, index: IndexMetadata, column: str, **options) -> IndexMetadata:
    try:
        write_ivf_flat(dataset, index, column, **options)
    except VectorIndexError as exc:
        raise IndexOperationError(dataset.uri, str(exc)) from None
    return index


#: Index type -> the writer of a segment's files over one column, which
#: records them (and the version and details it writes) in the metadata.
PAYLOAD_WRITERS: dict[str, Callable[..., IndexMetadata]] = {
    "BTREE": _write_btree,
    "BITMAP": _write_bitmap,
    "LABEL_LIST": _write_label_list,
    "ZONEMAP": _write_zonemap,
    "IVF_FLAT": _write_ivf_flat,
}


def _write_payload(dataset: Dataset, index: IndexMetadata, column: str, write, version: int, addresses_from: int):
    """Write ``index``'s files with ``write`` and record them and ``version``."""
    values, row_ids, addresses = indexed_rows(dataset, column)
    rows = addresses if identifiers_of(version, addresses_from) is RowIdentifiers.ROW_ADDRESSES else row_ids
    location = dataset.index_file_location(index, bitmap.BITMAP_FILE)
    try:  # the files are built whole before anything is stored
        directory = location.relpath.rsplit("/", 1)[0]
        size = write(location.storage, directory, values, rows, version=index_file_version(dataset))
    except (pa.ArrowException, ValueError) as exc:
        raise IndexOperationError(column, f"cannot index values of type {values.type} this way: {exc}") from None
    index.files, index.index_version = [IndexFile(bitmap.BITMAP_FILE, size)], version


def indexed_rows(dataset: Dataset, column: str) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The values of ``column`` (a dotted path) in the visible rows of every
    fragment, in fragment order, with each row's row id and row address."""
    path = column.split(".")
    # An empty first part gives the values their type when there is no fragment.
    tables = [pa.table({path[0]: pa.array([], presented_schema(dataset).field(path[0]).type)})]
    tables += [
        fragment_table(dataset, fragment, with_row_id=True, with_row_address=True, columns=[path[0]])
        for fragment in dataset.fragments
    ]
    values = []
    for table in tables:
        array = table.column(path[0]).combine_chunks()
        for name in path[1:]:
            array = pc.struct_field(array, name)
        values.append(array)
    row_ids = [np.asarray(t.column(ROW_ID).to_numpy(), np.uint64) for t in tables[1:]]
    addresses = [np.asarray(t.column(ROW_ADDRESS).to_numpy(), np.uint64) for t in tables[1:]]
    empty = np.zeros(0, np.uint64)
    return pa.concat_arrays(values), np.concatenate([empty, *row_ids]), np.concatenate([empty, *addresses])


def type_url_of(index_type: str) -> str:
    """The details type URL for an index type name, or the URL itself."""
    if index_type.startswith("/"):
        return index_type
    url = INDEX_TYPE_URLS.get(index_type.upper())
    if url is None:
        raise InvalidOperationError(f"unknown index type {index_type!r}; known: {', '.join(INDEX_TYPE_URLS)}")
    return url


def field_id_of(schema: Schema, path: str) -> int:
    """The id of the field at dotted ``path`` (``point.x``); schema format:
    nesting by ``parent_id``."""
    field_id = TOP_LEVEL_PARENT
    for part in path.split("."):  # at least one part, so a field's id is returned
        field = _child_named(schema.fields, field_id, part)
        if field is None:
            raise IndexOperationError(path, "no such column in the schema")
        field_id = field.id
    return field_id


def _child_named(fields: Iterable[Field], parent_id: int, name: str) -> Field | None:
    return next((f for f in fields if f.parent_id == parent_id and f.name == name), None)
