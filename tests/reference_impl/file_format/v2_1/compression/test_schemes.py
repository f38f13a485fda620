"""Compression schemes of 2.1+ pages decoded from hand-built buffers
(encoding.md, "Compression"; the byte layouts the scheme modules describe).

Every buffer here is built by the test from the layout as the module's
docstring states it, so each test checks that reading follows that layout;
the hostile cases check that wrong sizes, widths and declared sizes end in
the project's error types before anything large is allocated.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.errors import CorruptFileError, LanceFormatError, UnsupportedFeatureError
from reference_impl.file_format.v2_1.compression import DecompressionBudget, ValueContext, decode_values
from reference_impl.file_format.v2_1.compression.fastlanes import CHUNK_VALUES, value_positions
from reference_impl.file_format.v2_1.compression.fsst import SYMBOL_TABLE_BYTES
from reference_impl.file_format.v2_1.values import FixedWidthValues, VariableWidthValues
from reference_impl.wire import encodings_v2_1_pb2 as enc

ZSTD = enc.COMPRESSION_ALGORITHM_ZSTD
LZ4 = enc.COMPRESSION_ALGORITHM_LZ4


def flat(bits: int) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=bits))


def variable(bits: int = 32) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(variable=enc.Variable(offsets=flat(bits)))


def general(scheme: int, inner: enc.CompressiveEncoding) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(general=enc.General(compression=enc.BufferCompression(scheme=scheme), values=inner))


def zstd_framed(raw: bytes) -> bytes:
    return len(raw).to_bytes(8, "little") + pa.Codec("zstd").compress(raw, asbytes=True)


def lz4_framed(raw: bytes) -> bytes:
    return len(raw).to_bytes(4, "little") + pa.Codec("lz4_raw").compress(raw, asbytes=True)


def decode(encoding, buffers, num_values, context=ValueContext.MINI_BLOCK):
    return decode_values(encoding, [memoryview(b) for b in buffers], num_values, where="test.lance", context=context)


def ints(values: FixedWidthValues, dtype: str) -> list[int]:
    return values.data[: values.num_bytes].view(dtype).tolist()


# --- general compression -------------------------------------------------


@pytest.mark.parametrize("scheme, framed", [(ZSTD, zstd_framed), (LZ4, lz4_framed)])
@pytest.mark.parametrize("context", [ValueContext.MINI_BLOCK, ValueContext.BLOCK])
def test_general_compression_undoes_the_codec_before_the_inner_encoding(scheme, framed, context):
    values = np.arange(500, dtype="<u4") * 7
    decoded = decode(general(scheme, flat(32)), [framed(values.tobytes())], 500, context)
    assert ints(decoded, "<u4") == values.tolist()


def test_general_compression_in_a_mini_block_leaves_the_later_buffers_alone():
    # Variable values in a mini block: one buffer of offsets then bytes.
    payload = np.array([12, 14, 17], dtype="<u4").tobytes() + b"hiyou"
    decoded = decode(general(ZSTD, variable()), [zstd_framed(payload)], 2)
    assert isinstance(decoded, VariableWidthValues)
    assert [decoded.data[a:b].tobytes() for a, b in zip(decoded.offsets[:-1], decoded.offsets[1:], strict=True)] == [
        b"hi",
        b"you",
    ]


@pytest.mark.parametrize("raw", [b"", b"z", b"zz"])
@pytest.mark.parametrize("scheme, framed", [(ZSTD, zstd_framed), (LZ4, lz4_framed)])
def test_tiny_compressed_buffers_decompress_to_their_declared_size(scheme, framed, raw):
    decoded = decode(general(scheme, flat(8)), [framed(raw)], len(raw), ValueContext.BLOCK)
    assert decoded.data.tobytes() == raw


def test_a_bare_zstd_frame_is_read_by_the_size_its_header_records():
    raw = bytes(range(200)) * 3
    frame = pa.Codec("zstd").compress(raw, asbytes=True)
    assert frame[:4] == (0xFD2FB528).to_bytes(4, "little")
    decoded = decode(general(ZSTD, flat(8)), [frame], len(raw), ValueContext.BLOCK)
    assert decoded.data.tobytes() == raw


def test_general_compression_in_full_zip_decompresses_each_value_on_its_own():
    values = [b"a" * 5000, b"", b"xyz" * 1000]
    pieces = [zstd_framed(v) if v else b"" for v in values]
    offsets = np.zeros(len(values) + 1, dtype="<u8")
    np.cumsum([len(p) for p in pieces], out=offsets[1:])
    decoded = decode(general(ZSTD, variable()), [offsets.tobytes(), b"".join(pieces)], 3, ValueContext.FULL_ZIP)
    assert isinstance(decoded, VariableWidthValues)
    got = [
        decoded.data[int(a) : int(b)].tobytes() for a, b in zip(decoded.offsets[:-1], decoded.offsets[1:], strict=True)
    ]
    assert got == values


@pytest.mark.parametrize("claimed", [999, 1001])
@pytest.mark.parametrize("framed, prefix", [(zstd_framed, 8), (lz4_framed, 4)])
def test_a_declared_size_that_is_not_the_decompressed_size_is_corrupt(framed, prefix, claimed):
    raw = bytes(range(250)) * 4
    buffer = bytearray(framed(raw))
    buffer[:prefix] = claimed.to_bytes(prefix, "little")
    scheme = ZSTD if prefix == 8 else LZ4
    with pytest.raises(CorruptFileError, match="declares"):
        decode(general(scheme, flat(8)), [bytes(buffer)], 1000, ValueContext.BLOCK)


@pytest.mark.parametrize("framed, prefix, scheme", [(zstd_framed, 8, ZSTD), (lz4_framed, 4, LZ4)])
def test_a_declared_size_past_what_the_codec_can_expand_to_is_refused_before_allocating(framed, prefix, scheme):
    buffer = bytearray(framed(b"q" * 100))
    buffer[:prefix] = (2**32 - 1 if prefix == 4 else 2**40).to_bytes(prefix, "little")
    tracemalloc.start()
    try:
        with pytest.raises(CorruptFileError, match="claims"):
            decode(general(scheme, flat(8)), [bytes(buffer)], 100, ValueContext.BLOCK)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_the_buffers_of_one_page_share_one_decompression_budget():
    """Each buffer alone is plausible; together they exceed what one page
    may decompress, so the last is refused before it is decompressed."""
    budget = DecompressionBudget(remaining=2500)
    chunk = zstd_framed(b"\x07" * 1000)
    for _ in range(2):
        decode_values(general(ZSTD, flat(8)), [memoryview(chunk)], 1000, where="test.lance", budget=budget)
    with pytest.raises(CorruptFileError, match="for one page"):
        decode_values(general(ZSTD, flat(8)), [memoryview(chunk)], 1000, where="test.lance", budget=budget)


def test_garbage_after_a_size_prefix_is_corrupt():
    with pytest.raises(CorruptFileError):
        decode(general(ZSTD, flat(8)), [(64).to_bytes(8, "little") + b"not zstd at all"], 64, ValueContext.BLOCK)
    with pytest.raises(CorruptFileError):
        decode(general(LZ4, flat(8)), [b"\x01\x00"], 1, ValueContext.BLOCK)


def test_an_unknown_general_codec_is_unsupported_naming_it():
    encoding = general(7, flat(8))
    with pytest.raises(UnsupportedFeatureError, match="general compression 7"):
        decode(encoding, [b"\x00" * 8], 8, ValueContext.BLOCK)


def test_a_flat_buffer_with_its_own_compression_is_decompressed():
    values = np.arange(64, dtype="<u2")
    encoding = enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=16, data=enc.BufferCompression(scheme=LZ4)))
    assert ints(decode(encoding, [lz4_framed(values.tobytes())], 64), "<u2") == values.tolist()


# --- byte stream split ---------------------------------------------------


def test_byte_stream_split_joins_the_byte_streams_back_into_values():
    values = np.array([1.5, -2.25, 1e300], dtype="<f8")
    streams = values.view(np.uint8).reshape(3, 8).T.copy().tobytes()
    encoding = enc.CompressiveEncoding(byte_stream_split=enc.ByteStreamSplit(values=flat(64)))
    decoded = decode(encoding, [streams], 3)
    assert decoded.data.view("<f8").tolist() == values.tolist()


def test_byte_stream_split_under_general_compression():
    values = np.linspace(0, 1, 300, dtype="<f4")
    streams = values.view(np.uint8).reshape(300, 4).T.copy().tobytes()
    inner = enc.CompressiveEncoding(byte_stream_split=enc.ByteStreamSplit(values=flat(32)))
    decoded = decode(general(ZSTD, inner), [zstd_framed(streams)], 300)
    assert decoded.data.view("<f4").tolist() == values.tolist()


def test_byte_stream_split_streams_shorter_than_the_values_are_corrupt():
    encoding = enc.CompressiveEncoding(byte_stream_split=enc.ByteStreamSplit(values=flat(32)))
    with pytest.raises(CorruptFileError):
        decode(encoding, [b"\x00" * 7], 2)


# --- constant ------------------------------------------------------------


def test_a_constant_repeats_its_value():
    encoding = enc.CompressiveEncoding(constant=enc.Constant(value=(513).to_bytes(4, "little")))
    assert ints(decode(encoding, [], 5, ValueContext.BLOCK), "<u4") == [513] * 5


def test_a_constant_too_large_to_expand_is_refused():
    encoding = enc.CompressiveEncoding(constant=enc.Constant(value=b"\x01" * 32))
    with pytest.raises(CorruptFileError, match="constant"):
        decode(encoding, [], 2**40, ValueContext.BLOCK)


def test_a_constant_without_a_value_is_values_of_no_bits():
    values = decode(enc.CompressiveEncoding(constant=enc.Constant()), [], 3, ValueContext.BLOCK)
    assert (values.bits_per_value, values.num_values, values.num_bytes) == (0, 3, 0)


# --- fixed-size list -----------------------------------------------------


def fsl(dimension: int, inner: enc.CompressiveEncoding, has_validity: bool = True) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(
        fixed_size_list=enc.FixedSizeList(items_per_value=dimension, values=inner, has_validity=has_validity)
    )


def test_full_zip_lists_carry_their_item_validity_ahead_of_their_items():
    """Each list of a full zip page: per level with validity its items' bits
    (whole bytes), then its items. Two lists of 3 lists of 2 u16 items."""
    encoding = fsl(3, fsl(2, flat(16)))
    rows = []
    for first in (0, 10):
        outer_bits = bytes([0b101 if first else 0b111])  # 3 inner lists
        inner_bits = bytes([0b110111])  # 6 items
        items = np.arange(first, first + 6, dtype="<u2").tobytes()
        rows.append(outer_bits + inner_bits + items)
    values = decode(encoding, [b"".join(rows)], 2, ValueContext.FULL_ZIP)
    assert values.bits_per_value == 16 * 6
    assert ints(values, "<u2") == list(range(6)) + list(range(10, 16))
    outer, inner = values.list_validity
    assert outer.tolist() == [True, True, True, True, False, True]
    assert inner.tolist() == [True, True, True, False, True, True] * 2


def test_full_zip_lists_of_items_without_values_are_their_validity_only():
    values = decode(
        fsl(9, enc.CompressiveEncoding(constant=enc.Constant())), [b"\x00\x00" * 4], 4, ValueContext.FULL_ZIP
    )
    assert values.bits_per_value == 0
    assert values.list_validity[0].tolist() == [False] * 36


def test_full_zip_lists_shorter_than_their_rows_are_corrupt():
    with pytest.raises(CorruptFileError, match="lists of 9 bytes"):
        decode(fsl(4, flat(16)), [b"\x00" * 17], 2, ValueContext.FULL_ZIP)


def test_full_zip_lists_of_items_not_whole_bytes_are_unsupported():
    with pytest.raises(UnsupportedFeatureError, match="full zip"):
        decode(fsl(4, flat(1)), [b"\x00" * 8], 2, ValueContext.FULL_ZIP)


# --- bitpacking (out of line) --------------------------------------------


def fastlanes_pack(values: np.ndarray, width: int, type_bits: int) -> np.ndarray:
    """Pack whole chunks of 1024 values, bit by bit, as the layout says."""
    lanes = CHUNK_VALUES // type_bits
    positions = value_positions(type_bits)
    chunks = []
    for chunk in values.reshape(-1, CHUNK_VALUES):
        words = [0] * (width * lanes)
        for lane in range(lanes):
            for row in range(type_bits):
                value = int(chunk[positions[row, lane]])
                for bit in range(width):
                    if value >> bit & 1:
                        at = row * width + bit
                        words[(at // type_bits) * lanes + lane] |= 1 << (at % type_bits)
        chunks.append(np.array(words, dtype=np.uint64))
    return np.concatenate(chunks).astype(f"<u{type_bits // 8}")


def out_of_line(type_bits: int, width: int) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(
        out_of_line_bitpacking=enc.OutOfLineBitpacking(uncompressed_bits_per_value=type_bits, values=flat(width))
    )


@pytest.mark.parametrize("type_bits, width", [(8, 3), (16, 16), (32, 0), (32, 17), (64, 45)])
@pytest.mark.parametrize("tail", ["packed", "raw"])
def test_out_of_line_bitpacking_unpacks_whole_chunks_and_either_kind_of_tail(type_bits, width, tail):
    rng = np.random.default_rng(type_bits * 100 + width)
    count = 2 * CHUNK_VALUES + 100
    values = rng.integers(0, 2**width, count, dtype=np.uint64) if width else np.zeros(count, np.uint64)
    if tail == "packed":
        padded = np.concatenate([values, np.zeros(3 * CHUNK_VALUES - count, np.uint64)])
        words = fastlanes_pack(padded, width, type_bits)
    else:
        words = np.concatenate(
            [
                fastlanes_pack(values[: 2 * CHUNK_VALUES], width, type_bits),
                values[2 * CHUNK_VALUES :].astype(f"<u{type_bits // 8}"),
            ]
        )
    decoded = decode(out_of_line(type_bits, width), [words.tobytes()], count, ValueContext.BLOCK)
    assert ints(decoded, f"<u{type_bits // 8}") == values.tolist()


def test_out_of_line_bitpacking_of_a_buffer_too_short_for_its_values_is_corrupt():
    with pytest.raises(CorruptFileError, match="need 160 words"):
        decode(out_of_line(32, 5), [b"\x00" * 4 * 159], 1024, ValueContext.BLOCK)
    with pytest.raises(CorruptFileError, match="0 bits"):
        decode(out_of_line(64, 0), [b""], 2**40, ValueContext.BLOCK)


def test_out_of_line_bitpacking_counts_its_expansion_against_the_page_budget():
    """One-bit values of a 64-bit type expand 64 times: the output is refused
    when it would pass what is left of the page's budget."""
    words = np.zeros(16 * 4, dtype="<u8").tobytes()  # 4 chunks of 1-bit values
    encoding = out_of_line(64, 1)
    budget = DecompressionBudget(remaining=4 * 1024 * 8 - 1)
    with pytest.raises(CorruptFileError, match="for one page"):
        decode_values(
            encoding, [memoryview(words)], 4096, where="test.lance", context=ValueContext.BLOCK, budget=budget
        )
    assert ints(decode(encoding, [words], 4096, ValueContext.BLOCK), "<u8") == [0] * 4096


