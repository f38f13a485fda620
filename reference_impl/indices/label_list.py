"""LABEL_LIST index segments (upstream format/index/scalar/label_list.md).

A label list index is a bitmap index over the items of a list column: its
one file, ``bitmap_page_lookup.lance``, has the BITMAP layout
(:mod:`.bitmap`), one row per distinct item value (a "label") with the set
of rows whose list holds it; a row holding a label twice is in its set once,
a null item puts its row under the null key, and an empty list is in no set.

Rows whose list itself is null are kept apart: the schema metadata
``lance:label_list_nulls`` names a global buffer of the file (its number,
as decimal text) holding their set, serialized as the bitmaps are. The page
does not mention it; pylance 14 writes it (docs/spec-discrepancies.md,
"Index formats"), and a file without the key has no list-null set.

The sets hold row addresses from ``index_version`` 2, row ids before it (the
page); pylance 14 writes version 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..storage import Storage
from .bitmap import BITMAP_FILE, BitmapSegment, decode_bitmap_file, group_rows, identifiers_of, write_bitmap_file
from .files import IndexFileContents, IndexFormatError, read_index_file
from .row_addr_map import MAX_ROWS, RowAddrMapError, decode_row_addr_map, encode_row_addr_map

if TYPE_CHECKING:
    from ..dataset import Dataset
    from ..index_metadata import IndexMetadata

#: Schema metadata key naming the global buffer of the list-null set.
LIST_NULLS_KEY = "lance:label_list_nulls"
#: The first ``index_version`` whose sets hold row addresses (the page).
ADDRESSES_FROM_VERSION = 2
#: The ``index_version`` pylance 14 writes, and so the reference.
WRITTEN_VERSION = 1
#: The newest ``index_version`` the page defines.
NEWEST_VERSION = 2


@dataclass(frozen=True)
class LabelListSegment:
    """A label list segment as plain data: the bitmap of each label, and the
    rows whose list is null (None when the file records no such set)."""

    labels: BitmapSegment
    list_nulls: np.ndarray | None


def decode_label_list_file(contents: IndexFileContents, index_version: int | None, *, max_rows: int = MAX_ROWS):
    """Decode a label list lookup file already read; :class:`IndexFormatError`
    names what does not hold."""
    labels = decode_bitmap_file(contents, identifiers_of(index_version, ADDRESSES_FROM_VERSION), max_rows=max_rows)
    if LIST_NULLS_KEY not in contents.metadata:
        return LabelListSegment(labels, None)
    text = contents.text(LIST_NULLS_KEY)
    if not text.isdigit() or not 0 < int(text) < len(contents.global_buffers):
        raise IndexFormatError(
            contents.path,
            f"{LIST_NULLS_KEY} is {text!r}, not the number of one of its global buffers after the descriptor "
            f"(it has {len(contents.global_buffers)})",
        )
    try:
        nulls = decode_row_addr_map(contents.global_buffers[int(text)], max_rows=max_rows)
    except RowAddrMapError as exc:
        raise IndexFormatError(contents.path, f"the list-null set (global buffer {text}): {exc}") from None
    return LabelListSegment(labels, nulls)


def read_label_list_segment(dataset: Dataset, index: IndexMetadata, *, max_rows: int = MAX_ROWS) -> LabelListSegment:
    """Read and decode the lookup file of LABEL_LIST segment ``index``."""
    return decode_label_list_file(read_index_file(dataset, index, BITMAP_FILE), index.index_version, max_rows=max_rows)


def label_rows(lists: pa.Array, rows: np.ndarray) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The items of ``lists`` with the row (from ``rows``, parallel to
    ``lists``) each belongs to, and the rows whose list is null. Raises
    ValueError when ``lists`` is not a list array."""
    if not (pa.types.is_list(lists.type) or pa.types.is_large_list(lists.type)):
        raise ValueError(f"a label list index is over a list column, not {lists.type}")
    lists = lists.cast(pa.large_list(lists.type.value_type)) if pa.types.is_list(lists.type) else lists
    rows = np.asarray(rows, dtype=np.uint64)
    null = np.asarray(lists.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    parents = np.asarray(pc.list_parent_indices(lists).to_numpy(zero_copy_only=False), dtype=np.int64)
    return pc.list_flatten(lists), rows[parents], rows[null]


def write_label_list_segment(
    storage: Storage, directory: str, lists: pa.Array, rows: np.ndarray, *, version: str
) -> int:
    """Write the lookup file (a Lance file of ``version``) of a LABEL_LIST
    segment over ``lists`` (the column's values) of ``rows`` (what the
    segment stores for each) into ``directory``, the list-null set in global
    buffer 1; its size in bytes."""
    items, item_rows, nulls = label_rows(lists, rows)
    keys, sets = group_rows(items, item_rows)
    return write_bitmap_file(
        storage,
        f"{directory}/{BITMAP_FILE}",
        keys,
        sets,
        version=version,
        metadata={LIST_NULLS_KEY: b"1"},
        buffers=(encode_row_addr_map(nulls),),
    )
