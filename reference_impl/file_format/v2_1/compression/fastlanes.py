"""The FastLanes bit-packing layout of 1024 values, shared by the
bitpacking schemes (encoding.md, "Bitpacking", leaves the layout to the
code; pylance uses the FastLanes library's).

The 1024 values of a chunk of ``T``-bit integers packed to ``w`` bits are
``w * 1024 / T`` words of ``T`` bits. The values are ``T`` rows of
``1024 / T`` lanes; lane ``l`` packs its rows ``r = 0 .. T-1`` least
significant bits first into a bit stream whose word ``k`` is packed word
``k * lanes + l``; row ``r`` of lane ``l`` is value ``order[r // 8] * 16 +
(r % 8) * 128 + l``, with ``order = 0, 4, 2, 6, 1, 5, 3, 7``.
"""

from __future__ import annotations

import numpy as np

CHUNK_VALUES = 1024
_ORDER = np.array([0, 4, 2, 6, 1, 5, 3, 7], dtype=np.int64)


def _value_positions(type_bits: int) -> np.ndarray:
    """(rows, lanes) grid of the value each packed row/lane holds."""
    lanes = CHUNK_VALUES // type_bits
    rows = np.arange(type_bits)
    return (_ORDER[rows // 8] * 16 + (rows % 8) * 128)[:, None] + np.arange(lanes)[None, :]


def unpack_chunk(words: np.ndarray, width: int, type_bits: int) -> np.ndarray:
    """The 1024 values (uint64) of one chunk's packed words (``width *
    1024 / type_bits`` words of ``type_bits`` bits)."""
    lanes = CHUNK_VALUES // type_bits
    out = np.zeros(CHUNK_VALUES, dtype=np.uint64)
    if width == 0:
        return out
    grid = words.astype(np.uint64).reshape(width, lanes)
    rows = np.arange(type_bits, dtype=np.int64)
    start = rows * width
    word = start // type_bits
    shift = (start % type_bits).astype(np.uint64)
    values = grid[word] >> shift[:, None]
    straddles = (start % type_bits) + width > type_bits
    if straddles.any():
        upper = grid[np.minimum(word + 1, width - 1)] << (np.uint64(type_bits) - shift)[:, None]
        values = np.where(straddles[:, None], values | upper, values)
    if width < 64:
        values &= np.uint64((1 << width) - 1)
    out[_value_positions(type_bits).reshape(-1)] = values.reshape(-1)
    return out
