"""The reference's IVF_FLAT writer (reference_impl/indices/vector/ivf_flat_writer.py
through ``create_index``): pylance 14 plans nearest-neighbour queries
through the written index and, probing every partition, answers as its
exhaustive search does; the validator finds nothing wrong with it, before
and after pylance appends and optimizes it."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.validator import Severity, validate
from reference_impl.dataset import Dataset
from reference_impl.indices.vector.ivf import VectorSegment, read_vector_segment
from tests.vector_datasets import DIMENSION, rows

lance = pytest.importorskip("lance")
PARTITIONS = 4


def _nearest(dataset, query, metric: str, **search):
    found = dataset.to_table(nearest={"column": "vec", "q": query, "k": 10, "metric": metric, **search}, columns=["id"])
    return found["id"].to_pylist(), np.asarray(found["_distance"].to_pylist())


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
@pytest.mark.parametrize("stable_row_ids", [False, True], ids=["addresses", "stable-ids"])
def test_pylance_searches_a_reference_ivf_flat_index_like_a_scan(tmp_path, metric, stable_row_ids):
    path = tmp_path / "ds"
    lance.write_dataset(rows(0, 300), path, max_rows_per_file=150, enable_stable_row_ids=stable_row_ids)
    lance.dataset(path).delete("id % 11 = 0")
    written = Dataset.open(str(path)).create_index(
        "vec", index_type="IVF_FLAT", num_partitions=PARTITIONS, metric=metric
    )
    (index,) = written.indices
    segment = read_vector_segment(written, index)
    assert isinstance(segment, VectorSegment)
    assert segment.num_partitions == PARTITIONS and segment.dimension == DIMENSION
    assert len(segment.row_ids) == 300 - len(range(0, 300, 11))  # live rows only

    dataset = lance.dataset(path)
    queries = np.random.default_rng(7).standard_normal((5, DIMENSION)).astype(np.float32)
    for query in queries:
        plan = dataset.scanner(
            nearest={"column": "vec", "q": query, "k": 10, "nprobes": PARTITIONS}, columns=["id"]
        ).explain_plan()
        assert f"ANNIvfPartition: uuid={index.uuid}" in plan, plan
        ids, distances = _nearest(dataset, query, metric, nprobes=PARTITIONS)
        scan_ids, scan_distances = _nearest(dataset, query, metric, use_index=False)
        assert ids == scan_ids
        np.testing.assert_allclose(distances, scan_distances, rtol=1e-5, atol=1e-5)

    lance.write_dataset(rows(300, 60), path, mode="append")
    lance.dataset(path).optimize.optimize_indices()
    findings = validate(path, all_versions=True, deep=True).findings
    assert not [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)], findings
    assert not [f for f in findings if f.rule.startswith("index-vector/")], findings


def test_the_writer_refuses_what_it_cannot_index(tmp_path):
    from reference_impl.errors import InvalidOperationError

    dataset = Dataset.create(tmp_path / "ds", rows(0, 20))
    with pytest.raises(InvalidOperationError, match="not a fixed-size list of floats"):
        dataset.create_index("id", index_type="IVF_FLAT")
    with pytest.raises(InvalidOperationError, match="distance type 'manhattan'"):
        dataset.create_index("vec", index_type="IVF_FLAT", metric="manhattan")
    with pytest.raises(InvalidOperationError, match="takes no options"):
        dataset.create_index("id", index_type="BTREE", num_partitions=2)
    assert dataset.indices == [] and Dataset.open(str(tmp_path / "ds")).indices == []
