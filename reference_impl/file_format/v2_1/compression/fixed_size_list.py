"""``FixedSizeList``: fixed-size lists of fixed-width items flattened to
their items (encoding.md, "Fixed Size List"; ``FixedSizeList`` in
``protos/encodings_v2_1.proto``).

The items are decoded by the child encoding (``num_values *
items_per_value`` of them). With ``has_validity`` the items' validity comes
first: a bitmap of one bit per item (least significant bit first) in its own
buffer, ahead of the child's buffers. The result is one fixed-width value per
list, of ``items_per_value`` times the item width, carrying the item
validity.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueDecoder
from .chunks import ChunkByChunk, ChunkCursor, first, gather_ranges, segment_starts

# Largest dimension accepted; Arrow's fixed-size lists hold an int32 size.
MAX_DIMENSION = 2**31 - 1


def decode(node: enc.FixedSizeList, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    dimension = node.items_per_value
    if not 0 < dimension <= MAX_DIMENSION:
        raise decoder.corrupt(f"fixed-size lists of {dimension} items")
    num_items = num_values * dimension
    validity = None
    if node.has_validity:
        bitmap = buffers.take("fixed-size list item validity")
        if len(bitmap) * 8 < num_items:
            raise decoder.corrupt(
                f"{num_items} items need {(num_items + 7) // 8} bytes of validity, found {len(bitmap)}"
            )
        validity = np.unpackbits(bitmap, bitorder="little", count=num_items).astype(bool)
    items = decoder.decode(node.values, buffers, num_items)
    if not isinstance(items, FixedWidthValues):
        raise decoder.unsupported("fixed-size lists of variable-width items are not supported")
    # Nested lists: this level's validity comes before the inner levels'.
    return FixedWidthValues(items.data, items.bits_per_value * dimension, num_values, (validity, *items.list_validity))


def decode_chunks(
    node: enc.FixedSizeList, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder
) -> FixedWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`); each
    chunk's validity bitmap starts at a byte, so the bits past its items are
    dropped before the chunks' bits are joined."""
    dimension = node.items_per_value
    if not 0 < dimension <= MAX_DIMENSION:
        raise ChunkByChunk("fixed_size_list")
    num_items = counts * dimension
    validity = None
    if node.has_validity:
        bitmaps = buffers.take("fixed-size list item validity")
        needed = (num_items + 7) // 8
        short = first(bitmaps.sizes < needed)
        if short is not None:
            raise decoder.corrupt_chunk(
                short,
                f"{num_items[short]} items need {needed[short]} bytes of validity, found {bitmaps.sizes[short]}",
            )
        bits = np.unpackbits(bitmaps.part(0, needed).joined(), bitorder="little")
        validity = gather_ranges(bits, 8 * segment_starts(needed), num_items).astype(bool)
    items = decoder.decode_chunks(node.values, buffers, num_items)
    if not isinstance(items, FixedWidthValues):
        raise decoder.unsupported("fixed-size lists of variable-width items are not supported")
    return FixedWidthValues(
        items.data, items.bits_per_value * dimension, int(counts.sum()), (validity, *items.list_validity)
    )