@pytest.mark.parametrize("type_bits, width", [(32, 33), (64, 65), (12, 3)])
def test_out_of_line_bitpacking_widths_past_the_type_are_corrupt(type_bits, width):
    with pytest.raises(CorruptFileError):
        decode(out_of_line(type_bits, width), [b"\x00" * 64], 4, ValueContext.BLOCK)


# --- FSST ----------------------------------------------------------------


def symbol_table(symbols: list[bytes], compressed: bool = True) -> bytes:
    header = (0x46535354 << 32) | (int(compressed) << 24) | len(symbols)
    table = bytearray(SYMBOL_TABLE_BYTES)
    table[:8] = header.to_bytes(8, "little")
    for index, symbol in enumerate(symbols):
        table[8 + 8 * index : 8 + 8 * index + len(symbol)] = symbol
        table[8 + 8 * len(symbols) + index] = len(symbol)
    return bytes(table)


def fsst(table: bytes, inner: enc.CompressiveEncoding | None = None) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(fsst=enc.Fsst(symbol_table=table, values=inner or variable()))


def mini_block_variable(values: list[bytes]) -> bytes:
    """Offsets (u32, counted from the buffer's start) then the bytes."""
    start = 4 * (len(values) + 1)
    offsets = np.zeros(len(values) + 1, dtype="<u4")
    np.cumsum([len(v) for v in values], out=offsets[1:])
    return (offsets + start).astype("<u4").tobytes() + b"".join(values)


