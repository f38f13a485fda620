"""``VariablePackedStruct``: a 2.2 packed struct whose children may be
variable width, stored row by row (encoding.md, "Struct Packing";
``VariablePackedStruct`` in ``protos/encodings_v2_1.proto``).

pylance writes it as the values of a full zip page: each row is one
variable-width value holding the struct's children one after the other, in
struct order. The prose leaves a row's bytes to the code
(``rust/lance-encoding/src/encodings/physical/packed.rs``): a child with
``bits_per_value`` takes that many bits (whole bytes); a child with
``bits_per_length`` takes a little-endian length of that many bits (32 or
64) and then that many bytes. Every row must be used up exactly. Each
child's values, gathered from all rows, are then decoded by the child's own
encoding as full zip values (fixed-width values in one buffer; variable-width
values as u64 offsets and bytes). A null item of the full zip page has an
empty row (no bytes at all): its children get placeholder values, zero bytes
and empty values, which the item's validity hides (pylance 14 writes blob v2
descriptors so, a null blob being a null row).

The rows are parsed child by child over all rows at once, so the work is a
few numpy gathers per child, not a loop over rows.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues, PackedStructValues, VariableWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder

_LENGTH_TYPES: dict[int, np.dtype] = {32: np.dtype("<u4"), 64: np.dtype("<u8")}


def decode(
    node: enc.VariablePackedStruct, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> PackedStructValues:
    if decoder.context is not ValueContext.FULL_ZIP:
        raise decoder.unsupported(f"variable packed structs in the {decoder.context.value} context are not supported")
    if not node.fields:
        raise decoder.corrupt("a variable packed struct without children")
    raw_offsets = buffers.take("packed rows' offsets")
    data = buffers.take("packed rows")
    if len(raw_offsets) != 8 * (num_values + 1):
        raise decoder.corrupt(f"{num_values} packed rows with {len(raw_offsets) // 8} offsets")
    offsets = raw_offsets.view("<u8").astype(np.int64)
    if np.any(offsets[1:] < offsets[:-1]) or (num_values and (offsets[0] < 0 or offsets[-1] > len(data))):
        raise decoder.corrupt("packed row offsets decrease or run past their rows")
    cursor = offsets[:-1].copy()
    row_ends = offsets[1:]
    present = row_ends > cursor  # an empty row is a null item's placeholder
    children: list[FixedWidthValues | VariableWidthValues] = []
    for index, field in enumerate(node.fields):
        what = f"packed struct child {index}"
        layout = field.WhichOneof("layout")
        if layout == "bits_per_value":
            bits = field.bits_per_value
            if bits == 0 or bits % 8 or bits > 8 * 1024:
                raise decoder.corrupt(f"{what} of {bits} bits (not whole bytes)")
            width = bits // 8
            widths = np.where(present, width, 0)
            _check(cursor + widths, row_ends, what, decoder)
            values = _placed(_gather(data, cursor, widths), present, width)
            cursor = cursor + widths
            child_buffers = [values.data]
        elif layout == "bits_per_length":
            length_type = _LENGTH_TYPES.get(field.bits_per_length)
            if length_type is None:
                raise decoder.corrupt(f"{what} with {field.bits_per_length}-bit lengths")
            size = length_type.itemsize
            sizes = np.where(present, size, 0)
            _check(cursor + sizes, row_ends, what, decoder)
            prefix = _placed(_gather(data, cursor, sizes), present, size)
            lengths = prefix.view(length_type).astype(np.int64) if num_values else np.zeros(0, np.int64)
            starts = cursor + sizes
            # Lengths are checked against the row before any gather.
            if np.any(lengths < 0) or np.any(lengths > row_ends - starts):
                raise decoder.corrupt(f"{what} runs past its row")
            values = _gather(data, starts, lengths)
            cursor = starts + lengths
            child_offsets = np.zeros(num_values + 1, dtype="<u8")
            np.cumsum(lengths, out=child_offsets[1:])
            child_buffers = [child_offsets.data, values.data]
        else:
            raise decoder.corrupt(f"{what} has neither bits per value nor bits per length")
        decoded = decoder.decode(field.value, BufferCursor(child_buffers, decoder), num_values)
        if isinstance(decoded, PackedStructValues):
            raise decoder.unsupported("packed structs nested in packed structs are not supported")
        children.append(decoded)
    if np.any(cursor != row_ends):
        raise decoder.corrupt("packed rows hold bytes after their last child")
    return PackedStructValues(tuple(children), num_values)


def _check(ends: np.ndarray, row_ends: np.ndarray, what: str, decoder: ValueDecoder) -> None:
    if np.any(ends > row_ends):
        raise decoder.corrupt(f"{what} runs past its row")


def _placed(gathered: np.ndarray, present: np.ndarray, width: int) -> np.ndarray:
    """``width`` bytes per row: the gathered bytes of the present rows in
    their places, zeros for the empty rows."""
    if present.all():
        return gathered
    placed = np.zeros((len(present), width), np.uint8)
    placed[present] = gathered.reshape(-1, width)
    return placed.reshape(-1)


def _gather(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes ``data[start:start + length]`` of every row, joined."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.uint8)
    ends = np.cumsum(lengths)
    return data[np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)]
