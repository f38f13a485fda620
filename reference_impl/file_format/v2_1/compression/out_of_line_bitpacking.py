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
from .chunks import ChunkBuffers, ChunkByChunk, ChunkCursor, first, gather_ranges, segment_starts
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
    for first_chunk in range(0, chunks, BATCH_CHUNKS):
        batch = packed[first_chunk : first_chunk + BATCH_CHUNKS]
        start = first_chunk * CHUNK_VALUES
        values[start : start + len(batch) * CHUNK_VALUES] = unpack_chunks(batch, width, type_bits)
    if raw_tail is not None:
        values[chunks * CHUNK_VALUES :] = raw_tail
    return FixedWidthValues(values[:num_values].view(np.uint8), type_bits, num_values)


def decode_chunks(
    node: enc.OutOfLineBitpacking, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder
) -> FixedWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`): each
    chunk's buffer is laid out as :func:`decode` reads one (its length tells
    how its last partial pack is stored); the packs of all chunks are
    unpacked together, a batch at a time, and each chunk keeps the values it
    holds, then its unpacked tail."""
    type_bits = node.uncompressed_bits_per_value
    child = node.values
    if (
        type_bits not in (8, 16, 32, 64)
        or child.WhichOneof("compression") != "flat"
        or child.flat.HasField("data")
        or child.flat.bits_per_value > type_bits
    ):
        raise ChunkByChunk("out_of_line_bitpacking")
    width = child.flat.bits_per_value
    word_type = np.dtype(f"<u{type_bits // 8}")
    if width == 0:
        large = first(counts * word_type.itemsize > MAX_EXPANDED_BYTES)
        if large is not None:
            raise decoder.corrupt_chunk(
                large, f"{counts[large]} values bitpacked to 0 bits are more than this reader expands"
            )
    chunks = buffers.take("out-of-line bitpacked values")
    stored_words = chunks.sizes // word_type.itemsize
    pack_words = CHUNK_VALUES * width // type_bits
    whole, tail = np.divmod(counts, CHUNK_VALUES)
    raw_tail = np.where((tail > 0) & (stored_words == whole * pack_words + tail), tail, 0)
    packs = whole + ((tail > 0) & (raw_tail == 0))
    needed = packs * pack_words + raw_tail
    short = first(stored_words < needed)
    if short is not None:
        raise decoder.corrupt_chunk(
            short,
            f"{counts[short]} values bitpacked to {width} bits need {needed[short]} words, "
            f"the buffer has {stored_words[short]}",
        )
    # What each chunk's decode would take from the page's budget, in turn.
    out_bytes = (packs * CHUNK_VALUES + raw_tail) * word_type.itemsize
    over = first(np.cumsum(out_bytes) > decoder.budget.remaining)
    if over is not None:
        raise decoder.corrupt_chunk(
            over, f"{counts[over]} bitpacked values are more than this reader expands for one page"
        )
    decoder.budget.remaining -= int(out_bytes.sum())
    unpacked = _unpack_packs(chunks, packs, pack_words, width, word_type)
    # Chunk k's values: the first of its packs' values, then its raw tail.
    from_packs = counts - raw_tail
    size = word_type.itemsize
    values = gather_ranges(unpacked.view(np.uint8), segment_starts(packs * CHUNK_VALUES) * size, from_packs * size)
    values = values.view(word_type)
    if raw_tail.any():
        tail_start = chunks.starts + whole * pack_words * size
        tails = gather_ranges(chunks.data, tail_start, raw_tail * size).view(word_type)
        chunk_of_value = np.repeat(np.arange(len(counts)), counts)
        in_tail = np.arange(len(chunk_of_value)) - segment_starts(counts)[chunk_of_value] >= from_packs[chunk_of_value]
        joined = np.empty(len(chunk_of_value), dtype=word_type)
        joined[~in_tail] = values
        joined[in_tail] = tails
        values = joined
    return FixedWidthValues(values.view(np.uint8), type_bits, int(counts.sum()))


def _unpack_packs(
    chunks: ChunkBuffers, packs: np.ndarray, pack_words: int, width: int, word_type: np.dtype
) -> np.ndarray:
    """The 1024 values of each pack of every chunk (``packs[k]`` from the
    start of chunk ``k``'s buffer), chunk after chunk, as ``word_type``."""
    pack_chunk = np.repeat(np.arange(len(packs)), packs)
    pack_in_chunk = np.arange(len(pack_chunk)) - segment_starts(packs)[pack_chunk]
    pack_bytes = pack_words * word_type.itemsize
    starts = chunks.starts[pack_chunk] + pack_in_chunk * pack_bytes
    type_bits = 8 * word_type.itemsize
    unpacked = np.empty(len(pack_chunk) * CHUNK_VALUES, dtype=word_type)
    for first_pack in range(0, len(pack_chunk), BATCH_CHUNKS):
        batch = starts[first_pack : first_pack + BATCH_CHUNKS]
        words = gather_ranges(chunks.data, batch, np.full(len(batch), pack_bytes)).view(word_type)
        out = unpacked[first_pack * CHUNK_VALUES : (first_pack + len(batch)) * CHUNK_VALUES]
        out[:] = unpack_chunks(words.reshape(len(batch), pack_words), width, type_bits)
    return unpacked