def strings(values: VariableWidthValues) -> list[bytes]:
    pairs = zip(values.offsets[:-1], values.offsets[1:], strict=True)
    return [values.data[int(a) : int(b)].tobytes() for a, b in pairs]


def test_fsst_expands_codes_and_escaped_bytes_value_by_value():
    table = symbol_table([b"lance", b"ab", b"\xff\x00z", b"12345678"])
    codes = [
        bytes([0, 1, 255, ord("!")]),  # "lance" "ab" then an escaped "!"
        bytes([255, 255, 255, 255, 2]),  # two escaped 0xff bytes, then a symbol holding 0xff
        b"",
        bytes([3, 255, 3, 0]),  # an escaped byte equal to a symbol code
    ]
    decoded = decode(fsst(table), [mini_block_variable(codes)], 4)
    assert strings(decoded) == [b"lanceab!", b"\xff\xff\xff\x00z", b"", b"12345678\x03lance"]


def test_fsst_values_stored_uncompressed_when_the_table_says_so():
    decoded = decode(fsst(symbol_table([b"zz"], compressed=False)), [mini_block_variable([b"\x00\xff", b"q"])], 2)
    assert strings(decoded) == [b"\x00\xff", b"q"]


@pytest.mark.parametrize(
    "table, codes, problem",
    [
        (symbol_table([b"a"]), [bytes([1])], "past the 1 symbols"),
        (symbol_table([b"a"]), [bytes([0, 255]), b"x"], "escape"),
        (symbol_table([b"a"])[:-1], [b""], "symbol table"),
        (b"\x00" * SYMBOL_TABLE_BYTES, [b""], "magic"),
    ],
)
def test_hostile_fsst_pages_are_corrupt(table, codes, problem):
    with pytest.raises(CorruptFileError, match=problem):
        decode(fsst(table), [mini_block_variable(codes)], len(codes))


