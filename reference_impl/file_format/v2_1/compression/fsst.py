"""``Fsst``: variable-width values compressed against one symbol table per
page (encoding.md, "Fsst"; ``Fsst`` in ``protos/encodings_v2_1.proto``).

The child encoding (``Variable`` in a mini block chunk or a full zip page)
yields the compressed values; each is then expanded on its own. The prose
leaves the symbol table and the code stream to the code
(``rust/compression/fsst`` in the upstream repository):

* symbol table (``symbol_table``, 2312 bytes): a little-endian u64 header
  whose high 32 bits are ``"FSST"`` (0x46535354), bit 24 says whether the
  values are compressed at all, and the low 8 bits are the number of symbols
  ``n``; then ``n`` symbols of 8 bytes each (a symbol's bytes are its first
  ``len`` bytes), then ``n`` one-byte lengths (1 to 8);
* code stream: each byte below 255 is a symbol code and expands to its
  symbol; 255 is an escape, and the byte after it is copied as it is;
* when bit 24 is clear, the values are stored uncompressed.

Decoding is vectorized over the whole buffer: escapes are found from the
parity of runs of 255 bytes, then every code or escaped byte is one row of a
table of 512 expansions (the symbols, then each byte as itself).
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import VariableWidthValues
from .base import BufferCursor, ValueDecoder

SYMBOL_TABLE_BYTES = 8 + 256 * 8 + 256
_MAGIC = 0x46535354
_ESCAPE = 255


def decode(node: enc.Fsst, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> VariableWidthValues:
    table = SymbolTable.parse(node.symbol_table, decoder)
    compressed = decoder.decode(node.values, buffers, num_values)
    if not isinstance(compressed, VariableWidthValues):
        raise decoder.corrupt("FSST over values that are not variable width")
    if not table.compressed:
        return compressed
    return table.expand(compressed, decoder)


class SymbolTable:
    """The symbols of one page: ``expansions[code, :lengths[code]]``; rows
    256..511 are the single bytes an escape copies."""

    def __init__(self, expansions: np.ndarray, lengths: np.ndarray, count: int, compressed: bool):
        self.expansions = expansions
        self.lengths = lengths
        self.count = count
        self.compressed = compressed

    @classmethod
    def parse(cls, raw: bytes, decoder: ValueDecoder) -> SymbolTable:
        if len(raw) != SYMBOL_TABLE_BYTES:
            raise decoder.corrupt(f"an FSST symbol table of {len(raw)} bytes, not {SYMBOL_TABLE_BYTES}")
        header = int.from_bytes(raw[:8], "little")
        if header >> 32 != _MAGIC:
            raise decoder.corrupt("an FSST symbol table without its magic")
        count = header & 0xFF
        table = np.frombuffer(raw, dtype=np.uint8)
        expansions = np.zeros((512, 8), dtype=np.uint8)
        lengths = np.zeros(512, dtype=np.int64)
        expansions[:count] = table[8 : 8 + 8 * count].reshape(count, 8)
        lengths[:count] = table[8 + 8 * count : 8 + 9 * count]
        if count and (lengths[:count].min() < 1 or lengths[:count].max() > 8):
            raise decoder.corrupt("an FSST symbol longer than 8 bytes or empty")
        expansions[256:, 0] = np.arange(256, dtype=np.uint8)
        lengths[256:] = 1
        return cls(expansions, lengths, count, bool(header & (1 << 24)))

    def expand(self, values: VariableWidthValues, decoder: ValueDecoder) -> VariableWidthValues:
        start, end = int(values.offsets[0]), int(values.offsets[-1])
        stream = values.data[start:end].astype(np.int64)
        ends = values.offsets[1:].astype(np.int64) - start
        escape = _escapes(stream)
        literal = np.zeros(len(stream), dtype=bool)
        literal[1:] = escape[:-1]
        # An escape must be followed by its byte within the same value.
        if escape.any():
            escape_at = np.flatnonzero(escape)
            value_of_escape = np.searchsorted(ends, escape_at, side="right")
            value_of_next = np.searchsorted(ends, escape_at + 1, side="right")
            if np.any(escape_at + 1 >= len(stream)) or np.any(value_of_escape != value_of_next):
                raise decoder.corrupt("an FSST escape byte ends its value")
        rows = np.where(literal, stream + 256, stream)
        rows[escape] = 0
        codes = rows[~escape & ~literal]
        if len(codes) and int(codes.max()) >= self.count:
            raise decoder.corrupt(f"FSST code {int(codes.max())} past the {self.count} symbols of the table")
        out_lengths = np.where(escape, 0, self.lengths[rows])
        # Output offsets: the expanded length of every value, summed.
        cumulative = np.zeros(len(stream) + 1, dtype=np.int64)
        np.cumsum(out_lengths, out=cumulative[1:])
        offsets = np.zeros(len(ends) + 1, dtype=np.uint64)
        offsets[1:] = cumulative[ends]
        total = int(cumulative[-1])
        row_of_byte = np.repeat(rows, out_lengths)
        within = np.arange(total, dtype=np.int64) - np.repeat(cumulative[:-1], out_lengths)
        data = self.expansions[row_of_byte, within]
        return VariableWidthValues(offsets, data)


def _escapes(stream: np.ndarray) -> np.ndarray:
    """Which bytes of ``stream`` are escape codes: in a run of 255 bytes the
    first, third, ... are escapes and the others the bytes they escape (a
    run begins after a byte that is not 255, which is never an escape)."""
    is_ff = stream == _ESCAPE
    if not is_ff.any():
        return is_ff
    positions = np.arange(len(stream))
    starts = is_ff & ~np.concatenate(([False], is_ff[:-1]))
    run_start = np.maximum.accumulate(np.where(starts, positions, 0))
    return is_ff & ((positions - run_start) % 2 == 0)
