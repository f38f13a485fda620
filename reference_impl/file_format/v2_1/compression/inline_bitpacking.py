"""``InlineBitpacking``: integers narrowed per chunk of 1024 values, each
chunk recording its width (encoding.md, "Bitpacking";
``InlineBitpacking`` in ``protos/encodings_v2_1.proto``).

A chunk is one word of the uncompressed type (``uncompressed_bits_per_value``
bits: 8, 16, 32 or 64) holding the packed width ``w``, then ``1024 * w / T``
words of that type (``T`` its bits) holding 1024 values (a short last chunk
is padded to 1024). A mini block chunk's value buffer is one such chunk; a
whole page buffer (block context) is the chunks one after the other.

The packed words follow the FastLanes layout (:mod:`.fastlanes`).
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder
from .fastlanes import CHUNK_VALUES, unpack_chunk


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
