"""Bitmaps as Lance v2.0 stores them: 1 bit per value, least significant bit
first, no offset (the same bit order as Arrow validity and boolean buffers).

Arrow arrays may start at any bit of their buffers (slices); Lance pages
always start at bit 0, so slices that do not start on a byte boundary are
re-packed. All work is done with numpy on whole buffers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def num_bytes(num_bits: int) -> int:
    return (num_bits + 7) // 8


def pack_bits(buffer: pa.Buffer | None, bit_offset: int, num_bits: int, *, default: bool = True) -> bytes:
    """``num_bits`` bits of ``buffer`` from ``bit_offset``, re-based to bit 0.

    Bits past the end of the last byte are cleared so the output depends only
    on the bits it represents. A missing buffer stands for all bits set to
    ``default`` (Arrow omits the validity buffer when nothing is null).
    """
    size = num_bytes(num_bits)
    if buffer is None:
        return pack_mask(np.full(num_bits, default, dtype=bool))
    if bit_offset % 8 == 0:
        start = bit_offset // 8
        packed = bytearray(memoryview(buffer)[start : start + size])
    else:
        raw = np.frombuffer(buffer, dtype=np.uint8, count=num_bytes(bit_offset + num_bits))
        bits = np.unpackbits(raw, bitorder="little")[bit_offset : bit_offset + num_bits]
        packed = bytearray(np.packbits(bits, bitorder="little").tobytes())
    spare_bits = size * 8 - num_bits
    if spare_bits:
        packed[-1] &= 0xFF >> spare_bits
    return bytes(packed)


def pack_mask(mask: np.ndarray) -> bytes:
    """A numpy bool array as a bitmap."""
    return np.packbits(mask.astype(bool, copy=False), bitorder="little").tobytes()


def unpack_mask(buffer, num_bits: int) -> np.ndarray:
    """The first ``num_bits`` bits of a bitmap as a numpy bool array."""
    raw = np.frombuffer(buffer, dtype=np.uint8, count=num_bytes(num_bits))
    return np.unpackbits(raw, bitorder="little", count=num_bits).astype(bool)


def validity_bitmap(array: pa.Array) -> bytes:
    """The validity of ``array`` as a bitmap starting at bit 0."""
    return pack_bits(array.buffers()[0], array.offset, len(array))


def validity_mask(array: pa.Array) -> np.ndarray:
    """The validity of ``array`` as a numpy bool array (True where valid)."""
    buffer = array.buffers()[0]
    if buffer is None or array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    raw = np.frombuffer(buffer, dtype=np.uint8, count=num_bytes(array.offset + len(array)))
    return np.unpackbits(raw, bitorder="little", count=array.offset + len(array))[array.offset :].astype(bool)


def and_bitmaps(first: pa.Buffer | bytes | None, second: pa.Buffer | bytes | None, num_bits: int):
    """The bitwise AND of two validity bitmaps (``None`` means all valid)."""
    if first is None:
        return second
    if second is None:
        return first
    size = num_bytes(num_bits)
    left = np.frombuffer(first, dtype=np.uint8, count=size)
    right = np.frombuffer(second, dtype=np.uint8, count=size)
    return pa.py_buffer(np.bitwise_and(left, right).tobytes())
