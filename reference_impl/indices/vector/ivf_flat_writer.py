"""Writing an IVF_FLAT segment (format/index/vector/index.md, "Storage
Layout (V3)" with the FLAT sub-index and FLAT storage): the simplest vector
index the page lays out, and the one whose answers need no approximation:
searched with every partition probed it returns what an exhaustive search
returns.

The clustering is plain k-means (Lloyd's iterations from evenly spaced rows,
so the result depends on the data alone), assigning rows by Euclidean
distance of the vectors as the index sees them (unit vectors for cosine),
as pylance 14 assigns them (docs/spec-discrepancies.md, "Index formats").
The segment holds the live rows with a vector; rows deleted before the
build and null vectors are left out, as index.md allows.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ...arrow_schema import schema_from_arrow
from ...index_metadata import IndexFile, IndexMetadata
from ...row_ids import row_address
from ...scan import fragment_table
from ...wire import index_pb2
from ..files import index_file_version, write_index_file
from .distance import DistanceType, indexed_form, squared_l2
from .ivf import AUXILIARY_FILE, INDEX_FILE

if TYPE_CHECKING:
    from ...dataset import Dataset

TYPE_URL = "/lance.index.pb.VectorIndexDetails"
#: The ``index_version`` pylance 14 records for IVF_FLAT.
INDEX_VERSION = 1
KMEANS_ITERATIONS = 20
_METRIC_TYPES = {
    DistanceType.L2: index_pb2.L2,
    DistanceType.COSINE: index_pb2.Cosine,
    DistanceType.DOT: index_pb2.Dot,
}


class VectorIndexError(ValueError):
    """An IVF_FLAT index that cannot be built (a column that is no
    fixed-size list of floats, a distance type the writer does not know)."""


def _vectors(dataset: Dataset, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Row ids (stable ids, or row addresses) and vectors of the live rows
    with a vector, fragment by fragment."""
    if column not in [field.name for field in dataset.schema.fields if field.parent_id < 0]:
        raise VectorIndexError(f"the IVF_FLAT writer indexes a top-level column; {column!r} is none")
    ids, vectors = [], []
    for fragment in dataset.fragments:
        table = fragment_table(dataset, fragment, include_deleted=True, columns=[column])
        values = table.column(column).combine_chunks()
        if not pa.types.is_fixed_size_list(values.type) or not pa.types.is_floating(values.type.value_type):
            raise VectorIndexError(f"column {column!r} is {values.type}, not a fixed-size list of floats")
        stable = dataset.row_ids(fragment)
        row_ids = (
            np.asarray(stable, dtype=np.uint64)
            if stable is not None
            else np.uint64(row_address(fragment.id, 0)) + np.arange(fragment.physical_rows, dtype=np.uint64)
        )
        keep = ~np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        keep[list(dataset.deleted_offsets(fragment))] = False
        size = values.type.list_size
        flat = np.asarray(values.values.slice(values.offset * size, len(values) * size), dtype=np.float64)
        ids.append(row_ids[keep])
        vectors.append(flat.reshape(len(values), size)[keep])
    return np.concatenate(ids), np.concatenate(vectors)


def kmeans(points: np.ndarray, partitions: int) -> np.ndarray:
    """Centroids of ``partitions`` clusters of ``points`` (Lloyd's
    iterations from evenly spaced points; an emptied cluster keeps its
    centroid)."""
    start = np.linspace(0, len(points) - 1, partitions).round().astype(np.int64)
    centroids = points[start].copy()
    for _ in range(KMEANS_ITERATIONS):
        nearest = squared_l2(points, centroids).argmin(axis=1)
        moved = centroids.copy()
        for cluster in range(partitions):
            members = points[nearest == cluster]
            if len(members):
                moved[cluster] = members.mean(axis=0)
        if np.allclose(moved, centroids):
            break
        centroids = moved
    return centroids


def _ivf(offsets, lengths, centroids: np.ndarray | None = None) -> bytes:
    message = index_pb2.IVF(offsets=[int(n) for n in offsets], lengths=[int(n) for n in lengths])
    if centroids is not None:
        tensor = centroids.astype("<f4")
        message.centroids_tensor.CopyFrom(
            index_pb2.Tensor(data_type=index_pb2.Tensor.FLOAT32, shape=list(tensor.shape), data=tensor.tobytes())
        )
    return message.SerializeToString()


def write_ivf_flat(
    dataset: Dataset, index: IndexMetadata, column: str, *, num_partitions: int | None = None, metric: str = "l2"
) -> IndexMetadata:
    """Write the files of ``index`` (its uuid names the directory) over
    ``column`` and return ``index`` with its details, version and files."""
    try:
        distance = DistanceType(metric.lower())
    except ValueError:
        raise VectorIndexError(f"distance type {metric!r} is none of l2, cosine, dot") from None
    if distance not in _METRIC_TYPES:
        raise VectorIndexError(f"the IVF_FLAT writer does not write {distance.value} indices")
    row_ids, vectors = _vectors(dataset, column)
    if not len(row_ids):
        raise VectorIndexError(f"column {column!r} has no live vector to index")
    indexed = indexed_form(vectors, distance)
    partitions = num_partitions or max(1, int(round(np.sqrt(len(row_ids)))))
    partitions = min(partitions, len(row_ids))
    centroids = kmeans(indexed, partitions)
    nearest = squared_l2(indexed, centroids).argmin(axis=1)
    order = np.argsort(nearest, kind="stable")  # partitions in order, rows in row order inside each
    lengths = np.bincount(nearest, minlength=partitions)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    dimension = vectors.shape[1]

    aux_schema = pa.schema(
        [pa.field("_rowid", pa.uint64()), pa.field("flat", pa.list_(pa.float32(), dimension), nullable=False)]
    )
    aux_table = pa.table(
        {
            "_rowid": pa.array(row_ids[order], pa.uint64()),
            "flat": pa.FixedSizeListArray.from_arrays(pa.array(indexed[order].astype(np.float32).ravel()), dimension),
        },
        schema=aux_schema,
    )
    aux_metadata = {
        "distance_type": distance.value.encode(),
        "lance:ivf": b"1",
        "storage_metadata": json.dumps([json.dumps({"dim": dimension})]).encode(),
    }
    main_schema = pa.schema([pa.field("__flat_marker", pa.uint64(), nullable=False)])
    main_table = pa.table({"__flat_marker": pa.array([], pa.uint64())}, schema=main_schema)
    main_metadata = {
        "lance:index": json.dumps({"type": "IVF_FLAT", "distance_type": distance.value}).encode(),
        "lance:ivf": b"1",
        "lance:flat": json.dumps([""] * partitions).encode(),
    }
    files, version = [], index_file_version(dataset)
    for name, table, schema, metadata, buffer in (
        (AUXILIARY_FILE, aux_table, aux_schema, aux_metadata, _ivf(offsets, lengths)),
        (INDEX_FILE, main_table, main_schema, main_metadata, _ivf([0] * partitions, [0] * partitions, centroids)),
    ):
        location = dataset.index_file_location(index, name)
        fields = schema_from_arrow(schema).fields
        size = write_index_file(
            location.storage, location.relpath, table, fields, metadata, version=version, global_buffers=[buffer]
        )
        files.append(IndexFile(name, size))
    details = index_pb2.VectorIndexDetails(metric_type=_METRIC_TYPES[distance])
    details.flat.SetInParent()
    index.type_url = TYPE_URL
    index.details = details.SerializeToString()
    index.index_version = INDEX_VERSION
    index.files = files
    return index
