"""The reference writer's 2.2 files (encoding.md, "Structural Encoding"; what
2.2 asks beyond 2.1 is in ``reference_impl/file_format/writer_v2_1.py``):
pylance 14 and the reference reader read them row for row, one page or many
per column; and the reference appends to datasets pylance 14 creates with its
default data storage version (2.2), in that version."""

from __future__ import annotations

import dataclasses
import datetime
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
from reference_impl.arrow_schema import schema_from_arrow, schema_to_arrow
from reference_impl.dataset import Dataset
from reference_impl.file_format import LanceFileReader
from reference_impl.file_format.writer_v2_1 import V2_1_VERSION, V2_2_VERSION, write_v2_1
from reference_impl.fragment_writer import data_file_name, dataset_data_version
from reference_impl.fragments import DataFile, Fragment
from reference_impl.manifest import DataStorageFormat
from reference_impl.transactions import Append
from reference_impl.wire import encodings_v2_1_pb2 as enc
from tests.reference_impl.file_format.test_writer_v2_1 import many_types
from tests.writer_checks import assert_pylance_agrees

ROWS = 3000


def types_table(n: int = ROWS) -> pa.Table:
    """Every layout and type of the 2.1 tests, plus dates and narrow integers."""
    table = many_types(n)
    start = datetime.date(2000, 1, 1)
    extra = {
        "date": pa.array([None if i % 13 == 0 else start + datetime.timedelta(days=i) for i in range(n)]),
        "u8": pa.array([i % 256 for i in range(n)], pa.uint8()),
        "f64_nan": pa.array([float("nan") if i % 17 == 0 else i / 3 for i in range(n)]),
        "st_nested": pa.array(
            [{"p": {"q": None if i % 4 == 0 else [i, i + 1]}, "r": i % 2 == 0} for i in range(n)],
        ),
    }
    for name, column in extra.items():
        table = table.append_column(name, column)
    return table


def assert_same(expected: pa.Table, actual: pa.Table) -> None:
    result = compare_tables(expected, actual)
    assert not result.differences, result.differences


def layouts(path: str) -> list[enc.PageLayout]:
    """The page layouts of every data file of the dataset at ``path``."""
    dataset = Dataset.open(path)
    found = []
    for fragment in dataset.fragments:
        for data_file in fragment.files:
            reader = LanceFileReader(dataset.storage, f"data/{data_file.path}")
            for column in reader.metadata.columns:
                for page in column.pages:
                    wrapped = any_pb2.Any()
                    wrapped.ParseFromString(page.encoding.direct.encoding)
                    layout = enc.PageLayout()
                    layout.ParseFromString(wrapped.value)
                    found.append(layout)
    return found


@pytest.mark.parametrize("column", types_table(1).column_names)
def test_pylance_and_the_reference_read_a_reference_2_2_column_row_for_row(tmp_path, column):
    table = types_table().select([column])
    path = str(tmp_path / "ds")
    Dataset.create(path, table, data_storage_version="2.2", max_rows_per_file=2000)
    theirs = lance.dataset(path)
    assert theirs.data_storage_version == "2.2"
    assert_same(table, theirs.to_table())
    assert_same(table, Dataset.open(path).to_table())
    picked = [0, 1, 1999, 2000, ROWS - 1]
    assert_same(table.take(picked), theirs.take(picked))


def test_2_2_mini_block_pages_use_32_bit_chunk_words_and_2_1_pages_16_bit(tmp_path):
    """pylance 14 refuses a 2.2 mini block page without ``has_large_chunk``;
    a 2.1 reader expects 16-bit words, so 2.1 pages keep them."""
    table = types_table(200)
    for version, large in (("2.1", False), ("2.2", True)):
        path = str(tmp_path / version)
        Dataset.create(path, table, data_storage_version=version)
        mini_blocks = [layout.mini_block_layout for layout in layouts(path) if layout.HasField("mini_block_layout")]
        assert mini_blocks and {block.has_large_chunk for block in mini_blocks} == {large}
        files = [f for fragment in Dataset.open(path).fragments for f in fragment.files]
        assert {(f.file_major_version, f.file_minor_version) for f in files} == {tuple(map(int, version.split(".")))}


