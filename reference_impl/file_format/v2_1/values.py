"""Decoded value blocks: what a compressive encoding yields (encoding.md,
"Compression": data blocks).

A compressive encoding of a 2.1+ page (``CompressiveEncoding`` in
``protos/encodings_v2_1.proto``) turns stored buffers back into one of three
kinds of data block, and the structural layouts work on these only:

* :class:`FixedWidthValues`: ``num_values`` values of ``bits_per_value`` bits
  each, little endian, back to back (booleans are 1 bit per value, least
  significant bit first). A fixed-size list of fixed-width items is one value
  of ``dimension * item bits``; ``list_validity`` then carries, per level of
  fixed-size list (outermost first), the validity of that level's items (the
  ``has_validity`` buffers of the ``FixedSizeList`` encodings), or None for a
  level whose items are all valid.
* :class:`VariableWidthValues`: ``offsets`` (``num_values + 1`` of them, the
  first not necessarily 0) into ``data``.
* :class:`PackedStructValues`: the children of a 2.2 variable packed struct,
  one fixed- or variable-width block each.

:func:`concat_values` joins the blocks of several chunks of one page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FixedWidthValues:
    """``num_values`` values of ``bits_per_value`` bits each (little endian)."""

    data: np.ndarray  # uint8, at least ceil(num_values * bits_per_value / 8) bytes
    bits_per_value: int
    num_values: int
    # Per fixed-size-list level, outermost first: one flag per item of that
    # level (True: valid), or None when all are valid. Empty for plain values.
    list_validity: tuple[np.ndarray | None, ...] = ()

    @property
    def num_bytes(self) -> int:
        return (self.num_values * self.bits_per_value + 7) // 8


@dataclass(frozen=True)
class VariableWidthValues:
    """Variable-width values: value ``i`` is ``data[offsets[i]:offsets[i + 1]]``."""

    offsets: np.ndarray  # uint32 or uint64, num_values + 1
    data: np.ndarray  # uint8

    @property
    def num_values(self) -> int:
        return len(self.offsets) - 1


@dataclass(frozen=True)
class PackedStructValues:
    """The children of a variable packed struct (2.2), each already decoded
    by its own encoding, in struct order
    (:mod:`.compression.variable_packed_struct`)."""

    children: tuple[FixedWidthValues | VariableWidthValues, ...]
    num_values: int


DecodedValues = FixedWidthValues | VariableWidthValues | PackedStructValues


def empty_like(values: DecodedValues) -> DecodedValues:
    """No values, of the same kind and width as ``values``."""
    if isinstance(values, FixedWidthValues):
        return FixedWidthValues(np.zeros(0, np.uint8), values.bits_per_value, 0)
    if isinstance(values, PackedStructValues):
        return PackedStructValues(tuple(_empty_child(child) for child in values.children), 0)
    return VariableWidthValues(np.zeros(1, values.offsets.dtype), np.zeros(0, np.uint8))


def _empty_child(child: FixedWidthValues | VariableWidthValues) -> FixedWidthValues | VariableWidthValues:
    return _child(empty_like(child))


def _child(values: DecodedValues) -> FixedWidthValues | VariableWidthValues:
    if isinstance(values, PackedStructValues):
        raise ValueError("packed structs nested in packed structs")
    return values


def concat_values(blocks: Sequence[DecodedValues]) -> DecodedValues:
    """The values of ``blocks`` one after the other (all of one kind and width).

    Raises ``ValueError`` for blocks that do not fit together; callers turn
    that into an error naming the file.
    """
    if not blocks:
        raise ValueError("no value blocks to join")
    if len(blocks) == 1:
        return blocks[0]
    first = blocks[0]
    if isinstance(first, FixedWidthValues):
        fixed = [b for b in blocks if isinstance(b, FixedWidthValues)]
        if len(fixed) != len(blocks) or any(b.bits_per_value != first.bits_per_value for b in fixed):
            raise ValueError("chunks of one page decode to values of different widths")
        return _concat_fixed(fixed)
    if isinstance(first, PackedStructValues):
        packed = [b for b in blocks if isinstance(b, PackedStructValues)]
        if len(packed) != len(blocks) or any(len(b.children) != len(first.children) for b in packed):
            raise ValueError("pages of one packed struct decode to different children")
        children = tuple(
            _child(concat_values([b.children[index] for b in packed])) for index in range(len(first.children))
        )
        return PackedStructValues(children, sum(b.num_values for b in packed))
    variable = [b for b in blocks if isinstance(b, VariableWidthValues)]
    if len(variable) != len(blocks):
        raise ValueError("chunks of one page decode to values of different kinds")
    return _concat_variable(variable)


def _concat_fixed(blocks: list[FixedWidthValues]) -> FixedWidthValues:
    bits = blocks[0].bits_per_value
    total = sum(b.num_values for b in blocks)
    if bits % 8 == 0:
        data = np.concatenate([b.data[: b.num_bytes] for b in blocks])
    else:
        # Sub-byte widths (booleans): join at bit level.
        unpacked = [np.unpackbits(b.data, bitorder="little", count=b.num_values * bits) for b in blocks]
        data = np.packbits(np.concatenate(unpacked), bitorder="little")
    levels = max(len(b.list_validity) for b in blocks)
    validity: list[np.ndarray | None] = []
    for level in range(levels):
        parts = [b.list_validity[level] if level < len(b.list_validity) else None for b in blocks]
        if all(part is None for part in parts):
            validity.append(None)
            continue
        per_value = next(
            len(p) // b.num_values for p, b in zip(parts, blocks, strict=True) if p is not None and b.num_values
        )
        validity.append(
            np.concatenate(
                [
                    p if p is not None else np.ones(b.num_values * per_value, bool)
                    for p, b in zip(parts, blocks, strict=True)
                ]
            )
        )
    return FixedWidthValues(data, bits, total, tuple(validity))


def _concat_variable(blocks: list[VariableWidthValues]) -> VariableWidthValues:
    large = any(b.offsets.dtype == np.uint64 for b in blocks)
    dtype = np.uint64 if large else np.uint32
    pieces = [np.zeros(1, dtype)]
    datas = []
    base = 0
    for b in blocks:
        start, end = int(b.offsets[0]), int(b.offsets[-1])
        pieces.append((b.offsets[1:].astype(np.int64) - start + base).astype(dtype))
        datas.append(b.data[start:end])
        base += end - start
    if not large and base > np.iinfo(np.uint32).max:
        return _concat_variable([VariableWidthValues(b.offsets.astype(np.uint64), b.data) for b in blocks])
    return VariableWidthValues(np.concatenate(pieces), np.concatenate(datas) if datas else np.zeros(0, np.uint8))
