"""The reference writer's 2.1 files (encoding.md: mini block, full zip and
all-null layouts; repetition and definition levels): pylance 14 and the
reference reader read them row for row."""

from __future__ import annotations

import datetime
import decimal
import tempfile

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from google.protobuf import any_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import strategies
from conformance.comparison import compare_tables
from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.dataset import Dataset
from reference_impl.file_format import LanceFileReader
from reference_impl.file_format.writer_v2_1 import write_v2_1
from reference_impl.storage.local import LocalStorage
from reference_impl.wire import encodings_v2_1_pb2 as enc

ROWS = 5000


def many_types(n: int = ROWS) -> pa.Table:
    """Every layout the writer picks: flat and variable mini blocks, full zip
    (long strings, 512-byte vectors), all-null pages, levels of nullable and
    emptyable lists, nested lists and structs with nulls at every level."""
    return pa.table(
        {
            "i": pa.array([i if i % 7 else None for i in range(n)], pa.int64()),
            "b": pa.array([None if i % 5 == 0 else i % 3 == 0 for i in range(n)]),
            "f": pa.array([i * 0.5 for i in range(n)], pa.float32()),
            "s": pa.array([None if i % 11 == 0 else "x" * (i % 13) for i in range(n)]),
            "ls": pa.array([None if i % 9 == 0 else "ab" * (i % 7) for i in range(n)], pa.large_string()),
            "big": pa.array([None if i % 9 == 0 else "y" * (300 + i % 50) for i in range(n)], pa.large_string()),
            "l": pa.array(
                [None if i % 4 == 0 else ([] if i % 4 == 1 else list(range(i % 6))) for i in range(n)],
                pa.list_(pa.int32()),
            ),
            "st": pa.array([None if i % 6 == 0 else {"a": i, "b": None if i % 3 == 0 else str(i)} for i in range(n)]),
            "ll": pa.array(
                [None if i % 8 == 0 else [[j, None] if j % 2 else [] for j in range(i % 4)] for i in range(n)],
                pa.list_(pa.list_(pa.int16())),
            ),
            "lst": pa.array(
                [[{"z": "q" * i if i % 3 else None}] if i % 3 else None for i in range(n)],
                pa.list_(pa.struct([("z", pa.string())])),
            ),
            "lbig": pa.array(
                [None if i % 5 == 0 else [("z" * 300 if j % 2 else None) for j in range(i % 4)] for i in range(n)],
                pa.large_list(pa.string()),
            ),
            "fsl": pa.array([[float(i), 1.0, 2.0] if i % 10 else None for i in range(n)], pa.list_(pa.float64(), 3)),
            "fsl_null_items": pa.array(
                [[i, None if i % 3 else 1] if i % 10 else None for i in range(n)], pa.list_(pa.int32(), 2)
            ),
            "fsl_bool": pa.array([[i % 2 == 0, True, False] for i in range(n)], pa.list_(pa.bool_(), 3)),
            "vec": pa.array([[float(i)] * 128 for i in range(n)], pa.list_(pa.float32(), 128)),
            "d": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(10, 2)),
            "ts": pa.array(
                [datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=i) for i in range(n)], pa.timestamp("us")
            ),
            "nul": pa.nulls(n),
            "allnull": pa.array([None] * n, pa.int32()),
            "bin": pa.array([bytes([i % 256]) * (i % 5) for i in range(n)], pa.binary()),
            "empty_lists": pa.array([[] for _ in range(n)], pa.list_(pa.int8())),
        }
    )


def assert_same(expected: pa.Table, actual: pa.Table) -> None:
    result = compare_tables(expected, actual)
    assert not result.differences, result.differences


def test_pylance_and_the_reference_read_a_reference_2_1_dataset_row_for_row(tmp_path):
    table = many_types()
    path = str(tmp_path / "ds")
    Dataset.create(path, table, data_storage_version="2.1", max_rows_per_file=3000)
    theirs = lance.dataset(path)
    assert theirs.data_storage_version == "2.1"
    assert_same(table, theirs.to_table())
    assert_same(table, Dataset.open(path).to_table())
    # Random access goes through the repetition indexes and chunk metadata.
    picked = [0, 1, 2999, 3000, 4321, ROWS - 1]
    assert_same(table.take(picked), theirs.take(picked))


def test_append_delete_and_compaction_keep_the_dataset_version(tmp_path):
    """table.proto (DataStorageFormat): every data file has the dataset's version."""
    table = many_types(300)
    path = str(tmp_path / "ds")
    ds = Dataset.create(path, table, data_storage_version="2.1").append(table.slice(10, 20))
    ds = ds.delete(pc.field("i") < 100).compact(target_rows_per_fragment=10_000)
    assert len(ds.fragments) == 1
    versions = {(f.file_major_version, f.file_minor_version) for frag in ds.fragments for f in frag.files}
    assert versions == {(2, 1)}
    assert_same(Dataset.open(path).to_table(), lance.dataset(path).to_table())


def write_and_read(tmp_path, table: pa.Table):
    schema = schema_from_arrow(table.schema)
    written = write_v2_1(table, schema.fields)
    (tmp_path / "f.lance").write_bytes(written.data)
    return LanceFileReader(LocalStorage(str(tmp_path)), "f.lance")


