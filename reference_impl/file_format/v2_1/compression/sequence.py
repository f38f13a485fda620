"""``Range`` and ``Delta``: non-decreasing unsigned sequences (upstream
``protos/encodings_v2_1.proto``, messages ``Range`` and ``Delta``, added
after format 2.2; pylance 14 writes them in 2.3 files for the position and
count sequences of sparse pages, :mod:`..sparse`).

* ``Range`` stores nothing: value ``i`` is ``start + step * i``.
* ``Delta`` stores its first value (``base``) in the message and the
  ``num_values - 1`` differences between neighbours through its child
  encoding; the values are the running sums. No differences (and no child
  buffers) are read for fewer than two values.

Both yield 32- or 64-bit unsigned integers (``uncompressed_bits_per_value``);
sums wrap as the unsigned type does, as the writer's do.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import MAX_EXPANDED_BYTES, BufferCursor, ValueDecoder

_TYPES: dict[int, np.dtype] = {32: np.dtype("<u4"), 64: np.dtype("<u8")}


def _word_type(bits: int, what: str, num_values: int, decoder: ValueDecoder) -> np.dtype:
    word = _TYPES.get(bits)
    if word is None:
        raise decoder.corrupt(f"{what} of {bits}-bit values (32 or 64 expected)")
    if num_values * word.itemsize > MAX_EXPANDED_BYTES:
        raise decoder.corrupt(f"{num_values} {what} values are more than this reader expands")
    return word


def decode_range(node: enc.Range, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    word = _word_type(node.uncompressed_bits_per_value, "a range", num_values, decoder)
    values = np.arange(num_values, dtype=word) * word.type(node.step) + word.type(node.start)
    return FixedWidthValues(values.astype(word, copy=False).view(np.uint8), 8 * word.itemsize, num_values)


def decode_delta(node: enc.Delta, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    word = _word_type(node.uncompressed_bits_per_value, "a delta sequence", num_values, decoder)
    values = np.full(num_values, node.base, dtype=word)
    if num_values > 1:
        if not node.HasField("deltas"):
            raise decoder.corrupt(f"a delta sequence of {num_values} values without differences")
        deltas = decoder.decode(node.deltas, buffers, num_values - 1)
        if not isinstance(deltas, FixedWidthValues) or deltas.bits_per_value != 8 * word.itemsize:
            raise decoder.corrupt(f"delta differences are not {8 * word.itemsize}-bit integers")
        steps = deltas.data[: deltas.num_bytes].view(word)
        np.cumsum(steps, dtype=word, out=values[1:])
        values[1:] += word.type(node.base)
    return FixedWidthValues(values.view(np.uint8), 8 * word.itemsize, num_values)
