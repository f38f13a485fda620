"""``InlineBitpacking``: integers narrowed per chunk of 1024 values, each
chunk recording its width (encoding.md, "Bitpacking";
``InlineBitpacking`` in ``protos/encodings_v2_1.proto``).

A chunk is one word of the uncompressed type (``uncompressed_bits_per_value``
bits: 8, 16, 32 or 64) holding the packed width ``w``, then ``1024 * w / T``
words of that type (``T`` its bits) holding 1024 values (a short last chunk
is padded to 1024). A mini block chunk's value buffer is one such chunk; a
whole page buffer (block context) is the chunks one after the other.

The packed words follow the FastLanes layout (:mod:`.fastlanes`). The
chunks of a mini block page are unpacked together, those of one width at a
time (:func:`decode_chunks`).
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder
from .chunks import ChunkBuffers, ChunkByChunk, ChunkCursor, first, segment_starts
from .fastlanes import BATCH_CHUNKS, CHUNK_VALUES, unpack_chunk, unpack_chunks


def decode(
    node: enc.InlineBitpacking, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> FixedWidthValues:
    type_bits = node.uncompressed_bits_per_value
    if type_bits == 128:  # upstream's u128 bitpacking: proposed, not written by pylance 14
        raise decoder.unsupported("inline bitpacking of 128-bit values is not supported")
    if type_bits not in (8, 16, 32, 64):
        raise decoder.corrupt(f"inline bitpacking of {type_bits}-bit values")
    if node.HasField("values"):
        decoder.refuse_buffer_compression(node.values, "bitpacked values")
    data = buffers.take("bitpacked values")
    word_type = np.dtype(f"<u{type_bits // 8}")
    num_chunks = -(-num_values // CHUNK_VALUES)
    if decoder.context is ValueContext.MINI_BLOCK and num_chunks > 1:
        raise decoder.corrupt(f"{num_values} bitpacked values in one chunk (at most {CHUNK_VALUES})")
    # Each chunk takes at least its width word.
    if num_chunks * word_type.itemsize > len(data):
        raise decoder.corrupt(f"{num_values} bitpacked values cannot fit in {len(data)} bytes")
    words = data[: len(data) - len(data) % word_type.itemsize].view(word_type)
    chunks = []
    position = 0
    for _ in range(num_chunks):
        if position >= len(words):
            raise decoder.corrupt("bitpacked chunks run past their buffer")
        width = int(words[position])
        if width > type_bits:
            raise decoder.corrupt(f"a bitpacked chunk of width {width} for {type_bits}-bit values")
        size = CHUNK_VALUES * width // type_bits
        packed = words[position + 1 : position + 1 + size]
        if len(packed) != size:
            raise decoder.corrupt("a bitpacked chunk runs past its buffer")
        chunks.append(unpack_chunk(packed, width, type_bits))
        position += 1 + size
    if decoder.context is ValueContext.MINI_BLOCK and num_chunks and position * word_type.itemsize != len(data):
        raise decoder.corrupt(f"a bitpacked chunk of {position * word_type.itemsize} bytes in a buffer of {len(data)}")
    values = np.concatenate(chunks)[:num_values] if chunks else np.zeros(0, np.uint64)
    data_out = values.astype(word_type).view(np.uint8)
    return FixedWidthValues(data_out, type_bits, num_values)


def decode_chunks(
    node: enc.InlineBitpacking, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder
) -> FixedWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`). A chunk's
    buffer holds one bitpacked chunk of 1024 values (a mini block chunk) or
    several one after the other (a block, such as a chunk's levels): they
    are located a position at a time across all chunks, then those of each
    width are unpacked together into one array of 1024 values per bitpacked
    chunk, of which each keeps the values its chunk holds."""
    type_bits = node.uncompressed_bits_per_value
    if type_bits not in (8, 16, 32, 64) or node.HasField("values"):
        raise ChunkByChunk("inline_bitpacking")
    if decoder.context not in (ValueContext.MINI_BLOCK, ValueContext.BLOCK):
        raise ChunkByChunk("inline_bitpacking")
    chunks = buffers.take("bitpacked values")
    word_type = np.dtype(f"<u{type_bits // 8}")
    packs = -(-counts // CHUNK_VALUES)  # bitpacked chunks in each buffer
    if decoder.context is ValueContext.MINI_BLOCK:
        crowded = first(packs > 1)
        if crowded is not None:
            raise decoder.corrupt_chunk(
                crowded, f"{counts[crowded]} bitpacked values in one chunk (at most {CHUNK_VALUES})"
            )
    tiny = first(packs * word_type.itemsize > chunks.sizes)
    if tiny is not None:
        raise decoder.corrupt_chunk(tiny, f"{counts[tiny]} bitpacked values cannot fit in {chunks.sizes[tiny]} bytes")
    stored_words = chunks.sizes // word_type.itemsize
    # Bitpacked chunk j of buffer k is pack number pack_base[k] + j.
    pack_base = segment_starts(packs)
    widths = np.zeros(int(packs.sum()), dtype=np.int64)
    word_starts = np.zeros(len(widths), dtype=np.int64)  # of each pack's packed words, in its buffer
    position = np.zeros(len(chunks), dtype=np.int64)  # in words
    for index in range(int(packs.max()) if len(packs) else 0):
        active = np.flatnonzero(packs > index)
        late = first(position[active] >= stored_words[active])
        if late is not None:
            raise decoder.corrupt_chunk(int(active[late]), "bitpacked chunks run past their buffer")
        skip = position[active] * word_type.itemsize
        width = chunks.select(active).part(skip, chunks.sizes[active] - skip).leading(word_type).astype(np.uint64)
        wide = first(width > type_bits)
        if wide is not None:
            raise decoder.corrupt_chunk(
                int(active[wide]), f"a bitpacked chunk of width {width[wide]} for {type_bits}-bit values"
            )
        size = CHUNK_VALUES * width.astype(np.int64) // type_bits
        over = first(position[active] + 1 + size > stored_words[active])
        if over is not None:
            raise decoder.corrupt_chunk(int(active[over]), "a bitpacked chunk runs past its buffer")
        widths[pack_base[active] + index] = width
        word_starts[pack_base[active] + index] = position[active] + 1
        position[active] += 1 + size
    if decoder.context is ValueContext.MINI_BLOCK:
        # The chunk gives the buffer's size, and its one bitpacked chunk fills it.
        loose = first((packs > 0) & (position * word_type.itemsize != chunks.sizes))
        if loose is not None:
            raise decoder.corrupt_chunk(
                loose,
                f"a bitpacked chunk of {position[loose] * word_type.itemsize} bytes in a buffer of "
                f"{chunks.sizes[loose]}",
            )
    pack_chunk = np.repeat(np.arange(len(chunks)), packs)
    unpacked = np.zeros((len(widths), CHUNK_VALUES), dtype=word_type)
    for width in np.unique(widths[widths > 0]).tolist():
        same = np.flatnonzero(widths == width)
        size = CHUNK_VALUES * width // type_bits
        # A batch at a time keeps the 64-bit intermediate small.
        for batch in np.array_split(same, -(-len(same) // BATCH_CHUNKS)):
            packed = ChunkBuffers(
                chunks.data,
                chunks.starts[pack_chunk[batch]] + word_starts[batch] * word_type.itemsize,
                np.full(len(batch), size * word_type.itemsize),
            )
            grid = packed.joined().view(word_type).reshape(len(batch), size)
            unpacked[batch] = unpack_chunks(grid, width, type_bits).reshape(len(batch), CHUNK_VALUES)
    # Values in each pack: 1024 but in the last pack of a buffer.
    in_pack = np.minimum(
        counts[pack_chunk] - (np.arange(len(widths)) - pack_base[pack_chunk]) * CHUNK_VALUES, CHUNK_VALUES
    )
    kept = np.arange(CHUNK_VALUES)[None, :] < in_pack[:, None]
    return FixedWidthValues(unpacked[kept].view(np.uint8), type_bits, int(counts.sum()))
