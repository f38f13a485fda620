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

import functools

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import VariableWidthValues
from .base import BufferCursor, ValueDecoder

SYMBOL_TABLE_BYTES = 8 + 256 * 8 + 256
_MAGIC = 0x46535354
_ESCAPE = 255
# The expansion row of an escape byte itself: expands to nothing.
_NOTHING = 512


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
    256..511 are the single bytes an escape copies, row 512 (an escape
    byte itself) is empty."""

    def __init__(self, expansions: np.ndarray, lengths: np.ndarray, count: int, compressed: bool):
        self.expansions = expansions
        self.lengths = lengths
        self.count = count
        self.compressed = compressed
        # The same tables, one u64 per row, for fast gathers.
        self.words = np.ascontiguousarray(expansions).view("<u8").reshape(-1)
        flags = np.arange(8)[None, :] < lengths[:, None]
        self.keep = np.ascontiguousarray(flags).view("<u8").reshape(-1)

    @classmethod
    def parse(cls, raw: bytes, decoder: ValueDecoder) -> SymbolTable:
        # Every mini block chunk of a page carries the same table: parse once.
        parsed = _parse(raw)
        if isinstance(parsed, str):
            raise decoder.corrupt(parsed)
        return parsed

    def expand(self, values: VariableWidthValues, decoder: ValueDecoder) -> VariableWidthValues:
        start, end = int(values.offsets[0]), int(values.offsets[-1])
        stream = values.data[start:end]
        ends = values.offsets[1:].astype(np.int64) - start
        if len(stream) and int(stream.max()) < self.count:
            rows = stream.astype(np.intp)  # symbol codes only: no escape
        else:
            rows = self._rows(stream, ends, decoder)
        out_lengths = self.lengths[rows]
        cumulative = np.zeros(len(stream) + 1, dtype=np.int64)
        np.cumsum(out_lengths, out=cumulative[1:])
        offsets = cumulative[ends].astype(np.uint64) if len(ends) else np.zeros(0, np.uint64)
        offsets = np.concatenate([np.zeros(1, np.uint64), offsets])
        # Each code's 8-byte expansion (gathered as one u64), cut to its
        # length by a per-code mask of 8 flags; compressing keeps row-major
        # order, so the kept bytes are the values in order.
        expanded = self.words[rows].view(np.uint8)
        keep = self.keep[rows].view(np.bool_)
        data = np.compress(keep, expanded)
        return VariableWidthValues(offsets, data)

    def _rows(self, stream: np.ndarray, ends: np.ndarray, decoder: ValueDecoder) -> np.ndarray:
        """The expansion row of every byte: its code, 256 + the byte for an
        escaped byte, the empty row :data:`_NOTHING` for an escape."""
        codes = stream.astype(np.intp)
        escape = _escapes(codes)
        literal = np.zeros(len(codes), dtype=bool)
        literal[1:] = escape[:-1]
        # An escape must be followed by its byte within the same value.
        if escape.any():
            escape_at = np.flatnonzero(escape)
            value_of_escape = np.searchsorted(ends, escape_at, side="right")
            value_of_next = np.searchsorted(ends, escape_at + 1, side="right")
            if np.any(escape_at + 1 >= len(codes)) or np.any(value_of_escape != value_of_next):
                raise decoder.corrupt("an FSST escape byte ends its value")
        symbols = codes[~escape & ~literal]
        if len(symbols) and int(symbols.max()) >= self.count:
            raise decoder.corrupt(f"FSST code {int(symbols.max())} past the {self.count} symbols of the table")
        rows = np.where(literal, codes + 256, codes)
        rows[escape] = _NOTHING
        return rows


@functools.lru_cache(maxsize=8)
def _parse(raw: bytes) -> SymbolTable | str:
    """The table ``raw`` holds, or what is wrong with it."""
    if len(raw) != SYMBOL_TABLE_BYTES:
        return f"an FSST symbol table of {len(raw)} bytes, not {SYMBOL_TABLE_BYTES}"
    header = int.from_bytes(raw[:8], "little")
    if header >> 32 != _MAGIC:
        return "an FSST symbol table without its magic"
    count = header & 0xFF
    table = np.frombuffer(raw, dtype=np.uint8)
    expansions = np.zeros((_NOTHING + 1, 8), dtype=np.uint8)
    lengths = np.zeros(_NOTHING + 1, dtype=np.int64)
    expansions[:count] = table[8 : 8 + 8 * count].reshape(count, 8)
    lengths[:count] = table[8 + 8 * count : 8 + 9 * count]
    if count and (lengths[:count].min() < 1 or lengths[:count].max() > 8):
        return "an FSST symbol longer than 8 bytes or empty"
    expansions[256:512, 0] = np.arange(256, dtype=np.uint8)
    lengths[256:512] = 1
    return SymbolTable(expansions, lengths, count, bool(header & (1 << 24)))


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
