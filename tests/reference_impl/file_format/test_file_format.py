"""The data file layer (``reference_impl.file_format``) against pylance 14.

Every test works on real files on disk. pylance is the peer: its
``LanceFileWriter``/``LanceFileReader`` (``version="2.0"``) and datasets
written with ``data_storage_version`` legacy, 2.0, 2.1 and 2.2.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import re
import struct

import lance
import numpy as np
import pyarrow as pa
import pytest
from google.protobuf import any_pb2
from hypothesis import HealthCheck, given, settings
from lance.file import LanceFileReader as PylanceReader
from lance.file import LanceFileWriter as PylanceWriter
from lance.fragment import DataFile as PylanceDataFile
from lance.fragment import FragmentMetadata

from conformance import strategies
from reference_impl.dataset import Dataset
from reference_impl.errors import CorruptFileError, UnsupportedFeatureError
from reference_impl.file_format import LanceFileReader, inspect_file, read_v2_0, write_file, write_v2_0
from reference_impl.logical_types import schema_from_arrow
from reference_impl.schema import FieldType
from reference_impl.storage import LocalStorage
from reference_impl.wire import encodings_v2_0_pb2 as enc
from reference_impl.wire import file2_pb2, file_pb2

# -- tables, one per type family ----------------------------------------------


def _ints() -> pa.Table:
    columns = {}
    for data_type in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()):
        bits = data_type.bit_width
        low, high = (
            (0, 2**bits - 1) if pa.types.is_unsigned_integer(data_type) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        )
        columns[str(data_type)] = pa.array([low, None, high, 0, None, 7], data_type)
    return pa.table(columns)


def _floats_and_bools() -> pa.Table:
    return pa.table(
        {
            "f16": pa.array(
                np.array([1.5, 0, -2, 65504, 0, 1], dtype=np.float16), mask=np.array([0, 1, 0, 0, 0, 1], bool)
            ),
            "f32": pa.array([1.5, None, -0.0, float("inf"), 3.25, None], pa.float32()),
            "f64": pa.array([None, 1e300, -1e-300, 2.0, None, 0.5], pa.float64()),
            "flag": pa.array([True, None, False, True, True, None]),
            "flags_no_nulls": pa.array([True, False, False, True, True, False]),
        }
    )


def _decimals_and_temporal() -> pa.Table:
    return pa.table(
        {
            "dec": pa.array([decimal.Decimal("1.23"), None, decimal.Decimal("-99999999.99")], pa.decimal128(10, 2)),
            "date32": pa.array([datetime.date(2024, 2, 29), None, datetime.date(1900, 1, 1)], pa.date32()),
            "date64": pa.array([86_400_000, None, 0], pa.date64()),
            "time32": pa.array([1, None, 86399], pa.time32("s")),
            "time64": pa.array([1, None, 86_399_999_999_999], pa.time64("ns")),
            "ts_utc": pa.array([1, None, -3], pa.timestamp("us", tz="UTC")),
            "ts_tokyo": pa.array([1, 2, None], pa.timestamp("ms", tz="Asia/Tokyo")),
            "ts_naive": pa.array([None, 2, 3], pa.timestamp("ns")),
            "duration": pa.array([1, None, -7], pa.duration("ms")),
            "dec256": pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("-2")], pa.decimal256(40, 3)),
            "nothing": pa.nulls(3),
        }
    )


def _variable_width() -> pa.Table:
    return pa.table(
        {
            "s": pa.array(["a", None, "", "ünïcødé", "x" * 300]),
            "ls": pa.array([None, "b", "", "cc", None], pa.large_string()),
            "bin": pa.array([b"\x00\xff", None, b"", b"z", b"yy"], pa.binary()),
            "lbin": pa.array([b"", b"\x01", None, None, b"\x02\x03"], pa.large_binary()),
            "fsb": pa.array([b"ab", None, b"cd", b"\x00\x00", None], pa.binary(2)),
        }
    )


def _low_cardinality_strings() -> pa.Table:
    # pylance dictionary-encodes utf8 pages of >= 100 rows with < 100 values.
    values = ["red", None, "green", "", "red", "blue"] * 40
    return pa.table({"colour": pa.array(values), "nulls": pa.array([None] * 240, pa.string())})


def _vectors() -> pa.Table:
    rng = np.random.default_rng(7)
    items = pa.array(rng.random(64, dtype=np.float32))
    vectors = pa.FixedSizeListArray.from_arrays(
        items, 8, mask=pa.array([False, True, False, False, False, False, False, True])
    )
    item_nulls = pa.array([[1, None], [3, 4], None, [None, None]], pa.list_(pa.int16(), 2))
    nested = pa.array([[[1, 2], [3, 4]], None, [[5, None], [7, 8]]], pa.list_(pa.list_(pa.int32(), 2), 2))
    return pa.table(
        {
            "vec": vectors,
            "no_null_vec": pa.FixedSizeListArray.from_arrays(items, 8),
            "pairs": pa.concat_arrays([item_nulls, item_nulls])[:8],
            "nested": pa.concat_arrays([nested] * 3)[:8],
        }
    )


def _nested() -> pa.Table:
    point = pa.struct([("x", pa.int32()), ("tags", pa.list_(pa.string()))])
    return pa.table(
        {
            "point": pa.array([{"x": 1, "tags": ["a"]}, {"x": None, "tags": None}, {"x": 3, "tags": []}], point),
            "ints": pa.array([[1, 2], None, []], pa.list_(pa.int64())),
            "big": pa.array([[1], [], None], pa.large_list(pa.int8())),
            "records": pa.array(
                [[{"a": 1, "b": "x"}], None, [{"a": None, "b": None}, {"a": 3, "b": "z"}]],
                pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())])),
            ),
            "matrix": pa.array([[[1], None], None, [[], [2, 3]]], pa.list_(pa.list_(pa.int32()))),
            "deep": pa.array(
                [{"inner": {"v": 1.5}}, {"inner": {"v": None}}, {"inner": {"v": 2.5}}],
                pa.struct([("inner", pa.struct([("v", pa.float64())]))]),
            ),
        }
    )


def _all_null() -> pa.Table:
    return pa.table(
        {
            "i": pa.nulls(3, pa.int32()),
            "s": pa.nulls(3, pa.string()),
            "l": pa.nulls(3, pa.list_(pa.int8())),
            "v": pa.nulls(3, pa.list_(pa.float32(), 2)),
            "b": pa.nulls(3, pa.bool_()),
            "empty_lists": pa.array([[], [], []], pa.list_(pa.string())),
        }
    )


def _empty() -> pa.Table:
    return _nested().slice(0, 0).append_column("n", pa.array([], pa.int64()))


TABLES = {
    "ints": _ints,
    "floats_and_bools": _floats_and_bools,
    "decimals_and_temporal": _decimals_and_temporal,
    "variable_width": _variable_width,
    "low_cardinality_strings": _low_cardinality_strings,
    "vectors": _vectors,
    "nested": _nested,
    "all_null": _all_null,
    "empty": _empty,
}


# -- helpers ------------------------------------------------------------------


def _fields(schema: pa.Schema):
    return schema_from_arrow(schema).fields


def _pylance_fields(schema: pa.Schema):
    """The fields as pylance records them: every field's ``type`` is PARENT
    (docs/spec-discrepancies.md), which changes the schema bytes stored in
    the file; the byte-for-byte comparisons use this convention."""
    return [dataclasses.replace(f, type=FieldType.PARENT) for f in _fields(schema)]


def _pylance_write(path, table: pa.Table) -> None:
    writer = PylanceWriter(str(path), schema=table.schema, version="2.0")
    writer.write_batch(table)
    writer.close()


def _pylance_read(path) -> pa.Table:
    return PylanceReader(str(path)).read_all().to_table()


def _assert_tables_equal(actual: pa.Table, expected: pa.Table) -> None:
    assert actual.schema == expected.schema
    assert actual.num_rows == expected.num_rows
    assert actual.equals(expected), f"\nactual:   {actual.to_pylist()}\nexpected: {expected.to_pylist()}"


# -- (a) the reference writer, read back by pylance and by the reference reader


@pytest.mark.parametrize("name", sorted(TABLES))
def test_reference_file_reads_back_equal_in_pylance_and_reference(tmp_path, name):
    table = TABLES[name]()
    storage = LocalStorage(tmp_path)
    fields = _fields(table.schema)
    written = write_file(storage, "ours.lance", table, fields)

    assert written.fields == [f.id for f in fields]
    assert written.column_indices == list(range(len(fields)))
    assert written.num_rows == table.num_rows
    assert (written.major, written.minor) == (2, 0)
    _assert_tables_equal(_pylance_read(tmp_path / "ours.lance"), table)
    _assert_tables_equal(LanceFileReader(storage, "ours.lance").read(arrow_schema=table.schema), table)
    # Without an Arrow schema the types come from the fields' logical types.
    _assert_tables_equal(read_v2_0(storage, "ours.lance", fields, written.fields, written.column_indices), table)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_reference_bytes_equal_pylance_bytes(tmp_path, name):
    table = TABLES[name]()
    _pylance_write(tmp_path / "theirs.lance", table)
    ours = write_v2_0(table, _pylance_fields(table.schema))
    assert ours.data == (tmp_path / "theirs.lance").read_bytes()


def test_large_columns_are_paged_and_ordered_like_pylance(tmp_path):
    # 1.2M rows: the string and vector columns pass 8 MiB (written first by
    # pylance) and the vectors pass 32 MiB (split into pages).
    rows = 1_200_000
    rng = np.random.default_rng(1)
    table = pa.table(
        {
            "id": pa.array(np.arange(rows)),
            "name": pa.compute.cast(pa.array(np.arange(rows) * 7), pa.string()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * 8, dtype=np.float32)), 8),
        }
    )
    _pylance_write(tmp_path / "theirs.lance", table)
    ours = write_v2_0(table, _pylance_fields(table.schema))
    assert ours.data == (tmp_path / "theirs.lance").read_bytes()
    reader = LanceFileReader(LocalStorage(tmp_path), "theirs.lance")
    assert len(reader.metadata.columns[2].pages) == 2
    _assert_tables_equal(reader.read(arrow_schema=table.schema), table)


def test_sliced_and_chunked_input_is_written_as_its_values(tmp_path):
    # Two chunks; the slice starts inside the first and ends inside the second.
    table = pa.concat_tables([_nested(), _nested()]).slice(1, 4)
    assert table.column("ints").num_chunks == 2
    storage = LocalStorage(tmp_path)
    write_file(storage, "ours.lance", table, _fields(table.schema))
    expected = table.combine_chunks()
    _assert_tables_equal(_pylance_read(tmp_path / "ours.lance").combine_chunks(), expected)
    _assert_tables_equal(
        LanceFileReader(storage, "ours.lance").read(arrow_schema=table.schema).combine_chunks(), expected
    )


def test_pylance_dataset_reads_a_fragment_of_reference_files(tmp_path):
    table = pa.concat_tables([_nested(), _nested()])
    storage = LocalStorage(tmp_path / "ds")
    written = write_file(storage, "data/ours.lance", table, _fields(table.schema))
    fragment = FragmentMetadata(
        id=0,
        files=[PylanceDataFile("ours.lance", written.fields, written.column_indices, 2, 0, written.size)],
        physical_rows=written.num_rows,
    )
    dataset = lance.LanceDataset.commit(str(tmp_path / "ds"), lance.LanceOperation.Overwrite(table.schema, [fragment]))
    assert dataset.data_storage_version == "2.0"
    _assert_tables_equal(dataset.to_table(), table)
    assert dataset.to_table(columns=["records"]).column(0).equals(table.column("records"))


def test_extension_types_are_stored_as_their_storage(tmp_path):
    table = pa.table({"id": pa.array([bytes(range(16)), None, b"\xff" * 16], pa.uuid())})
    storage = LocalStorage(tmp_path)
    written = write_file(storage, "ours.lance", table, _fields(table.schema))
    (stored,) = LanceFileReader(storage, "ours.lance").file_fields
    assert (stored.logical_type, stored.extension_name) == ("fixed_size_binary:16", "arrow.uuid")
    _assert_tables_equal(_pylance_read(tmp_path / "ours.lance"), table)
    _assert_tables_equal(
        read_v2_0(storage, "ours.lance", _fields(table.schema), written.fields, written.column_indices), table
    )


def test_writer_refuses_what_version_2_0_cannot_store():
    with_null_struct = pa.table({"s": pa.array([{"a": 1}, None], pa.struct([("a", pa.int8())]))})
    with pytest.raises(ValueError, match="struct validity"):
        write_v2_0(with_null_struct, _fields(with_null_struct.schema))
    required = pa.schema([pa.field("n", pa.int32(), nullable=False)])
    with pytest.raises(ValueError, match="not nullable"):
        write_v2_0(pa.table({"n": pa.array([1, None], pa.int32())}), _fields(required))
    mismatched = pa.table({"other": pa.array([1])})
    with pytest.raises(ValueError, match="do not match"):
        write_v2_0(mismatched, _fields(pa.schema([("n", pa.int64())])))


# -- (b) files pylance writes, read by the reference reader -------------------


@pytest.mark.parametrize("name", sorted(TABLES))
def test_reference_reader_reads_pylance_files(tmp_path, name):
    table = TABLES[name]()
    _pylance_write(tmp_path / "theirs.lance", table)
    storage = LocalStorage(tmp_path)
    reader = LanceFileReader(storage, "theirs.lance")
    _assert_tables_equal(reader.read(arrow_schema=table.schema), table)
    assert [f.name for f in reader.file_fields] == [f.name for f in _fields(table.schema)]
    info = inspect_file(storage, "theirs.lance")
    metadata = PylanceReader(str(tmp_path / "theirs.lance")).metadata()
    assert (info.major, info.minor, info.footer_major, info.footer_minor) == (2, 0, 0, 3)
    assert info.num_rows == metadata.num_rows == table.num_rows
    assert info.num_columns == len(metadata.columns)


def test_reader_converts_offsets_width_and_projects_fields(tmp_path):
    table = pa.table(
        {
            "a": pa.array([1, 2, 3]),
            "s": pa.array(["x", None, "zz"], pa.large_string()),
            "st": pa.array([{"p": 1, "q": "u"}, {"p": None, "q": "v"}, {"p": 3, "q": None}]),
        }
    )
    _pylance_write(tmp_path / "f.lance", table)
    fields = _fields(table.schema)
    by_name = {f.name: f for f in fields}
    wanted = [by_name["st"], by_name["q"], by_name["s"]]
    wanted_schema = pa.schema([("st", pa.struct([("q", pa.string())])), ("s", pa.string())])
    ids = [f.id for f in fields]
    got = read_v2_0(LocalStorage(tmp_path), "f.lance", wanted, ids, list(range(len(ids))), wanted_schema)
    assert got.schema == wanted_schema
    assert got.to_pylist() == [
        {"st": {"q": "u"}, "s": "x"},
        {"st": {"q": "v"}, "s": None},
        {"st": {"q": None}, "s": "zz"},
    ]


def test_field_the_file_lacks_reads_as_nulls(tmp_path):
    table = pa.table({"a": pa.array([1, 2])})
    storage = LocalStorage(tmp_path)
    written = write_file(storage, "f.lance", table, _fields(table.schema))
    extended = schema_from_arrow(pa.schema([("a", pa.int64()), ("b", pa.list_(pa.string()))]))
    got = read_v2_0(storage, "f.lance", extended.fields, written.fields, written.column_indices)
    assert got.to_pylist() == [{"a": 1, "b": None}, {"a": 2, "b": None}]


def test_reads_pylance_dataset_files_through_the_manifest_after_schema_changes(tmp_path):
    uri = tmp_path / "ds"
    table = pa.table(
        {"a": pa.array([1, 2, 3]), "nested": _nested().column("records"), "v": _vectors().column("vec")[:3]}
    )
    dataset = lance.write_dataset(table, str(uri), data_storage_version="2.0")
    dataset.add_columns({"doubled": "a * 2"})
    lance.dataset(str(uri)).drop_columns(["a"])
    expected = lance.dataset(str(uri)).to_table()

    ours = Dataset.open(uri)
    (fragment,) = ours.fragments
    assert [len(f.fields) for f in fragment.files] == [len(_fields(table.schema)), 1]
    columns = {}
    for data_file in fragment.files:
        location = ours.data_file_location(data_file)
        # The dropped field stays in the data file; ask only for live fields.
        fields = [f for f in ours.schema.fields if f.id in data_file.fields]
        part = read_v2_0(location.storage, location.relpath, fields, data_file.fields, data_file.column_indices)
        columns.update(zip(part.column_names, part.columns, strict=True))
    _assert_tables_equal(pa.table({name: columns[name] for name in expected.column_names}), expected)


# -- (c) inspect_file on every file version pylance writes --------------------


@pytest.mark.parametrize(
    "storage_version, footer_version, manifest_version",
    [("legacy", (0, 2), (0, 2)), ("2.0", (0, 3), (2, 0)), ("2.1", (2, 1), (2, 1)), ("2.2", (2, 2), (2, 2))],
)
def test_inspect_file_reports_versions_and_rows(tmp_path, storage_version, footer_version, manifest_version):
    rows = 1234
    table = pa.table(
        {"l": pa.array([[1, 2], None, []] * 411 + [[9]], pa.list_(pa.int32())), "i": pa.array(np.arange(rows))}
    )
    dataset = lance.write_dataset(table, str(tmp_path / "ds"), data_storage_version=storage_version)
    (data_file,) = dataset.get_fragments()[0].metadata.files
    storage = LocalStorage(tmp_path / "ds")
    info = inspect_file(storage, f"data/{data_file.path}")

    assert (info.footer_major, info.footer_minor) == footer_version
    assert (info.major, info.minor) == manifest_version == (data_file.file_major_version, data_file.file_minor_version)
    assert info.size == (tmp_path / "ds" / "data" / data_file.path).stat().st_size
    if storage_version == "legacy":
        assert (info.layout, info.num_rows, info.num_columns, info.num_global_buffers) == ("legacy", None, None, None)
        with pytest.raises(UnsupportedFeatureError, match=data_file.path):
            LanceFileReader(storage, f"data/{data_file.path}")
    else:
        metadata = PylanceReader(str(tmp_path / "ds" / "data" / data_file.path)).metadata()
        assert info.layout == "v2"
        assert info.num_rows == rows == metadata.num_rows
        assert info.num_columns == len(metadata.columns)
        assert info.num_global_buffers == 1


@pytest.mark.parametrize("storage_version", ["2.0", "2.2"])
def test_inspect_file_counts_rows_not_items_under_a_fixed_size_list_of_structs(tmp_path, storage_version):
    """From 2.1 on, the only column of a fixed-size list of structs is its
    leaf, whose pages count list items; the row count comes from the file
    descriptor instead (a 2-item list per row, 3 rows: 3, not 6)."""
    struct = pa.struct([pa.field("k", pa.int32(), False)])
    schema = pa.schema([pa.field("l", pa.list_(pa.field("item", struct, False), 2), False)])
    table = pa.Table.from_pylist([{"l": [{"k": i}, {"k": -i}]} for i in range(3)], schema=schema)
    dataset = lance.write_dataset(table, str(tmp_path / "ds"), data_storage_version=storage_version)
    (data_file,) = dataset.get_fragments()[0].metadata.files
    info = inspect_file(LocalStorage(tmp_path / "ds"), f"data/{data_file.path}")
    assert info.num_rows == 3 == PylanceReader(str(tmp_path / "ds" / "data" / data_file.path)).metadata().num_rows


def test_inspect_file_of_a_file_without_columns(tmp_path):
    written = write_v2_0(pa.table({}), [])
    (tmp_path / "f.lance").write_bytes(written.data)
    info = inspect_file(LocalStorage(tmp_path), "f.lance")
    assert (info.num_columns, info.num_rows, info.num_global_buffers) == (0, 0, 1)


# -- (d) corrupt files and unsupported encodings ------------------------------


def _v2_parts(data: bytes):
    """Split a v2 file into its data section, column metadata, descriptor and footer."""
    cm_start, cmo_start, gbo_start, num_buffers, num_columns, major, minor = struct.unpack("<QQQIIHH", data[-40:-4])
    columns = []
    for index in range(num_columns):
        position, size = struct.unpack_from("<QQ", data, cmo_start + 16 * index)
        columns.append(file2_pb2.ColumnMetadata.FromString(data[position : position + size]))
    buffers = [struct.unpack_from("<QQ", data, gbo_start + 16 * index) for index in range(num_buffers)]
    position, size = buffers[0]
    descriptor = file_pb2.FileDescriptor.FromString(data[position : position + size])
    return data[: buffers[0][0]], columns, descriptor, (major, minor)


def _v2_file(data_section: bytes, columns, descriptor, version=(0, 3)) -> bytes:
    """Lay out a v2 file the way pylance does, from already-placed page buffers."""
    out = bytearray(data_section)
    descriptor_bytes = descriptor.SerializeToString()
    buffer_table = [(len(out), len(descriptor_bytes))]
    out += descriptor_bytes
    cm_start = len(out)
    column_table = []
    for column in columns:
        raw = column.SerializeToString()
        column_table.append((len(out), len(raw)))
        out += raw
    cmo_start = len(out)
    for entry in column_table:
        out += struct.pack("<QQ", *entry)
    gbo_start = len(out)
    for entry in buffer_table:
        out += struct.pack("<QQ", *entry)
    out += struct.pack("<QQQIIHH", cm_start, cmo_start, gbo_start, len(buffer_table), len(column_table), *version)
    return bytes(out + b"LANC")


def _page_encoding(page) -> enc.ArrayEncoding:
    return enc.ArrayEncoding.FromString(any_pb2.Any.FromString(page.encoding.direct.encoding).value)


def _set_page_encoding(page, encoding: enc.ArrayEncoding, type_url="/lance.encodings.ArrayEncoding") -> None:
    page.encoding.direct.encoding = any_pb2.Any(
        type_url=type_url, value=encoding.SerializeToString()
    ).SerializeToString()


@pytest.fixture
def sample(tmp_path):
    """A small valid 2.0 file and what it holds."""
    table = pa.table(
        {
            "i": pa.array([1, None, 3], pa.int64()),
            "s": pa.array(["ab", None, "c"]),
            "l": pa.array([[1], None, [2, 3]], pa.list_(pa.int32())),
            "d": pa.array(["x", "y", None] * 40)[:3],
        }
    )
    data = write_v2_0(table, _fields(table.schema)).data
    return tmp_path, table, data


def _read(storage, name, table):
    return LanceFileReader(storage, name).read(arrow_schema=table.schema)


@pytest.mark.parametrize("keep", [0, 3, 7, 39, 100, -1, -5, -41])
def test_truncated_files_are_corrupt(sample, keep):
    tmp_path, table, data = sample
    (tmp_path / "cut.lance").write_bytes(data[:keep] if keep >= 0 else data[: len(data) + keep])
    storage = LocalStorage(tmp_path)
    for attempt in (lambda: inspect_file(storage, "cut.lance"), lambda: _read(storage, "cut.lance", table)):
        with pytest.raises(CorruptFileError, match="cut.lance"):
            attempt()


def test_wrong_magic_is_corrupt(sample):
    tmp_path, table, data = sample
    (tmp_path / "bad.lance").write_bytes(data[:-4] + b"LANX")
    with pytest.raises(CorruptFileError, match="bad.lance.*magic"):
        inspect_file(LocalStorage(tmp_path), "bad.lance")


@pytest.mark.parametrize(
    "offset_from_end, value",
    [
        (40, 2**60),  # column metadata start
        (32, 2**62),  # column metadata offsets table
        (24, 2**63),  # global buffer offsets table
    ],
)
def test_footer_positions_outside_the_file_are_corrupt(sample, offset_from_end, value):
    tmp_path, table, data = sample
    bad = bytearray(data)
    bad[len(bad) - offset_from_end : len(bad) - offset_from_end + 8] = struct.pack("<Q", value)
    (tmp_path / "bad.lance").write_bytes(bytes(bad))
    with pytest.raises(CorruptFileError, match="bad.lance"):
        _read(LocalStorage(tmp_path), "bad.lance", table)


def test_absurd_column_count_is_corrupt(sample):
    tmp_path, table, data = sample
    bad = bytearray(data)
    bad[-12:-8] = struct.pack("<I", 0xFFFFFFFF)
    (tmp_path / "bad.lance").write_bytes(bytes(bad))
    with pytest.raises(CorruptFileError, match="bad.lance.*outside"):
        inspect_file(LocalStorage(tmp_path), "bad.lance")


@pytest.mark.parametrize(
    "table_field, entry, expected",
    [
        (-32, 1, r"metadata of column 1 at \[\d+, \d+\) lies outside the allowed range"),
        (-32, 3, r"metadata of column 3 at \[\d+, \d+\) lies outside the allowed range"),
        (-24, 0, r"global buffer 0 at \[\d+, \d+\) lies outside the allowed range"),
    ],
)
def test_offsets_table_entry_outside_its_range_is_named(sample, table_field, entry, expected):
    """The first offsets table entry that points outside its range is the one
    the error names (entries before it are in range)."""
    tmp_path, table, data = sample
    (table_start,) = struct.unpack_from("<Q", data, len(data) + table_field)
    bad = bytearray(data)
    struct.pack_into("<Q", bad, table_start + 16 * entry, len(data) + 1)
    (tmp_path / "bad.lance").write_bytes(bytes(bad))
    with pytest.raises(CorruptFileError, match="bad.lance") as raised:
        inspect_file(LocalStorage(tmp_path), "bad.lance")
    assert re.search(expected, raised.value.problem)


def test_garbage_column_metadata_is_corrupt(sample):
    tmp_path, table, data = sample
    cmo_start = struct.unpack("<Q", data[-32:-24])[0]
    position, size = struct.unpack_from("<QQ", data, cmo_start)
    bad = data[:position] + b"\xff" * size + data[position + size :]
    (tmp_path / "bad.lance").write_bytes(bad)
    with pytest.raises(CorruptFileError, match="bad.lance.*column 0"):
        inspect_file(LocalStorage(tmp_path), "bad.lance")


def _mutated(sample, mutate, name="bad.lance"):
    """Write ``sample`` with its metadata changed by ``mutate(columns, descriptor)``."""
    tmp_path, table, data = sample
    data_section, columns, descriptor, version = _v2_parts(data)
    mutate(columns, descriptor)
    (tmp_path / name).write_bytes(_v2_file(data_section, columns, descriptor, version))
    return LocalStorage(tmp_path), table


def test_page_buffer_outside_the_file_is_corrupt(sample):
    def mutate(columns, descriptor):
        columns[0].pages[0].buffer_offsets[1] = 10**12

    storage, table = _mutated(sample, mutate)
    with pytest.raises(CorruptFileError, match="bad.lance.*column 0 page 0 buffer"):
        _read(storage, "bad.lance", table)


def test_absurd_all_null_page_length_is_corrupt(sample):
    rows = 2**40

    def mutate(columns, descriptor):
        for column in columns[:1]:
            del column.pages[:]
            column.pages.add(length=rows)
            _set_page_encoding(
                column.pages[0], enc.ArrayEncoding(nullable=enc.Nullable(all_nulls=enc.Nullable.AllNull()))
            )
        del columns[1:]
        del descriptor.schema.fields[1:]
        descriptor.length = rows

    storage, table = _mutated(sample, mutate)
    assert inspect_file(storage, "bad.lance").num_rows == rows
    with pytest.raises(CorruptFileError, match="bad.lance.*null values"):
        LanceFileReader(storage, "bad.lance").read(arrow_schema=table.select(["i"]).schema)


def test_row_counts_that_disagree_are_corrupt(sample):
    def mutate(columns, descriptor):
        columns[1].pages[0].length = 2

    storage, table = _mutated(sample, mutate)
    with pytest.raises(CorruptFileError, match="bad.lance.*column 1.*holds 2 values, expected 3"):
        _read(storage, "bad.lance", table)


@pytest.mark.parametrize(
    "column, problem",
    [
        (1, "binary indices decrease"),
        (2, "list offsets decrease or run past"),
    ],
)
def test_decreasing_offsets_are_corrupt(sample, column, problem):
    tmp_path, table, data = sample
    data_section, columns, descriptor, version = _v2_parts(data)
    page = columns[column].pages[0]
    # The stored ends are [2, 6, 3] (strings) and [1, 5, 3] (lists), 6 and 5
    # marking the null. A first end of 3 makes the ends 3, 2, 3 / 3, 1, 3.
    position = page.buffer_offsets[0]
    patched = data_section[:position] + struct.pack("<Q", 3) + data_section[position + 8 :]
    (tmp_path / "bad.lance").write_bytes(_v2_file(patched, columns, descriptor, version))
    with pytest.raises(CorruptFileError, match=f"bad.lance.*{problem}"):
        _read(LocalStorage(tmp_path), "bad.lance", table)


def test_invalid_utf8_is_corrupt(tmp_path):
    table = pa.table({"s": pa.array(["ab", "cd"])})
    data = write_v2_0(table, _fields(table.schema)).data
    (tmp_path / "bad.lance").write_bytes(data.replace(b"abcd", b"ab\xff\xfe", 1))
    with pytest.raises(CorruptFileError, match="bad.lance.*not valid"):
        _read(LocalStorage(tmp_path), "bad.lance", table)


def test_dictionary_code_past_the_items_is_corrupt(tmp_path):
    table = pa.table({"d": pa.array(["x", "y"] * 60)})
    data = write_v2_0(table, _fields(table.schema)).data
    (tmp_path / "ok.lance").write_bytes(data)
    assert _page_encoding(_v2_parts(data)[1][0].pages[0]).HasField("dictionary")
    (tmp_path / "bad.lance").write_bytes(data.replace(bytes([1, 2] * 60), bytes([1, 2] * 59 + [1, 9]), 1))
    _assert_tables_equal(_read(LocalStorage(tmp_path), "ok.lance", table), table)
    with pytest.raises(CorruptFileError, match="bad.lance.*dictionary index 9"):
        _read(LocalStorage(tmp_path), "bad.lance", table)


def _length_delimited(tag: int, payload: bytes) -> bytes:
    size, varint = len(payload), bytearray()
    while True:
        varint.append((size & 0x7F) | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            return bytes([tag]) + bytes(varint) + payload


def test_too_deep_encoding_is_refused(sample):
    def mutate(columns, descriptor):
        # nullable(2) -> no_nulls(1) -> values(1), 200 times, built as raw
        # bytes since the protobuf library refuses to build it.
        deep = _page_encoding(columns[0].pages[0]).SerializeToString()
        for _ in range(200):
            deep = _length_delimited(0x12, _length_delimited(0x0A, _length_delimited(0x0A, deep)))
        columns[0].pages[0].encoding.direct.encoding = any_pb2.Any(
            type_url="/lance.encodings.ArrayEncoding", value=deep
        ).SerializeToString()

    storage, table = _mutated(sample, mutate)
    with pytest.raises(CorruptFileError, match="bad.lance.*column 0 page 0"):
        _read(storage, "bad.lance", table)


@pytest.mark.parametrize(
    "change, message",
    [
        ("compress", "compressed buffers"),
        ("bitpack", "encoding bitpacked is not supported"),
        ("layout_2_1", "encoding lance.encodings21.PageLayout is not supported"),
    ],
)
def test_encodings_the_reader_lacks_are_unsupported(sample, change, message):
    def mutate(columns, descriptor):
        page = columns[0].pages[0]
        encoding = _page_encoding(page)
        if change == "compress":
            encoding.nullable.some_nulls.values.flat.compression.scheme = "zstd"
            _set_page_encoding(page, encoding)
        elif change == "bitpack":
            packed = enc.ArrayEncoding(
                bitpacked=enc.Bitpacked(compressed_bits_per_value=3, uncompressed_bits_per_value=64)
            )
            encoding.nullable.some_nulls.values.CopyFrom(packed)
            _set_page_encoding(page, encoding)
        else:
            _set_page_encoding(page, encoding, type_url="/lance.encodings21.PageLayout")

    storage, table = _mutated(sample, mutate)
    with pytest.raises(UnsupportedFeatureError, match=f"bad.lance.*{message}"):
        _read(storage, "bad.lance", table)


def test_pylance_2_1_files_are_inspectable_and_readable(tmp_path):
    """2.1 files go to the structural reader (tests/.../test_v2_1_reader.py)."""
    table = pa.table({"i": pa.array(np.arange(50))})
    dataset = lance.write_dataset(table, str(tmp_path / "ds"), data_storage_version="2.1")
    (data_file,) = dataset.get_fragments()[0].metadata.files
    storage = LocalStorage(tmp_path / "ds")
    assert inspect_file(storage, f"data/{data_file.path}").num_rows == 50
    assert LanceFileReader(storage, f"data/{data_file.path}").read().equals(table)


# -- (e) property: round trip and agreement with pylance -----------------------


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(table=strategies.arrow_tables())
def test_write_then_read_is_the_identity_and_pylance_agrees(tmp_path_factory, table):
    """Property: for any table of the supported types (nulls, nesting,
    vectors, sliced arrays included), writing it with the reference writer and
    reading it back with the reference reader gives the same table; pylance's
    reader reads the same table from that file; and the file is byte for byte
    the one pylance's 2.0 writer produces for the table."""
    tmp_path = tmp_path_factory.mktemp("prop")
    storage = LocalStorage(tmp_path)
    written = write_file(storage, "ours.lance", table, _pylance_fields(table.schema))
    expected = table.combine_chunks()
    _assert_tables_equal(
        LanceFileReader(storage, "ours.lance").read(arrow_schema=table.schema).combine_chunks(), expected
    )
    _assert_tables_equal(_pylance_read(tmp_path / "ours.lance").combine_chunks(), expected)
    # pylance 14 panics ("end <= self.len()") writing a sliced struct nested in
    # a struct, so it is given an unsliced copy of the same values.
    _pylance_write(tmp_path / "theirs.lance", table.take(np.arange(table.num_rows)))
    assert written.data == (tmp_path / "theirs.lance").read_bytes()


