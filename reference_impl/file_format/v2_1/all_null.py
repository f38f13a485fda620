"""Constant and all-null pages (encoding.md, "Constant Page Layout";
``ConstantLayout`` in ``protos/encodings_v2_1.proto``, named
``AllNullLayout`` by 2.1 writers, which only set its ``layers``).

Every visible item of the page is null, or (2.2, ``inline_value`` set) has
the one fixed-width value given inline, or (a value too wide to be inline,
such as a string) the value kept in page buffer 0. When the page has levels
they are the next two page buffers (repetition, then definition): raw
little-endian u16 values unless the layout names their compression; either
may be empty. A page without buffers has one item per row and no levels.

An inline value is the Arrow value buffer of a one-value array: for a
boolean one byte whose bit 0 is the value. This module repeats its bytes and
records it on the page; :mod:`.columns` turns a boolean field's into bits.
"""

from __future__ import annotations

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .levels import decode_levels, raw_levels
from .page import DecodedPage, PageContext, check_layers, count_visible
from .values import DecodedValues, FixedWidthValues, VariableWidthValues

# Longest inline value the layout allows.
MAX_INLINE_BYTES = 32
# Most items a page may claim without stored levels: one per row, and rows
# that no buffer backs are capped like the 2.0 reader's nulls.
MAX_UNBACKED_ITEMS = 2**30


def decode(layout: enc.ConstantLayout, page: PageContext) -> DecodedPage:
    layers = check_layers(page, layout.layers)
    # A scalar too wide to be inline (a string) is page buffer 0; the level
    # buffers, when there are any, come in pairs after it.
    has_scalar_buffer = not layout.HasField("inline_value") and len(page.buffers) % 2 == 1
    first_level = 1 if has_scalar_buffer else 0
    rep = _levels(page, layout, first_level, "rep_compression", layout.num_rep_values, "repetition levels")
    definition = _levels(page, layout, first_level + 1, "def_compression", layout.num_def_values, "definition levels")
    if rep is not None and definition is not None and len(rep) != len(definition):
        raise page.corrupt(f"{len(rep)} repetition levels but {len(definition)} definition levels")
    stored = rep if rep is not None else definition
    num_items = len(stored) if stored is not None else page.num_rows
    if num_items > MAX_UNBACKED_ITEMS:
        raise page.corrupt(f"{num_items} items, more than the {MAX_UNBACKED_ITEMS} this reader creates")
    num_visible = count_visible(layers, definition, num_items)
    values: DecodedValues | None = None
    if layout.HasField("inline_value"):
        value = np.frombuffer(layout.inline_value, dtype=np.uint8)
        if not 0 < len(value) <= MAX_INLINE_BYTES:
            raise page.corrupt(f"an inline value of {len(value)} bytes")
        values = FixedWidthValues(np.tile(value, num_visible), 8 * len(value), num_visible)
    elif has_scalar_buffer:
        values = _scalar_from_buffer(page, page.buffers[0], num_visible)
    if values is None and stored is None and layers[0] == enc.REPDEF_NULLABLE_ITEM:
        # No value and no levels: every item is null at the innermost layer
        # (level 1). Without it the items' own validity says valid, and a
        # fixed-size list joined with pages that have values reads as a
        # list of null items instead of a null list.
        definition = np.ones(num_items, dtype=np.uint16)
    inline = bytes(layout.inline_value) if layout.HasField("inline_value") else None
    return DecodedPage(layers, rep, definition, num_items, values, num_visible, inline_value=inline)


def _scalar_from_buffer(page: PageContext, buffer: memoryview, count: int) -> DecodedValues:
    """``count`` copies of the scalar a constant page keeps in a buffer.

    pylance stores the Arrow buffers of a one-value array: a u32 count of
    buffers, then each buffer's length as a u32, then the buffers' bytes one
    after the other. A fixed-width value has one buffer (its bytes); a string
    or binary value two: its Arrow offsets (two of 32 bits, or of 64 bits for
    the large types) and its bytes. The prose says nothing of this frame
    (docs/spec-discrepancies.md).
    """
    data = np.frombuffer(buffer, dtype=np.uint8)
    if len(data) < 4:
        raise page.corrupt("a constant page's scalar buffer has no header")
    declared = int(data[:4].view("<u4")[0])
    # The frame is checked before the count is judged: a count whose sizes
    # do not fit the buffer is damage, not a scalar of a kind unknown here.
    position = 4 + 4 * declared
    if position > len(data):
        raise page.corrupt("a constant page's scalar buffer is cut short")
    sizes = data[4:position].view("<u4").astype(np.int64)
    if int(sizes.sum()) != len(data) - position:
        raise page.corrupt(
            f"a constant scalar of {int(sizes.sum())} bytes in parts, {len(data) - position} stored after its header"
        )
    if declared not in (1, 2):
        raise page.unsupported(f"a constant scalar of {declared} buffers")
    parts = []
    for size in sizes.tolist():
        parts.append(data[position : position + size])
        position += size
    if count > MAX_UNBACKED_ITEMS:
        raise page.corrupt(f"{count} copies of a constant, more than the {MAX_UNBACKED_ITEMS} this reader creates")
    if declared == 1:
        value = parts[0]
        if not len(value):
            raise page.corrupt("an empty fixed-width constant")
        return FixedWidthValues(np.tile(value, count), 8 * len(value), count)
    offsets, value = parts
    if len(offsets) not in (8, 16):
        raise page.corrupt(f"a variable-width constant with {len(offsets)} bytes of offsets (8 or 16 expected)")
    start, end = (int(o) for o in offsets.view("<i4" if len(offsets) == 8 else "<i8"))
    if not 0 <= start <= end <= len(value):
        raise page.corrupt(f"a variable-width constant's offsets {start}..{end} are outside its {len(value)} bytes")
    value = value[start:end]
    if len(value) * count > MAX_UNBACKED_ITEMS:
        raise page.corrupt(f"{count} copies of a {len(value)}-byte constant are too large")
    offsets = np.arange(count + 1, dtype=np.uint64) * np.uint64(len(value))
    return VariableWidthValues(offsets, np.tile(value, count))


def _levels(page: PageContext, layout, index: int, field: str, declared: int, what: str):
    if index >= len(page.buffers):
        return None
    buffer = page.buffers[index]
    if layout.HasField(field):
        if declared > MAX_UNBACKED_ITEMS:
            raise page.corrupt(f"{declared} {what}, more than the {MAX_UNBACKED_ITEMS} this reader creates")
        return decode_levels(page, getattr(layout, field), buffer, declared, what)
    if len(buffer) == 0:
        return None
    if len(buffer) % 2:
        raise page.corrupt(f"{what} of {len(buffer)} bytes are not whole u16 values")
    count = declared or len(buffer) // 2
    return raw_levels(page, buffer, count, what)
