"""Constant and all-null pages (encoding.md, "Constant Page Layout";
``ConstantLayout`` in ``protos/encodings_v2_1.proto``, named
``AllNullLayout`` by 2.1 writers, which only set its ``layers``).

Every visible item of the page is null, or (2.2, ``inline_value`` set) has
the one fixed-width value given inline. When the page has levels they are
page buffers 0 (repetition) and 1 (definition): raw little-endian u16
values unless the layout names their compression; either may be empty. A
page without buffers has one item per row and no levels.
"""

from __future__ import annotations

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .levels import decode_levels, raw_levels
from .page import DecodedPage, PageContext, check_layers, count_visible
from .values import FixedWidthValues

# Longest inline value the layout allows.
MAX_INLINE_BYTES = 32
# Most items a page may claim without stored levels: one per row, and rows
# that no buffer backs are capped like the 2.0 reader's nulls.
MAX_UNBACKED_ITEMS = 2**30


def decode(layout: enc.ConstantLayout, page: PageContext) -> DecodedPage:
    layers = check_layers(page, layout.layers)
    rep = _levels(page, layout, 0, "rep_compression", layout.num_rep_values, "repetition levels")
    definition = _levels(page, layout, 1, "def_compression", layout.num_def_values, "definition levels")
    if rep is not None and definition is not None and len(rep) != len(definition):
        raise page.corrupt(f"{len(rep)} repetition levels but {len(definition)} definition levels")
    stored = rep if rep is not None else definition
    num_items = len(stored) if stored is not None else page.num_rows
    if num_items > MAX_UNBACKED_ITEMS:
        raise page.corrupt(f"{num_items} items, more than the {MAX_UNBACKED_ITEMS} this reader creates")
    num_visible = count_visible(layers, definition, num_items)
    values = None
    if layout.HasField("inline_value"):
        value = np.frombuffer(layout.inline_value, dtype=np.uint8)
        if not 0 < len(value) <= MAX_INLINE_BYTES:
            raise page.corrupt(f"an inline value of {len(value)} bytes")
        values = FixedWidthValues(np.tile(value, num_visible), 8 * len(value), num_visible)
    return DecodedPage(layers, rep, definition, num_items, values, num_visible)


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
