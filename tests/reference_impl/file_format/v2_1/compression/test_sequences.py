"""``Range``, ``Delta`` and compressed variable-width offsets decoded from
hand-built buffers (the layouts :mod:`...compression.sequence` and
:mod:`...compression.encoded_offsets` state; pylance 14 writes them in 2.3
files). The property tests check the decoded sequence against the
arithmetic the messages describe; the hostile cases end in the project's
error types."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.errors import CorruptFileError, UnsupportedFeatureError
from reference_impl.file_format.v2_1.compression import ValueContext, decode_values
from reference_impl.file_format.v2_1.values import FixedWidthValues, VariableWidthValues
from reference_impl.wire import encodings_v2_1_pb2 as enc


def flat(bits: int) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=bits))


def range_of(bits: int, start: int, step: int) -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(range=enc.Range(uncompressed_bits_per_value=bits, start=start, step=step))


def delta_of(bits: int, base: int, deltas: enc.CompressiveEncoding | None) -> enc.CompressiveEncoding:
    node = enc.Delta(uncompressed_bits_per_value=bits, base=base)
    if deltas is not None:
        node.deltas.CopyFrom(deltas)
    return enc.CompressiveEncoding(delta=node)


def decode(encoding, buffers, count, context=ValueContext.BLOCK):
    return decode_values(encoding, [memoryview(b) for b in buffers], count, where="test.lance", context=context)


def numbers(values) -> list[int]:
    assert isinstance(values, FixedWidthValues)
    return values.data[: values.num_bytes].view(f"<u{values.bits_per_value // 8}").tolist()


@settings(max_examples=50, deadline=None)
@given(
    bits=st.sampled_from([32, 64]),
    start=st.integers(0, 2**20),
    step=st.integers(0, 2**10),
    count=st.integers(0, 300),
)
def test_a_range_is_start_plus_step_times_the_index(bits, start, step, count):
    decoded = decode(range_of(bits, start, step), [], count)
    assert decoded.bits_per_value == bits
    assert numbers(decoded) == [start + step * i for i in range(count)]


@settings(max_examples=50, deadline=None)
@given(
    bits=st.sampled_from([32, 64]),
    base=st.integers(0, 2**20),
    deltas=st.lists(st.integers(0, 2**16), max_size=300),
)
def test_a_delta_sequence_is_its_base_and_the_running_sums_of_its_differences(bits, base, deltas):
    stored = np.array(deltas, dtype=f"<u{bits // 8}").tobytes()
    decoded = decode(delta_of(bits, base, flat(bits)), [stored] if deltas else [], len(deltas) + 1)
    expected = [base]
    for step in deltas:
        expected.append(expected[-1] + step)
    assert numbers(decoded) == expected


def test_differences_may_be_a_range_and_one_value_reads_no_buffer():
    assert numbers(decode(delta_of(64, 1, range_of(64, 1, 2)), [], 4)) == [1, 2, 5, 10]
    assert numbers(decode(delta_of(64, 7, None), [], 1)) == [7]


def test_delta_sums_wrap_as_the_unsigned_type():
    stored = np.array([2], dtype="<u4").tobytes()
    assert numbers(decode(delta_of(32, 2**32 - 1, flat(32)), [stored], 2)) == [2**32 - 1, 1]


@pytest.mark.parametrize(
    "encoding, buffers, count, problem",
    [
        (range_of(16, 0, 1), [], 3, "16-bit"),
        (delta_of(64, 0, None), [], 3, "without differences"),
        (delta_of(64, 0, flat(32)), [b"\x00" * 8], 3, "not 64-bit"),
        (range_of(64, 0, 1), [], 2**40, "more than this reader expands"),
    ],
)
def test_hostile_sequences_are_corrupt(encoding, buffers, count, problem):
    with pytest.raises(CorruptFileError, match=problem):
        decode(encoding, buffers, count)


def _offsets_as_lengths() -> enc.CompressiveEncoding:
    """Variable values whose offsets are a delta over flat 32-bit lengths."""
    return enc.CompressiveEncoding(variable=enc.Variable(offsets=delta_of(32, 0, flat(32))))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=20), min_size=1, max_size=40))
def test_compressed_offsets_in_a_chunk_delimit_the_bytes_that_follow(values):
    lengths = np.array([len(v) for v in values], dtype="<u4").tobytes()
    decoded = decode(_offsets_as_lengths(), [lengths, b"".join(values)], len(values), ValueContext.MINI_BLOCK)
    assert isinstance(decoded, VariableWidthValues)
    offsets = decoded.offsets.astype(np.int64)
    assert [decoded.data[a:b].tobytes() for a, b in zip(offsets[:-1], offsets[1:], strict=True)] == values


def test_compressed_offsets_past_their_bytes_are_corrupt():
    lengths = np.array([3, 4], dtype="<u4").tobytes()
    with pytest.raises(CorruptFileError, match="run past their bytes"):
        decode(_offsets_as_lengths(), [lengths, b"abc"], 2, ValueContext.MINI_BLOCK)


@pytest.mark.parametrize(
    "encoding",
    [
        enc.CompressiveEncoding(inline_bitpacking=enc.InlineBitpacking(uncompressed_bits_per_value=128)),
        enc.CompressiveEncoding(
            out_of_line_bitpacking=enc.OutOfLineBitpacking(uncompressed_bits_per_value=128, values=flat(7))
        ),
    ],
)
def test_bitpacking_of_128_bit_values_is_unsupported_not_corrupt(encoding):
    # Upstream proposes u128 bitpacking for decimal128; pylance 14 stores
    # decimal128 flat, at 2.3 as at 2.2.
    with pytest.raises(UnsupportedFeatureError, match="128-bit"):
        decode(encoding, [b"\x00" * 2048], 4, ValueContext.MINI_BLOCK)


def _dictionary_block(indices: bytes, items: bytes) -> bytes:
    return len(indices).to_bytes(8, "little") + len(items).to_bytes(8, "little") + indices + items


def test_a_dictionary_block_is_its_items_looked_up_by_its_indices():
    node = enc.CompressiveEncoding(dictionary=enc.Dictionary(indices=flat(32), items=flat(64), num_dictionary_items=3))
    indices = np.array([2, 0, 0, 1, 2], "<u4").tobytes()
    items = np.array([10, 20, 30], "<u8").tobytes()
    assert numbers(decode(node, [_dictionary_block(indices, items)], 5)) == [30, 10, 10, 20, 30]
    # Items stored nowhere: a range of them.
    ranged = enc.CompressiveEncoding(
        dictionary=enc.Dictionary(indices=flat(32), items=range_of(64, 1, 1), num_dictionary_items=2)
    )
    assert numbers(decode(ranged, [_dictionary_block(np.array([1, 0], "<u4").tobytes(), b"")], 2)) == [2, 1]


@pytest.mark.parametrize(
    "block, problem",
    [
        (b"\x00" * 4, "no header"),
        (_dictionary_block(np.array([0, 5], "<u4").tobytes(), np.array([1, 2, 3], "<u8").tobytes()), "past the 3"),
        (_dictionary_block(b"\x00" * 8, b"\x00" * 24)[:-1], "says 8 \\+ 24"),
    ],
)
def test_hostile_dictionary_blocks_are_corrupt(block, problem):
    node = enc.CompressiveEncoding(dictionary=enc.Dictionary(indices=flat(32), items=flat(64), num_dictionary_items=3))
    with pytest.raises(CorruptFileError, match=problem):
        decode(node, [block], 2)


def test_runs_with_compressed_children_and_runs_stored_nowhere():
    # Run values flat, run lengths out-of-line bitpacked (one FastLanes chunk
    # of 1024 u8 lengths at 8 bits: the lengths themselves, padded).
    lengths = np.zeros(1024, np.uint8)
    lengths[:2] = [3, 2]
    node = enc.CompressiveEncoding(
        rle=enc.Rle(
            values=flat(32),
            run_lengths=enc.CompressiveEncoding(
                out_of_line_bitpacking=enc.OutOfLineBitpacking(uncompressed_bits_per_value=8, values=flat(8))
            ),
        )
    )
    runs = np.array([7, 9], "<u4").tobytes()
    assert numbers(decode(node, [runs, lengths.tobytes()], 5, ValueContext.MINI_BLOCK)) == [7, 7, 7, 9, 9]
    # Values 0, 5, 10, ... with lengths 2, 3, 4, ...: nothing stored, no buffer.
    nowhere = enc.CompressiveEncoding(rle=enc.Rle(values=range_of(32, 0, 5), run_lengths=range_of(32, 2, 1)))
    assert numbers(decode(nowhere, [], 6)) == [0, 0, 5, 5, 5, 10]
