"""``Rle``: runs of equal fixed-width values as one value and one length
each (encoding.md, "Run Length Encoding (RLE)"; ``Rle`` in
``protos/encodings_v2_1.proto``).

In a mini block chunk the run values are the chunk's first buffer (their
width from the ``values`` child, a ``Flat``) and the run lengths its second
(their width from ``run_lengths``, a ``Flat`` of 8 bits in pylance's files);
the runs are expanded until ``num_values`` values are out. In a whole page
buffer (block context, such as the levels of a 2.2 constant page) the two
are framed in one buffer: the size of the run values in bytes (u64), the
run values, the run lengths; the prose leaves this frame to the code.
A block's runs must add up to exactly its values (pylance 14 refuses
anything else); a chunk's runs are cut where its values end.

The runs of every chunk of a mini block page expand together, with one
``np.repeat`` (:func:`decode_chunks`).
"""

from __future__ import annotations

import numpy as np

from ....errors import LanceFormatError
from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from . import rle_children
from .base import MAX_EXPANDED_BYTES, BufferCursor, ValueContext, ValueDecoder
from .chunks import ChunkBuffers, ChunkByChunk, ChunkCursor, first, segment_starts


def _flat_width(child: enc.CompressiveEncoding, what: str, decoder: ValueDecoder) -> int:
    if child.WhichOneof("compression") != "flat" or child.flat.HasField("data"):
        raise decoder.unsupported(f"run-length {what} compressed as {child.WhichOneof('compression')!r}")
    bits = child.flat.bits_per_value
    if bits not in (8, 16, 32, 64):
        raise decoder.corrupt(f"run-length {what} of {bits} bits")
    return bits // 8


