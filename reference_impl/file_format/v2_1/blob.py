"""Blob pages (encoding.md, "Blob Page Layout"; ``BlobLayout`` in
``protos/encodings_v2_1.proto``).

The page holds one description per item, laid out by the inner layout as a
packed struct of two u64: the position of the value in the file and its
size. Size 0 with position 0 is an empty value; size 0 with another position
is a null whose definition level is that position. The levels so recovered
are interpreted with the blob layout's own ``layers``.

Every value must lie inside the file, and the values of a page may not add
up to more bytes than the file holds, so nothing is allocated from an
unchecked size (as for 2.0 blob columns).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .page import LIST_LAYERS, DecodedPage, PageContext, check_layers
from .values import FixedWidthValues, VariableWidthValues

DESCRIPTION_BITS = 128


def decode(
    layout: enc.BlobLayout, page: PageContext, decode_page: Callable[[enc.PageLayout, PageContext], DecodedPage]
) -> DecodedPage:
    layers = check_layers(page, layout.layers)
    if any(layer in LIST_LAYERS for layer in layers):
        raise page.unsupported("blob values inside lists are not supported")
    if layout.inner_layout.WhichOneof("layout") == "blob_layout":
        raise page.corrupt("a blob layout inside a blob layout")
    inner = decode_page(layout.inner_layout, page)
    descriptions = inner.values
    if (
        not isinstance(descriptions, FixedWidthValues)
        or descriptions.bits_per_value != DESCRIPTION_BITS
        or inner.rep is not None
        or inner.definition is not None
    ):
        raise page.corrupt("blob descriptions are not plain (position, size) pairs of u64")
    count = descriptions.num_values
    rows = descriptions.data[: count * 16].view("<u8").reshape(count, 2)
    positions, sizes = rows[:, 0], rows[:, 1]
    null = (sizes == 0) & (positions != 0)
    # pylance puts a null's repetition level in the low 16 bits of the
    # position and its definition level in the next 16 (the prose says the
    # position is the definition level; docs/spec-discrepancies.md).
    levels = np.where(null, positions, 0)
    max_level = sum(1 for layer in layers if layer == enc.REPDEF_NULLABLE_ITEM)
    if np.any((levels & np.uint64(0xFFFF)) != 0) or np.any((levels >> np.uint64(16)) > max_level):
        raise page.corrupt(f"a null blob whose levels are not a definition level up to {max_level}")
    definition = (levels >> np.uint64(16)).astype(np.uint16) if null.any() else None
    file_size = page.file_size
    stored = sizes != 0
    outside = stored & ((sizes > file_size) | (positions > file_size - np.minimum(sizes, file_size)))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise page.corrupt(
            f"blob value of item {row} at {int(positions[row])} (+{int(sizes[row])}) is outside the file"
        )
    if float(sizes.sum(dtype=np.float64)) > file_size or int(sizes.sum(dtype=np.uint64)) > file_size:
        raise page.corrupt(f"blob values add up to more bytes than the file holds ({file_size})")
    offsets = np.zeros(count + 1, dtype=np.uint64)
    np.cumsum(sizes, out=offsets[1:])
    data = b"".join(page.read(int(p), int(s)) for p, s in zip(positions[stored], sizes[stored], strict=True))
    values = VariableWidthValues(offsets, np.frombuffer(data, dtype=np.uint8))
    return DecodedPage(layers, None, definition, count, values, count)
