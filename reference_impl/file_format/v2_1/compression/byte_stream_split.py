"""``ByteStreamSplit``: fixed-width values stored as one stream per byte
position (encoding.md, "Byte Stream Split (BSS)"; ``ByteStreamSplit`` in
``protos/encodings_v2_1.proto``).

The child (a ``Flat`` of the values' width in pylance's files) reads a
buffer of ``num_values * width`` bytes whose first ``num_values`` bytes are
byte 0 of every value, the next ``num_values`` byte 1, and so on; undoing the
split is one transpose. In a mini block page the streams are those of one
chunk (pylance applies BSS only under general compression, which
:mod:`.general` undoes first).
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
        raise decoder.corrupt("byte stream split over values that are not whole bytes wide")
    width = streams.bits_per_value // 8
    return FixedWidthValues(unsplit(streams.data, width, num_values), streams.bits_per_value, num_values)


def unsplit(streams: np.ndarray, width: int, num_values: int) -> np.ndarray:
    """The values (``width`` bytes each, back to back) of ``width`` byte streams."""
    return np.ascontiguousarray(streams[: width * num_values].reshape(width, num_values).T).reshape(-1)