# --- variable packed struct ----------------------------------------------


def packed_rows(rows: list[bytes]) -> list[bytes]:
    """Full zip values unzipped: u64 offsets, then the rows' bytes."""
    offsets = np.zeros(len(rows) + 1, dtype="<u8")
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    return [offsets.tobytes(), b"".join(rows)]


PACKED = enc.CompressiveEncoding(
    variable_packed_struct=enc.VariablePackedStruct(
        fields=[
            enc.VariablePackedStruct.FieldEncoding(value=flat(16), bits_per_value=16),
            enc.VariablePackedStruct.FieldEncoding(value=variable(), bits_per_length=32),
        ]
    )
)


def row(number: int, text: bytes, claimed: int | None = None) -> bytes:
    length = len(text) if claimed is None else claimed
    return number.to_bytes(2, "little") + length.to_bytes(4, "little") + text


def test_variable_packed_struct_rows_split_into_their_children():
    decoded = decode(PACKED, packed_rows([row(7, b"seven"), row(300, b""), row(2, b"ab")]), 3, ValueContext.FULL_ZIP)
    numbers, texts = decoded.children
    assert ints(numbers, "<u2") == [7, 300, 2]
    assert strings(texts) == [b"seven", b"", b"ab"]


@pytest.mark.parametrize(
    "rows, problem",
    [
        ([row(1, b"abc", claimed=4)], "runs past its row"),
        ([row(1, b"abc", claimed=2**32 - 1)], "runs past its row"),
        ([row(1, b"abc") + b"!"], "after their last child"),
        ([b"\x01"], "runs past its row"),
    ],
)
def test_hostile_variable_packed_struct_rows_are_corrupt(rows, problem):
    with pytest.raises(CorruptFileError, match=problem):
        decode(PACKED, packed_rows(rows), len(rows), ValueContext.FULL_ZIP)


