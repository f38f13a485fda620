"""Full zip pages (encoding.md, "Full Zip Page Layout"; ``FullZipLayout``
in ``protos/encodings_v2_1.proto``).

Page buffer 0 zips, item by item, a control word (the repetition level in
the high bits above ``bits_def`` bits of definition level; 1, 2 or 4 bytes
little endian as ``bits_rep + bits_def`` fits 8, 16 or 32 bits; absent when
both are 0) and, for a visible item, its value: ``bits_per_value / 8``
bytes for fixed-width values; for variable-width values, a valid item's
length (``bits_per_offset / 8`` bytes) and bytes, a null item nothing more.
Buffer 1, the repetition index (a position per row), serves random access
and is not needed to read the whole page.

Values of zero bits: Lance 6.0 (the release the SQL engine's Lance extension
embeds) writes a fixed-size list of primitive items whose items are all null
with ``bits_per_value`` 0 and a bare ``Constant`` without a value as the value
compression, where the page's "Fixed Size List" section says the item validity
is zipped with the values (as pylance 14 writes it, under a ``FixedSizeList``
encoding) and the compression table marks ``Constant`` unused in the full zip
context. Each item is then its control word alone; the reader takes such values
as items that are all null (docs/spec-discrepancies.md, "File format 2.1 and
2.2", item 19).

Unzipping a page of fixed-width values without lists is one reshape of the
buffer. Otherwise each item's position depends on the ones before it, so the
reader walks the items one by one: this layout is chosen for large values
(256 bytes and more), so pages hold few items.
"""

from __future__ import annotations

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .compression import ValueContext, decode_values
from .page import LIST_LAYERS, DecodedPage, PageContext, check_layers, max_visible_level
from .values import DecodedValues

_WORD_TYPES: dict[int, np.dtype] = {1: np.dtype("u1"), 2: np.dtype("<u2"), 4: np.dtype("<u4")}
_LENGTH_TYPES = {8: "<u1", 16: "<u2", 32: "<u4", 64: "<u8"}


def control_word_bytes(bits: int) -> int:
    if bits == 0:
        return 0
    return 1 if bits <= 8 else 2 if bits <= 16 else 4


def decode(layout: enc.FullZipLayout, page: PageContext) -> DecodedPage:
    layers = check_layers(page, layout.layers)
    data = np.frombuffer(page.buffer(0, "the zipped values"), dtype=np.uint8)
    if layout.bits_rep > 16 or layout.bits_def > 16:
        raise page.corrupt(f"control words of {layout.bits_rep} repetition and {layout.bits_def} definition bits")
    word_bytes = control_word_bytes(layout.bits_rep + layout.bits_def)
    num_items = layout.num_items
    kind = layout.WhichOneof("details")
    if kind == "bits_per_value":
        if layout.bits_per_value == 0 and not _values_without_bytes(layout.value_compression):
            raise page.corrupt("full zip values of 0 bits under an encoding that stores values")
        if layout.bits_per_value % 8:
            raise page.corrupt(f"full zip values of {layout.bits_per_value} bits (not whole bytes)")
        width = layout.bits_per_value // 8
        variable = False
    elif kind == "bits_per_offset":
        if layout.bits_per_offset not in _LENGTH_TYPES:
            raise page.corrupt(f"full zip value lengths of {layout.bits_per_offset} bits")
        width = layout.bits_per_offset // 8
        variable = True
    else:
        raise page.corrupt("a full zip layout with neither bits per value nor bits per offset")
    _check_item_count(page, num_items, len(data), word_bytes, width, variable)
    limit = max_visible_level(layers)
    if not variable and layout.bits_rep == 0:
        rep, definition, unzipped = _fixed_without_lists(page, data, num_items, word_bytes, width, layout.bits_def)
    else:
        rep, definition, unzipped = _walk(page, layout, data, word_bytes, width, variable, limit)
    num_visible = num_items if definition is None or rep is None else int(np.count_nonzero(definition <= limit))
    if layout.num_visible_items and layout.num_visible_items != num_visible:
        raise page.corrupt(f"{num_visible} visible items, the layout says {layout.num_visible_items}")
    if len(page.buffers) > 1:
        sizes = _item_sizes(num_items, rep, definition, limit, word_bytes, width, variable, unzipped)
        _check_repetition_index(page, layers, rep, sizes)
    values: DecodedValues = decode_values(
        layout.value_compression,
        unzipped,
        num_visible,
        where=page.value_where,
        budget=page.budget,
        context=ValueContext.FULL_ZIP,
    )
    return DecodedPage(layers, rep, definition, num_items, values, num_visible)


