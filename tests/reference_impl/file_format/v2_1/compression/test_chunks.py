"""Decoding every mini block chunk of a page together (``decode_chunks`` of
the scheme modules, :mod:`reference_impl.file_format.v2_1.compression.chunks`)
against decoding the chunks one by one (``decode_values`` per chunk, then
joined), on pages built by the test from the byte layouts the scheme modules
describe, honest and damaged."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.errors import LanceFormatError
from reference_impl.file_format.v2_1.compression import (
    CHUNK_SCHEMES,
    SCHEMES,
    ChunkBuffers,
    DecompressionBudget,
    ValueContext,
    decode_chunk_values,
    decode_values,
)
from reference_impl.file_format.v2_1.compression.base import ValueDecoder
from reference_impl.file_format.v2_1.compression.chunks import ChunkByChunk, ChunkCursor, gather_ranges
from reference_impl.file_format.v2_1.compression.fastlanes import CHUNK_VALUES
from reference_impl.file_format.v2_1.compression.fsst import SYMBOL_TABLE_BYTES
from reference_impl.file_format.v2_1.values import FixedWidthValues, VariableWidthValues, concat_values
from reference_impl.wire import encodings_v2_1_pb2 as enc

MINI = ValueContext.MINI_BLOCK
BLOCK = ValueContext.BLOCK


def flat(bits: int) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=bits))


def variable(bits: int) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(variable=enc.Variable(offsets=flat(bits)))


def symbol_table(lengths: list[int]) -> bytes:
    """An FSST table (the layout :mod:`.fsst` states) of symbols of these lengths."""
    header = (0x46535354 << 32) | (1 << 24) | len(lengths)
    symbols = b"".join(bytes([65 + index % 26] * length) + bytes(8 - length) for index, length in enumerate(lengths))
    table = header.to_bytes(8, "little") + symbols + bytes(lengths)
    return table + bytes(SYMBOL_TABLE_BYTES - len(table))


@st.composite
def pages(draw):
    """(encoding, context, counts, buffers per chunk): honest buffers of one
    of the schemes that decode chunks together."""
    kind = draw(
        st.sampled_from(
            [
                "flat",
                "bits",
                "variable",
                "fsst",
                "rle",
                "rle-block",
                "inline",
                "inline-block",
                "out-of-line",
                "out-of-line-block",
                "fsl",
                "general",
            ]
        )
    )
    context = BLOCK if kind.endswith("-block") else MINI
    most = (
        3000
        if kind in ("inline-block", "out-of-line", "out-of-line-block")
        else CHUNK_VALUES
        if kind == "inline"
        else 300
    )
    counts = draw(st.lists(st.integers(1, most), min_size=1, max_size=5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    chunks: list[list[bytes]] = []
    if kind in ("flat", "bits"):
        bits = draw(st.sampled_from([8, 16, 32, 64])) if kind == "flat" else draw(st.sampled_from([1, 3]))
        encoding = flat(bits)
        for count in counts:
            chunks.append([rng.bytes((count * bits + 7) // 8 + int(rng.integers(0, 4)))])
    elif kind in ("variable", "fsst"):
        bits = draw(st.sampled_from([32, 64]))
        encoding = variable(bits)
        if kind == "fsst":
            lengths = draw(st.lists(st.integers(1, 8), min_size=1, max_size=254))
            encoding = enc.CompressiveEncoding(fsst=enc.Fsst(symbol_table=symbol_table(lengths), values=encoding))
        for count in counts:
            sizes = rng.integers(0, 6, count)
            if kind == "fsst":
                codes = rng.integers(0, len(lengths), int(sizes.sum()), dtype=np.uint8)
                # Some escapes, each followed by its byte inside the value.
                escaped = np.flatnonzero(rng.random(len(codes)) < 0.05)
                codes[escaped] = 255
                ends = np.cumsum(sizes)
                last_of_value = np.isin(escaped, ends - 1)
                codes[escaped[last_of_value]] = 0
                data = codes.tobytes()
            else:
                data = rng.bytes(int(sizes.sum()))
            base = (count + 1) * bits // 8 + int(rng.integers(0, 3))
            offsets = base + np.concatenate([[0], np.cumsum(sizes)])
            chunks.append([offsets.astype(f"<u{bits // 8}").tobytes() + bytes(base - (count + 1) * bits // 8) + data])
    elif kind.startswith("rle"):
        width = draw(st.sampled_from([1, 2, 4, 8]))
        encoding = enc.CompressiveEncoding(rle=enc.Rle(values=flat(8 * width), run_lengths=flat(8)))
        for count in counts:
            runs = []
            # Runs of a mini block chunk's values may run past its count
            # (they are cut); a block's runs hold exactly its values.
            left = count + (0 if context is BLOCK else int(rng.integers(0, 5)))
            while left > 0:
                runs.append(min(int(rng.integers(1, 256)), left))
                left -= runs[-1]
            values = rng.bytes(width * len(runs))
            lengths = bytes(runs)
            if context is BLOCK:
                chunks.append([len(values).to_bytes(8, "little") + values + lengths])
            else:
                chunks.append([values, lengths])
    elif kind.startswith("inline"):
        type_bits = draw(st.sampled_from([8, 16, 32, 64]))
        encoding = enc.CompressiveEncoding(
            inline_bitpacking=enc.InlineBitpacking(uncompressed_bits_per_value=type_bits)
        )
        for count in counts:
            buffer = b""
            for _ in range(-(-count // CHUNK_VALUES)):
                width = int(rng.integers(0, type_bits + 1))
                buffer += width.to_bytes(type_bits // 8, "little") + rng.bytes(CHUNK_VALUES * width // 8)
            chunks.append([buffer])
    elif kind.startswith("out-of-line"):
        type_bits = draw(st.sampled_from([8, 16, 32, 64]))
        width = draw(st.integers(0, type_bits))
        encoding = enc.CompressiveEncoding(
            out_of_line_bitpacking=enc.OutOfLineBitpacking(uncompressed_bits_per_value=type_bits, values=flat(width))
        )
        pack_bytes = CHUNK_VALUES * width // 8
        for count in counts:
            whole, tail = divmod(count, CHUNK_VALUES)
            # The last partial pack packed and padded, or its values as whole words.
            last = (
                rng.bytes(tail * type_bits // 8) if tail and rng.random() < 0.5 else rng.bytes(pack_bytes * (tail > 0))
            )
            chunks.append([rng.bytes(whole * pack_bytes) + last])
    elif kind == "general":
        # A chunk's first buffer compressed (framed as buffer_compression
        # says) over flat, byte-stream-split or variable values.
        inner = draw(st.sampled_from(["flat", "bss", "variable"]))
        scheme = draw(st.sampled_from([enc.COMPRESSION_ALGORITHM_ZSTD, enc.COMPRESSION_ALGORITHM_LZ4]))
        bits = draw(st.sampled_from([32, 64] if inner == "variable" else [8, 16, 32, 64]))
        values = variable(bits) if inner == "variable" else flat(bits)
        if inner == "bss":
            values = enc.CompressiveEncoding(byte_stream_split=enc.ByteStreamSplit(values=values))
        encoding = enc.CompressiveEncoding(
            general=enc.General(compression=enc.BufferCompression(scheme=scheme), values=values)
        )
        for count in counts:
            if inner == "variable":
                sizes = rng.integers(0, 6, count)
                offsets = (count + 1) * bits // 8 + np.concatenate([[0], np.cumsum(sizes)])
                raw = offsets.astype(f"<u{bits // 8}").tobytes() + rng.bytes(int(sizes.sum()))
            else:
                # Few distinct bytes, so that the codecs have something to compress.
                raw = rng.integers(0, 4, count * bits // 8, dtype=np.uint8).tobytes()
            if scheme == enc.COMPRESSION_ALGORITHM_ZSTD:
                framed = len(raw).to_bytes(8, "little") + pa.Codec("zstd").compress(raw, asbytes=True)
            else:
                framed = len(raw).to_bytes(4, "little") + pa.Codec("lz4_raw").compress(raw, asbytes=True)
            chunks.append([framed])
    else:
        dimension = draw(st.integers(1, 4))
        bits = draw(st.sampled_from([8, 32]))
        has_validity = draw(st.booleans())
        encoding = enc.CompressiveEncoding(
            fixed_size_list=enc.FixedSizeList(items_per_value=dimension, has_validity=has_validity, values=flat(bits))
        )
        for count in counts:
            items = count * dimension
            validity = [rng.bytes((items + 7) // 8)] if has_validity else []
            chunks.append([*validity, rng.bytes(items * bits // 8)])
    return encoding, context, counts, chunks


def lay_out(chunks: list[list[bytes]], gaps: list[int]) -> list[ChunkBuffers]:
    """The chunks' buffers in one array, as in a page: a gap (a header) before
    each chunk, each buffer padded to 8 bytes."""
    data = bytearray()
    starts: list[list[int]] = [[] for _ in chunks[0]]
    sizes: list[list[int]] = [[] for _ in chunks[0]]
    for chunk, gap in zip(chunks, gaps, strict=True):
        data += bytes(gap)
        for index, buffer in enumerate(chunk):
            starts[index].append(len(data))
            sizes[index].append(len(buffer))
            data += buffer + bytes(-len(buffer) % 8)
    array = np.frombuffer(bytes(data), dtype=np.uint8)
    return [
        ChunkBuffers(array, np.array(s, np.int64), np.array(z, np.int64)) for s, z in zip(starts, sizes, strict=True)
    ]


def content(values):
    """What decoded values say, whatever their buffers' layout."""
    if isinstance(values, VariableWidthValues):
        offsets = values.offsets.astype(np.int64)
        return [values.data[a:b].tobytes() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    assert isinstance(values, FixedWidthValues)
    bits = np.unpackbits(values.data, bitorder="little", count=values.num_values * values.bits_per_value)
    validity = [None if level is None else level.tolist() for level in values.list_validity]
    return values.bits_per_value, values.num_values, bits.tobytes(), validity


def together(encoding, context, counts, buffers):
    """Every chunk in one pass per scheme; fails if a scheme went chunk by chunk."""
    decoder = ValueDecoder("test.lance", context, SCHEMES, chunk_schemes=CHUNK_SCHEMES)
    return decoder.decode_chunks(encoding, ChunkCursor(buffers), np.array(counts, np.int64))


def one_by_one(encoding, context, counts, buffers):
    blocks = [
        decode_values(encoding, [b.buffer(chunk) for b in buffers], count, where="test.lance", context=context)
        for chunk, count in enumerate(counts)
    ]
    return concat_values(blocks)


def outcome(decode, *args):
    try:
        return content(decode(*args))
    except LanceFormatError:
        return "error"


@settings(max_examples=300, deadline=None)
@given(page=pages(), data=st.data())
def test_chunks_decoded_together_equal_chunks_decoded_one_by_one(page, data):
    """Property: for pages of flat, bit-wide, variable, FSST, RLE, inline
    and out-of-line bitpacked, fixed-size-list and generally compressed
    (zstd, LZ4) chunks, honest or with bytes changed or a
    buffer cut short, decoding all chunks together gives the values that
    decoding them one by one and joining gives, or both raise a
    LanceFormatError (and the honest pages decode)."""
    encoding, context, counts, chunks = page
    gaps = data.draw(
        st.lists(st.integers(0, 3).map(lambda words: 8 * words), min_size=len(chunks), max_size=len(chunks))
    )
    buffers = lay_out(chunks, gaps)
    honest = outcome(together, encoding, context, counts, buffers)
    assert honest != "error"
    assert honest == outcome(one_by_one, encoding, context, counts, buffers)
    damaged = buffers
    if data.draw(st.booleans()):
        raw = bytearray(buffers[0].data.tobytes())
        for _ in range(data.draw(st.integers(1, 3))):
            # A byte inside some chunk's buffer, often set to an extreme.
            target = buffers[data.draw(st.integers(0, len(buffers) - 1))]
            chunk = data.draw(st.integers(0, len(counts) - 1))
            if target.sizes[chunk] == 0:
                continue
            position = int(target.starts[chunk]) + data.draw(st.integers(0, int(target.sizes[chunk]) - 1))
            raw[position] = data.draw(st.sampled_from([0, 1, 254, 255]) | st.integers(0, 255))
        array = np.frombuffer(bytes(raw), dtype=np.uint8)
        damaged = [ChunkBuffers(array, b.starts, b.sizes) for b in buffers]
    else:
        which = data.draw(st.integers(0, len(buffers) - 1))
        chunk = data.draw(st.integers(0, len(counts) - 1))
        sizes = damaged[which].sizes.copy()
        # Often just short of what the values need.
        size = int(sizes[chunk])
        sizes[chunk] = data.draw(st.integers(max(0, size - 8), size) | st.integers(0, size))
        damaged = [
            *buffers[:which],
            ChunkBuffers(buffers[which].data, buffers[which].starts, sizes),
            *buffers[which + 1 :],
        ]
    assert outcome(together, encoding, context, counts, damaged) == outcome(
        one_by_one, encoding, context, counts, damaged
    )


def test_a_page_whose_encoding_has_no_chunk_decoder_goes_chunk_by_chunk():
    """A constant has no chunk decoder: the page still decodes, one chunk at
    a time."""
    encoding = enc.CompressiveEncoding(constant=enc.Constant(value=(7).to_bytes(4, "little")))
    buffers = lay_out([[b""], [b""]], [8, 8])
    with pytest.raises(ChunkByChunk):
        together(encoding, MINI, [10, 10], buffers)
    decoded = decode_chunk_values(encoding, buffers, np.array([10, 10]), where="test.lance")
    assert decoded.data.view("<u4").tolist() == [7] * 20


def test_general_compression_falls_back_chunk_by_chunk_with_the_whole_budget():
    """Decompressed chunks whose inner encoding has no chunk decoder are
    decoded again one chunk at a time: what the first attempt decompressed
    does not count twice against the page's budget."""
    raw = (7).to_bytes(4, "little") * 10
    framed = len(raw).to_bytes(8, "little") + pa.Codec("zstd").compress(raw, asbytes=True)
    encoding = enc.CompressiveEncoding(
        general=enc.General(
            compression=enc.BufferCompression(scheme=enc.COMPRESSION_ALGORITHM_ZSTD),
            values=enc.CompressiveEncoding(constant=enc.Constant(value=(7).to_bytes(4, "little"))),
        )
    )
    buffers = lay_out([[framed], [framed]], [8, 8])
    budget = DecompressionBudget(remaining=2 * len(raw))
    decoded = decode_chunk_values(encoding, buffers, np.array([10, 10]), where="test.lance", budget=budget)
    assert decoded.data.view("<u4").tolist() == [7] * 20
    assert budget.remaining == 0


def test_gather_ranges_joins_ranges_in_order():
    data = np.arange(64, dtype=np.uint8)
    assert gather_ranges(data, np.array([0, 8, 30]), np.array([3, 8, 0])).tolist() == [0, 1, 2, *range(8, 16)]
    assert gather_ranges(data, np.array([8, 16]), np.array([8, 16])).tolist() == list(range(8, 32))


def test_gather_ranges_refuses_ranges_out_of_order():
    with pytest.raises(ValueError):
        gather_ranges(np.zeros(16, np.uint8), np.array([8, 0]), np.array([4, 4]))
    with pytest.raises(ValueError):
        gather_ranges(np.zeros(16, np.uint8), np.array([12]), np.array([8]))
