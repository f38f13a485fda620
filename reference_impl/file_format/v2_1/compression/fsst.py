"""``Fsst``: variable-width values compressed against one symbol table per
page (encoding.md, "Fsst"; ``Fsst`` in ``protos/encodings_v2_1.proto``).

The child encoding (``Variable`` in a mini block chunk or a full zip page)
yields the compressed values; each is then expanded on its own (the values
of every chunk of a mini block page at once: :func:`decode_chunks`). The prose
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
table of 512 expansions (the symbols, then each byte as itself), each row one
word as wide as the longest symbol.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa

from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues, VariableWidthValues
from .base import BufferCursor, ValueDecoder
from .chunks import ChunkCursor

SYMBOL_TABLE_BYTES = 8 + 256 * 8 + 256
_MAGIC = 0x46535354
_ESCAPE = 255
# The expansion row of an escape byte itself: expands to nothing.
_NOTHING = 512
# Codes expanded together (a block of whole values of about this many codes).
_BLOCK_CODES = 1 << 20


def decode(node: enc.Fsst, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> VariableWidthValues:
    table = SymbolTable.parse(node.symbol_table, decoder)
    return _expanded(table, decoder.decode(node.values, buffers, num_values), decoder)


def decode_chunks(
    node: enc.Fsst, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder
) -> VariableWidthValues:
    """:func:`decode` over every chunk of a page (:mod:`.chunks`): the page
    has one symbol table, so the codes of all chunks expand together."""
    table = SymbolTable.parse(node.symbol_table, decoder)
    return _expanded(table, decoder.decode_chunks(node.values, buffers, counts), decoder)


def _expanded(table: SymbolTable, compressed: DecodedValues, decoder: ValueDecoder) -> VariableWidthValues:
    """The values the child encoding decoded (``compressed``), expanded by
    ``table`` when it says they are compressed."""
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
        # Gathers move one word per code, as narrow as the longest symbol
        # allows (1, 2, 4 or 8 bytes): each row's expansion as one word, and
        # as one word of flags saying which of its bytes are the symbol.
        longest = int(lengths.max())
        self.word = next(size for size in (1, 2, 4, 8) if size >= longest)
        narrow = np.ascontiguousarray(expansions[:, : self.word])
        self.words = narrow.view(f"<u{self.word}").reshape(-1)
        flags = np.arange(self.word)[None, :] < lengths[:, None]
        self.keep = np.ascontiguousarray(flags).view(f"<u{self.word}").reshape(-1)
        self.sizes = lengths.astype(np.uint8)

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
        ends = values.offsets[1:] - values.offsets[0] if start else values.offsets[1:]
        if len(stream) and int(stream.max()) < self.count:
            rows = stream  # symbol codes only: each byte is its row
        else:
            rows = self._rows(stream, ends.astype(np.int64), decoder)
        # No code expands to more than a word: a bound on the output.
        bound = len(rows) * self.word
        offsets = np.zeros(len(ends) + 1, dtype=np.uint32 if bound < 2**32 else np.uint64)
        # A block of whole values (about _BLOCK_CODES codes) at a time: the
        # gathered sizes, words and flags of a block stay small (and their
        # memory is reused), where those of a whole page would be several
        # times its size.
        cuts = np.searchsorted(ends, np.arange(_BLOCK_CODES, len(rows), _BLOCK_CODES, dtype=ends.dtype), side="right")
        bounds = np.unique(np.concatenate(([0], cuts, [len(ends)]))).tolist()
        blocks = [
            (first_value, last_value, int(ends[first_value - 1]) if first_value else 0, int(ends[last_value - 1]))
            for first_value, last_value in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        for first_value, last_value, first_code, last_code in blocks:
            block_ends = ends[first_value:last_value] - ends.dtype.type(first_code)
            sums = _value_sums(_gather(self.sizes, rows[first_code:last_code]), block_ends)
            np.cumsum(sums, out=offsets[first_value + 1 : last_value + 1])
            offsets[first_value + 1 : last_value + 1] += offsets[first_value]
        data = np.empty(int(offsets[-1]), dtype=np.uint8)
        for first_value, last_value, first_code, last_code in blocks:
            codes = rows[first_code:last_code]
            # Each code's expansion (gathered as one word), cut to its length
            # by its word of flags; compressing keeps row-major order, so
            # the kept bytes are the values in order.
            np.compress(
                _gather(self.keep, codes).view(np.bool_),
                _gather(self.words, codes).view(np.uint8),
                out=data[int(offsets[first_value]) : int(offsets[last_value])],
            )
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


def _value_sums(sizes: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per value, the sum of ``sizes`` over its codes; value ``i``'s codes
    end at ``ends[i]`` (the last at the end of ``sizes``). Only the values
    with codes are summed: each sum then runs to the next such value's first
    code, which is its own end."""
    starts = np.zeros(len(ends), dtype=np.int64)
    starts[1:] = ends[:-1]
    sums = np.zeros(len(ends), dtype=np.int64)
    coded = np.flatnonzero(ends > starts)
    if len(coded):
        sums[coded] = np.add.reduceat(sizes, starts[coded], dtype=np.int64)
    return sums


def _gather(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``table[rows]``, by Arrow's ``take``: for millions of rows of a small
    table many times faster than numpy's indexing."""
    return pa.array(table).take(pa.array(rows)).to_numpy()


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
