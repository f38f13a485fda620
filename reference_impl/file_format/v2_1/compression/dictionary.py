"""``Dictionary`` as a compressive encoding of a whole page buffer (block
context; upstream ``protos/encodings_v2_1.proto``, ``Dictionary``: "indices
into the dictionary" and "the dictionary items"). pylance 14 writes it in
2.3 files for the sequences of sparse pages (:mod:`..sparse`); dictionaries
of mini block pages are the layout's, not this encoding.

The buffer is framed as pylance writes it (the prose is silent): the size
in bytes of the stored indices (u64), the size of the stored items (u64),
the indices' stored bytes, the items' stored bytes. Each part is the one
buffer of its child encoding (none for a ``Range`` of items). The
``num_dictionary_items`` items are fixed width; value ``i`` is item
``indices[i]``.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder

HEADER_BYTES = 16


def decode(node: enc.Dictionary, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    if decoder.context is not ValueContext.BLOCK:
        raise decoder.unsupported(
            f"compressive encoding 'dictionary' is not supported in the {decoder.context.value} context"
        )
    block = buffers.take("dictionary block")
    if len(block) < HEADER_BYTES:
        raise decoder.corrupt(f"a dictionary block of {len(block)} bytes has no header")
    index_bytes, item_bytes = (int(size) for size in block[:HEADER_BYTES].view("<u8"))
    if HEADER_BYTES + index_bytes + item_bytes != len(block):
        raise decoder.corrupt(f"a dictionary block of {len(block)} bytes says {index_bytes} + {item_bytes} stored")
    indices_part = block[HEADER_BYTES : HEADER_BYTES + index_bytes]
    items_part = block[HEADER_BYTES + index_bytes :]
    items = decoder.decode(node.items, BufferCursor([items_part.data], decoder), node.num_dictionary_items)
    indices = decoder.decode(node.indices, BufferCursor([indices_part.data], decoder), num_values)
    if not isinstance(items, FixedWidthValues) or items.bits_per_value % 8 or items.list_validity:
        raise decoder.unsupported("dictionary items that are not fixed-width whole bytes")
    if not isinstance(indices, FixedWidthValues) or indices.bits_per_value not in (8, 16, 32, 64):
        raise decoder.corrupt("dictionary indices are not 8, 16, 32 or 64-bit integers")
    positions = indices.data[: indices.num_bytes].view(f"<u{indices.bits_per_value // 8}").astype(np.int64)
    if num_values and int(positions.max()) >= node.num_dictionary_items:
        raise decoder.corrupt(f"dictionary index {int(positions.max())} is past the {node.num_dictionary_items} items")
    width = items.bits_per_value // 8
    rows = items.data[: node.num_dictionary_items * width].reshape(-1, width)
    return FixedWidthValues(rows[positions].reshape(-1), items.bits_per_value, num_values)
