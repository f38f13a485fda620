"""``OutOfLineBitpacking``: fixed-width integers narrowed to one width for a
whole buffer (encoding.md, "Bitpacking"; ``OutOfLineBitpacking`` in
``protos/encodings_v2_1.proto``).

pylance writes it in the block context (a whole page buffer, such as a
dictionary's or a page's levels) for more than 1024 values. The packed width
``w`` is the ``bits_per_value`` of the ``values`` child (a ``Flat``); unlike
inline bitpacking no chunk records it. The buffer holds ``num_values // 1024``
chunks of ``ceil(1024 * w / T)`` words of the uncompressed type (``T`` bits)
in the FastLanes order :mod:`.inline_bitpacking` describes, then the last
partial chunk, which the prose leaves to the code: either padded to 1024
values and packed like the others, or its values stored unpacked as whole
words; the buffer's length tells which.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder
from .fastlanes import CHUNK_VALUES, unpack_chunks


def decode(
    node: enc.OutOfLineBitpacking, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> FixedWidthValues:
    type_bits = node.uncompressed_bits_per_value
    if type_bits not in (8, 16, 32, 64):
        raise decoder.corrupt(f"out-of-line bitpacking of {type_bits}-bit values")
    child = node.values
    if child.WhichOneof("compression") != "flat" or child.flat.HasField("data"):
        raise decoder.unsupported(
            f"out-of-line bitpacked values compressed as {child.WhichOneof('compression')!r} are not supported"
        )
    width = child.flat.bits_per_value
    if width > type_bits:
        raise decoder.corrupt(f"out-of-line bitpacking to {width} bits of {type_bits}-bit values")
    if decoder.context is not ValueContext.BLOCK:
        raise decoder.unsupported(f"out-of-line bitpacking in the {decoder.context.value} context is not supported")
    word_type = np.dtype(f"<u{type_bits // 8}")
    data = buffers.take("out-of-line bitpacked values")
    if len(data) % word_type.itemsize:
        raise decoder.corrupt(f"out-of-line bitpacked buffer of {len(data)} bytes is not whole words")
    words = data.view(word_type)
    chunk_words = -(-CHUNK_VALUES * width // type_bits)
    whole, tail = divmod(num_values, CHUNK_VALUES)
    packed_words = whole * chunk_words
    if tail and len(words) == packed_words + tail:
        chunks, raw_tail = whole, words[packed_words:]
    else:
        chunks, raw_tail = whole + (1 if tail else 0), None
    if len(words) != chunks * chunk_words + (0 if raw_tail is None else tail):
        raise decoder.corrupt(
            f"{num_values} values bitpacked to {width} bits cannot be the {len(words)} words of the buffer"
        )
    values = unpack_chunks(words[: chunks * chunk_words].reshape(chunks, chunk_words), width, type_bits)
    values = values.astype(word_type)
    if raw_tail is not None:
        values = np.concatenate([values, raw_tail])
    return FixedWidthValues(values[:num_values].view(np.uint8), type_bits, num_values)
