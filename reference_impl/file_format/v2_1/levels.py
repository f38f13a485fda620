"""Decoding stored repetition and definition levels (encoding.md,
"Repetition and Definition Levels"): whatever their compression, levels
decode to 16-bit values."""

from __future__ import annotations

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .compression import ChunkBuffers, ValueContext, decode_chunk_values, decode_values
from .page import PageContext
from .values import DecodedValues, FixedWidthValues


def decode_levels(
    page: PageContext, encoding: enc.CompressiveEncoding, buffer: memoryview, count: int, what: str
) -> np.ndarray:
    """``count`` levels as uint16."""
    values = decode_values(
        encoding, [buffer], count, where=page.value_where, budget=page.budget, context=ValueContext.BLOCK
    )
    return raw_levels(page, _sixteen_bit(page, values, what).data, count, what)


def decode_chunk_levels(
    page: PageContext, encoding: enc.CompressiveEncoding, chunks: ChunkBuffers, counts: np.ndarray, what: str
) -> np.ndarray:
    """The levels of every mini block chunk (``counts[k]`` in chunk ``k``) as
    uint16; each chunk's levels are a block of their own."""
    if len(chunks) == 0:
        return np.zeros(0, np.uint16)
    try:
        values = decode_chunk_values(
            encoding, [chunks], counts, where=page.value_where, budget=page.budget, context=ValueContext.BLOCK
        )
    except ValueError:
        raise page.corrupt(f"{what} do not decode to 16-bit levels") from None
    levels = _sixteen_bit(page, values, what)
    return raw_levels(page, levels.data, levels.num_values, what)


def _sixteen_bit(page: PageContext, values: DecodedValues, what: str) -> FixedWidthValues:
    """``values``, which must be 16-bit fixed-width values to be levels."""
    if not isinstance(values, FixedWidthValues) or values.bits_per_value != 16:
        raise page.corrupt(f"{what} do not decode to 16-bit levels")
    return values


def raw_levels(page: PageContext, data: np.ndarray | memoryview, count: int, what: str) -> np.ndarray:
    """``count`` little-endian u16 levels at the start of ``data``."""
    data = np.frombuffer(data, dtype=np.uint8) if isinstance(data, memoryview) else data
    if len(data) < 2 * count:
        raise page.corrupt(f"{count} {what} need {2 * count} bytes but {len(data)} are stored")
    return data[: 2 * count].view("<u2").astype(np.uint16, copy=False)
