"""Blob columns of Lance 2.0 files (``lance-encoding:blob``) against pylance 14.

A large_binary field carrying ``lance-encoding:blob`` is stored with the
2.0 blob column encoding: the values open the file (one 64-byte aligned
buffer per non-empty value) and the column's pages are packed (position,
size) descriptions, ``(1, 0)`` for a null and ``(0, 0)`` for an empty
value. The tests read pylance's files with the reference reader, read the
reference writer's files with pylance (file reader and dataset), compare the
bytes of both writers, and feed the reader damaged descriptions.
"""

from __future__ import annotations

import struct

import lance
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lance.file import LanceFileReader as PylanceReader
from lance.file import LanceFileWriter as PylanceWriter
from lance.fragment import DataFile as PylanceDataFile
from lance.fragment import FragmentMetadata

from reference_impl.dataset import Dataset
from reference_impl.errors import CorruptFileError, UnsupportedFeatureError
from reference_impl.file_format import LanceFileReader, write_file, write_v2_0
from reference_impl.storage import LocalStorage
from reference_impl.wire import encodings_v2_0_pb2 as enc
from tests.hypothesis_budget import examples
from tests.reference_impl.file_format.test_file_format import (
    _fields,
    _page_encoding,
    _pylance_fields,
    _set_page_encoding,
    _v2_file,
    _v2_parts,
)

BLOB = {"lance-encoding:blob": "true"}
MiB = 1 << 20


def _blob_field(name: str = "payload", nullable: bool = True) -> pa.Field:
    return pa.field(name, pa.large_binary(), nullable=nullable, metadata=BLOB)


def _blobs(values) -> pa.Array:
    return pa.array(values, pa.large_binary())


def _one_column(values, nullable: bool = True) -> pa.Table:
    return pa.table({"payload": _blobs(values)}, schema=pa.schema([_blob_field(nullable=nullable)]))


# -- tables -----------------------------------------------------------------------


def _sizes() -> pa.Table:
    # Around the 64-byte alignment of value buffers, and one of a megabyte.
    values = [bytes([n % 256]) * n for n in (1, 63, 64, 65, 127, 128, 1000)] + [b"\xab" * MiB]
    return _one_column(values)


def _nulls_and_empty() -> pa.Table:
    return _one_column([b"\x00" * 8, None, b"blob", b"", None, b"", b"tail"])


def _all_null() -> pa.Table:
    return _one_column([None, None, None])


def _all_empty() -> pa.Table:
    return _one_column([b"", b""])


def _no_rows() -> pa.Table:
    return _one_column([])


def _not_nullable() -> pa.Table:
    return _one_column([b"q", b"", b"rr"], nullable=False)


def _with_other_columns() -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), _blob_field(), pa.field("label", pa.string())])
    return pa.table(
        {"id": [1, 2, 3], "payload": _blobs([b"ab", b"cde", None]), "label": ["x", None, "z"]}, schema=schema
    )


def _nested() -> pa.Table:
    # Blob values of every column open the file in column order: a, s.b, c, l.item.
    struct_type = pa.struct([_blob_field("b"), pa.field("i", pa.int32())])
    list_type = pa.list_(_blob_field("item"))
    schema = pa.schema([_blob_field("a"), pa.field("s", struct_type), _blob_field("c"), pa.field("l", list_type)])
    return pa.table(
        {
            "a": _blobs([b"A1", b"A2", None]),
            "s": pa.array([{"b": b"B1", "i": 1}, {"b": None, "i": 2}, {"b": b"", "i": 3}], struct_type),
            "c": _blobs([None, b"C2" * 40, b"C3"]),
            "l": pa.array([[b"x", None], None, [b"", b"yy"]], list_type),
        },
        schema=schema,
    )


TABLES = {
    "sizes": _sizes,
    "nulls_and_empty": _nulls_and_empty,
    "all_null": _all_null,
    "all_empty": _all_empty,
    "no_rows": _no_rows,
    "not_nullable": _not_nullable,
    "with_other_columns": _with_other_columns,
    "nested": _nested,
}


# -- helpers ----------------------------------------------------------------------


def _pylance_write(path, table: pa.Table, batches=None) -> None:
    writer = PylanceWriter(str(path), schema=table.schema, version="2.0")
    for batch in batches or [table]:
        writer.write_batch(batch)
    writer.close()