def test_binary_bytes_wrapped_in_no_nulls_read_as_plain_bytes(sample):
    """pylance 0.15 and 0.16 wrap the bytes of a string column in a
    nullable/no_nulls layer (their nulls live in the indices); the wrapped
    bytes are the same flat bytes, and the column reads the same."""

    def mutate(columns, descriptor):
        page = columns[1].pages[0]
        encoding = _page_encoding(page)
        binary = encoding.nullable.some_nulls.values.binary if encoding.HasField("nullable") else encoding.binary
        flat = enc.ArrayEncoding()
        flat.CopyFrom(binary.bytes)
        binary.bytes.nullable.no_nulls.values.CopyFrom(flat)
        _set_page_encoding(page, encoding)

    storage, table = _mutated(sample, mutate, name="wrapped.lance")
    _assert_tables_equal(_read(storage, "wrapped.lance", table), table)


def _arrow_dictionaries() -> pa.Table:
    return pa.table(
        {
            "strings": pa.array(["a", None, "bb", "a", ""] * 30).dictionary_encode(),
            "int8_keys": pa.DictionaryArray.from_arrays(
                pa.array([0, 1, None, 2, 0] * 30, pa.int8()), pa.array(["x", "y", "z"])
            ),
            "int_values": pa.DictionaryArray.from_arrays(
                pa.array([0, 1, None, 1, 0] * 30, pa.int16()), pa.array([10, 20], pa.int64())
            ),
            "null_item": pa.DictionaryArray.from_arrays(
                pa.array([0, 1, None, 1, 0] * 30, pa.uint32()), pa.array([b"q", None], pa.large_binary())
            ),
        }
    )