def page_layouts(reader: LanceFileReader) -> list[str]:
    kinds = []
    for column in reader.metadata.columns:
        for page in column.pages:
            wrapped = any_pb2.Any()
            wrapped.ParseFromString(page.encoding.direct.encoding)
            layout = enc.PageLayout()
            layout.ParseFromString(wrapped.value)
            kinds.append(layout.WhichOneof("layout"))
    return kinds


def test_the_writer_picks_the_plainest_layout_for_each_leaf(tmp_path):
    table = pa.table(
        {
            "small": pa.array(["a", None, "bc"]),
            "large": pa.array(["x" * 400, None, "y"]),
            "vector": pa.array([[1.0] * 64] * 3, pa.list_(pa.float64(), 64)),
            "nothing": pa.array([None, None, None], pa.int8()),
        }
    )
    kinds = page_layouts(write_and_read(tmp_path, table))
    assert kinds == ["mini_block_layout", "full_zip_layout", "full_zip_layout", "constant_layout"]


def test_mini_blocks_hold_a_power_of_two_values_and_at_most_32_kib(tmp_path):
    n = 20_000
    table = pa.table({"s": pa.array(["v" * (i % 200) for i in range(n)]), "x": pa.array(np.arange(n))})
    path = str(tmp_path / "ds")
    Dataset.create(path, table, data_storage_version="2.1")
    assert_same(table, lance.dataset(path).to_table())
    data_file = Dataset.open(path).fragments[0].files[0].path
    raw = (tmp_path / "ds" / "data" / data_file).read_bytes()
    page = LanceFileReader(LocalStorage(path), f"data/{data_file}").metadata.columns[0].pages[0]
    start, size = page.buffer_offsets[0], page.buffer_sizes[0]
    words = np.frombuffer(raw[start : start + size], dtype="<u2")
    assert len(words) > 1
    assert np.all(((words >> 4) + 1) * 8 <= 32 * 1024)
    assert np.all((words[:-1] & 0xF) > 0) and words[-1] & 0xF == 0


def test_an_empty_table_makes_a_file_without_pages(tmp_path):
    table = many_types(0)
    path = str(tmp_path / "ds")
    Dataset.create(path, table, data_storage_version="2.1")
    assert lance.dataset(path).to_table().num_rows == 0
    assert Dataset.open(path).to_table().num_rows == 0


@pytest.mark.parametrize(
    "column",
    [
        pa.array([[[1.0, None]]], pa.list_(pa.list_(pa.float64(), 2), 1)),
        pa.array(["a"]).dictionary_encode(),
    ],
    ids=["nested fixed-size list with null items", "dictionary"],
)
def test_what_the_simplest_form_does_not_cover_is_refused(tmp_path, column):
    with pytest.raises(ValueError, match="2.1 writer"):
        Dataset.create(str(tmp_path / "ds"), pa.table({"c": column}), data_storage_version="2.1")


@settings(
    max_examples=min(15, settings.default.max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(table=strategies.arrow_tables(max_rows=30), struct_nulls=st.lists(st.booleans(), max_size=30))
def test_pylance_reads_any_generated_table_the_reference_writes_at_2_1(table, struct_nulls):
    """Property: a generated table (nested lists and structs, nulls at every
    level, sliced arrays) written by the reference at 2.1 reads back from
    pylance 14 and from the reference with the table's own rows."""
    columns = []
    for column in table.columns:
        array = column.combine_chunks()
        if pa.types.is_struct(array.type) and len(array):
            mask = pa.array([struct_nulls[i] if i < len(struct_nulls) else False for i in range(len(array))])
            children = [array.field(i) for i in range(array.type.num_fields)]
            array = pa.StructArray.from_arrays(children, fields=list(array.type), mask=mask)
        columns.append(array)
    table = pa.Table.from_arrays(columns, names=table.column_names)
    with tempfile.TemporaryDirectory(prefix="v21-writer-") as path:
        Dataset.create(path, table, data_storage_version="2.1")
        assert_same(table, lance.dataset(path).to_table())
        assert_same(table, Dataset.open(path).to_table())


def test_a_list_under_a_null_struct_is_declared_nullable_as_pylance_expects(tmp_path):
    """Found by the property above: a struct's null hides its list child; pylance 14
    refuses the page unless the list layer is declared nullable (it pushes
    struct nulls into the children)."""
    point = pa.StructArray.from_arrays(
        [pa.array([[None], [None]], pa.list_(pa.bool_()))], names=["f1"], mask=pa.array([True, False])
    )
    table = pa.table({"c": point})
    path = str(tmp_path / "ds")
    Dataset.create(path, table, data_storage_version="2.1")
    assert_same(table, lance.dataset(path).to_table())
    reader = LanceFileReader(LocalStorage(path), f"data/{Dataset.open(path).fragments[0].files[0].path}")
    wrapped = any_pb2.Any()
    wrapped.ParseFromString(reader.metadata.columns[0].pages[0].encoding.direct.encoding)
    layout = enc.PageLayout()
    layout.ParseFromString(wrapped.value)
    assert list(layout.constant_layout.layers) == [
        enc.REPDEF_NULLABLE_ITEM,
        enc.REPDEF_NULLABLE_LIST,
        enc.REPDEF_NULLABLE_ITEM,
    ]