def _pylance_read(path) -> pa.Table:
    return PylanceReader(str(path)).read_all().to_table()


def _assert_same(actual: pa.Table, expected: pa.Table) -> None:
    """Equal rows and equal schemas, field metadata included."""
    assert actual.schema.equals(expected.schema, check_metadata=True), f"\n{actual.schema}\n!=\n{expected.schema}"
    assert actual.combine_chunks().equals(expected.combine_chunks()), (
        f"\nactual:   {actual.to_pylist()}\nexpected: {expected.to_pylist()}"
    )


def _column_encoding_kinds(reader: LanceFileReader) -> list[str]:
    return ["blob" if index in reader.blob_columns else "values" for index in range(reader.num_columns)]


# -- pylance's files, read by the reference reader ------------------------------------


@pytest.mark.parametrize("name", sorted(TABLES))
def test_reference_reader_reads_pylance_blob_files(tmp_path, name):
    table = TABLES[name]()
    _pylance_write(tmp_path / "theirs.lance", table)
    reader = LanceFileReader(LocalStorage(tmp_path), "theirs.lance")
    # The schema (field metadata included) is derived from the file's own
    # fields and matches what pylance reports for the same file.
    _assert_same(reader.read(), _pylance_read(tmp_path / "theirs.lance"))
    _assert_same(reader.read(), table)


def test_reference_reader_reads_pylance_blob_pages_written_in_several_batches(tmp_path):
    table = _nulls_and_empty()
    _pylance_write(tmp_path / "theirs.lance", table, [table.slice(0, 3), table.slice(3)])
    _assert_same(LanceFileReader(LocalStorage(tmp_path), "theirs.lance").read(), table)


def test_reference_reader_reads_pylance_blob_column_split_into_pages(tmp_path):
    # 2.2M descriptions are 35 MB, over pylance's 32 MiB page: two pages.
    rows = 2_200_000
    values = [None] * rows
    for row in range(0, rows, 997):
        values[row] = row.to_bytes(4, "little") * (row % 7)
    table = _one_column(values)
    _pylance_write(tmp_path / "theirs.lance", table)
    reader = LanceFileReader(LocalStorage(tmp_path), "theirs.lance")
    assert len(reader.metadata.columns[0].pages) == 2
    _assert_same(reader.read(), table)
    assert write_v2_0(table, _pylance_fields(table.schema)).data == (tmp_path / "theirs.lance").read_bytes()


# -- the reference writer's files, read by pylance, and compared with pylance's ----------


@pytest.mark.parametrize("name", sorted(TABLES))
def test_reference_blob_bytes_equal_pylance_bytes(tmp_path, name):
    table = TABLES[name]()
    _pylance_write(tmp_path / "theirs.lance", table)
    ours = write_v2_0(table, _pylance_fields(table.schema))
    assert ours.data == (tmp_path / "theirs.lance").read_bytes()


@pytest.mark.parametrize("name", sorted(TABLES))
def test_pylance_reads_reference_blob_files(tmp_path, name):
    table = TABLES[name]()
    storage = LocalStorage(tmp_path)
    write_file(storage, "ours.lance", table, _fields(table.schema))
    _assert_same(_pylance_read(tmp_path / "ours.lance"), table)
    reader = LanceFileReader(storage, "ours.lance")
    assert "blob" in _column_encoding_kinds(reader)
    _assert_same(reader.read(), table)


def test_large_blob_columns_are_ordered_and_paged_like_pylance(tmp_path):
    """Blob values open the file even when other columns are written early
    (over 8 MiB); a blob column's own early/page decisions follow the size of
    its descriptions (16 bytes a row), not of its values."""
    rows = 400_000
    values = [None] * rows
    for row in range(0, rows, 1000):
        values[row] = bytes([row % 251]) * (row % 200 + 1)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(rows * 8, np.float32)), 8)  # 12.8 MB: early
    many = 600_000  # descriptions of 9.6 MB: early, ahead of the 4.8 MB ids
    cases = {
        "vectors_first": pa.table(
            {"vec": vectors, "payload": _blobs(values)},
            schema=pa.schema([pa.field("vec", vectors.type), _blob_field()]),
        ),
        "blob_first": pa.table(
            {"payload": _blobs(values), "vec": vectors},
            schema=pa.schema([_blob_field(), pa.field("vec", vectors.type)]),
        ),
        "early_descriptions": pa.table(
            {"id": pa.array(np.arange(many)), "payload": _blobs([b"v"] + [None] * (many - 1))},
            schema=pa.schema([pa.field("id", pa.int64()), _blob_field()]),
        ),
        "one_large_value": _one_column([b"w" * (9 * MiB), None]),
    }
    for name, table in cases.items():
        _pylance_write(tmp_path / f"{name}.lance", table)
        ours = write_v2_0(table, _pylance_fields(table.schema))
        assert ours.data == (tmp_path / f"{name}.lance").read_bytes(), name