# --- encodings this reader lacks -----------------------------------------


@pytest.mark.parametrize(
    "encoding, name",
    [
        (enc.CompressiveEncoding(dictionary=enc.Dictionary(indices=flat(8), items=flat(32))), "dictionary"),
    ],
)
def test_encodings_without_a_decoder_are_unsupported_naming_them(encoding, name):
    with pytest.raises(UnsupportedFeatureError, match=f"'{name}'"):
        decode(encoding, [b"\x00" * 16], 4)


def test_a_scheme_newer_than_the_protos_is_unsupported_naming_its_field():
    # Field 99 of CompressiveEncoding, a varint: a scheme no proto here has.
    encoding = enc.CompressiveEncoding.FromString(bytes([0x98, 0x06, 0x01]))
    with pytest.raises(UnsupportedFeatureError, match="field 99"):
        decode(encoding, [b"\x00" * 16], 4)


# --- any bytes -----------------------------------------------------------

ENCODINGS = {
    "general zstd": (general(ZSTD, flat(32)), ValueContext.MINI_BLOCK),
    "general lz4 block": (general(LZ4, variable()), ValueContext.BLOCK),
    "general per value": (general(ZSTD, variable()), ValueContext.FULL_ZIP),
    "byte stream split": (
        enc.CompressiveEncoding(byte_stream_split=enc.ByteStreamSplit(values=flat(64))),
        ValueContext.MINI_BLOCK,
    ),
    "out of line": (out_of_line(16, 5), ValueContext.BLOCK),
    "fsst": (fsst(symbol_table([b"ab", b"\xff", b"cdefghij"])), ValueContext.MINI_BLOCK),
    "fsst per value": (fsst(symbol_table([b"ab"]), variable(64)), ValueContext.FULL_ZIP),
    "variable packed struct": (PACKED, ValueContext.FULL_ZIP),
    "full zip fixed-size lists": (fsl(3, fsl(5, flat(8))), ValueContext.FULL_ZIP),
}


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(sorted(ENCODINGS)),
    buffers=st.lists(st.binary(max_size=300), min_size=0, max_size=3),
    num_values=st.integers(0, 5000),
)
def test_any_bytes_under_each_scheme_decode_or_raise_a_format_error(name, buffers, num_values):
    """Property: whatever buffers and value count a scheme of this branch is
    handed, it returns values or raises a LanceFormatError naming the file;
    never another exception."""
    encoding, context = ENCODINGS[name]
    try:
        decode(encoding, buffers, num_values, context)
    except LanceFormatError as error:
        assert "test.lance" in str(error)


