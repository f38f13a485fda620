"""The reference writer's create, append and overwrite, read back by pylance."""

from __future__ import annotations

import pyarrow as pa
import pytest

from reference_impl.dataset import Dataset
from reference_impl.errors import CommitConflictError, UnsupportedFeatureError
from reference_impl.naming import NamingScheme
from tests.writer_checks import assert_pylance_agrees

pytest.importorskip("lance")


SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("vector", pa.list_(pa.float32(), 4)),
    ]
)


def rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": ids,
            "name": [None if i % 5 == 0 else f"row {i}" for i in ids],
            "point": [{"x": float(i), "y": None if i % 3 == 0 else -float(i)} for i in ids],
            "tags": [[f"t{j}" for j in range(i % 3)] for i in ids],
            "vector": [[float(i)] * 4 for i in ids],
        },
        schema=SCHEMA,
    )


@pytest.mark.parametrize("naming", ["v1", "v2"])
@pytest.mark.parametrize("stable_row_ids", [False, True])
def test_create_append_overwrite_read_the_same_in_pylance(tmp_path, naming, stable_row_ids):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 25), manifest_naming=naming, stable_row_ids=stable_row_ids, max_rows_per_file=10)
    ds = ds.append(rows(25, 7))
    ds = ds.append(rows(32, 11), max_rows_per_file=4)
    assert ds.version == 3
    assert ds.naming_scheme is NamingScheme(naming)
    assert [f.id for f in ds.fragments] == list(range(7))
    assert ds.count_rows() == 43
    ds = ds.overwrite(pa.table({"other": pa.array([1.5, None, 3.5])}))
    assert ds.version == 4
    # Ids keep rising through an overwrite: none is ever used twice.
    assert [f.id for f in ds.fragments] == [7]
    assert ds.manifest.max_fragment_id == 7
    assert assert_pylance_agrees(path) == 4


def test_stable_row_ids_are_assigned_in_sequence(tmp_path):
    ds = Dataset.create(tmp_path / "ds", rows(0, 5), stable_row_ids=True, max_rows_per_file=2)
    ds = ds.append(rows(5, 3))
    assert ds.manifest.next_row_id == 8
    assert ds.to_table(with_row_id=True)["_rowid"].to_pylist() == list(range(8))


def test_an_empty_table_is_a_version_with_no_fragments(tmp_path):
    ds = Dataset.create(tmp_path / "ds", rows(0, 0))
    assert ds.fragments == [] and ds.manifest.max_fragment_id is None
    ds = ds.append(rows(0, 3))
    assert [f.id for f in ds.fragments] == [0]
    assert_pylance_agrees(tmp_path / "ds")


def test_create_refuses_an_existing_dataset_and_unwritable_versions(tmp_path):
    Dataset.create(tmp_path / "ds", rows(0, 1))
    with pytest.raises(CommitConflictError):
        Dataset.create(tmp_path / "ds", rows(0, 1))
    with pytest.raises(UnsupportedFeatureError, match="2.0, 2.1, 2.2"):
        Dataset.create(tmp_path / "other", rows(0, 1), data_storage_version="2.3")
