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
reader checks that its row counts add up to the page's rows.

Dictionary: when the layout has one, the chunks' values are indices into
the page's dictionary, decoded once from buffer 2 (``num_dictionary_items``
values).
"""

from __future__ import annotations

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .compression import ValueContext, decode_values
from .levels import decode_levels
from .page import DecodedPage, PageContext, check_layers, count_visible
from .values import DecodedValues, concat_values

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
    size_type = word
    values: list[DecodedValues] = []
    reps: list[np.ndarray] = []
    defs: list[np.ndarray] = []
    start = 0
    for number, (end, items) in enumerate(zip(ends.tolist(), counts.tolist(), strict=True)):
        chunk = chunk_data[start:end]
        where = f"chunk {number}"
        rep, definition, buffers = _split_chunk(page, chunk, has_rep, has_def, layout.num_buffers, size_type, where)
        if rep is not None:
            reps.append(decode_levels(page, layout.rep_compression, rep[1], rep[0], f"{where} repetition levels"))
        if definition is not None:
            defs.append(
                decode_levels(page, layout.def_compression, definition[1], definition[0], f"{where} definition levels")
            )
        values.append(
            decode_values(
                layout.value_compression, buffers, items, where=f"{page.value_where} {where}", budget=page.budget
            )
        )
        start = end
    num_levels = sum(len(r) for r in reps) if has_rep else sum(len(d) for d in defs)
    rep_levels = np.concatenate(reps) if reps else (np.zeros(0, np.uint16) if has_rep else None)
    def_levels = np.concatenate(defs) if defs else (np.zeros(0, np.uint16) if has_def else None)
    num_items = num_levels if (has_rep or has_def) else int(counts.sum())
    num_visible = count_visible(layers, def_levels, num_items)
    if num_visible != int(counts.sum()):
        raise page.corrupt(f"the chunks hold {int(counts.sum())} values for {num_visible} visible items")
    dictionary = None
    if layout.HasField("dictionary"):
        dictionary = _dictionary(layout, page)
    if layout.repetition_index_depth > 0:
        _check_repetition_index(layout, page, len(words))
    try:
        joined = concat_values(values) if values else None
    except ValueError as exc:
        raise page.corrupt(str(exc)) from None
    return DecodedPage(layers, rep_levels, def_levels, num_items, joined, num_visible, dictionary)


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


def _split_chunk(page, chunk, has_rep, has_def, num_buffers, size_type, where):
    """(levels, buffer) for repetition and definition and the value buffers of a chunk."""
    header = 2 + 2 * has_rep + 2 * has_def + size_type.itemsize * num_buffers
    if len(chunk) < header:
        raise page.corrupt(f"{where} of {len(chunk)} bytes is shorter than its header")
    num_levels = int(chunk[:2].view("<u2")[0])
    position = 2
    level_sizes = []
    for _ in range(has_rep + has_def):
        level_sizes.append(int(chunk[position : position + 2].view("<u2")[0]))
        position += 2
    buffer_sizes = chunk[position : position + size_type.itemsize * num_buffers].view(size_type).tolist()
    position = _pad(header)
    pieces = []
    for size in level_sizes + buffer_sizes:
        if position + size > len(chunk):
            raise page.corrupt(f"{where}: a buffer of {size} bytes runs past the chunk ({len(chunk)} bytes)")
        pieces.append(memoryview(chunk[position : position + size]))
        position = _pad(position + size)
    rep = (num_levels, pieces.pop(0)) if has_rep else None
    definition = (num_levels, pieces.pop(0)) if has_def else None
    return rep, definition, pieces


def _pad(position: int) -> int:
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


def _check_repetition_index(layout: enc.MiniBlockLayout, page: PageContext, num_chunks: int) -> None:
    index = page.buffer(len(page.buffers) - 1, "the repetition index")
    stride = layout.repetition_index_depth + 1
    if layout.repetition_index_depth > 16 or len(index) != 8 * stride * num_chunks:
        raise page.corrupt(
            f"a repetition index of {len(index)} bytes for {num_chunks} chunks of depth {layout.repetition_index_depth}"
        )
    rows = np.frombuffer(index, dtype="<u8").reshape(num_chunks, stride)[:, 0]
    if num_chunks and int(rows.sum(dtype=np.uint64)) != page.num_rows:
        raise page.corrupt(f"the repetition index counts {int(rows.sum())} rows, the page has {page.num_rows}")
