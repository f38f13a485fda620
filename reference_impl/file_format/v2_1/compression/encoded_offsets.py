"""``Variable`` values whose offsets are themselves compressed, in a mini
block chunk (pylance 14 writes them in 2.3 files: offsets under ``Delta``
over bitpacked lengths; upstream ``protos/encodings_v2_1.proto``,
``Variable``: "the offsets may be further compressed").

The chunk then holds the offsets' own buffers first, framed as in a whole
page buffer (the block context: a ``Delta`` whose base is 0 over bitpacked
lengths, or an ``Rle`` of offsets with its u64 size header), and the bytes
last; the ``num_values + 1`` decoded offsets count from the start of the
bytes. :mod:`.variable` keeps the plain case (``Flat`` offsets before the
bytes in one buffer) and hands this one here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues, VariableWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder
from .buffer_compression import decompress


def decode(node: enc.Variable, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> VariableWidthValues:
    # The offsets are a block of their own: framed as a whole page buffer's.
    block = replace(decoder, context=ValueContext.BLOCK)
    decoded = block.decode(node.offsets, buffers, num_values + 1)
    if not isinstance(decoded, FixedWidthValues) or decoded.bits_per_value not in (32, 64):
        raise decoder.corrupt("compressed variable-width offsets are not 32- or 64-bit integers")
    offsets = decoded.data[: decoded.num_bytes].view(f"<u{decoded.bits_per_value // 8}")
    data = buffers.take("variable-width values")
    if node.HasField("values"):
        data = decompress(node.values, data, decoder, "variable-width values")
    if len(offsets) != num_values + 1 or np.any(offsets[1:] < offsets[:-1]) or int(offsets[-1]) > len(data):
        raise decoder.corrupt("compressed variable-width offsets decrease or run past their bytes")
    # The chunk gives the bytes' size, and the values fill it: a last offset
    # short of it means lost lengths (pylance refuses such a chunk).
    if int(offsets[-1]) != len(data):
        raise decoder.corrupt(
            f"compressed variable-width offsets end at byte {int(offsets[-1])} of {len(data)} bytes of values"
        )
    return VariableWidthValues(offsets.astype(offsets.dtype.newbyteorder("="), copy=False), data)