def _values_without_bytes(encoding: enc.CompressiveEncoding) -> bool:
    """Whether the values are a ``Constant`` without a value: null items
    that take no bytes (the module docstring says who writes them)."""
    return encoding.WhichOneof("compression") == "constant" and not encoding.constant.HasField("value")


def _check_item_count(
    page: PageContext, num_items: int, size: int, word_bytes: int, width: int, variable: bool
) -> None:
    """Refuse an item count the buffer cannot hold, before anything is
    allocated for it: every item takes at least its control word; without
    control words (so no lists either) every item is a value of at least one
    byte, or, for values of zero bytes, a row of the page."""
    if num_items == 0:
        return
    if word_bytes:
        fits = size // word_bytes
    elif variable or width:
        fits = size + 1
    else:
        fits = page.num_rows
    if num_items > fits:
        raise page.corrupt(f"{num_items} items cannot fit in {size} bytes")


def _check_word_bits(page: PageContext, words: np.ndarray, bits: int) -> None:
    """A control word holds its repetition and definition bits and nothing
    above them: a set bit there is a level no layer defines (pylance reads
    it as one and fails)."""
    stray = words.astype(np.uint32) >> np.uint32(bits)
    if len(stray) and stray.any():
        item = int(np.flatnonzero(stray)[0])
        raise page.corrupt(f"item {item}'s control word {int(words[item]):#x} has bits set above its {bits} level bits")


def _split_word(words: np.ndarray, bits_rep: int, bits_def: int):
    words = words.astype(np.uint32)
    rep = (words >> bits_def).astype(np.uint16) if bits_rep else None
    definition = (words & ((1 << bits_def) - 1)).astype(np.uint16) if bits_def else None
    return rep, definition


def _fixed_without_lists(
    page: PageContext, data: np.ndarray, num_items: int, word_bytes: int, width: int, bits_def: int
) -> tuple[np.ndarray | None, np.ndarray | None, list[memoryview]]:
    stride = word_bytes + width
    if len(data) < stride * num_items:
        raise page.corrupt(f"{num_items} items of {stride} bytes need {stride * num_items} bytes, found {len(data)}")
    rows = data[: stride * num_items].reshape(num_items, stride)
    definition = None
    if word_bytes:
        words = np.ascontiguousarray(rows[:, :word_bytes]).view(_WORD_TYPES[word_bytes]).reshape(-1)
        _check_word_bits(page, words, bits_def)
        _, definition = _split_word(words, 0, bits_def)
    values = np.ascontiguousarray(rows[:, word_bytes:]).reshape(-1)
    return None, definition, [values.data]


