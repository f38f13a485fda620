"""``ByteStreamSplit``: fixed-width values stored as one stream per byte
position (encoding.md, "Byte Stream Split (BSS)"; ``ByteStreamSplit`` in
``protos/encodings_v2_1.proto``).

The child encoding decodes ``num_values`` values of the same width whose
bytes are transposed: for values of ``w`` bytes, first byte 0 of every
value, then byte 1 of every value, and so on, within each mini block chunk
(pylance splits chunk by chunk). Transposing back is one reshape.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueDecoder


def decode(
    node: enc.ByteStreamSplit, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> FixedWidthValues:
    streams = decoder.decode(node.values, buffers, num_values)
    if not isinstance(streams, FixedWidthValues) or streams.bits_per_value % 8 or streams.list_validity:
        raise decoder.corrupt("byte stream split values are not whole-byte fixed-width values")
    width = streams.bits_per_value // 8
    split = streams.data[: width * num_values].reshape(width, num_values)
    return FixedWidthValues(np.ascontiguousarray(split.T).reshape(-1), streams.bits_per_value, num_values)
