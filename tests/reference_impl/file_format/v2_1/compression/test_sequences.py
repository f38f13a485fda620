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

from reference_impl.errors import CorruptFileError
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