def _walk(
    page: PageContext,
    layout: enc.FullZipLayout,
    data: np.ndarray,
    word_bytes: int,
    width: int,
    variable: bool,
    limit: int,
) -> tuple[np.ndarray | None, np.ndarray | None, list[memoryview]]:
    """Unzip item by item: control words, then visible values."""
    num_items = layout.num_items
    words = np.zeros(num_items, dtype=np.uint32)
    starts: list[int] = []
    lengths: list[int] = []
    position = 0
    size = len(data)
    raw = data.tobytes()
    for item in range(num_items):
        if word_bytes:
            if position + word_bytes > size:
                raise page.corrupt(f"item {item}'s control word runs past the page")
            word = int.from_bytes(raw[position : position + word_bytes], "little")
            words[item] = word
            position += word_bytes
            definition = word & ((1 << layout.bits_def) - 1)
        else:
            definition = 0
        if definition > limit:
            continue  # an empty or null list: no value slot
        if not variable:
            if position + width > size:
                raise page.corrupt(f"item {item}'s value runs past the page")
            starts.append(position)
            lengths.append(width)
            position += width
            continue
        if definition != 0:
            starts.append(position)
            lengths.append(0)
            continue
        if position + width > size:
            raise page.corrupt(f"item {item}'s length runs past the page")
        length = int.from_bytes(raw[position : position + width], "little")
        position += width
        if length > size - position:
            raise page.corrupt(f"item {item}'s value of {length} bytes runs past the page")
        starts.append(position)
        lengths.append(length)
        position += length
    if word_bytes:
        _check_word_bits(page, words, layout.bits_rep + layout.bits_def)
    rep, definition_levels = _split_word(words, layout.bits_rep, layout.bits_def)
    start_array = np.array(starts, dtype=np.int64)
    length_array = np.array(lengths, dtype=np.int64)
    offsets = np.zeros(len(starts) + 1, dtype=np.uint64)
    np.cumsum(length_array, out=offsets[1:])
    gather = _ranges(start_array, length_array)
    values = data[gather]
    if variable:
        return rep, definition_levels, [offsets.astype("<u8").data, values.data]
    return rep, definition_levels, [values.data]


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The byte positions of the ranges ``[start, start + length)``, in order."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    shift = np.repeat(starts - (ends - lengths), lengths)
    return np.arange(total, dtype=np.int64) + shift


def _item_sizes(
    num_items: int,
    rep: np.ndarray | None,
    definition: np.ndarray | None,
    limit: int,
    word_bytes: int,
    width: int,
    variable: bool,
    unzipped: list[memoryview],
) -> np.ndarray:
    """The bytes each item takes in the zipped buffer: its control word, and
    for a visible item its value (a fixed width; for variable-width values,
    a valid item's length and bytes, a null item nothing more)."""
    sizes = np.full(num_items, word_bytes, dtype=np.int64)
    visible = np.ones(num_items, dtype=bool) if definition is None or rep is None else definition <= limit
    if not variable:
        sizes[visible] += width
        return sizes
    shown = np.flatnonzero(visible)
    lengths = np.diff(np.frombuffer(unzipped[0], dtype="<u8").astype(np.int64))
    valid = np.ones(len(shown), dtype=bool) if definition is None else definition[shown] == 0
    sizes[shown[valid]] += width + lengths[valid]
    return sizes


def _check_repetition_index(page: PageContext, layers, rep: np.ndarray | None, sizes: np.ndarray) -> None:
    """Buffer 1, the repetition index, holds where each row starts in the
    zipped buffer and where the last one ends (encoding.md, "Full Zip Page
    Layout"): readers that scan a page by its rows follow it, so an entry
    that does not name a row's start is damage even where this reader,
    which walks the items, would not need it. The entries are unsigned
    integers of the width that divides the buffer into rows + 1 of them
    (pylance picks the narrowest that holds the buffer's size)."""
    index = np.frombuffer(page.buffers[1], dtype=np.uint8)
    entries = page.num_rows + 1
    width = len(index) // entries if len(index) % entries == 0 else 0
    if width not in (1, 2, 4, 8):
        raise page.corrupt(f"a repetition index of {len(index)} bytes for {page.num_rows} rows")
    stored = index.view(f"<u{width}").astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    if rep is not None:
        max_rep = sum(1 for layer in layers if layer in LIST_LAYERS)
        starts = np.concatenate((starts[:-1][rep == max_rep], starts[-1:]))
    if len(starts) != entries:
        raise page.corrupt(f"the items hold {len(starts) - 1} rows, the page {page.num_rows}")
    wrong = np.flatnonzero(stored != starts)
    if len(wrong):
        row = int(wrong[0])
        raise page.corrupt(
            f"repetition index entry {row} is {int(stored[row])}, but row {row} starts at byte {int(starts[row])}"
        )
