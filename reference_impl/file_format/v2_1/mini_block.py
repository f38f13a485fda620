"""Mini block pages (encoding.md, "Mini Block Page Layout";
``MiniBlockLayout`` in ``protos/encodings_v2_1.proto``).

Page buffers: 0 the chunk metadata, 1 the chunks, 2 the dictionary (when the
layout has one), and last the repetition index (when its depth is above 0).

Chunk metadata: one little-endian word per chunk, 16 bits (32 bits when
``has_large_chunk``, which 2.2 writers set): the low 4 bits are the log2 of
the chunk's item count (0 for the last chunk, which holds the rest of the
page's ``num_items``), the bits above are the chunk's size in 8-byte words
minus one.

A chunk: the number of levels (u16), the size of its repetition levels
(u16, when the layout has ``rep_compression``), of its definition levels
(u16, when it has ``def_compression``), of each of its ``num_buffers`` value
buffers (u16, or u32 with ``has_large_chunk``); padding to 8 bytes; then the
repetition levels, the definition levels and each value buffer, each padded
to 8 bytes.

The repetition index holds ``depth + 1`` u64 per chunk: the rows that
finish in the chunk, then the items left over after the last of them; this
reader checks that its row counts add up to the page's rows and, at depth
1, that both words agree with the chunk's repetition levels.

The chunks of a page share its encodings, so they are decoded together:
every chunk header is read at once as one structured record per chunk,
then the levels and the values of all chunks in one pass per compression
scheme (:func:`.compression.decode_chunk_values`).

Dictionary: when the layout has one, the chunks' values are indices into
the page's dictionary, decoded once from buffer 2 (``num_dictionary_items``
values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .compression import ChunkBuffers, ValueContext, decode_chunk_values, decode_values
from .compression.chunks import first
from .levels import decode_chunk_levels
from .page import LIST_LAYERS, DecodedPage, PageContext, check_layers, count_visible
from .values import DecodedValues

ALIGNMENT = 8
# Most items one chunk may hold (writers use at most 32Ki).
MAX_CHUNK_ITEMS = 1 << 16


def decode(layout: enc.MiniBlockLayout, page: PageContext) -> DecodedPage:
    layers = check_layers(page, layout.layers)
    has_rep = layout.HasField("rep_compression")
    has_def = layout.HasField("def_compression")
    word = np.dtype("<u4") if layout.has_large_chunk else np.dtype("<u2")
    metadata = np.frombuffer(page.buffer(0, "the chunk metadata"), dtype=np.uint8)
    if len(metadata) % word.itemsize:
        raise page.corrupt(f"chunk metadata of {len(metadata)} bytes is not made of {word.itemsize}-byte words")
    words = metadata.view(word).astype(np.int64)
    chunk_data = np.frombuffer(page.buffer(1, "the chunks"), dtype=np.uint8)
    sizes = ((words >> 4) + 1) * ALIGNMENT
    ends = np.cumsum(sizes)
    if len(words) and int(ends[-1]) > len(chunk_data):
        raise page.corrupt(f"chunks of {int(ends[-1])} bytes in a buffer of {len(chunk_data)}")
    counts = _chunk_items(page, words & 0xF, layout.num_items)
    if layout.num_buffers > 64:
        raise page.corrupt(f"{layout.num_buffers} value buffers per chunk")
    chunks = _split_chunks(page, chunk_data, ends - sizes, sizes, has_rep, has_def, layout.num_buffers, word)
    rep_levels = def_levels = None
    if chunks.rep is not None:
        rep_levels = decode_chunk_levels(
            page, layout.rep_compression, chunks.rep, chunks.num_levels, "repetition levels"
        )
    if chunks.definition is not None:
        def_levels = decode_chunk_levels(
            page, layout.def_compression, chunks.definition, chunks.num_levels, "definition levels"
        )
    num_items = int(chunks.num_levels.sum()) if (has_rep or has_def) else int(counts.sum())
    num_visible = count_visible(layers, def_levels, num_items)
    if num_visible != int(counts.sum()):
        raise page.corrupt(f"the chunks hold {int(counts.sum())} values for {num_visible} visible items")
    values = None
    if len(counts):
        try:
            values = decode_chunk_values(
                layout.value_compression, chunks.values, counts, where=page.value_where, budget=page.budget
            )
        except ValueError as exc:
            raise page.corrupt(str(exc)) from None
    dictionary = None
    if layout.HasField("dictionary"):
        dictionary = _dictionary(layout, page)
    if layout.repetition_index_depth > 0:
        _check_repetition_index(layout, page, len(words), rep_levels, chunks.num_levels, layers)
    return DecodedPage(layers, rep_levels, def_levels, num_items, values, num_visible, dictionary)


def _chunk_items(page: PageContext, logs: np.ndarray, num_items: int) -> np.ndarray:
    """Items per chunk: 2**log for all but the last, the rest for the last."""
    if len(logs) == 0:
        if num_items:
            raise page.corrupt(f"no chunks for {num_items} items")
        return np.zeros(0, np.int64)
    if np.any(logs[:-1] == 0):
        raise page.corrupt("a chunk other than the last does not give its item count")
    counts = np.left_shift(np.int64(1), logs)
    before = int(counts[:-1].sum())
    last = num_items - before
    if last <= 0 or last > MAX_CHUNK_ITEMS or (logs[-1] != 0 and last != int(counts[-1])):
        raise page.corrupt(f"the chunks' item counts do not add up to the page's {num_items} items")
    counts[-1] = last
    return counts


@dataclass(frozen=True)
class _Chunks:
    """Where the levels and value buffers of every chunk of a page are."""

    num_levels: np.ndarray  # int64, per chunk
    rep: ChunkBuffers | None
    definition: ChunkBuffers | None
    values: list[ChunkBuffers]


def _split_chunks(page, chunk_data, starts, sizes, has_rep, has_def, num_buffers, size_type) -> _Chunks:
    """Every chunk's header read at once (one structured record per chunk),
    then each of its buffers located, the chunks side by side."""
    fields: list[tuple] = [("num_levels", "<u2")]
    fields += [("rep", "<u2")] if has_rep else []
    fields += [("def", "<u2")] if has_def else []
    fields += [("buffers", size_type, (num_buffers,))] if num_buffers else []
    header = np.dtype(fields)
    short = first(sizes < header.itemsize)
    if short is not None:
        raise page.corrupt(f"chunk {short} of {sizes[short]} bytes is shorter than its header")
    records = ChunkBuffers(chunk_data, starts, sizes).leading(header)
    stored_sizes = [records[name] for name in ("rep", "def") if name in (header.names or ())]
    if num_buffers:
        stored_sizes += [records["buffers"][:, index] for index in range(num_buffers)]
    position = np.full(len(starts), _pad(header.itemsize), dtype=np.int64)
    pieces = []
    for stored in stored_sizes:
        size = stored.astype(np.int64)
        chunk = first(position + size > sizes)
        if chunk is not None:
            raise page.corrupt(
                f"chunk {chunk}: a buffer of {size[chunk]} bytes runs past the chunk ({sizes[chunk]} bytes)"
            )
        pieces.append(ChunkBuffers(chunk_data, starts + position, size))
        position = _pad(position + size)
    rep = pieces.pop(0) if has_rep else None
    definition = pieces.pop(0) if has_def else None
    return _Chunks(records["num_levels"].astype(np.int64), rep, definition, pieces)


def _pad(position):
    """``position`` (an int or an array) rounded up to the alignment."""
    return (position + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _dictionary(layout: enc.MiniBlockLayout, page: PageContext) -> DecodedValues:
    buffer = page.buffer(2, "the dictionary")
    count = layout.num_dictionary_items
    # Every dictionary item takes at least one bit of the buffer (a bound,
    # not a layout: it keeps the count from asking for more than is stored).
    if count > 8 * len(buffer) + 1:
        raise page.corrupt(f"a dictionary of {count} items in {len(buffer)} bytes")
    return decode_values(
        layout.dictionary,
        [buffer],
        count,
        where=f"{page.value_where} dictionary",
        budget=page.budget,
        context=ValueContext.BLOCK,
    )


def _check_repetition_index(
    layout: enc.MiniBlockLayout,
    page: PageContext,
    num_chunks: int,
    rep_levels: np.ndarray | None,
    num_levels: np.ndarray,
    layers: Sequence[int],
) -> None:
    index = page.buffer(len(page.buffers) - 1, "the repetition index")
    stride = layout.repetition_index_depth + 1
    if layout.repetition_index_depth > 16 or len(index) != 8 * stride * num_chunks:
        raise page.corrupt(
            f"a repetition index of {len(index)} bytes for {num_chunks} chunks of depth {layout.repetition_index_depth}"
        )
    entries = np.frombuffer(index, dtype="<u8").reshape(num_chunks, stride)
    rows = entries[:, 0]
    if num_chunks and int(rows.sum(dtype=np.uint64)) != page.num_rows:
        raise page.corrupt(f"the repetition index counts {int(rows.sum())} rows, the page has {page.num_rows}")
    if stride == 2 and rep_levels is not None and len(rep_levels) == int(num_levels.sum()):
        _check_index_against_levels(entries, page, rep_levels, num_levels, layers)


def _check_index_against_levels(
    entries: np.ndarray, page: PageContext, rep_levels: np.ndarray, num_levels: np.ndarray, layers: Sequence[int]
) -> None:
    """A depth-1 index against the chunks' repetition levels: per chunk,
    the rows whose last level is in it, then the levels after the last of
    them (a row that goes on in the next chunk). Readers schedule by these
    words, so one that disagrees with the levels loses or invents rows."""
    max_rep = sum(1 for layer in layers if layer in LIST_LAYERS)
    starts = np.asarray(rep_levels) == max_rep
    ends_row = np.ones(len(starts), bool)
    ends_row[:-1] = starts[1:]  # a row ends where the next starts, the last at the page's end
    chunk_ends = np.cumsum(num_levels)
    chunk_of = np.repeat(np.arange(len(num_levels)), num_levels)
    finished = np.bincount(chunk_of, weights=ends_row, minlength=len(num_levels)).astype(np.int64)
    positions = np.where(ends_row, np.arange(len(starts)), -1)
    last_end = np.full(len(num_levels), -1, np.int64)
    np.maximum.at(last_end, chunk_of, positions)
    chunk_starts = chunk_ends - num_levels
    after = np.where(last_end >= 0, chunk_ends - last_end - 1, chunk_ends - chunk_starts)
    stored = entries.astype(np.int64)
    bad = np.flatnonzero((stored[:, 0] != finished) | (stored[:, 1] != after))
    if len(bad):
        chunk = int(bad[0])
        raise page.corrupt(
            f"repetition index entry {chunk} is ({int(entries[chunk, 0])}, {int(entries[chunk, 1])}), but the "
            f"chunk's levels finish {int(finished[chunk])} rows and leave {int(after[chunk])} items over"
        )
