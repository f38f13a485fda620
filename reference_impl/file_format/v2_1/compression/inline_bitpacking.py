"""``InlineBitpacking``: integers narrowed per chunk of 1024 values, each
chunk recording its width (encoding.md, "Bitpacking";
``InlineBitpacking`` in ``protos/encodings_v2_1.proto``).

A chunk is one word of the uncompressed type (``uncompressed_bits_per_value``
bits: 8, 16, 32 or 64) holding the packed width ``w``, then ``1024 * w / T``
words of that type (``T`` its bits) holding 1024 values (a short last chunk
is padded to 1024). A mini block chunk's value buffer is one such chunk; a
whole page buffer (block context) is the chunks one after the other.

The packed words follow the FastLanes layout, which the prose leaves to the
code: the 1024 values are ``T`` rows of ``1024 / T`` lanes; lane ``l`` packs
its rows ``r = 0 .. T-1`` least significant bits first into a bit stream,
word ``k`` of lane ``l`` being packed word ``k * lanes + l``; row ``r`` of
lane ``l`` is value ``order[r // 8] * 16 + (r % 8) * 128 + l``, with
``order = 0, 4, 2, 6, 1, 5, 3, 7``.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder

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


def decode(
    node: enc.InlineBitpacking, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> FixedWidthValues:
    type_bits = node.uncompressed_bits_per_value
    if type_bits not in (8, 16, 32, 64):
        raise decoder.corrupt(f"inline bitpacking of {type_bits}-bit values")
    if node.HasField("values"):
        decoder.refuse_buffer_compression(node.values, "bitpacked values")
    data = buffers.take("bitpacked values")
    word_type = np.dtype(f"<u{type_bits // 8}")
    num_chunks = -(-num_values // CHUNK_VALUES)
    if decoder.context is ValueContext.MINI_BLOCK and num_chunks > 1:
        raise decoder.corrupt(f"{num_values} bitpacked values in one chunk (at most {CHUNK_VALUES})")
    # Each chunk takes at least its width word.
    if num_chunks * word_type.itemsize > len(data):
        raise decoder.corrupt(f"{num_values} bitpacked values cannot fit in {len(data)} bytes")
    words = data[: len(data) - len(data) % word_type.itemsize].view(word_type)
    chunks = []
    position = 0
    for _ in range(num_chunks):
        if position >= len(words):
            raise decoder.corrupt("bitpacked chunks run past their buffer")
        width = int(words[position])
        if width > type_bits:
            raise decoder.corrupt(f"a bitpacked chunk of width {width} for {type_bits}-bit values")
        size = CHUNK_VALUES * width // type_bits
        packed = words[position + 1 : position + 1 + size]
        if len(packed) != size:
            raise decoder.corrupt("a bitpacked chunk runs past its buffer")
        chunks.append(unpack_chunk(packed, width, type_bits))
        position += 1 + size
    values = np.concatenate(chunks)[:num_values] if chunks else np.zeros(0, np.uint64)
    data_out = values.astype(word_type).view(np.uint8)
    return FixedWidthValues(data_out, type_bits, num_values)
