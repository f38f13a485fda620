"""Small pylance-14 datasets with one vector index each, for the vector
index reader and rule tests: 300 rows of 8-dimensional vectors in two
fragments, the index (4 partitions), an append of 100 rows,
optimize_indices (a delta segment or a merged one, as pylance decides) and
a delete of every seventh row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

DIMENSION = 8
#: (name, index type, distance type, extra create_index parameters).
KINDS = (
    ("ivf_flat", "IVF_FLAT", "l2", {}),
    ("ivf_pq", "IVF_PQ", "l2", {"num_sub_vectors": 4}),
    ("ivf_pq_cosine", "IVF_PQ", "cosine", {"num_sub_vectors": 4}),
    ("ivf_sq_dot", "IVF_SQ", "dot", {}),
    ("ivf_hnsw_sq", "IVF_HNSW_SQ", "cosine", {}),
    ("ivf_rq", "IVF_RQ", "l2", {}),
)


def rows(start: int, count: int) -> pa.Table:
    vectors = np.random.default_rng(start).standard_normal((count, DIMENSION)).astype(np.float32)
    return pa.table(
        {
            "id": pa.array(range(start, start + count), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIMENSION),
        }
    )


def build(path: Path, index_type: str, metric: str, extra: dict) -> Path:
    import lance  # lazy: pylance is the test extra

    lance.write_dataset(rows(0, 300), path, max_rows_per_file=150)
    lance.dataset(path).create_index("vec", index_type, target_partition_size=64, metric=metric, **extra)
    lance.write_dataset(rows(300, 100), path, mode="append")
    lance.dataset(path).optimize.optimize_indices()
    lance.dataset(path).delete("id % 7 = 0")
    return path
