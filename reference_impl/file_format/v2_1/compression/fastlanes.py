"""Unpacking the FastLanes bit layout of bitpacked integers, many chunks at
once (encoding.md, "Bitpacking"; the layout itself is left to the code,
``fastlanes`` as ``rust/lance-encoding/src/encodings/physical/bitpacking.rs``
uses it).

A chunk holds 1024 values of a ``T``-bit type packed to ``w`` bits each in
``1024 * w / T`` words: the values are ``T`` rows of ``1024 / T`` lanes, lane
``l`` packing its rows ``r = 0 .. T-1`` into a bit stream least significant
bit first whose word ``k`` is the chunk's word ``k * lanes + l``. Row ``r`` of
lane ``l`` is value ``order[r // 8] * 16 + (r % 8) * 128 + l`` with ``order =
0, 4, 2, 6, 1, 5, 3, 7`` (:mod:`.inline_bitpacking` says the same for one
chunk).
"""

from __future__ import annotations

import functools

import numpy as np

CHUNK_VALUES = 1024
# Chunks unpacked together by callers of :func:`unpack_chunks`: 256 chunks
# of 64-bit values use 2 MiB of intermediate.
BATCH_CHUNKS = 256
_ORDER = np.array([0, 4, 2, 6, 1, 5, 3, 7], dtype=np.int64)


@functools.lru_cache(maxsize=4)
def value_positions(type_bits: int) -> np.ndarray:
    """(rows, lanes) grid: the position in the chunk of each row/lane value
    (cached: one per type width; read-only)."""
    lanes = CHUNK_VALUES // type_bits
    rows = np.arange(type_bits)
    grid = (_ORDER[rows // 8] * 16 + (rows % 8) * 128)[:, None] + np.arange(lanes)[None, :]
    grid.setflags(write=False)
    return grid


@functools.lru_cache(maxsize=4)
def rows_in_value_order(type_bits: int) -> np.ndarray:
    """The rows sorted by the position of their values: the values of a row
    are consecutive (lane 0 first), so a chunk's rows in this order are its
    values in order (cached; read-only)."""
    order = np.argsort(value_positions(type_bits)[:, 0])
    order.setflags(write=False)
    return order


def unpack_chunks(words: np.ndarray, width: int, type_bits: int) -> np.ndarray:
    """The values (1024 per chunk, in order, of the words' type) of
    ``words`` shaped ``(chunks, width * 1024 / type_bits)``. The arithmetic
    is in the words' own type: a value's high bits shifted out of its word
    are bits of no value, and the mask drops those of its neighbours."""
    chunks = words.shape[0]
    lanes = CHUNK_VALUES // type_bits
    word_type = words.dtype
    if width == 0 or chunks == 0:
        return np.zeros(chunks * CHUNK_VALUES, dtype=word_type)
    grid = words.reshape(chunks, width, lanes)
    # Row r of every lane starts at bit r * width of the lane's bit stream.
    start = rows_in_value_order(type_bits) * width
    word = start // type_bits
    offset = start % type_bits
    # rows: (chunks, T, lanes), each row's low bits from its first word...
    rows = grid[:, word, :] >> offset.astype(word_type)[None, :, None]
    # ...and its high bits from the next word when it straddles two.
    straddles = offset + width > type_bits
    if straddles.any():
        spill_rows = np.flatnonzero(straddles)
        shift = (type_bits - offset[spill_rows]).astype(word_type)
        rows[:, spill_rows, :] |= grid[:, word[spill_rows] + 1, :] << shift[None, :, None]
    if width < type_bits:
        rows &= word_type.type((1 << width) - 1)
    return rows.reshape(-1)


def unpack_chunk(words: np.ndarray, width: int, type_bits: int) -> np.ndarray:
    """The 1024 values (of the words' type) of one chunk's ``width * 1024 / type_bits``
    packed words."""
    return unpack_chunks(words.reshape(1, -1), width, type_bits)
