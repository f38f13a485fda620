"""``ByteStreamSplit``: fixed-width values stored as one stream per byte
position (encoding.md, "Byte Stream Split (BSS)"; ``ByteStreamSplit`` in
``protos/encodings_v2_1.proto``).

The child (a ``Flat`` of the values' width in pylance's files) reads a
buffer of ``num_values * width`` bytes whose first ``num_values`` bytes are
byte 0 of every value, the next ``num_values`` byte 1, and so on; undoing the
split is one transpose. In a mini block page the streams are those of one
chunk (pylance applies BSS only under general compression, which
:mod:`.general` undoes first); :func:`decode_chunks` undoes the split of
every chunk of a page, those of one size together.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueDecoder
from .chunks import ChunkCursor, segment_starts


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


def decode_chunks(
    node: enc.ByteStreamSplit, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder
) -> FixedWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`): the child
    yields the streams of every chunk one chunk after the other; each run of
    chunks of one size (all but the last of a page, as writers cut them) is
    undone by one transpose."""
    streams = decoder.decode_chunks(node.values, buffers, counts)
    if not isinstance(streams, FixedWidthValues) or streams.bits_per_value % 8 or streams.list_validity:
        raise decoder.corrupt("byte stream split over values that are not whole bytes wide")
    width = streams.bits_per_value // 8
    values = np.empty(width * int(counts.sum()), dtype=np.uint8)
    starts = segment_starts(counts) * width
    # Where each run of chunks of one size begins, and its last chunk's end.
    firsts = np.flatnonzero(np.diff(counts, prepend=-1) != 0)
    lasts = np.append(firsts[1:], len(counts))
    for first, last in zip(firsts.tolist(), lasts.tolist(), strict=True):
        count = int(counts[first])
        start, end = int(starts[first]), int(starts[last - 1]) + count * width
        split = streams.data[start:end].reshape(last - first, width, count)
        values[start:end] = split.transpose(0, 2, 1).reshape(-1)
    return FixedWidthValues(values, streams.bits_per_value, int(counts.sum()))
