"""The reference writes every index file in its dataset's file version, as
pylance 14 does (a 2.0 dataset gets 2.0 index files, which the releases
that read 2.0 data can open; a 2.2 dataset 2.2 ones), and pylance 14 plans
queries through them in each version with the scan's answers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.storage import LocalStorage

lance = pytest.importorskip("lance")

ROWS = 400
DIMENSION = 4
#: Index name -> (column, index type, a filter pylance answers through it).
INDICES = {
    "id_btree": ("id", "BTREE", "id = 17"),
    "colour_bitmap": ("colour", "BITMAP", "colour = 'green'"),
    "tags_labels": ("tags", "LABEL_LIST", "array_has_any(tags, ['t1'])"),
    "value_zones": ("value", "ZONEMAP", "value > 90.5"),
    "vec_flat": ("vec", "IVF_FLAT", None),
}


def _rows() -> pa.Table:
    ids = np.arange(ROWS)
    vectors = np.sin(np.outer(ids + 1, np.arange(1, DIMENSION + 1)) * 0.41).astype(np.float32)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "colour": pa.array([("red", "green", "blue")[i % 3] for i in ids]),
            "tags": pa.array([[f"t{i % 4}", f"u{i % 5}"] for i in ids], pa.list_(pa.string())),
            "value": pa.array((ids * 37 % 100).astype(np.float64)),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIMENSION),
        }
    )


@pytest.fixture(scope="module", params=["2.0", "2.1", "2.2"])
def indexed(request, tmp_path_factory) -> tuple[str, str]:
    path = tmp_path_factory.mktemp(f"v{request.param}") / "ds"
    dataset = Dataset.create(path, _rows(), data_storage_version=request.param, max_rows_per_file=150)
    for name, (column, index_type, _) in INDICES.items():
        options = {"num_partitions": 2} if index_type == "IVF_FLAT" else {}
        dataset = dataset.create_index(column, name=name, index_type=index_type, **options)
    return request.param, str(path)


def test_every_index_file_has_the_datasets_file_version(indexed):
    version, path = indexed
    dataset = Dataset.open(path)
    versions = {}
    for index in dataset.indices:
        for listed in index.files:
            location = dataset.index_file_location(index, listed.path)
            metadata = read_v2_metadata(LocalStorage(location.storage.path(location.relpath).parent), listed.path)
            versions[f"{index.name}/{listed.path}"] = "{}.{}".format(*metadata.version)
    assert len(versions) == 7  # two files for BTREE and for IVF_FLAT, one for each other type
    assert set(versions.values()) == {version}, versions


def test_pylance_answers_through_each_index_as_a_scan_does(indexed):
    _, path = indexed
    dataset = lance.dataset(path)
    assert {d.name for d in dataset.describe_indices()} == set(INDICES)
    for name, (_, _, where) in INDICES.items():
        if where is None:
            continue
        plan = dataset.scanner(filter=where).explain_plan(True)
        assert name in plan or "ScalarIndexQuery" in plan, (name, plan)
        through = sorted(dataset.to_table(filter=where, columns=["id"]).column("id").to_pylist())
        scanned = sorted(
            dataset.to_table(filter=where, columns=["id"], use_scalar_index=False).column("id").to_pylist()
        )
        assert through == scanned and through, name
    query = np.ones(DIMENSION, np.float32)
    nearest = {"column": "vec", "q": query, "k": 5, "nprobes": 2}
    found = dataset.to_table(nearest=nearest, columns=["id"]).column("id").to_pylist()
    scanned = dataset.to_table(nearest={**nearest, "use_index": False}, columns=["id"]).column("id").to_pylist()
    assert found == scanned
