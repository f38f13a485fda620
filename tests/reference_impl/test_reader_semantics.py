"""What a reader must do with what it reads, checked on the reference reader
against pylance: behaviour a stored dataset cannot show by itself."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.mutations.edit import edit_manifest
from reference_impl.dataset import Dataset
from reference_impl.errors import UnsupportedFeatureError
from reference_impl.fragments import TOMBSTONE_FIELD_ID

lance = pytest.importorskip("lance")


def _rows(count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(count), pa.int64()), "s": [f"r{i}" for i in range(count)]})


def _same_rows_as_pylance(path) -> None:
    for version in Dataset.open(path).versions():
        ours = Dataset.open(path, version).to_table(with_row_id=True)
        theirs = lance.dataset(str(path), version=version).to_table(with_row_id=True)
        assert ours.to_pylist() == theirs.to_pylist(), f"v{version}"


@pytest.mark.requirements("deletion.readers-filter")
def test_deleted_rows_are_left_out_of_scans(tmp_path):
    path = tmp_path / "ds"
    lance.write_dataset(_rows(3000), path, max_rows_per_file=1000)
    lance.dataset(path).delete("id % 7 = 0")  # sparse: .arrow
    lance.dataset(path).delete("id >= 1000 AND id < 1900")  # dense: .bin
    table = Dataset.open(path).to_table()
    assert not any(i % 7 == 0 or 1000 <= i < 1900 for i in table["id"].to_pylist())
    _same_rows_as_pylance(path)


@pytest.mark.requirements("fragment.missing-column-reads-null")
def test_a_column_no_data_file_holds_reads_as_nulls(tmp_path):
    path = tmp_path / "ds"
    lance.write_dataset(_rows(10), path)
    lance.dataset(path).add_columns(pa.field("empty", pa.float64()))  # metadata only: no data file
    dataset = Dataset.open(path)
    empty_id = next(f.id for f in dataset.schema.fields if f.name == "empty")
    assert all(empty_id not in data_file.fields for fragment in dataset.fragments for data_file in fragment.files)
    assert dataset.to_table()["empty"].null_count == 10
    _same_rows_as_pylance(path)


@pytest.mark.requirements("data-file.tombstone-ignored")
def test_a_tombstoned_field_is_not_read_from_its_old_file(tmp_path):
    path = tmp_path / "ds"
    dataset = Dataset.create(path, _rows(5))
    dataset = dataset.alter_columns({"path": "id", "data_type": pa.int32()})  # rewritten: -2 in the old file
    old_file = dataset.fragments[0].files[0]
    assert TOMBSTONE_FIELD_ID in old_file.fields
    assert dataset.to_table()["id"].type == pa.int32()
    assert dataset.to_table()["id"].to_pylist() == list(range(5))
    _same_rows_as_pylance(path)


@pytest.mark.requirements("feature-flags.reader-refuses-unknown")
def test_a_reader_refuses_an_unknown_reader_flag(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, _rows(3))

    def set_flag(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 1 << 12

    edit_manifest(path, set_flag)
    with pytest.raises(UnsupportedFeatureError, match="0x1000"):
        Dataset.open(path)
    # pylance refuses it too: the flag means "you cannot read this correctly".
    with pytest.raises(Exception):  # noqa: B017 - any error pylance raises is a refusal
        lance.dataset(str(path)).to_table()


@pytest.mark.requirements("feature-flags.writer-refuses-unknown")
def test_a_writer_refuses_an_unknown_writer_flag(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, _rows(3))

    def set_flag(manifest_file):
        manifest_file.manifest.writer_feature_flags |= 1 << 12

    edit_manifest(path, set_flag)
    dataset = Dataset.open(path)  # reading is still allowed
    assert dataset.count_rows() == 3
    with pytest.raises(UnsupportedFeatureError, match="writer feature flags"):
        dataset.append(_rows(1))
    assert Dataset.open(path).version == 1


#: The data file versions the reference reader decodes (legacy files not yet).
READABLE_FILE_VERSIONS = {(2, 0), (2, 1), (2, 2)}


def _read_versions_row_for_row(datasets) -> list[tuple[str, int]]:
    """Compare, for every version whose data files are all Lance 2.0, 2.1 or
    2.2, the rows, row ids and Arrow schema of the reference reader with
    pylance's."""
    checked = []
    for name, path in sorted(datasets.items()):
        for version in Dataset.open(path).versions():
            dataset = Dataset.open(path, version)
            files = [f for fragment in dataset.fragments for f in fragment.files]
            if not files or any(
                (f.file_major_version, f.file_minor_version) not in READABLE_FILE_VERSIONS for f in files
            ):
                continue
            ours = dataset.to_table(with_row_id=True)
            theirs = lance.dataset(str(path), version=version).to_table(with_row_id=True)
            assert ours.schema.remove_metadata() == theirs.schema.remove_metadata(), f"{name} v{version}"
            assert ours.to_pylist() == theirs.to_pylist(), f"{name} v{version}"
            checked.append((name, version))
    return checked


def test_pylance_datasets_read_row_for_row(pylance_datasets):
    """pylance 14's scenarios at 2.0, 2.1 and its default 2.2 (nested types,
    nulls, appends, deletes and an added column) read row for row at every
    version, as do the other scenarios written at pylance's default."""
    checked = _read_versions_row_for_row(pylance_datasets)
    for storage in ("storage_2_0", "storage_2_1", "storage_default"):
        assert [version for name, version in checked if name == storage] == [1, 2, 3, 4], storage
    assert len({name for name, _ in checked}) > 10


@pytest.mark.old_pylance
def test_pylance_0_20_datasets_in_format_2_0_read_row_for_row(old_pylance_datasets):
    checked = _read_versions_row_for_row(old_pylance_datasets)
    assert any(name == "default_format_nested" for name, _ in checked), checked
