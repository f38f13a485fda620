"""``FixedSizeList``: fixed-size lists of fixed-width items flattened to
their items (encoding.md, "Fixed Size List"; ``FixedSizeList`` in
``protos/encodings_v2_1.proto``).

The items are decoded by the child encoding (``num_values *
items_per_value`` of them). With ``has_validity`` the items' validity comes
first: in a mini block chunk, a bitmap of one bit per item (least
significant bit first) in its own buffer, ahead of the child's buffers. In
a full zip page, and in a whole buffer of its own (the items of a 2.3
dictionary, pylance 14), each list is one value holding its own validity:
per level of fixed-size list that has validity (outermost first), the bits
of that level's items within the list, padded to whole bytes, then the
list's items. The result is one fixed-width value per list,
of ``items_per_value`` times the item width, carrying the item validity.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder
from .chunks import ChunkByChunk, ChunkCursor, first, gather_ranges, segment_starts
from .flat import MAX_BITS_PER_VALUE

# Largest dimension accepted; Arrow's fixed-size lists hold an int32 size.
MAX_DIMENSION = 2**31 - 1


def decode(node: enc.FixedSizeList, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    dimension = node.items_per_value
    if not 0 < dimension <= MAX_DIMENSION:
        raise decoder.corrupt(f"fixed-size lists of {dimension} items")
    if node.has_validity and decoder.context is ValueContext.FULL_ZIP:
        return _zipped_lists(node, buffers, num_values, decoder)
    if node.has_validity and decoder.context is ValueContext.BLOCK and buffers.remaining == 1:
        # One whole buffer (a 2.3 dictionary's items): the lists row by row,
        # each its item validity then its items, as in a full zip page.
        return _zipped_lists(node, buffers, num_values, decoder)
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


def _zipped_lists(node: enc.FixedSizeList, buffers: BufferCursor, num_values: int, decoder: ValueDecoder):
    """Lists of a full zip page, each its item validity and its items."""
    levels: list[tuple[int, bool]] = []  # (items of the level per list, has validity), outermost first
    per_list = 1
    current = node
    while True:
        if not 0 < current.items_per_value <= MAX_DIMENSION:
            raise decoder.corrupt(f"fixed-size lists of {current.items_per_value} items")
        per_list *= current.items_per_value
        levels.append((per_list, current.has_validity))
        inner = current.values
        if inner.WhichOneof("compression") != "fixed_size_list":
            break
        current = inner.fixed_size_list
    item_bits = _item_bits(inner, decoder)
    if per_list * item_bits > MAX_BITS_PER_VALUE:
        raise decoder.corrupt(f"fixed-size lists of {per_list} items of {item_bits} bits")
    validity_bytes = [(count + 7) // 8 if has else 0 for count, has in levels]
    row_bytes = sum(validity_bytes) + per_list * item_bits // 8
    data = buffers.take("zipped fixed-size lists")
    if len(data) < num_values * row_bytes:
        raise decoder.corrupt(
            f"{num_values} lists of {row_bytes} bytes need {num_values * row_bytes}, found {len(data)}"
        )
    rows = data[: num_values * row_bytes].reshape(num_values, row_bytes)
    validity: list[np.ndarray | None] = []
    position = 0
    for (count, has), size in zip(levels, validity_bytes, strict=True):
        if not has:
            validity.append(None)
            continue
        bits = np.unpackbits(rows[:, position : position + size], axis=1, bitorder="little")[:, :count]
        validity.append(bits.reshape(-1).astype(bool))
        position += size
    items = np.ascontiguousarray(rows[:, position:]).reshape(-1)
    return FixedWidthValues(items, per_list * item_bits, num_values, tuple(validity))


def _item_bits(inner: enc.CompressiveEncoding, decoder: ValueDecoder) -> int:
    """Bits of one item under zipped fixed-size lists: flat whole bytes, or
    0 for a constant without a value (items that are all null)."""
    kind = inner.WhichOneof("compression")
    if kind == "flat" and inner.flat.bits_per_value % 8 == 0 and not inner.flat.HasField("data"):
        if not 0 < inner.flat.bits_per_value <= MAX_BITS_PER_VALUE:
            raise decoder.corrupt(f"flat values of {inner.flat.bits_per_value} bits each")
        return inner.flat.bits_per_value
    if kind == "constant" and not inner.constant.HasField("value"):
        return 0
    raise decoder.unsupported(f"items encoded as {kind!r} inside a full zip page's fixed-size lists")


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
