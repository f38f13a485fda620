"""Which rows of two columns differ in value, computed on whole arrays.

Both arrays are first brought to a plain form (dictionaries decoded, extension
arrays unwrapped, maps viewed as lists of key/value structs); then validity is
compared, list lengths, struct fields by name and leaves after a cast to a type
both hold exactly (:func:`conformance.comparison.type_matching.match_fields`
has checked that one exists). Nested values are compared once, flattened, and
a differing element marks the row that holds it. NaN equals NaN; a null list
differs from an empty one. A timestamp, time or duration read at a coarser
unit (which :func:`match_fields` accepts only when the reader declares that
unit its finest) equals the expected value rounded either way to that unit.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..type_capabilities import TimeUnit
from .arrow_types import is_bfloat16
from .type_matching import bfloat16_widened_to


def mismatched_rows(expected: pa.Array, actual: pa.Array, expected_field: pa.Field | None = None) -> np.ndarray:
    """A boolean per row: True where the values of the two arrays (of equal
    length and types that :func:`match_fields` found comparable) differ.
    ``expected_field`` is the expected array's field when known: its metadata
    may say the values are bfloat16."""
    if len(expected) != len(actual):
        raise ValueError(f"arrays of {len(expected)} and {len(actual)} values cannot be compared row by row")
    expected, actual = _plain(expected), _plain(actual)
    if expected_field is not None and is_bfloat16(expected_field) and bfloat16_widened_to(actual.type):
        expected = _bfloat16_as_float32(expected)
    expected_valid, actual_valid = _validity(expected), _validity(actual)
    differ = expected_valid != actual_valid
    both = expected_valid & actual_valid
    if not both.any():
        return differ
    kind = expected.type
    if pa.types.is_struct(kind):
        differ |= both & _struct_mismatch(expected, actual)
    elif _is_list_like(kind):
        differ |= _list_mismatch(expected, actual, both)
    else:
        differ |= both & _leaf_mismatch(expected, actual)
    return differ


def _plain(array: pa.Array) -> pa.Array:
    """The array without the representation that carries no values: extension
    wrappers, dictionary encoding, map and view layouts."""
    while True:
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        elif isinstance(array.type, pa.BaseExtensionType):
            array = array.storage
        elif pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        elif pa.types.is_map(array.type):
            # A map's layout is that of a list of key/value structs.
            entries = pa.struct([array.type.key_field, array.type.item_field])
            array = array.view(pa.list_(pa.field("entries", entries, nullable=False)))
        elif pa.types.is_string_view(array.type):
            array = array.cast(pa.large_string())
        elif pa.types.is_binary_view(array.type):
            array = array.cast(pa.large_binary())
        elif pa.types.is_list_view(array.type) or pa.types.is_large_list_view(array.type):
            array = _list_from_view(array)
        else:
            return array


def _list_from_view(array: pa.Array) -> pa.LargeListArray:
    """A list view as a large list of the same values (pyarrow's own cast of
    list views to lists builds invalid arrays)."""
    valid = _validity(array)
    starts = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    sizes = np.where(valid, array.sizes.to_numpy(zero_copy_only=False), 0).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    # Each element's position in the view's values: its list's start plus its place in the list.
    positions = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])
    values = array.values.take(pa.array(positions, type=pa.int64()))
    mask = None if array.null_count == 0 else pa.array(~valid)
    return pa.LargeListArray.from_arrays(
        pa.array(offsets, type=pa.int64()), values, type=pa.large_list(array.type.value_field), mask=mask
    )


def readable(array: pa.Array, field: pa.Field) -> pa.Array:
    """``array`` (of ``field``) with bfloat16 values, alone or as the elements
    of a fixed-size list (the form the schema page gives them), shown as
    float32 rather than as their bytes."""
    if is_bfloat16(field):
        return _bfloat16_as_float32(_plain(array))
    if pa.types.is_fixed_size_list(field.type) and is_bfloat16(field.type.value_field):
        plain = _plain(array)
        values = _bfloat16_as_float32(_plain(plain.values))
        mask = None if plain.null_count == 0 else pa.array(~_validity(plain))
        return pa.FixedSizeListArray.from_arrays(
            values.slice(plain.offset * field.type.list_size, len(plain) * field.type.list_size),
            field.type.list_size,
            mask=mask,
        )
    return array


def _bfloat16_as_float32(array: pa.Array) -> pa.Array:
    """Two-byte bfloat16 values (the upper half of a little-endian float32) as float32."""
    data = array.buffers()[1]
    halves = np.frombuffer(data, dtype="<u2", count=array.offset + len(array))[array.offset :]
    floats = (halves.astype("<u4") << 16).view("<f4")
    mask = None if array.null_count == 0 else ~_validity(array)
    return pa.array(floats, type=pa.float32(), mask=mask)


def _validity(array: pa.Array) -> np.ndarray:
    if pa.types.is_null(array.type):
        return np.zeros(len(array), dtype=bool)
    if array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    return array.is_valid().to_numpy(zero_copy_only=False)


def _is_list_like(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _struct_mismatch(expected: pa.StructArray, actual: pa.StructArray) -> np.ndarray:
    differ = np.zeros(len(expected), dtype=bool)
    for index, child in enumerate(expected.type):
        # StructArray.field applies the array's offset, not its validity: rows
        # where either struct is null are masked out by the caller.
        actual_index = actual.type.get_field_index(child.name)
        differ |= mismatched_rows(expected.field(index), actual.field(actual_index), child)
    return differ


def _lengths(array: pa.Array) -> np.ndarray:
    return pc.list_value_length(array).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _list_mismatch(expected: pa.Array, actual: pa.Array, both: np.ndarray) -> np.ndarray:
    expected_lengths, actual_lengths = _lengths(expected), _lengths(actual)
    differ = both & (expected_lengths != actual_lengths)
    same_shape = both & (expected_lengths == actual_lengths)
    if not same_shape.any():
        return differ
    rows = np.flatnonzero(same_shape)
    if len(rows) == len(expected):
        expected_rows, actual_rows = expected, actual
    else:
        indices = pa.array(rows, type=pa.int64())
        expected_rows, actual_rows = expected.take(indices), actual.take(indices)
    element_differs = mismatched_rows(
        pc.list_flatten(expected_rows), pc.list_flatten(actual_rows), expected.type.value_field
    ).nonzero()[0]
    if len(element_differs):
        # The list holding each differing element: the last one starting at or before it.
        starts = np.concatenate([[0], np.cumsum(expected_lengths[rows])])
        owners = np.searchsorted(starts, element_differs, side="right") - 1
        differ[rows[owners]] = True
    return differ


def _leaf_mismatch(expected: pa.Array, actual: pa.Array) -> np.ndarray:
    """True where the values differ; only meaningful where both are valid."""
    if _coarser_unit(expected.type, actual.type):
        return _rounded_mismatch(expected, actual)
    expected, actual, unrepresentable = _common_type(expected, actual)
    if pa.types.is_floating(expected.type):
        want = expected.to_numpy(zero_copy_only=False)
        got = actual.to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            equal = (want == got) | (np.isnan(want) & np.isnan(got))
        return unrepresentable | ~equal
    try:
        equal = pc.equal(expected, actual).fill_null(True).to_numpy(zero_copy_only=False)
    except pa.ArrowNotImplementedError:  # a type the compute kernels cannot compare: compare in Python
        pairs = zip(expected.to_pylist(), actual.to_pylist(), strict=True)
        equal = np.fromiter((a == b for a, b in pairs), dtype=bool, count=len(expected))
    return unrepresentable | ~equal


def _coarser_unit(expected: pa.DataType, actual: pa.DataType) -> bool:
    """Whether both are times of day, timestamps or durations and ``actual``'s unit is coarser."""
    for is_kind in (pa.types.is_timestamp, pa.types.is_duration, pa.types.is_time):
        if is_kind(expected) and is_kind(actual):
            return TimeUnit(actual.unit).rank < TimeUnit(expected.unit).rank
    return False


