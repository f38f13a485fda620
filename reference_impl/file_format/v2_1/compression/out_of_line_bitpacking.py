"""``OutOfLineBitpacking``: fixed-width integers narrowed to one width for a
whole buffer (encoding.md, "Bitpacking"; ``OutOfLineBitpacking`` in
``protos/encodings_v2_1.proto``).

pylance writes it in the block context (a whole page buffer, such as a
dictionary's or a page's levels) for more than 1024 values; the layout is
one buffer in any context. The packed width
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
from .base import MAX_EXPANDED_BYTES, BufferCursor, ValueDecoder
from .fastlanes import BATCH_CHUNKS, CHUNK_VALUES, unpack_chunks


def decode(
    node: enc.OutOfLineBitpacking, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> FixedWidthValues:
    type_bits = node.uncompressed_bits_per_value
    if type_bits == 128:  # upstream's u128 bitpacking: proposed, not written by pylance 14
        raise decoder.unsupported("out-of-line bitpacking of 128-bit values is not supported")
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
    word_type = np.dtype(f"<u{type_bits // 8}")
    # Width 0 stores nothing: the count alone must stay within bounds.
    if width == 0 and num_values * word_type.itemsize > MAX_EXPANDED_BYTES:
        raise decoder.corrupt(f"{num_values} values bitpacked to 0 bits are more than this reader expands")
    data = buffers.take("out-of-line bitpacked values")
    # Bytes past the last whole word, and words past the last chunk, are
    # ignored as pylance's reader ignores them.
    words = data[: len(data) - len(data) % word_type.itemsize].view(word_type)
    chunk_words = CHUNK_VALUES * width // type_bits
    whole, tail = divmod(num_values, CHUNK_VALUES)
    packed_words = whole * chunk_words
    if tail and len(words) == packed_words + tail:
        chunks, raw_tail = whole, words[packed_words:]
    else:
        chunks, raw_tail = whole + (1 if tail else 0), None
    needed = chunks * chunk_words + (0 if raw_tail is None else tail)
    if len(words) < needed:
        raise decoder.corrupt(
            f"{num_values} values bitpacked to {width} bits need {needed} words, the buffer has {len(words)}"
        )
    # Narrow values expand up to 64 times: the output counts against the
    # page's budget, and chunks are unpacked a batch at a time so the
    # 64-bit intermediate stays small.
    out_bytes = (chunks * CHUNK_VALUES + (0 if raw_tail is None else tail)) * word_type.itemsize
    if out_bytes > decoder.budget.remaining:
        raise decoder.corrupt(f"{num_values} bitpacked values are more than this reader expands for one page")
    decoder.budget.remaining -= out_bytes
    values = np.empty(out_bytes // word_type.itemsize, dtype=word_type)
    packed = words[: chunks * chunk_words].reshape(chunks, chunk_words)
    for first in range(0, chunks, BATCH_CHUNKS):
        batch = packed[first : first + BATCH_CHUNKS]
        start = first * CHUNK_VALUES
        values[start : start + len(batch) * CHUNK_VALUES] = unpack_chunks(batch, width, type_bits)
    if raw_tail is not None:
        values[chunks * CHUNK_VALUES :] = raw_tail
    return FixedWidthValues(values[:num_values].view(np.uint8), type_bits, num_values)
