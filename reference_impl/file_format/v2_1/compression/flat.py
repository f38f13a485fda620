"""``Flat``: fixed-width values back to back (encoding.md, "Compression" /
"Flat"; ``Flat`` in ``protos/encodings_v2_1.proto``).

One buffer holds ``num_values`` values of ``bits_per_value`` bits each,
little endian (sub-byte widths least significant bit first), in every
context (the chunks of a mini block page are joined by
:func:`decode_chunks`). With ``data`` set, that buffer is compressed as a unit
(:mod:`.buffer_compression`); pylance neither writes nor reads this field.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from . import buffer_compression
from .base import BufferCursor, ValueDecoder
from .chunks import ChunkByChunk, ChunkCursor, first, gather_ranges, segment_starts

# Widest value a flat buffer may hold: a fixed-size list of 2**16 64-bit
# items, far beyond what writers produce but small enough to bound sizes.
MAX_BITS_PER_VALUE = 64 << 16


def decode(node: enc.Flat, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    bits = node.bits_per_value
    if not 0 < bits <= MAX_BITS_PER_VALUE:
        raise decoder.corrupt(f"flat values of {bits} bits each")
    data = buffers.take("flat values")
    if node.HasField("data"):
        data = buffer_compression.decompress(node.data, data, decoder, "flat values")
    needed = (num_values * bits + 7) // 8
    if len(data) < needed:
        raise decoder.corrupt(f"{num_values} values of {bits} bits need {needed} bytes but the buffer has {len(data)}")
    return FixedWidthValues(data[:needed], bits, num_values)


def decode_chunks(node: enc.Flat, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder) -> FixedWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`): each
    chunk's values are the start of its buffer. Values narrower than a
    byte (booleans) are joined bit by bit."""
    bits = node.bits_per_value
    if not 0 < bits <= MAX_BITS_PER_VALUE or node.HasField("data"):
        raise ChunkByChunk("flat")
    chunks = buffers.take("flat values")
    # Divided, not multiplied: a count from a hostile file cannot overflow.
    short = first(counts > chunks.sizes * 8 // bits)
    if short is not None:
        raise decoder.corrupt_chunk(
            short,
            f"{counts[short]} values of {bits} bits need {(int(counts[short]) * bits + 7) // 8} bytes "
            f"but the buffer has {chunks.sizes[short]}",
        )
    total = int(counts.sum())
    if bits % 8 == 0:
        return FixedWidthValues(chunks.part(0, counts * (bits // 8)).joined(), bits, total)
    needed = (counts * bits + 7) // 8
    stored = np.unpackbits(chunks.part(0, needed).joined(), bitorder="little")
    joined = gather_ranges(stored, 8 * segment_starts(needed), counts * bits)
    return FixedWidthValues(np.packbits(joined, bitorder="little"), bits, total)
