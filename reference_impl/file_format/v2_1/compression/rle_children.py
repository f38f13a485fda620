"""The runs of an ``Rle`` whose children are not plain ``Flat`` buffers
(pylance 14 writes them in 2.3 files: run values under ``General``
compression or a ``Range``, run lengths under ``OutOfLineBitpacking``;
upstream ``protos/encodings_v2_1.proto``, ``Rle``: the run values are "a
data block of the same kind as the input" and the lengths "a fixed-width
data block", each compressed further).

The stored pieces are where :mod:`.rle` finds plain ones (the chunk's two
value buffers, or the two parts of a framed block); each is the one buffer
of its child's encoding (none for a ``Range``). The number of runs comes
from whichever side is stored plainly (or, for values under ``General``,
from their decompressed size); the other side is decoded as that many
values. When neither side stores anything (a ``Range`` or a ``Constant``
each), pylance writes no buffer at all, and the runs are as many as it
takes for their lengths to cover the values.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from . import buffer_compression
from .base import BufferCursor, ValueDecoder


def is_plain(child: enc.CompressiveEncoding) -> bool:
    return child.WhichOneof("compression") == "flat" and not child.flat.HasField("data")


# Encodings that store nothing: their values are all in the message.
_METADATA_ONLY = frozenset({"range", "constant"})


def stores_nothing(node: enc.Rle) -> bool:
    """Whether neither child stores bytes: pylance then writes no buffer at
    all for the runs, not even an empty frame."""
    return (
        node.values.WhichOneof("compression") in _METADATA_ONLY
        and node.run_lengths.WhichOneof("compression") in _METADATA_ONLY
    )


def runs(
    node: enc.Rle, values: np.ndarray, lengths: np.ndarray, num_values: int, decoder: ValueDecoder
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(run values, run lengths, bytes per value, bytes per length), as raw
    bytes, from the stored pieces of each child."""
    child = node.values
    if child.WhichOneof("compression") == "general" and is_plain(child.general.values):
        values = buffer_compression.decompress(child.general.compression, values, decoder, "run values")
        child = child.general.values
    count = _count(child, values, decoder) if is_plain(child) else _count(node.run_lengths, lengths, decoder)
    if count is None and stores_nothing(node):
        count = _runs_reaching(node.run_lengths, num_values, decoder)
    if count is None:
        raise decoder.unsupported(
            f"run-length values compressed as {child.WhichOneof('compression')!r} with lengths compressed as "
            f"{node.run_lengths.WhichOneof('compression')!r}"
        )
    values, value_bits = _decoded(child, values, count, decoder, "values")
    lengths, length_bits = _decoded(node.run_lengths, lengths, count, decoder, "lengths")
    return values, lengths, value_bits // 8, length_bits // 8


def _runs_reaching(lengths: enc.CompressiveEncoding, num_values: int, decoder: ValueDecoder) -> int:
    """When nothing is stored, the runs are as many as it takes for their
    lengths to cover ``num_values`` values (each run at least one value,
    so at most that many)."""
    decoded = decoder.decode(lengths, BufferCursor([], decoder), num_values)
    if not isinstance(decoded, FixedWidthValues) or decoded.bits_per_value not in (8, 16, 32, 64):
        raise decoder.corrupt("run lengths are not whole fixed-width values")
    ends = np.cumsum(decoded.data[: decoded.num_bytes].view(f"<u{decoded.bits_per_value // 8}").astype(np.int64))
    if num_values and (not len(ends) or int(ends[-1]) < num_values):
        raise decoder.corrupt(f"run lengths do not reach {num_values} values")
    return int(np.searchsorted(ends, num_values)) + 1 if num_values else 0


def _count(child: enc.CompressiveEncoding, stored: np.ndarray, decoder: ValueDecoder) -> int | None:
    if not is_plain(child):
        return None
    bits = child.flat.bits_per_value
    if bits not in (8, 16, 32, 64) or len(stored) % (bits // 8):
        raise decoder.corrupt("run-length buffers are not whole values")
    return len(stored) // (bits // 8)


def _decoded(
    child: enc.CompressiveEncoding, stored: np.ndarray, count: int, decoder: ValueDecoder, what: str
) -> tuple[np.ndarray, int]:
    if is_plain(child):
        return stored, child.flat.bits_per_value
    decoded = decoder.decode(child, BufferCursor([stored.data], decoder), count)
    if not isinstance(decoded, FixedWidthValues) or decoded.bits_per_value not in (8, 16, 32, 64):
        raise decoder.corrupt(f"run-length {what} are not whole fixed-width values")
    return decoded.data[: decoded.num_bytes], decoded.bits_per_value