@pytest.mark.parametrize("column", _arrow_dictionaries().column_names)
def test_arrow_dictionary_fields_written_by_pylance_read_as_pylance_reads_them(tmp_path, column):
    """A field of an Arrow dictionary type is a ``dictionary`` page whose
    indices are the Arrow keys; a null row is a key to a null item, read as a
    null key (pylance's reading)."""
    table = _arrow_dictionaries().select([column])
    _pylance_write(tmp_path / "theirs.lance", table)
    page = _v2_parts((tmp_path / "theirs.lance").read_bytes())[1][0].pages[0]
    assert _page_encoding(page).HasField("dictionary")
    theirs = _pylance_read(tmp_path / "theirs.lance")
    ours = LanceFileReader(LocalStorage(tmp_path), "theirs.lance").read(arrow_schema=table.schema)
    _assert_tables_equal(ours, theirs)
    assert ours.to_pylist() == table.to_pylist()


def test_an_arrow_dictionary_key_past_the_items_is_corrupt(tmp_path):
    table = pa.table({"d": pa.DictionaryArray.from_arrays(pa.array([0, 1] * 60, pa.int32()), pa.array(["x", "y"]))})
    _pylance_write(tmp_path / "ok.lance", table)
    data = (tmp_path / "ok.lance").read_bytes()
    keys = np.array([0, 1] * 60, "<i4").tobytes()
    assert data.count(keys) == 1
    (tmp_path / "bad.lance").write_bytes(data.replace(keys, keys[:-4] + np.array([7], "<i4").tobytes()))
    _assert_tables_equal(_read(LocalStorage(tmp_path), "ok.lance", table), table)
    with pytest.raises(CorruptFileError, match="bad.lance.*dictionary key 7"):
        _read(LocalStorage(tmp_path), "bad.lance", table)
