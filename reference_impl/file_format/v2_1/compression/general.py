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

The chunks of a mini block page are decompressed one codec call each, then
decoded together by the inner encoding (:func:`decode_chunks`).
"""

from __future__ import annotations

import numpy as np

from ....errors import CorruptFileError, UnsupportedFeatureError
from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues, VariableWidthValues
from . import buffer_compression
from .base import BufferCursor, ValueContext, ValueDecoder
from .chunks import ChunkBuffers, ChunkByChunk, ChunkCursor, segment_starts


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


def decode_chunks(node: enc.General, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder) -> DecodedValues:
    """:func:`decode` over every chunk of a mini block page (:mod:`.chunks`):
    each chunk's first buffer is decompressed on its own, in chunk order (an
    error names the chunk), and the inner encoding decodes the decompressed
    buffers of all chunks together with their other buffers."""
    if (
        decoder.context is not ValueContext.MINI_BLOCK
        or not node.HasField("values")
        or node.compression.scheme not in buffer_compression.MAX_EXPANSION
    ):
        raise ChunkByChunk("general")
    compressed = buffers.take("generally compressed buffer")
    pieces = []
    ranges = zip(compressed.starts.tolist(), (compressed.starts + compressed.sizes).tolist(), strict=True)
    for chunk, (start, end) in enumerate(ranges):
        try:
            pieces.append(
                buffer_compression.decompress(node.compression, compressed.data[start:end], decoder, "buffer")
            )
        except (CorruptFileError, UnsupportedFeatureError) as error:
            raise type(error)(f"{decoder.where} chunk {chunk}", error.problem) from None
    sizes = np.array([len(piece) for piece in pieces], dtype=np.int64)
    joined = np.concatenate(pieces) if pieces else np.zeros(0, np.uint8)
    buffers.give_back(ChunkBuffers(joined, segment_starts(sizes), sizes))
    return decoder.decode_chunks(node.values, buffers, counts)
