"""``PackedStruct``: a struct of fixed-width children stored row by row
(encoding.md, "Struct Packing"; ``PackedStruct`` in
``protos/encodings_v2_1.proto``).

The child encoding decodes one fixed-width value per row whose width is the
sum of the children's ``bits_per_value``; the children's values lie in each
row one after the other, in struct order. The result stays one row-wide
fixed-width block: splitting it into the children is Arrow assembly
(:mod:`..columns`). The chunks of a mini block page are decoded together by
:func:`decode_chunks`.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues, FixedWidthValues
from .base import BufferCursor, ValueDecoder
from .chunks import ChunkByChunk, ChunkCursor


def decode(node: enc.PackedStruct, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    widths = list(node.bits_per_value)
    if not _whole_bytes(widths):
        raise decoder.unsupported(f"packed struct children of {widths} bits (only whole bytes are supported)")
    return _checked_rows(decoder.decode(node.values, buffers, num_values), widths, decoder)


def decode_chunks(
    node: enc.PackedStruct, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder
) -> FixedWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`)."""
    widths = list(node.bits_per_value)
    if not _whole_bytes(widths):
        raise ChunkByChunk("packed_struct")
    return _checked_rows(decoder.decode_chunks(node.values, buffers, counts), widths, decoder)


def _whole_bytes(widths: list[int]) -> bool:
    """Whether there are children and each is a whole number of bytes wide
    (the only packed structs this reader decodes)."""
    return bool(widths) and all(width != 0 and width % 8 == 0 for width in widths)


def _checked_rows(rows: DecodedValues, widths: list[int], decoder: ValueDecoder) -> FixedWidthValues:
    """The rows the child encoding decoded, checked to be as wide as the
    children together."""
    if not isinstance(rows, FixedWidthValues) or rows.bits_per_value != sum(widths):
        raise decoder.corrupt(f"packed struct rows do not decode to {sum(widths)}-bit values")
    return rows


def child_widths(node: enc.PackedStruct) -> list[int]:
    """Bytes of each child in a packed row."""
    return [width // 8 for width in node.bits_per_value]
