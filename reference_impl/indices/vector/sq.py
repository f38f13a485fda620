"""Scalar quantization storage (format/index/vector/index.md, "SQ" in the
auxiliary file, ``storage_metadata`` for SQ: ``dim``, ``num_bits``,
``bounds``).

Every value of a vector is mapped into ``2^num_bits`` steps of the range
``bounds``. The page names the bounds but not the mapping; pylance 14
stores ``floor((x - start) / (end - start) * (2^num_bits - 1))`` clamped to
the steps, of the vector itself (the unit vector for cosine), not of a
residual (docs/spec-discrepancies.md, "Index formats").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..files import IndexFileContents, IndexFormatError
from .distance import DistanceType, indexed_form
from .flat import fixed_size_rows

CODE_COLUMN = "__sq_code"
#: A value this close (in steps) to a step boundary may land on either side
#: of it: the writer computes in float32.
STEP_TOLERANCE = 1e-3


@dataclass(frozen=True)
class SqStorage:
    dimension: int
    num_bits: int
    start: float
    end: float
    #: ``[rows, dimension]``.
    codes: np.ndarray


def read_sq_storage(aux: IndexFileContents, meta: dict) -> SqStorage:
    try:
        dimension, num_bits = int(meta["dim"]), int(meta["num_bits"])
        start, end = float(meta["bounds"]["start"]), float(meta["bounds"]["end"])
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexFormatError(aux.path, f"the SQ storage_metadata lacks or mistypes {exc}") from None
    if num_bits != 8 or not np.isfinite([start, end]).all() or start > end:
        raise IndexFormatError(aux.path, f"SQ with {num_bits} bits over bounds {start}..{end}")
    return SqStorage(dimension, num_bits, start, end, fixed_size_rows(aux, CODE_COLUMN))


def code_mismatches(storage: SqStorage, vectors: np.ndarray, codes: np.ndarray, distance: DistanceType) -> np.ndarray:
    """Per row, whether some value's code is not its step (within
    :data:`STEP_TOLERANCE` of a step boundary either step is accepted)."""
    top = (1 << storage.num_bits) - 1
    span = storage.end - storage.start
    steps = (indexed_form(vectors, distance) - storage.start) / span * top if span > 0 else np.zeros(vectors.shape)
    low = np.clip(np.floor(steps - STEP_TOLERANCE), 0, top)
    high = np.clip(np.floor(steps + STEP_TOLERANCE), 0, top)
    codes = codes.astype(np.float64)
    return np.asarray(((codes < low) | (codes > high)).any(axis=1), dtype=bool)