def decode(node: enc.Rle, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    plain = rle_children.is_plain(node.values) and rle_children.is_plain(node.run_lengths)
    if plain:
        value_bytes = _flat_width(node.values, "values", decoder)
        length_bytes = _flat_width(node.run_lengths, "lengths", decoder)
    if decoder.context is ValueContext.MINI_BLOCK:
        values = buffers.take("run values")
        lengths = buffers.take("run lengths")
    elif decoder.context is ValueContext.BLOCK and rle_children.stores_nothing(node):
        values = lengths = np.zeros(0, np.uint8)  # 2.3: no buffer written
    elif decoder.context is ValueContext.BLOCK:
        values, lengths = _framed(buffers.take("run-length block"), decoder)
    else:
        raise decoder.unsupported(f"compressive encoding 'rle' is not supported in the {decoder.context.value} context")
    if not plain:
        # 2.3: children compressed further (:mod:`.rle_children`).
        values, lengths, value_bytes, length_bytes = rle_children.runs(node, values, lengths, num_values, decoder)
    if decoder.context is ValueContext.BLOCK and num_values and not rle_children.stores_nothing(node):
        # (Runs stored nowhere are as many as it takes to cover the values.)
        _check_block_total(lengths, length_bytes, num_values, decoder)
    return _expand(values, lengths, value_bytes, length_bytes, num_values, decoder)


def _check_block_total(lengths: np.ndarray, length_bytes: int, num_values: int, decoder: ValueDecoder) -> None:
    """A block's runs hold exactly its values: pylance 14 refuses a block
    whose run lengths add up to another count ("RLE run lengths sum to N,
    expected M"), where cutting the runs would read damaged lengths as
    valid ones (for the levels of a mini block chunk, framed as a block, it
    says "miniblock payload proves N levels but the header declared M").
    Runs of values in a mini block chunk are cut at the chunk's count."""
    if len(lengths) % length_bytes:
        return  # not whole lengths: :func:`_expand` reports it
    stored = lengths.view(f"<u{length_bytes}")
    # Capped first so that a huge stored length cannot wrap the sum around.
    total = int(np.minimum(stored.astype(np.uint64), num_values + 1).astype(np.int64).sum())
    if total != num_values:
        shown = f"more than {num_values}" if total > num_values else str(total)
        raise decoder.corrupt(f"run lengths add up to {shown} values, not the block's {num_values}")


def _expand(
    values: np.ndarray, lengths: np.ndarray, value_bytes: int, length_bytes: int, num_values: int, decoder: ValueDecoder
) -> FixedWidthValues:
    """``num_values`` values from run values and run lengths (raw bytes)."""
    if num_values == 0:
        return FixedWidthValues(np.zeros(0, np.uint8), 8 * value_bytes, 0)
    _check_expansion(num_values * value_bytes, decoder)
    if len(values) % value_bytes or len(lengths) % length_bytes:
        raise decoder.corrupt("run-length buffers are not whole values")
    runs = len(values) // value_bytes
    if len(lengths) // length_bytes != runs:
        raise decoder.corrupt(f"{runs} run values but {len(lengths) // length_bytes} run lengths")
    # A run longer than num_values is cut anyway: capping it first keeps a
    # huge stored length from wrapping around in int64.
    counts = np.minimum(lengths.view(f"<u{length_bytes}").astype(np.uint64), num_values).astype(np.int64)
    if int(counts.sum()) < num_values:
        raise decoder.corrupt(f"runs of {int(counts.sum())} values for {num_values}")
    # Runs past num_values are cut, like pylance's reader does.
    ends = np.cumsum(counts)
    last = int(np.searchsorted(ends, num_values))
    counts = counts[: last + 1].copy()
    counts[-1] -= int(ends[last]) - num_values
    rows = values.reshape(runs, value_bytes)[: last + 1]
    return FixedWidthValues(np.repeat(rows, counts, axis=0).reshape(-1), 8 * value_bytes, num_values)


def _check_expansion(size: int, decoder: ValueDecoder, chunk: int | None = None) -> None:
    """Runs may be long (64-bit lengths): what one chunk's (or one block's)
    runs expand to is bounded as a constant's values are."""
    if size > MAX_EXPANDED_BYTES:
        problem = f"run-length values of {size} bytes are more than this reader expands"
        raise decoder.corrupt(problem) if chunk is None else decoder.corrupt_chunk(chunk, problem)


def _framed(block: np.ndarray, decoder: ValueDecoder) -> tuple[np.ndarray, np.ndarray]:
    """(run values, run lengths) of a block-context buffer."""
    if len(block) < 8:
        raise decoder.corrupt(f"a run-length block of {len(block)} bytes has no header")
    size = int(block[:8].view("<u8")[0])
    if size > len(block) - 8:
        raise decoder.corrupt(f"run values of {size} bytes in a block of {len(block)}")
    return block[8 : 8 + size], block[8 + size :]


def decode_chunks(node: enc.Rle, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder) -> FixedWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`): the runs
    of all chunks are gathered, each cut where its chunk's values end, and
    expanded by one ``np.repeat``."""
    try:
        value_bytes = _flat_width(node.values, "values", decoder)
        length_bytes = _flat_width(node.run_lengths, "lengths", decoder)
    except LanceFormatError:
        raise ChunkByChunk("rle") from None
    if decoder.context is ValueContext.MINI_BLOCK:
        values = buffers.take("run values")
        lengths = buffers.take("run lengths")
    elif decoder.context is ValueContext.BLOCK:
        values, lengths = _framed_chunks(buffers.take("run-length block"), decoder)
    else:
        raise ChunkByChunk("rle")
    large = first(counts * value_bytes > MAX_EXPANDED_BYTES)
    if large is not None:
        _check_expansion(int(counts[large]) * value_bytes, decoder, large)
    used = counts > 0
    ragged = first(used & ((values.sizes % value_bytes != 0) | (lengths.sizes % length_bytes != 0)))
    if ragged is not None:
        raise decoder.corrupt_chunk(ragged, "run-length buffers are not whole values")
    runs = np.where(used, values.sizes // value_bytes, 0)
    unequal = first(used & (lengths.sizes // length_bytes != runs))
    if unequal is not None:
        raise decoder.corrupt_chunk(
            unequal, f"{runs[unequal]} run values but {lengths.sizes[unequal] // length_bytes} run lengths"
        )
    # A chunk without values keeps none of its runs.
    stored = lengths.part(0, runs * length_bytes).joined().view(f"<u{length_bytes}")
    chunk_of_run = np.repeat(np.arange(len(counts)), runs)
    run_lengths = np.minimum(stored.astype(np.uint64), counts[chunk_of_run].astype(np.uint64)).astype(np.int64)
    # Values before each run within its chunk, and the runs' sum per chunk.
    before = np.zeros(len(run_lengths) + 1, dtype=np.int64)
    np.cumsum(run_lengths, out=before[1:])
    first_run = segment_starts(runs)
    totals = before[first_run + runs] - before[first_run]
    before = before[:-1] - before[first_run][chunk_of_run]
    short = first(totals < counts)
    if short is not None:
        raise decoder.corrupt_chunk(short, f"runs of {totals[short]} values for {counts[short]}")
    if decoder.context is ValueContext.BLOCK:
        # Blocks hold exactly their values (:func:`_check_block_total`).
        capped = np.minimum(stored.astype(np.uint64), (counts[chunk_of_run] + 1).astype(np.uint64)).astype(np.int64)
        sums = np.zeros(len(capped) + 1, dtype=np.int64)
        np.cumsum(capped, out=sums[1:])
        over = first(used & (sums[first_run + runs] - sums[first_run] != counts))
        if over is not None:
            raise decoder.corrupt_chunk(over, f"run lengths add up to more than the block's {counts[over]} values")
    # Runs past each chunk's values are cut, like pylance's reader does.
    kept = np.clip(counts[chunk_of_run] - before, 0, run_lengths)
    rows = values.part(0, runs * value_bytes).joined().reshape(-1, value_bytes)
    total = int(counts.sum())
    return FixedWidthValues(np.repeat(rows, kept, axis=0).reshape(-1), 8 * value_bytes, total)


def _framed_chunks(blocks: ChunkBuffers, decoder: ValueDecoder) -> tuple[ChunkBuffers, ChunkBuffers]:
    """:func:`_framed` of every chunk's block."""
    headless = first(blocks.sizes < 8)
    if headless is not None:
        raise decoder.corrupt_chunk(headless, f"a run-length block of {blocks.sizes[headless]} bytes has no header")
    sizes = blocks.leading(np.dtype("<u8"))
    room = (blocks.sizes - 8).astype(np.uint64)
    over = first(sizes > room)
    if over is not None:
        raise decoder.corrupt_chunk(over, f"run values of {sizes[over]} bytes in a block of {blocks.sizes[over]}")
    value_sizes = sizes.astype(np.int64)
    return blocks.part(8, value_sizes), blocks.part(8 + value_sizes, blocks.sizes - 8 - value_sizes)
