"""Recording and removing indices (table.proto, ``IndexMetadata``; transaction
specification: ``CreateIndex``).

The table format treats an index's payload as a plugin's business (table.proto:
"Indexes are plugins, and so the format of the details message is flexible
and not fully defined by the table format"). This writer writes the files
of the index types the reference writes (IVF_FLAT:
``reference_impl/indices/vector/ivf_flat_writer.py``; ZONEMAP:
:func:`reference_impl.indices.zonemap.write_zone_map`; each also sets the
details, version and files below), and records *metadata* only for the
others:

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

Replacing an index of the same name lists the old one in ``removed_indices``
(pylance does the same); dropping an index is a ``CreateIndex`` with no new
index and the dropped one removed.

pylance opens, scans and describes a dataset holding a metadata-only index
and lists it, but a query that it plans through the index fails, because the
payload files do not exist; ``to_table(filter=..., use_scalar_index=False)``
answers it (docs/spec-discrepancies.md).

Index types whose files the reference writes get them (:data:`WRITTEN_TYPES`):
BTREE (:func:`reference_impl.indices.btree.write_btree`; its ``files`` list
them, and ``index_version`` is what pylance 14 records: 1 with stable row
ids, 0 without, both meaning row addresses in ``ids`` there).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import entropy
from ..errors import InvalidOperationError
from ..index_metadata import IndexMetadata, encode_fragment_bitmap
from ..indices.vector.ivf_flat_writer import TYPE_URL as VECTOR_TYPE_URL
from ..indices.vector.ivf_flat_writer import VectorIndexError, write_ivf_flat
from ..indices import btree
from ..indices.zonemap import write_zone_map
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


#: Index types whose payload files the reference writes.
WRITTEN_TYPES = frozenset({"BTREE"})


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
    when ``replace`` is False. IVF_FLAT writes the index's files
    (:func:`~reference_impl.indices.vector.ivf_flat_writer.write_ivf_flat`,
    ``options`` ``num_partitions`` and ``metric``)."""
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
    if index_type.upper() == "IVF_FLAT":
        if len(columns) != 1:
            raise InvalidOperationError(f"an IVF_FLAT index covers one column, not {columns}")
        try:
            write_ivf_flat(dataset, index, columns[0], **options)
        except VectorIndexError as exc:
            raise IndexOperationError(dataset.uri, str(exc)) from None
    elif options:
        raise InvalidOperationError(f"{index_type} takes no options ({sorted(options)})")
    if index.type_url == INDEX_TYPE_URLS["ZONEMAP"]:
        index = write_zone_map(dataset, index, columns[0].split("."))
    if index_type.upper() == "BTREE":
        index.index_version = btree.ROW_ADDRESS_VERSION if dataset.uses_stable_row_ids else 0
        index.files = btree.write_btree(dataset, index, columns[0].split("."))
    return dataset.commit(CreateIndex(new_indices=[index], removed_indices=existing))


def drop_index(dataset: Dataset, name: str) -> Dataset:
    """Commit a ``CreateIndex`` that removes every index named ``name``."""
    dropped = [index for index in dataset.indices if index.name == name]
    if not dropped:
        raise IndexOperationError(dataset.uri, f"there is no index named {name!r}")
    return dataset.commit(CreateIndex(new_indices=[], removed_indices=dropped))


# -- helpers ---------------------------------------------------------------------


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
