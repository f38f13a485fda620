"""``Rle``: runs of equal fixed-width values as one value and one length
each (encoding.md, "Run Length Encoding (RLE)"; ``Rle`` in
``protos/encodings_v2_1.proto``).

In a mini block chunk the run values are the chunk's first buffer (their
width from the ``values`` child, a ``Flat``) and the run lengths its second
(their width from ``run_lengths``, a ``Flat`` of 8 bits in pylance's files);
the runs are expanded until ``num_values`` values are out. In a whole page
buffer (block context, such as the levels of a 2.2 constant page) the two
are framed in one buffer: the size of the run values in bytes (u64), the
run values, the run lengths; the prose leaves this frame to the code.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import FixedWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder


def _flat_width(child: enc.CompressiveEncoding, what: str, decoder: ValueDecoder) -> int:
    if child.WhichOneof("compression") != "flat" or child.flat.HasField("data"):
        raise decoder.unsupported(f"run-length {what} compressed as {child.WhichOneof('compression')!r}")
    bits = child.flat.bits_per_value
    if bits not in (8, 16, 32, 64):
        raise decoder.corrupt(f"run-length {what} of {bits} bits")
    return bits // 8


def decode(node: enc.Rle, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> FixedWidthValues:
    value_bytes = _flat_width(node.values, "values", decoder)
    length_bytes = _flat_width(node.run_lengths, "lengths", decoder)
    if decoder.context is ValueContext.MINI_BLOCK:
        values = buffers.take("run values")
        lengths = buffers.take("run lengths")
    elif decoder.context is ValueContext.BLOCK:
        values, lengths = _framed(buffers.take("run-length block"), decoder)
    else:
        raise decoder.unsupported(f"compressive encoding 'rle' is not supported in the {decoder.context.value} context")
    if num_values == 0:
        return FixedWidthValues(np.zeros(0, np.uint8), 8 * value_bytes, 0)
    if len(values) % value_bytes or len(lengths) % length_bytes:
        raise decoder.corrupt("run-length buffers are not whole values")
    runs = len(values) // value_bytes
    if len(lengths) // length_bytes != runs:
        raise decoder.corrupt(f"{runs} run values but {len(lengths) // length_bytes} run lengths")
    counts = lengths.view(f"<u{length_bytes}").astype(np.int64)
    if int(counts.sum()) < num_values:
        raise decoder.corrupt(f"runs of {int(counts.sum())} values for {num_values}")
    # Runs past num_values are cut, like pylance's reader does.
    ends = np.cumsum(counts)
    last = int(np.searchsorted(ends, num_values))
    counts = counts[: last + 1].copy()
    counts[-1] -= int(ends[last]) - num_values
    rows = values.reshape(runs, value_bytes)[: last + 1]
    return FixedWidthValues(np.repeat(rows, counts, axis=0).reshape(-1), 8 * value_bytes, num_values)


def _framed(block: np.ndarray, decoder: ValueDecoder) -> tuple[np.ndarray, np.ndarray]:
    """(run values, run lengths) of a block-context buffer."""
    if len(block) < 8:
        raise decoder.corrupt(f"a run-length block of {len(block)} bytes has no header")
    size = int(block[:8].view("<u8")[0])
    if size > len(block) - 8:
        raise decoder.corrupt(f"run values of {size} bytes in a block of {len(block)}")
    return block[8 : 8 + size], block[8 + size :]
