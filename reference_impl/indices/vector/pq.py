"""Product quantization storage (format/index/vector/index.md, "PQ" in the
auxiliary file, ``storage_metadata`` for PQ, "Quantization Codebook").

Each row's vector is split into ``num_sub_vectors`` equal sub-vectors and
each is replaced by the number of its nearest codeword (``nbits`` bits).
What pylance 14 writes beyond the page (docs/spec-discrepancies.md, "Index
formats"): the codebook tensor's shape is ``[2^nbits, dimension]`` while its
values are laid out sub-vector by sub-vector (``[num_sub_vectors, 2^nbits,
dimension / num_sub_vectors]``); with ``transposed`` the codes of each
partition are stored column-major (every row's first code, then every row's
second, ...) in the rows of ``__pq_code``; the encoded vector is the
residual from the row's centroid for l2, the unit vector's residual for
cosine, and the vector itself for dot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..files import IndexFileContents, IndexFormatError
from .distance import DistanceType, indexed_form, negative_dot, squared_l2, within_ties
from .flat import fixed_size_rows
from .tensor import buffer_of, decode_tensor

CODE_COLUMN = "__pq_code"


@dataclass(frozen=True)
class PqStorage:
    num_bits: int
    num_sub_vectors: int
    dimension: int
    transposed: bool
    #: ``[num_sub_vectors, 2^num_bits, dimension / num_sub_vectors]``.
    codebook: np.ndarray
    #: ``__pq_code`` as stored, ``[rows, num_sub_vectors * num_bits / 8]``.
    stored_codes: np.ndarray

    @property
    def code_width(self) -> int:
        return self.num_sub_vectors * self.num_bits // 8

    def codes(self, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
        """Each row's code per sub-vector, ``[rows, num_sub_vectors]``, with
        transposed partitions put back row-major; None for ``num_bits``
        other than 8 (two codes a byte: not decoded here)."""
        if self.num_bits != 8:
            return None
        if not self.transposed:
            return self.stored_codes
        out = np.empty_like(self.stored_codes)
        for offset, length in zip(offsets.astype(np.int64), lengths.astype(np.int64), strict=True):
            block = self.stored_codes[offset : offset + length]
            out[offset : offset + length] = block.reshape(-1).reshape(self.num_sub_vectors, length).T
        return out


def read_pq_storage(aux: IndexFileContents, meta: dict) -> PqStorage:
    try:
        num_bits, num_sub_vectors, dimension = int(meta["nbits"]), int(meta["num_sub_vectors"]), int(meta["dimension"])
        transposed = bool(meta.get("transposed", False))
        position = meta["codebook_position"]
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexFormatError(aux.path, f"the PQ storage_metadata lacks or mistypes {exc}") from None
    if num_bits not in (4, 8) or num_sub_vectors <= 0 or dimension <= 0 or dimension % num_sub_vectors:
        raise IndexFormatError(
            aux.path, f"PQ with nbits {num_bits}, {num_sub_vectors} sub-vectors of dimension {dimension}"
        )
    tensor = decode_tensor(aux.path, buffer_of(aux, position, "codebook_position"), "the PQ codebook")
    codewords = 1 << num_bits
    if tensor.size != codewords * dimension:
        raise IndexFormatError(
            aux.path, f"the PQ codebook has shape {list(tensor.shape)}, not {codewords} codewords of {dimension}"
        )
    codebook = tensor.astype(np.float64).reshape(num_sub_vectors, codewords, dimension // num_sub_vectors)
    return PqStorage(num_bits, num_sub_vectors, dimension, transposed, codebook, fixed_size_rows(aux, CODE_COLUMN))


def encoded_vectors(vectors: np.ndarray, centroids: np.ndarray, distance: DistanceType) -> np.ndarray:
    """What PQ encodes for each row, given the centroid of its partition."""
    if distance is DistanceType.DOT:
        return np.asarray(vectors, dtype=np.float64)
    return indexed_form(vectors, distance) - centroids


def code_mismatches(storage: PqStorage, encoded: np.ndarray, codes: np.ndarray, distance: DistanceType) -> np.ndarray:
    """Per row, whether some sub-vector's stored code is not (within ties)
    its nearest codeword. For dot, pylance 14 picks the nearest codeword by
    Euclidean distance when building and by inner product when appending
    (docs/spec-discrepancies.md), so either is accepted."""
    width = storage.dimension // storage.num_sub_vectors
    wrong = np.zeros(len(encoded), dtype=bool)
    for sub in range(storage.num_sub_vectors):
        part = encoded[:, sub * width : (sub + 1) * width]
        words = storage.codebook[sub]
        chosen = codes[:, sub].astype(np.int64)
        fits = within_ties(squared_l2(part, words), chosen)
        if distance is DistanceType.DOT:
            fits |= within_ties(negative_dot(part, words), chosen)
        wrong |= ~fits
    return wrong
