"""``OutOfLineBitpacking``: integers narrowed to one width for a whole
buffer (encoding.md, "Bitpacking"; ``OutOfLineBitpacking`` in
``protos/encodings_v2_1.proto``).

The width is the ``bits_per_value`` of the ``values`` child (a ``Flat``).
The buffer holds chunks of 1024 values, each ``1024 * w / T`` words of the
uncompressed type (``T`` bits) in the FastLanes layout (:mod:`.fastlanes`).
A last chunk of fewer than 1024 values is either packed like the others
(padded to 1024) or, when that would take more room, stored raw: its values
as plain ``T``-bit words; the buffer's size tells which.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueDecoder
from .fastlanes import CHUNK_VALUES, unpack_chunk


def decode(
    node: enc.OutOfLineBitpacking, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> FixedWidthValues:
    type_bits = node.uncompressed_bits_per_value
    if type_bits not in (8, 16, 32, 64):
        raise decoder.corrupt(f"out-of-line bitpacking of {type_bits}-bit values")
    child = node.values
    if child.WhichOneof("compression") != "flat" or child.flat.HasField("data"):
        raise decoder.unsupported(f"bitpacked values compressed as {child.WhichOneof('compression')!r}")
    width = child.flat.bits_per_value
    if width > type_bits:
        raise decoder.corrupt(f"{type_bits}-bit values packed to {width} bits")
    data = buffers.take("bitpacked values")
    word_type = np.dtype(f"<u{type_bits // 8}")
    words = data[: len(data) - len(data) % word_type.itemsize].view(word_type)
    per_chunk = -(-CHUNK_VALUES * width // type_bits)
    whole, tail = divmod(num_values, CHUNK_VALUES)
    raw_tail = tail > 0 and len(words) == whole * per_chunk + tail
    needed = whole * per_chunk + (tail if raw_tail else (per_chunk if tail else 0))
    if len(words) < needed:
        raise decoder.corrupt(f"{num_values} values packed to {width} bits need {needed} words, found {len(words)}")
    chunks = [unpack_chunk(words[i * per_chunk : (i + 1) * per_chunk], width, type_bits) for i in range(whole)]
    if tail:
        start = whole * per_chunk
        if raw_tail:
            chunks.append(words[start : start + tail].astype(np.uint64))
        else:
            chunks.append(unpack_chunk(words[start : start + per_chunk], width, type_bits)[:tail])
    values = np.concatenate(chunks) if chunks else np.zeros(0, np.uint64)
    return FixedWidthValues(values.astype(word_type).view(np.uint8), type_bits, num_values)
