"""``General``: general-purpose compression around the output of another
encoding (encoding.md, "General"; ``General`` in
``protos/encodings_v2_1.proto``).

In a mini block chunk the chunk's first value buffer is compressed as a
whole; in a whole page buffer (block context: a dictionary) the buffer is;
in a full zip page each value is, on its own. The inner encoding then
decodes the decompressed bytes (:mod:`.buffer_compression` has the frames).
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues, VariableWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder
from .buffer_compression import decompress


def decode(node: enc.General, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> DecodedValues:
    if not node.HasField("compression"):
        raise decoder.corrupt("a general compression without a scheme")
    if decoder.context is ValueContext.FULL_ZIP:
        return _per_value(node, buffers, num_values, decoder)
    first = decompress(node.compression, buffers.take("compressed values"), decoder, "values")
    rest = [buffers.take("values").data for _ in range(buffers.remaining)]
    inner = BufferCursor([first.data, *rest], decoder)
    return decoder.decode(node.values, inner, num_values)


def _per_value(node: enc.General, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> DecodedValues:
    """Full zip: every value decompressed on its own (values are large, so
    few; one call per value)."""
    raw_offsets = buffers.take("unzipped offsets")
    data = buffers.take("unzipped values")
    offsets = raw_offsets.view("<u8").astype(np.int64)
    if len(offsets) != num_values + 1 or np.any(np.diff(offsets) < 0) or offsets[-1] > len(data):
        raise decoder.corrupt("unzipped compressed values do not match their offsets")
    pieces = [
        decompress(node.compression, data[offsets[i] : offsets[i + 1]], decoder, f"value {i}")
        for i in range(num_values)
    ]
    lengths = np.array([len(piece) for piece in pieces], dtype=np.uint64)
    new_offsets = np.zeros(num_values + 1, dtype=np.uint64)
    np.cumsum(lengths, out=new_offsets[1:])
    joined = np.concatenate(pieces) if pieces else np.zeros(0, np.uint8)
    plain = VariableWidthValues(new_offsets, joined)
    inner = BufferCursor([new_offsets.astype("<u8").data, plain.data.data], decoder)
    return decoder.decode(node.values, inner, num_values)