def test_sliced_and_chunked_blob_input_is_written_as_its_values(tmp_path):
    table = pa.concat_tables([_nulls_and_empty(), _nulls_and_empty()]).slice(2, 9)
    assert table.column("payload").num_chunks == 2
    storage = LocalStorage(tmp_path)
    write_file(storage, "ours.lance", table, _fields(table.schema))
    _assert_same(_pylance_read(tmp_path / "ours.lance"), table.combine_chunks())
    _assert_same(LanceFileReader(storage, "ours.lance").read(), table.combine_chunks())


def test_empty_items_of_a_list_of_blobs_leave_the_items_column_without_pages(tmp_path):
    """pylance 14 panics writing a list of blobs with no items at all (it
    cannot encode an empty blob page); the reference writer gives the items
    column no page, and pylance and the reference reader read that back."""
    list_type = pa.list_(_blob_field("item"))
    table = pa.table({"l": pa.array([[], None, []], list_type)}, schema=pa.schema([pa.field("l", list_type)]))
    storage = LocalStorage(tmp_path)
    write_file(storage, "ours.lance", table, _fields(table.schema))
    reader = LanceFileReader(storage, "ours.lance")
    assert _column_encoding_kinds(reader) == ["values", "blob"]
    assert len(reader.metadata.columns[1].pages) == 0
    _assert_same(reader.read(), table)
    _assert_same(_pylance_read(tmp_path / "ours.lance"), table)


def test_pylance_dataset_reads_a_fragment_of_reference_blob_files(tmp_path):
    table = _with_other_columns()
    storage = LocalStorage(tmp_path / "ds")
    written = write_file(storage, "data/ours.lance", table, _fields(table.schema))
    fragment = FragmentMetadata(
        id=0,
        files=[PylanceDataFile("ours.lance", written.fields, written.column_indices, 2, 0, written.size)],
        physical_rows=written.num_rows,
    )
    dataset = lance.LanceDataset.commit(str(tmp_path / "ds"), lance.LanceOperation.Overwrite(table.schema, [fragment]))
    _assert_same(dataset.to_table(blob_handling="all_binary"), table)
    # By default pylance returns the descriptions themselves: they are the
    # positions and sizes the reference writer chose.
    descriptions = dataset.to_table(columns=["payload"]).column("payload").combine_chunks()
    assert descriptions.to_pylist() == [
        {"position": 0, "size": 2},
        {"position": 64, "size": 3},
        {"position": 1, "size": 0},
    ]
    blob_files = dataset.take_blobs("payload", indices=[0, 1])
    assert [blob.read() for blob in blob_files] == [b"ab", b"cde"]


def test_pylance_reads_a_reference_dataset_with_a_blob_column(tmp_path):
    table = _nulls_and_empty()
    Dataset.create(tmp_path / "ds", table)
    dataset = lance.dataset(str(tmp_path / "ds"))
    assert dataset.data_storage_version == "2.0"
    _assert_same(dataset.to_table(blob_handling="all_binary"), table)


def test_writer_refuses_blob_marks_on_other_types():
    # pylance refuses these too ("Expected large_binary").
    for data_type in (pa.binary(), pa.large_string(), pa.int64()):
        schema = pa.schema([pa.field("payload", data_type, metadata=BLOB)])
        table = pa.table({"payload": pa.array([None], data_type)}, schema=schema)
        with pytest.raises(ValueError, match="payload.*lance-encoding:blob.*large_binary"):
            write_v2_0(table, _fields(schema))