def test_a_column_over_32_mib_is_cut_into_pages_pylance_reads(tmp_path):
    """The 2.0 writer's page cut (equal row slices of at most 32 MiB), each
    page's priority its first row (file2.proto)."""
    n = 70_000
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(np.arange(n * 128, dtype=np.float32)), 128)
    table = pa.table({"vec": vectors, "id": pa.array(np.arange(n))})
    path = str(tmp_path / "ds")
    dataset = Dataset.create(path, table, data_storage_version="2.2")
    reader = LanceFileReader(dataset.storage, f"data/{dataset.fragments[0].files[0].path}")
    vector_pages = reader.metadata.columns[0].pages
    assert [page.priority for page in vector_pages] == [0, n // 2]
    assert [page.length for page in vector_pages] == [n // 2, n // 2]
    theirs = lance.dataset(path)
    assert theirs.to_table() == table
    picked = [0, n // 2 - 1, n // 2, n - 1]
    assert theirs.take(picked) == table.take(picked)


def commit_one_file(path: str, table: pa.Table, max_page_bytes: int) -> pa.Table:
    """A 2.2 dataset whose one data file holds ``table`` in pages of at most
    ``max_page_bytes``; the table as the dataset's schema types it."""
    dataset = Dataset.create(path, table.slice(0, 0), data_storage_version="2.2")
    table = table.cast(schema_to_arrow(dataset.schema))
    written = write_v2_1(table, dataset.schema.fields, version=V2_2_VERSION, max_page_bytes=max_page_bytes)
    name = data_file_name()
    dataset.storage.put_if_not_exists(f"data/{name}", written.chunks)
    data_file = DataFile(name, list(written.fields), list(written.column_indices), 2, 2, written.size)
    if table.num_rows:
        dataset.commit(Append(fragments=[Fragment(id=0, files=[data_file], physical_rows=table.num_rows)]))
    return table


def _with_struct_nulls(table: pa.Table, mask: list[bool]) -> pa.Table:
    columns = []
    for column in table.columns:
        array = column.combine_chunks()
        if pa.types.is_struct(array.type) and len(array):
            nulls = pa.array([mask[i] if i < len(mask) else False for i in range(len(array))])
            children = [array.field(i) for i in range(array.type.num_fields)]
            array = pa.StructArray.from_arrays(children, fields=list(array.type), mask=nulls)
        columns.append(array)
    return pa.Table.from_arrays(columns, names=table.column_names)


@settings(
    max_examples=min(15, settings.default.max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    table=strategies.arrow_tables(max_rows=40),
    struct_nulls=st.lists(st.booleans(), max_size=40),
    max_page_bytes=st.sampled_from([1, 64, 512, 1 << 25]),
)
def test_pylance_reads_any_generated_table_the_reference_writes_at_2_2_in_any_pages(
    table, struct_nulls, max_page_bytes
):
    """Property: a generated table (nested lists and structs, nulls at every
    level, sliced arrays), written by the reference as one 2.2 data file whose
    columns are cut into pages of at most ``max_page_bytes`` (1: a page per
    row), reads back from pylance 14 and from the reference with the table's
    own rows, in the dataset and at random positions."""
    table = _with_struct_nulls(table, struct_nulls)
    with tempfile.TemporaryDirectory(prefix="v22-writer-") as path:
        table = commit_one_file(path, table, max_page_bytes)
        theirs = lance.dataset(path)
        assert_same(table, theirs.to_table())
        assert_same(table, Dataset.open(path).to_table())
        if table.num_rows:
            picked = sorted({0, table.num_rows // 2, table.num_rows - 1})
            assert_same(table.take(picked), theirs.take(picked))


def pylance_default_dataset(path: str, n: int = 400) -> pa.Table:
    """A dataset pylance 14 creates with its defaults (data storage version
    2.2), of several fragments and types; its rows."""
    table = types_table(n).select(["i", "b", "s", "big", "l", "st", "ll", "fsl", "vec", "ts", "date", "bin"])
    lance.write_dataset(table, path, max_rows_per_file=150)
    assert lance.dataset(path).data_storage_version == "2.2"
    return table


def test_the_reference_appends_to_a_pylance_default_dataset_in_its_version(tmp_path):
    """Requirement data-file.same-format-version: the appended data files take
    the version of the dataset's files, 2.2, though the reference's own
    default is 2.0; pylance reads every row, and every version passes the
    validator (no error, no warning) and reads alike in pylance."""
    path = str(tmp_path / "ds")
    table = pylance_default_dataset(path)
    more = types_table(250).select(table.column_names)
    appended = Dataset.open(path).append(more, max_rows_per_file=100)
    versions = {(f.file_major_version, f.file_minor_version) for g in appended.fragments for f in g.files}
    assert versions == {(2, 2)}
    assert_same(pa.concat_tables([table, more]), lance.dataset(path).to_table())
    assert_pylance_agrees(path)


def test_every_write_of_the_reference_keeps_a_pylance_dataset_at_2_2(tmp_path):
    """Update, column addition and compaction write data files too; each in
    the dataset's version."""
    path = str(tmp_path / "ds")
    pylance_default_dataset(path, 300)
    dataset = Dataset.open(path).update({"i": pc.multiply(pc.field("i"), 2)}, where=pc.field("i") < 50)
    dataset = dataset.add_columns({"i2": pc.add(pc.field("i"), 1)})
    dataset = dataset.compact(target_rows_per_fragment=1000)
    versions = {(f.file_major_version, f.file_minor_version) for g in dataset.fragments for f in g.files}
    assert versions == {(2, 2)}
    assert_same(Dataset.open(path).to_table(), lance.dataset(path).to_table())
    assert_pylance_agrees(path)


def test_the_data_version_comes_from_the_data_files_then_the_manifest(tmp_path):
    path = str(tmp_path / "ds")
    dataset = Dataset.create(path, pa.table({"x": [1, 2]}), data_storage_version="2.1")
    manifest = dataset.manifest
    assert dataset_data_version(manifest) == "2.1"
    # The files decide, whatever data_format says (or when it says nothing).
    assert dataset_data_version(dataclasses.replace(manifest, data_format=DataStorageFormat("lance", "2.2"))) == "2.1"
    assert dataset_data_version(dataclasses.replace(manifest, data_format=None)) == "2.1"
    # No data files: data_format, then the reference's default.
    empty = dataclasses.replace(manifest, fragments=[])
    assert dataset_data_version(dataclasses.replace(empty, data_format=DataStorageFormat("lance", "2.2"))) == "2.2"
    assert dataset_data_version(dataclasses.replace(empty, data_format=None)) == "2.0"
    # Files of several versions (a broken dataset): what data_format declares.
    (fragment,) = manifest.fragments
    other = dataclasses.replace(fragment, id=1, files=[dataclasses.replace(fragment.files[0], file_minor_version=2)])
    mixed = dataclasses.replace(manifest, fragments=[fragment, other])
    assert dataset_data_version(mixed) == "2.1"


def test_write_v2_1_refuses_a_version_it_does_not_write():
    table = pa.table({"x": [1]})
    with pytest.raises(ValueError, match="not one this writer writes"):
        write_v2_1(table, schema_from_arrow(table.schema).fields, version=(2, 3))
    assert write_v2_1(table, schema_from_arrow(table.schema).fields, version=V2_1_VERSION).minor == 1


def test_every_type_reads_back_from_many_small_pages(tmp_path):
    """Pages of at most 2 KiB: every column of the types table larger than
    that spans several pages (levels, repetition indexes and full zip rows
    restart in each)."""
    table = types_table()
    path = str(tmp_path / "ds")
    table = commit_one_file(path, table, max_page_bytes=2048)
    dataset = Dataset.open(path)
    (data_file,) = dataset.fragments[0].files
    reader = LanceFileReader(dataset.storage, f"data/{data_file.path}")
    pages = dict(zip(data_file.fields, (len(column.pages) for column in reader.metadata.columns), strict=True))
    for field in dataset.schema.fields:
        if field.parent_id == -1 and table[field.name].nbytes > 2048:
            leaves = [pages[i] for i in pages if i in _descendants(dataset.schema, field.id)]
            assert leaves and min(leaves) > 1, field.name
    theirs = lance.dataset(path)
    assert_same(table, theirs.to_table())
    assert_same(table, dataset.to_table())
    picked = [0, 1, 999, 1000, ROWS - 1]
    assert_same(table.take(picked), theirs.take(picked))


def _descendants(schema, field_id: int) -> set[int]:
    ids = {field_id}
    for field in schema.fields:  # parents come before their children
        if field.parent_id in ids:
            ids.add(field.id)
    return ids
