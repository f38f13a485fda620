"""``Constant``: every value is the one the encoding holds; no buffer is
read (encoding.md, "Compression" / "Constant"; ``Constant`` in
``protos/encodings_v2_1.proto``).

The value is the bytes of one fixed-width value. A constant without a value
stands for values that are all null and have no bytes: pylance writes it as
the items of a fixed-size list whose items are all null (the list's item
validity says so). It decodes to values of zero bits, which only a
fixed-size list's null items may take (:mod:`..columns`).
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import MAX_EXPANDED_BYTES, BufferCursor, ValueDecoder


def decode(node: enc.Constant, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    if not node.HasField("value"):
        return FixedWidthValues(np.zeros(0, np.uint8), 0, num_values)
    value = np.frombuffer(node.value, dtype=np.uint8)
    if len(value) == 0:
        raise decoder.corrupt("a constant of zero bytes")
    if len(value) * num_values > MAX_EXPANDED_BYTES:
        raise decoder.corrupt(f"{num_values} constant values of {len(value)} bytes are more than this reader expands")
    return FixedWidthValues(np.tile(value, num_values), 8 * len(value), num_values)
