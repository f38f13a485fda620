"""The vector index reader (reference_impl/indices/vector) on indices
pylance 14 built: partitions tile the files, every row is held once, FLAT
stores the vectors, PQ and SQ codes are the nearest codes, HNSW graphs are
graphs of their partitions, and layouts before V3 are recognized."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reference_impl.dataset import Dataset
from reference_impl.indices.types import compatibility
from reference_impl.indices.vector import pq, sq
from reference_impl.indices.vector.distance import DistanceType, assignment_mismatches, indexed_form
from reference_impl.indices.vector.flat import FlatStorage
from reference_impl.indices.vector.hnsw import HnswSubIndex, graph_problems
from reference_impl.indices.vector.ivf import LegacyVectorLayout, VectorSegment, partition_problems, read_vector_segment
from reference_impl.indices.vector.rq import RqStorage, width_problems
from tests.vector_datasets import DIMENSION, KINDS, build

pytest.importorskip("lance")


@pytest.fixture(scope="module", params=KINDS, ids=[kind[0] for kind in KINDS])
def built(request, tmp_path_factory):
    name, index_type, metric, extra = request.param
    path = build(tmp_path_factory.mktemp(name) / "ds", index_type, metric, extra)
    return Dataset.open(str(path)), index_type, DistanceType(metric)


def _all_rows(dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Row addresses and vectors of every row written (deleted ones too)."""
    import lance  # lazy: pylance is the test extra

    table = lance.dataset(dataset.uri, version=dataset.version - 1).to_table(columns=["vec"], with_row_address=True)
    vectors = table.column("vec").combine_chunks().flatten().to_numpy().reshape(-1, DIMENSION)
    return table.column("_rowaddr").to_numpy(), vectors


def test_segments_read_as_the_page_lays_them_out(built):
    dataset, index_type, distance = built
    addresses, vectors = _all_rows(dataset)
    by_address = dict(zip(addresses.tolist(), range(len(addresses)), strict=True))
    held: list[int] = []
    for index in dataset.indices:
        assert compatibility(index).usable
        segment = read_vector_segment(dataset, index)
        assert isinstance(segment, VectorSegment)
        assert (segment.index_type, segment.distance_type, segment.dimension) == (index_type, distance, DIMENSION)
        assert segment.num_partitions == 4
        assert partition_problems(segment.storage_ivf, len(segment.row_ids), "aux") == []
        held += segment.row_ids.tolist()
        rows = np.array([by_address[int(r)] for r in segment.row_ids])
        chosen = segment.partition_of_rows()
        centroids = segment.ivf.centroids.astype(np.float64)
        assert not assignment_mismatches(vectors[rows], centroids, chosen, distance).any()
        storage = segment.storage
        if isinstance(storage, FlatStorage):
            np.testing.assert_allclose(storage.vectors, indexed_form(vectors[rows], distance), rtol=1e-5, atol=1e-6)
        elif isinstance(storage, pq.PqStorage):
            codes = storage.codes(segment.storage_ivf.offsets, segment.storage_ivf.lengths)
            encoded = pq.encoded_vectors(vectors[rows], centroids[chosen], distance)
            assert not pq.code_mismatches(storage, encoded, codes, distance).any()
            # A code moved to another codeword is no longer the nearest.
            codes[0, 0] = (int(codes[0, 0]) + 128) % 256
            assert pq.code_mismatches(storage, encoded, codes, distance)[0]
        elif isinstance(storage, sq.SqStorage):
            assert not sq.code_mismatches(storage, vectors[rows], storage.codes, distance).any()
        elif isinstance(storage, RqStorage):
            assert width_problems(storage) == [] and storage.code_dim >= DIMENSION
        if isinstance(segment.sub_index, HnswSubIndex):
            for graph, nodes in zip(segment.sub_index.graphs, segment.storage_ivf.lengths, strict=True):
                assert graph_problems(graph, int(nodes)) == []
    # Every row written is in exactly one segment's partitions (deleted rows stay until a rebuild).
    assert sorted(held) == sorted(addresses.tolist())


def test_a_nearer_centroid_is_reported(built):
    dataset, _, distance = built
    addresses, vectors = _all_rows(dataset)
    segment = read_vector_segment(dataset, dataset.indices[0])
    assert isinstance(segment, VectorSegment)
    row = int(np.nonzero(addresses == segment.row_ids[0])[0][0])
    centroids = segment.ivf.centroids.astype(np.float64)
    right = segment.partition_of_rows()[:1]
    wrong = (right + 1) % segment.num_partitions
    # The row's own vector placed on another centroid: that centroid is now its nearest.
    moved = centroids.copy()
    moved[wrong[0]] = indexed_form(vectors[row : row + 1], distance)[0]
    assert assignment_mismatches(vectors[row : row + 1], moved, right, distance).all()


def test_segments_without_v3_files_are_recognized_as_legacy(built):
    dataset, _, _ = built
    index = dataset.indices[0]
    no_details = dataclasses.replace(index, type_url=None, details=b"")
    one_file = dataclasses.replace(index, files=[f for f in index.files if f.path == "index.idx"])
    for legacy in (no_details, one_file):
        assert isinstance(read_vector_segment(dataset, legacy), LegacyVectorLayout)
