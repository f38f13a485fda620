"""``Constant``: every value is the one value the encoding carries (encoding.md,
"Constant"; ``Constant`` in ``protos/encodings_v2_1.proto``).

Nothing is stored; the value's bytes are one fixed-width value, repeated
``num_values`` times (at most :data:`MAX_VALUES`, as no buffer backs them).
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueDecoder

MAX_VALUES = 1 << 30
MAX_VALUE_BYTES = 1 << 16


def decode(node: enc.Constant, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    if not node.HasField("value") or not node.value:
        raise decoder.unsupported("a constant encoding without a value")
    value = np.frombuffer(node.value, dtype=np.uint8)
    if len(value) > MAX_VALUE_BYTES or num_values * len(value) > MAX_VALUES:
        raise decoder.corrupt(f"{num_values} copies of a {len(value)}-byte constant are more than this reader creates")
    return FixedWidthValues(np.tile(value, num_values), 8 * len(value), num_values)
