"""``Fsst``: variable-width values compressed with a symbol table (encoding.md,
"Fsst"; ``Fsst`` in ``protos/encodings_v2_1.proto``).

The child encoding (``values``) decodes the compressed strings, offsets and
bytes. The symbol table (in the encoding, one per page) is pylance's FSST
layout, which the prose leaves to the code: a little-endian u64 header
whose upper 32 bits are ``"FSST"`` (0x46535354), bit 24 says whether the
values are compressed at all, and the low 8 bits count the symbols; then
``count`` symbols of 8 bytes and right after them ``count`` symbol lengths
of one byte (the table is padded to 8 + 256 * 9 bytes). In the compressed bytes, code 255 escapes the
next byte (taken literally); any other code ``c`` stands for the first
``lengths[c]`` bytes of symbol ``c``.

Decoding works on the whole page at once: escapes are the odd-numbered
bytes of each run of 255 counted from its start, every byte's output length
follows from its code, and the output is gathered in one step.
"""

from __future__ import annotations

import functools

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import VariableWidthValues
from .base import BufferCursor, ValueDecoder

ESCAPE = 255
MAGIC = 0x46535354
TABLE_SIZE = 8 + 256 * 8 + 256
MAX_SYMBOL_BYTES = 8


@functools.lru_cache(maxsize=64)
def _table(raw: bytes) -> tuple[bool, int, np.ndarray, np.ndarray] | str:
    """(compressed?, symbol count, symbols, lengths) of a symbol table, or
    what is wrong with it; cached, as every chunk of a page shares one."""
    table = np.frombuffer(raw, dtype=np.uint8)
    if len(table) != TABLE_SIZE:
        return f"an FSST symbol table of {len(table)} bytes (expected {TABLE_SIZE})"
    header = int(table[:8].view("<u8")[0])
    if header >> 32 != MAGIC:
        return "an FSST symbol table without its magic"
    count = header & 0xFF
    symbols = np.zeros((256, 8), np.uint8)
    symbols[:count] = table[8 : 8 + 8 * count].reshape(count, 8)
    lengths = np.zeros(256, np.int64)
    lengths[:count] = table[8 + 8 * count : 8 + 9 * count]
    if np.any(lengths > MAX_SYMBOL_BYTES):
        return "an FSST symbol longer than 8 bytes"
    return bool(header & (1 << 24)), count, symbols, lengths


def decode(node: enc.Fsst, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> VariableWidthValues:
    parsed = _table(node.symbol_table)
    if isinstance(parsed, str):
        raise decoder.corrupt(parsed)
    compressed_values, count, symbols, lengths = parsed
    compressed = decoder.decode(node.values, buffers, num_values)
    if not isinstance(compressed, VariableWidthValues):
        raise decoder.corrupt("FSST values are not variable-width")
    if not compressed_values:
        return compressed  # stored uncompressed
    start, end = int(compressed.offsets[0]), int(compressed.offsets[-1])
    data = compressed.data[start:end]
    codes = data.astype(np.int64)
    is_ff = data == ESCAPE
    # Position of each byte within its run of 255s: its distance from the
    # last byte before it that is not 255.
    index = np.arange(len(data), dtype=np.int64)
    last_other = np.maximum.accumulate(np.where(is_ff, -1, index)) if len(data) else index
    position = index - last_other - 1
    escape = is_ff & (position % 2 == 0)
    literal = np.concatenate([[False], escape[:-1]])
    if len(data) and escape[-1]:
        raise decoder.corrupt("FSST data end with an escape")
    out_lengths = np.where(escape, 0, np.where(literal, 1, lengths[np.minimum(codes, 255)]))
    normal = ~escape & ~literal
    if np.any(normal & (codes >= count)):
        raise decoder.corrupt(f"an FSST code beyond the {count} symbols")
    total = int(out_lengths.sum())
    if total > decoder.budget.remaining:
        raise decoder.corrupt(f"FSST values expand to {total} bytes, more than this reader decompresses for a page")
    decoder.budget.remaining -= total
    out_starts = np.cumsum(out_lengths) - out_lengths
    source = np.repeat(np.arange(len(data)), out_lengths)
    within = np.arange(total) - out_starts[source]
    out = np.where(literal[source], data[source], symbols[np.minimum(codes[source], 255), np.minimum(within, 7)])
    out = out.astype(np.uint8)
    ends_in = compressed.offsets.astype(np.int64) - start
    out_offsets = np.concatenate([[0], np.cumsum(out_lengths)])[ends_in]
    boundaries = ends_in[1:-1]
    if np.any(literal[boundaries[boundaries < len(data)]]):
        raise decoder.corrupt("an FSST escape crosses a value boundary")
    return VariableWidthValues(out_offsets.astype(np.uint64), out)
