"""Property: for any Arrow table of the generated kinds (nested lists and
structs with nulls at every level, the leaf types of the schema spec's
logical types) written by pylance 14 at file format 2.1 or 2.2, with
encoding metadata chosen at random on its fields (encoding.md,
"Compression Configuration": compression, compression level, structural
encoding, byte stream split, RLE threshold, dictionary values compression),
the reference reader's rows equal pylance's rows
(``conformance.comparison.compare_tables``: no value difference).

The tests after the property pin the shapes it once found the reader
failing on: a 2.2 page of one repeated boolean (a constant page whose inline
value is a one-byte bitmap) or of one repeated large string / large binary
value (a constant page whose value is in a buffer, with 64-bit offsets), and
a fixed-size list whose items are all null (pylance's ``constant``
compressive encoding without a value).
"""

from __future__ import annotations

import datetime
import tempfile

import lance
import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import strategies
from conformance.comparison import compare_tables
from reference_impl.dataset import Dataset

# Each example writes and reads a dataset twice; the default profile's
# budget stays a small share of the suite.
EXAMPLES = min(15, settings.default.max_examples)

# Leaf types of the schema spec the table strategy does not draw, with
# values for them.
_EXTRA_TYPES = {
    pa.float16(): st.floats(-100, 100, width=16, allow_nan=False).map(np.float16),
    pa.int16(): st.integers(-(2**15), 2**15 - 1),
    pa.uint32(): st.integers(0, 2**32 - 1),
    pa.date64(): st.dates().map(lambda d: datetime.datetime(d.year, d.month, d.day)),
    pa.time32("ms"): st.integers(0, 86_399_999),
    pa.decimal256(40, 3): st.decimals(-(10**6), 10**6, places=3, allow_nan=False, allow_infinity=False),
    pa.large_binary(): st.binary(max_size=6),
    pa.dictionary(pa.int32(), pa.string()): st.sampled_from(["a", "bb", "ccc"]),
}


@st.composite
def extra_columns(draw, num_rows: int) -> list[tuple[str, pa.Array]]:
    columns = []
    for index, data_type in enumerate(draw(st.lists(st.sampled_from(list(_EXTRA_TYPES)), max_size=2, unique=True))):
        values = draw(st.lists(st.none() | _EXTRA_TYPES[data_type], min_size=num_rows, max_size=num_rows))
        if pa.types.is_dictionary(data_type):
            array = pa.array(values, pa.string()).dictionary_encode()
        elif data_type == pa.float16():
            array = pa.array(
                np.array([v if v is not None else 0 for v in values], np.float16),
                mask=np.array([v is None for v in values], dtype=bool),
            )
        else:
            array = pa.array(values, data_type)
        columns.append((f"x{index}", array))
    return columns


def _with_struct_nulls(array: pa.Array, mask: list[bool]) -> pa.Array:
    """A top-level struct column with some rows null (2.1 stores struct validity)."""
    if not pa.types.is_struct(array.type) or not any(mask):
        return array
    children = [array.field(i) for i in range(array.type.num_fields)]
    return pa.StructArray.from_arrays(children, fields=list(array.type), mask=pa.array(mask))


def _metadata_choices(data_type: pa.DataType) -> st.SearchStrategy[dict[str, str]]:
    """Encoding metadata pylance 14 accepts on a field of ``data_type``."""
    options: list[st.SearchStrategy[dict[str, str]]] = [st.just({})]
    general = st.sampled_from(["zstd", "lz4"]).flatmap(
        lambda codec: st.sampled_from([{}, {"lance-encoding:compression-level": "3"}]).map(
            lambda level: {"lance-encoding:compression": codec, **(level if codec == "zstd" else {})}
        )
    )
    leaf = not pa.types.is_nested(data_type) and not pa.types.is_dictionary(data_type)
    if leaf:
        options.append(general)
    if pa.types.is_string(data_type) or pa.types.is_binary(data_type) or pa.types.is_large_string(data_type):
        options.append(st.just({"lance-encoding:compression": "fsst"}))
        options.append(
            st.sampled_from(
                [{"lance-encoding:structural-encoding": "fullzip"}, {"lance-encoding:structural-encoding": "miniblock"}]
            )
        )
        options.append(st.just({"lance-encoding:dict-values-compression": "zstd"}))
    if pa.types.is_floating(data_type) and data_type.bit_width >= 32:
        options.append(st.just({"lance-encoding:compression": "zstd", "lance-encoding:bss": "on"}))
    if pa.types.is_integer(data_type):
        options.append(st.just({"lance-encoding:rle-threshold": "0.9"}))
    return st.one_of(options)


@st.composite
def encoded_tables(draw) -> tuple[pa.Table, str]:
    table = draw(strategies.arrow_tables(max_rows=40))
    columns = [(name, table.column(name).combine_chunks()) for name in table.column_names]
    columns += draw(extra_columns(table.num_rows))
    fields, arrays = [], []
    for name, array in columns:
        if pa.types.is_struct(array.type):
            array = _with_struct_nulls(array, draw(st.lists(st.booleans(), min_size=len(array), max_size=len(array))))
        metadata = draw(_metadata_choices(array.type))
        fields.append(pa.field(name, array.type, metadata=metadata or None))
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)), draw(st.sampled_from(["2.1", "2.2"]))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(encoded_tables())
def test_the_reference_reads_what_pylance_writes_at_2_1_and_2_2(case):
    table, version = case
    with tempfile.TemporaryDirectory(prefix="v21-property-") as directory:
        lance.write_dataset(table, directory, data_storage_version=version, mode="overwrite")
        theirs = lance.dataset(directory).to_table()
        ours = Dataset.open(directory).to_table()
    result = compare_tables(theirs, ours)
    assert not result.differences, (version, table.schema, result.differences)


def _reference_reads_pylance(tmp_path, table: pa.Table, version: str) -> None:
    lance.write_dataset(table, str(tmp_path), data_storage_version=version)
    result = compare_tables(lance.dataset(str(tmp_path)).to_table(), Dataset.open(str(tmp_path)).to_table())
    assert not result.differences


def test_a_2_2_boolean_page_of_one_repeated_value(tmp_path):
    table = pa.table({"c": pa.array([None, None, False])})
    _reference_reads_pylance(tmp_path, table, "2.2")


def test_a_fixed_size_list_of_null_items(tmp_path):
    table = pa.table({"c": pa.array([[None, None]] * 3, pa.list_(pa.int32(), 2))})
    _reference_reads_pylance(tmp_path, table, "2.1")


def test_a_2_2_large_string_page_of_one_repeated_value(tmp_path):
    table = pa.table({"c": pa.array([None, None, ""], pa.large_string())})
    _reference_reads_pylance(tmp_path, table, "2.2")
