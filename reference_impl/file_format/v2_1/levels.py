"""Decoding stored repetition and definition levels (encoding.md,
"Repetition and Definition Levels"): whatever their compression, levels
decode to 16-bit values."""

from __future__ import annotations

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from .compression import ValueContext, decode_values
from .page import PageContext
from .values import FixedWidthValues


def decode_levels(
    page: PageContext, encoding: enc.CompressiveEncoding, buffer: memoryview, count: int, what: str
) -> np.ndarray:
    """``count`` levels as uint16."""
    values = decode_values(
        encoding, [buffer], count, where=page.value_where, budget=page.budget, context=ValueContext.BLOCK
    )
    if not isinstance(values, FixedWidthValues) or values.bits_per_value != 16:
        raise page.corrupt(f"{what} do not decode to 16-bit levels")
    return raw_levels(page, values.data, count, what)


def raw_levels(page: PageContext, data: np.ndarray | memoryview, count: int, what: str) -> np.ndarray:
    """``count`` little-endian u16 levels at the start of ``data``."""
    data = np.frombuffer(data, dtype=np.uint8) if isinstance(data, memoryview) else data
    if len(data) < 2 * count:
        raise page.corrupt(f"{count} {what} need {2 * count} bytes but {len(data)} are stored")
    return data[: 2 * count].view("<u2").astype(np.uint16, copy=False)