def test_any_value_of_the_blob_key_marks_a_blob_column(tmp_path):
    """pylance treats the key's presence as the mark (even "false"), and reads
    a marked column only in the blob encoding; the writer does the same."""
    schema = pa.schema([pa.field("payload", pa.large_binary(), metadata={"lance-encoding:blob": "false"})])
    table = pa.table({"payload": _blobs([b"a", None])}, schema=schema)
    _pylance_write(tmp_path / "theirs.lance", table)
    assert write_v2_0(table, _pylance_fields(schema)).data == (tmp_path / "theirs.lance").read_bytes()


# -- property: round trip and agreement with pylance ----------------------------------------

blob_values = st.lists(st.one_of(st.none(), st.binary(max_size=150)), max_size=40)


@settings(
    max_examples=examples(1),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=blob_values, nullable=st.booleans(), start=st.integers(0, 3))
def test_blob_round_trip_and_pylance_agrees(tmp_path_factory, values, nullable, start):
    """Property: any list of binary values (nulls and empty values included,
    the array possibly sliced) written by the reference writer reads back
    equal with the reference reader and with pylance, and the file is byte for
    byte the one pylance writes."""
    if not nullable:
        values = [b"" if value is None else value for value in values]
    padded = _blobs([b"skipped"] * start + values)
    table = pa.table({"payload": padded.slice(start)}, schema=pa.schema([_blob_field(nullable=nullable)]))
    tmp_path = tmp_path_factory.mktemp("blob")
    storage = LocalStorage(tmp_path)
    write_file(storage, "ours.lance", table, _pylance_fields(table.schema))
    expected = table.combine_chunks()
    _assert_same(LanceFileReader(storage, "ours.lance").read(), expected)
    _assert_same(_pylance_read(tmp_path / "ours.lance"), expected)
    _pylance_write(tmp_path / "theirs.lance", _one_column(values, nullable))
    assert (tmp_path / "ours.lance").read_bytes() == (tmp_path / "theirs.lance").read_bytes()


# -- malformed descriptions -------------------------------------------------------------


@pytest.fixture
def blob_sample(tmp_path):
    """A reference file with a blob column (column 1) and what it holds."""
    table = _with_other_columns()
    data = write_v2_0(table, _fields(table.schema)).data
    return tmp_path, table, data


def _with_descriptions(sample, rows, name="bad.lance", length=None):
    """The sample with the blob page's descriptions replaced by ``rows``
    (a list of (position, size)), appended as a new buffer."""
    tmp_path, table, data = sample
    data_section, columns, descriptor, version = _v2_parts(data)
    packed = b"".join(struct.pack("<QQ", position, size) for position, size in rows)
    page = columns[1].pages[0]
    page.buffer_offsets[0] = len(data_section)
    page.buffer_sizes[0] = len(packed)
    if length is not None:
        page.length = length
    (tmp_path / name).write_bytes(_v2_file(data_section + packed, columns, descriptor, version))
    return LocalStorage(tmp_path)


@pytest.mark.parametrize(
    "rows, problem",
    [
        ([(0, 2), (64, 3), (10**9, 1)], r"row 2 at \[1000000000, 1000000001\) lies outside the file"),
        ([(0, 2), (64, 10**9), (1, 0)], "row 1 .* lies outside the file"),
        ([(0, 2), (2**64 - 1, 2), (1, 0)], "row 1 .* lies outside the file"),
        ([(0, 2**63), (64, 3), (1, 0)], "row 0 .* lies outside the file"),
        ([(0, 2**64 - 1), (1, 2**64 - 1), (1, 0)], "row 0 .* lies outside the file"),
    ],
)
def test_blob_value_outside_the_file_is_corrupt(blob_sample, rows, problem):
    storage = _with_descriptions(blob_sample, rows)
    with pytest.raises(CorruptFileError, match=f"bad.lance.*column 1 page 0: blob value of {problem}"):
        LanceFileReader(storage, "bad.lance").read()


def test_blob_values_adding_up_past_the_file_size_are_corrupt(blob_sample):
    tmp_path, table, data = blob_sample
    # Every row names the same range, each inside the file, but 3 rows of
    # two-thirds of the file add up to twice its size.
    size = len(data) * 2 // 3
    storage = _with_descriptions(blob_sample, [(0, size)] * 3)
    with pytest.raises(CorruptFileError, match="bad.lance.*add up to more bytes than the file holds"):
        LanceFileReader(storage, "bad.lance").read()


