"""``General``: a general-purpose codec over what an inner encoding produced
(encoding.md, "Compression" / "General"; ``General`` in
``protos/encodings_v2_1.proto``; the codec framing is
:mod:`.buffer_compression`'s).

Where it applies depends on the context (the compression table of
encoding.md):

* mini block chunk: the chunk's first value buffer is compressed; once
  decompressed, the inner encoding reads it and the chunk's other buffers
  as if nothing had been compressed;
* block (a whole page buffer): the buffer is compressed as a unit and the
  inner encoding reads the decompressed buffer;
* full zip: each value was compressed on its own (the "per value" mark of
  the table); the unzipped values are variable width, each one a framed
  compressed buffer, and decompress to the value's bytes. pylance ignores the
  inner encoding here and so does this reader.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues, VariableWidthValues
from . import buffer_compression
from .base import BufferCursor, ValueContext, ValueDecoder


def decode(node: enc.General, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> DecodedValues:
    if not node.HasField("compression"):
        raise decoder.corrupt("a general compression without a codec")
    if decoder.context is ValueContext.FULL_ZIP:
        return _per_value(node.compression, buffers, num_values, decoder)
    if not node.HasField("values"):
        raise decoder.corrupt("a general compression without an inner encoding")
    compressed = buffers.take("generally compressed buffer")
    buffers.give_back(buffer_compression.decompress(node.compression, compressed, decoder, "buffer"))
    return decoder.decode(node.values, buffers, num_values)


def _per_value(
    compression: enc.BufferCompression, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> VariableWidthValues:
    raw_offsets = buffers.take("unzipped offsets")
    data = buffers.take("unzipped values")
    if len(raw_offsets) != 8 * (num_values + 1):
        raise decoder.corrupt(f"{num_values} unzipped values with {len(raw_offsets) // 8} offsets")
    offsets = raw_offsets.view("<u8")
    if np.any(offsets[1:] < offsets[:-1]) or int(offsets[-1]) > len(data):
        raise decoder.corrupt("unzipped offsets decrease or run past their values")
    # Full zip pages hold large values, few per page: one codec call each.
    pieces = [
        buffer_compression.decompress(compression, data[int(start) : int(end)], decoder, f"value {index}")
        for index, (start, end) in enumerate(zip(offsets[:-1], offsets[1:], strict=True))
    ]
    out_offsets = np.zeros(num_values + 1, dtype=np.uint64)
    np.cumsum([len(piece) for piece in pieces], out=out_offsets[1:])
    joined = np.concatenate(pieces) if pieces else np.zeros(0, np.uint8)
    return VariableWidthValues(out_offsets, joined)