def fsst_one_by_one(symbols: list[bytes], codes: bytes) -> bytes | None:
    """The plain reading of one value's code stream, a byte at a time (None
    when it is not valid: an escape last, or a code past the table)."""
    out = bytearray()
    position = 0
    while position < len(codes):
        code = codes[position]
        if code == 255:
            if position + 1 == len(codes):
                return None
            out.append(codes[position + 1])
            position += 2
        elif code < len(symbols):
            out += symbols[code]
            position += 1
        else:
            return None
    return bytes(out)


SYMBOLS = [b"a", b"bc", b"\xff\xff", b"defghijk", b"\x00"]


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.lists(st.sampled_from([0, 1, 2, 3, 4, 5, 254, 255]), max_size=12), max_size=20))
def test_fsst_expands_like_a_byte_by_byte_reading(values):
    """Property: for code streams rich in escapes (255), FSST decodes every
    value as reading it one byte at a time does, or, when a value ends in an
    escape or uses a code past the table, raises a CorruptFileError."""
    streams = [bytes(v) for v in values]
    expected = [fsst_one_by_one(SYMBOLS, s) for s in streams]
    encoding = fsst(symbol_table(SYMBOLS))
    if any(e is None for e in expected):
        with pytest.raises(CorruptFileError):
            decode(encoding, [mini_block_variable(streams)], len(streams))
    else:
        assert strings(decode(encoding, [mini_block_variable(streams)], len(streams))) == expected


def packed_one_by_one(row_bytes: bytes) -> tuple[int, bytes] | None:
    """A packed row of PACKED (u16, then a u32 length and that many bytes),
    read plainly; None when it is not exactly one such row. An empty row is
    a null item's placeholder: 0 and no bytes."""
    if not row_bytes:
        return 0, b""
    if len(row_bytes) < 6:
        return None
    length = int.from_bytes(row_bytes[2:6], "little")
    if len(row_bytes) != 6 + length:
        return None
    return int.from_bytes(row_bytes[:2], "little"), row_bytes[6:]


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.one_of(
            st.builds(row, st.integers(0, 2**16 - 1), st.binary(max_size=10)),
            st.builds(lambda r, cut: r[:cut], st.builds(row, st.just(5), st.binary(max_size=4)), st.integers(0, 9)),
            st.builds(
                lambda r, extra: r + extra,
                st.builds(row, st.just(6), st.binary(max_size=4)),
                st.binary(min_size=1, max_size=3),
            ),
        ),
        max_size=12,
    )
)
def test_variable_packed_struct_rows_split_like_a_row_by_row_reading(rows):
    """Property: rows that are whole (a u16 and a length-prefixed string,
    nothing more) or empty (a null item's) split into the children a
    row-by-row reading gives; a cut or overlong row makes the page a
    CorruptFileError."""
    expected = [packed_one_by_one(r) for r in rows]
    if any(e is None for e in expected):
        with pytest.raises(CorruptFileError):
            decode(PACKED, packed_rows(rows), len(rows), ValueContext.FULL_ZIP)
        return
    numbers, texts = decode(PACKED, packed_rows(rows), len(rows), ValueContext.FULL_ZIP).children
    assert ints(numbers, "<u2") == [e[0] for e in expected if e]
    assert strings(texts) == [e[1] for e in expected if e]
