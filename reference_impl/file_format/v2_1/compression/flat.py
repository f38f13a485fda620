"""``Flat``: fixed-width values back to back (encoding.md, "Compression" /
"Flat"; ``Flat`` in ``protos/encodings_v2_1.proto``).

One buffer holds ``num_values`` values of ``bits_per_value`` bits each,
little endian (sub-byte widths least significant bit first), in every
context. With ``data`` set, that buffer is compressed as a unit
(:mod:`.buffer_compression`); pylance neither writes nor reads this field.
"""

from __future__ import annotations

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from . import buffer_compression
from .base import BufferCursor, ValueDecoder

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
