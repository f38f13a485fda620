"""``Constant``: every value is the one the encoding holds; no buffer is
read (encoding.md, "Compression" / "Constant"; ``Constant`` in
``protos/encodings_v2_1.proto``).

The value is the bytes of one fixed-width value. A constant without a value
stands for all-null values, which pylance only writes as a constant page
layout (:mod:`..all_null`); as a compressive encoding it is refused.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import MAX_EXPANDED_BYTES, BufferCursor, ValueDecoder


def decode(node: enc.Constant, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    if not node.HasField("value"):
        raise decoder.unsupported("a constant compressive encoding without a value (all nulls)")
    value = np.frombuffer(node.value, dtype=np.uint8)
    if len(value) == 0:
        raise decoder.corrupt("a constant of zero bytes")
    if len(value) * num_values > MAX_EXPANDED_BYTES:
        raise decoder.corrupt(f"{num_values} constant values of {len(value)} bytes are more than this reader expands")
    return FixedWidthValues(np.tile(value, num_values), 8 * len(value), num_values)
