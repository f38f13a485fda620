"""Zoo features about indices: one dataset per scalar index type, one per
vector index type, and delta indices (``optimize_indices`` after appends).

Each index is built, then rows are appended that it does not cover, so that
readers see a partly indexed table as well as a fully indexed one."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from . import data
from .model import Feature, FeatureUnavailable, require
from .writing import append, index_types, open_dataset, require_index, write

#: Rows of a vector dataset: k-means trains one IVF partition per 256 vectors.
VECTOR_ROWS = 520


def _text_table(start: int, count: int) -> pa.Table:
    table = data.text_rows(start, count)
    return table.append_column("category", data.rows(start, count).column("category"))


def _scalar(column: str, index_type: str, *, cheap: bool = False) -> Feature:
    name = f"{index_type.lower()}_index"

    def build(path: Path) -> None:
        write(_text_table(0, 60), path, max_rows_per_file=30)
        dataset = open_dataset(path)
        try:
            dataset.create_scalar_index(column, index_type, name=name)
        except (ValueError, NotImplementedError) as exc:
            if "not supported" in str(exc).lower() or "unknown" in str(exc).lower():
                raise FeatureUnavailable(f"create_scalar_index({column!r}, {index_type!r}): {exc}") from exc
            raise
        append(_text_table(60, 20), path)
        require_index(path, name)

    return Feature(name, f"a {index_type} index on {column!r}, then an append it does not cover", build, cheap=cheap)


def build_json_index(path: Path) -> None:
    """A scalar index over one path inside a JSON column."""
    try:
        from lance.indices import IndexConfig  # lazy: pylance is optional (the test extra)
    except ImportError as exc:
        raise FeatureUnavailable(f"lance.indices.IndexConfig: {exc}") from exc
    write(data.json_rows(0, 60), path)
    config = IndexConfig(index_type="json", parameters={"target_index_type": "btree", "path": "size"})
    open_dataset(path).create_scalar_index("doc", config, name="doc_size")
    append(data.json_rows(60, 12), path)
    require_index(path, "doc_size")


def _vector(index_type: str, *, sub_vectors: bool) -> Feature:
    name = f"{index_type.lower()}_index"

    def build(path: Path) -> None:
        write(data.vector_rows(0, VECTOR_ROWS), path, max_rows_per_file=300)
        extra = {"num_sub_vectors": 2} if sub_vectors else {}
        open_dataset(path).create_index("vector", index_type, name=name, num_partitions=2, **extra)
        append(data.vector_rows(VECTOR_ROWS, 20), path)
        require(index_types(path).get(name) == index_type, f"index types {index_types(path)}")

    return Feature(name, f"an {index_type} index on an 8-dimensional vector column, then an append", build)


def build_delta_indices(path: Path) -> None:
    """A BTREE and an IVF_PQ index, two appends each folded in by
    ``optimize_indices`` as a new delta (not merged), then one merge of all."""
    write(data.vector_rows(0, VECTOR_ROWS), path)
    dataset = open_dataset(path)
    dataset.create_scalar_index("id", "BTREE", name="id_btree")
    dataset.create_index("vector", "IVF_PQ", name="vector_ivf_pq", num_partitions=2, num_sub_vectors=2)
    for start in (VECTOR_ROWS, VECTOR_ROWS + 30):
        append(data.vector_rows(start, 30), path)
        open_dataset(path).optimize.optimize_indices(num_indices_to_merge=0)
    segments = {index.name: len(index.segments) for index in open_dataset(path).describe_indices()}
    require(segments.get("id_btree", 0) >= 2 and segments.get("vector_ivf_pq", 0) >= 2, f"delta segments {segments}")
    open_dataset(path).optimize.optimize_indices()


def build_multivector_index(path: Path) -> None:
    """An IVF_PQ index (cosine) on a multivector column: a list of
    fixed-size float32 vectors per row."""
    rows, per_row, dimension = 300, 3, 8
    flat = data.vector_rows(0, rows * per_row, dimension).column("vector").combine_chunks()
    offsets = pa.array(range(0, rows * per_row + 1, per_row), pa.int32())
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "vectors": pa.ListArray.from_arrays(offsets, flat)})
    write(table, path)
    open_dataset(path).create_index(
        "vectors", "IVF_PQ", name="vectors_ivf_pq", metric="cosine", num_partitions=1, num_sub_vectors=2
    )
    require_index(path, "vectors_ivf_pq")


def build_drop_index(path: Path) -> None:
    """Two indices created, one dropped, the other kept through an append."""
    write(_text_table(0, 40), path)
    dataset = open_dataset(path)
    dataset.create_scalar_index("id", "BTREE", name="id_btree")
    dataset.create_scalar_index("category", "BITMAP", name="category_bitmap")
    open_dataset(path).drop_index("category_bitmap")
    append(_text_table(40, 10), path)
    require(set(index_types(path)) == {"id_btree"}, f"indices {index_types(path)}")


FEATURES: tuple[Feature, ...] = (
    _scalar("id", "BTREE", cheap=True),
    _scalar("category", "BITMAP"),
    _scalar("labels", "LABEL_LIST"),
    _scalar("text", "INVERTED"),
    _scalar("text", "NGRAM"),
    _scalar("id", "ZONEMAP"),
    _scalar("category", "BLOOMFILTER"),
    _scalar("text", "MINHASHLSH"),
    Feature("json_index", "a scalar index over one path of a JSON column, then an append", build_json_index),
    _vector("IVF_PQ", sub_vectors=True),
    _vector("IVF_FLAT", sub_vectors=False),
    _vector("IVF_SQ", sub_vectors=False),
    _vector("IVF_RQ", sub_vectors=False),
    _vector("IVF_HNSW_PQ", sub_vectors=True),
    _vector("IVF_HNSW_SQ", sub_vectors=True),
    _vector("IVF_HNSW_FLAT", sub_vectors=False),
    Feature("multivector_index", "an IVF_PQ index on a list of vectors per row", build_multivector_index),
    Feature("drop_index", "an index dropped, another kept", build_drop_index),
    Feature(
        "delta_indices", "scalar and vector indices with delta segments from optimize_indices", build_delta_indices
    ),
)