def test_too_few_blob_descriptions_are_corrupt(blob_sample):
    storage = _with_descriptions(blob_sample, [(0, 2)])
    with pytest.raises(CorruptFileError, match="bad.lance.*3 blob descriptions need 48 bytes but the buffer has 16"):
        LanceFileReader(storage, "bad.lance").read()


def test_blob_page_in_another_encoding_is_corrupt(blob_sample):
    tmp_path, table, data = blob_sample
    data_section, columns, descriptor, version = _v2_parts(data)
    encoding = _page_encoding(columns[1].pages[0])
    plain = enc.ArrayEncoding(flat=enc.Flat(bits_per_value=64, buffer=enc.Buffer()))
    _set_page_encoding(columns[1].pages[0], plain)
    (tmp_path / "flat.lance").write_bytes(_v2_file(data_section, columns, descriptor, version))
    with pytest.raises(CorruptFileError, match="flat.lance.*column 1 page 0: a blob column page is encoded as flat"):
        LanceFileReader(LocalStorage(tmp_path), "flat.lance").read()
    # Descriptions of other widths are not (position, size).
    encoding.packed_struct.inner[1].nullable.no_nulls.values.flat.bits_per_value = 32
    _set_page_encoding(columns[1].pages[0], encoding)
    (tmp_path / "narrow.lance").write_bytes(_v2_file(data_section, columns, descriptor, version))
    with pytest.raises(CorruptFileError, match=r"narrow.lance.*two 64-bit values .* widths \[64, 32\]"):
        LanceFileReader(LocalStorage(tmp_path), "narrow.lance").read()


def test_blob_column_read_as_another_type_is_corrupt(blob_sample):
    tmp_path, table, data = blob_sample
    (tmp_path / "ok.lance").write_bytes(data)
    reader = LanceFileReader(LocalStorage(tmp_path), "ok.lance")
    schema = pa.schema([table.schema.field("id"), pa.field("payload", pa.int64()), table.schema.field("label")])
    with pytest.raises(
        CorruptFileError, match="ok.lance.*column 1 is a blob column but field 'payload' is read as int64"
    ):
        reader.read(arrow_schema=schema)
    # As binary (32-bit offsets) the values read fine.
    binary = pa.schema([table.schema.field("id"), pa.field("payload", pa.binary()), table.schema.field("label")])
    assert reader.read(arrow_schema=binary).column("payload").to_pylist() == [b"ab", b"cde", None]


def test_blob_over_an_unknown_column_encoding_is_unsupported(blob_sample):
    from reference_impl.file_format.footer import pack_any
    from reference_impl.wire import file2_pb2

    tmp_path, table, data = blob_sample
    data_section, columns, descriptor, version = _v2_parts(data)
    zoned = enc.ColumnEncoding(blob=enc.Blob(inner=enc.ColumnEncoding(zone_index=enc.ZoneIndex(rows_per_zone=8))))
    columns[1].encoding.CopyFrom(file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(zoned))))
    (tmp_path / "zoned.lance").write_bytes(_v2_file(data_section, columns, descriptor, version))
    with pytest.raises(UnsupportedFeatureError, match="zoned.lance.*column 1: a blob column over zone_index"):
        LanceFileReader(LocalStorage(tmp_path), "zoned.lance")


u64 = st.one_of(st.integers(0, 2048), st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 2**63, 2**64 - 1]))


@settings(
    max_examples=examples(1),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=st.lists(st.tuples(u64, u64), min_size=3, max_size=3))
def test_any_blob_descriptions_read_or_are_corrupt(tmp_path_factory, rows):
    """Property: whatever (position, size) pairs a blob page holds, the reader
    either returns values that lie in the file or raises CorruptFileError
    naming it; nothing else escapes."""
    tmp_path = tmp_path_factory.mktemp("fuzz")
    table = _with_other_columns()
    sample = (tmp_path, table, write_v2_0(table, _fields(table.schema)).data)
    storage = _with_descriptions(sample, rows, name="fuzzed.lance")
    try:
        column = LanceFileReader(storage, "fuzzed.lance").read().column("payload").combine_chunks()
    except CorruptFileError as exc:
        assert "fuzzed.lance" in str(exc)
        return
    data = (tmp_path / "fuzzed.lance").read_bytes()
    for (position, size), value in zip(rows, column.to_pylist(), strict=True):
        if (position, size) == (1, 0):
            assert value is None
        else:
            assert value == data[position : position + size]
