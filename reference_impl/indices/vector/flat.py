"""FLAT: the sub-index with no structure, and the storage with no
quantization (format/index/vector/index.md, "FLAT" under both files).

The index file of a FLAT sub-index has only the ``__flat_marker`` column
and no rows; ``lance:flat`` holds one empty string per partition. The FLAT
storage keeps each row's vector whole in the ``flat`` column (for cosine,
pylance 14 stores the unit vector).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..files import IndexFileContents, IndexFormatError


@dataclass(frozen=True)
class FlatSubIndex:
    """A FLAT sub-index: nothing but its (empty) row count."""

    rows: int


@dataclass(frozen=True)
class FlatStorage:
    """Vectors kept whole, ``[rows, dimension]``."""

    vectors: np.ndarray

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])


def fixed_size_rows(contents: IndexFileContents, name: str) -> np.ndarray:
    """A fixed-size-list column as a 2-D array ``[rows, list_size]``."""
    column = contents.column(name).combine_chunks()
    if not pa.types.is_fixed_size_list(column.type):
        raise IndexFormatError(contents.path, f"column {name!r} is {column.type}, not a fixed-size list")
    if column.null_count:
        raise IndexFormatError(contents.path, f"column {name!r} has {column.null_count} null rows")
    size = column.type.list_size
    values = column.flatten().to_numpy(zero_copy_only=False)
    return values.reshape(len(column), size)


def read_flat_storage(aux: IndexFileContents) -> FlatStorage:
    return FlatStorage(fixed_size_rows(aux, "flat").astype(np.float64))