def _rounded_mismatch(expected: pa.Array, actual: pa.Array) -> np.ndarray:
    """True where ``actual`` (of a coarser unit) is neither the expected value
    rounded down nor rounded up to its unit: a reader may truncate, floor or
    round to its finest unit."""
    factor = 1000 ** (TimeUnit(expected.type.unit).rank - TimeUnit(actual.type.unit).rank)
    want = _stored_integers(expected)
    got = _stored_integers(actual)
    down = want // factor
    up = -((-want) // factor)
    return (got != down) & (got != up)


def _stored_integers(array: pa.Array) -> np.ndarray:
    """The integers a temporal array stores (nulls as 0: the caller masks them)."""
    width = pa.int32() if array.type.bit_width == 32 else pa.int64()
    return array.view(width).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _common_type(expected: pa.Array, actual: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """Both arrays in one type that holds both exactly, and a boolean per row:
    True where the expected value has no equal in the actual type (a timestamp
    out of range of a finer unit)."""
    none = np.zeros(len(expected), dtype=bool)
    if expected.type.equals(actual.type):
        return expected, actual, none
    if pa.types.is_string(expected.type) or pa.types.is_large_string(expected.type):
        return expected.cast(pa.large_string()), actual.cast(pa.large_string()), none
    if pa.types.is_binary(expected.type) or pa.types.is_large_binary(expected.type):
        return expected.cast(pa.large_binary()), actual.cast(pa.large_binary()), none
    try:
        return expected.cast(actual.type), actual, none
    except pa.ArrowInvalid:
        # Some values overflow the wider type: cast without checks and find,
        # by casting back, which ones did not survive.
        widened = expected.cast(actual.type, safe=False)
        back = widened.cast(expected.type, safe=False)
        lost = ~pc.equal(back, expected).fill_null(True).to_numpy(zero_copy_only=False)
        return widened, actual, lost
