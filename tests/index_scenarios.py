"""Datasets written by pylance 14 with every index type it creates, taken
through the life an index leads (upstream format/index/index.md).

Each scenario writes one dataset and walks it through the same steps, one or
more versions each, so that its history holds every situation the index page
describes:

* ``created``: the indices over the first fragments (one segment each);
* ``appended``: rows no index covers (readers scan them);
* ``delta``: ``optimize_indices(num_indices_to_merge=0)`` twice, each folding
  the new fragments into a new delta segment (three segments per index);
* ``merged``: ``optimize_indices()`` merging them into one segment;
* ``deleted``: rows deleted after the index was built (the segments keep
  them, readers filter them: "Handling deleted and invalidated rows");
* ``fragment_dropped``: every row of one covered fragment deleted, so the
  segments name a fragment the version no longer has;
* ``updated``: rows rewritten into a new fragment (their old copies deleted),
  then indexed by a delta segment (``update_indexed``);
* ``compacted``: ``compact_files`` remapping the indices at once;
* ``compacted_deferred``: ``compact_files(defer_index_remap=True)``: the
  segments keep the old row addresses and the fragment reuse index
  (index/system/frag_reuse.md) maps them
  (not with stable row ids: pylance 14 refuses it there);
* ``after_compaction``: an append and ``optimize_indices()`` on top of it.

:data:`SCENARIOS` holds the scalar indices (BTREE, BITMAP, LABEL_LIST,
ZONEMAP, BLOOMFILTER, NGRAM, INVERTED, JSON, MINHASHLSH), the vector indices (IVF_FLAT,
IVF_PQ, IVF_SQ, IVF_HNSW_SQ, IVF_RQ, one vector column each) and a third
dataset with stable row ids (segments then store row ids, not addresses).
``scale`` multiplies the row counts (1: a few hundred rows per fragment,
built in about a second each; the ``slow`` tests use 10).

Every value is a pure function of the row id; each step checks that pylance
did what the step is named after (:class:`ScenarioError` otherwise), so an
upgrade that changes behaviour breaks the build instead of weakening the
tests that use these datasets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tests.pylance_scenarios import ScenarioError

#: Rows per fragment of the first write at scale 1.
FRAGMENT_ROWS = 200
#: Dimension of the vector columns.
DIMENSION = 8
CATEGORIES = ("red", "green", "blue", None)
WORDS = ("north", "south", "east", "west", "river", "stone", "cloud", "ember")


def _require(condition: bool, message: str) -> None:
    # Not ``assert``: these checks must also run under ``python -O``.
    if not condition:
        raise ScenarioError(message)


# ---------------------------------------------------------------------------
# Deterministic data
# ---------------------------------------------------------------------------


def scalar_rows(start: int, count: int) -> pa.Table:
    """One column per scalar index type, each with nulls on its own period."""
    ids = range(start, start + count)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "category": pa.array([CATEGORIES[i % 4] for i in ids], pa.string()),
            "labels": pa.array(
                [None if i % 7 == 0 else sorted({WORDS[i % 3], WORDS[i % 5]}) for i in ids], pa.list_(pa.string())
            ),
            "value": pa.array([None if i % 11 == 0 else float((i * 37) % 1000) for i in ids], pa.float64()),
            "name": pa.array([None if i % 13 == 0 else f"name-{i % 50}" for i in ids], pa.string()),
            "text": pa.array(
                [None if i % 17 == 0 else f"{WORDS[i % 8]} {WORDS[(i // 8) % 8]} number {i % 23}" for i in ids],
                pa.string(),
            ),
            "doc": pa.array(
                [json.dumps({"size": i % 9, "tag": WORDS[i % 4]}) if i % 19 else None for i in ids],
                pa.json_(pa.string()),
            ),
        }
    )


def vectors(start: int, count: int) -> pa.FixedSizeListArray:
    """Row ``i``'s vector: ``sin((i + 1) * k * 0.37)`` for ``k = 1..DIMENSION``."""
    ids = np.arange(start, start + count, dtype=np.float64)
    values = np.sin(np.outer(ids + 1, np.arange(1, DIMENSION + 1)) * 0.37).astype(np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(values.ravel()), DIMENSION)


VECTOR_COLUMNS = ("v_flat", "v_pq", "v_sq", "v_hnsw_sq", "v_hnsw_pq", "v_hnsw_flat", "v_rq")


def vector_rows(start: int, count: int) -> pa.Table:
    """``id``, ``marker`` (what updates change) and one vector column per index."""
    column = vectors(start, count)
    table = pa.table(
        {"id": pa.array(range(start, start + count), pa.int64()), "marker": pa.array([0] * count, pa.int32())}
    )
    for name in VECTOR_COLUMNS:
        table = table.append_column(name, column)
    return table


# ---------------------------------------------------------------------------
# The indices
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexSpec:
    """One index a scenario creates: ``index_type`` as pylance names it."""

    name: str
    column: str
    index_type: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def is_vector(self) -> bool:
        return self.index_type.startswith("IVF_")

    def create(self, dataset, scale: int) -> None:
        if self.index_type == "JSON":
            from lance.indices import IndexConfig  # lazy: pylance is optional (the test extra)

            config = IndexConfig(index_type="json", parameters={"target_index_type": "btree", "path": "size"})
            dataset.create_scalar_index(self.column, config, name=self.name)
        elif self.is_vector:
            # k-means trains one partition per few hundred vectors.
            dataset.create_index(self.column, self.index_type, name=self.name, num_partitions=2 * scale, **self.options)
        else:
            dataset.create_scalar_index(self.column, self.index_type, name=self.name)


SCALAR_INDICES = (
    IndexSpec("id_btree", "id", "BTREE"),
    IndexSpec("category_bitmap", "category", "BITMAP"),
    IndexSpec("labels_label_list", "labels", "LABEL_LIST"),
    IndexSpec("value_zonemap", "value", "ZONEMAP"),
    IndexSpec("name_bloomfilter", "name", "BLOOMFILTER"),
    IndexSpec("text_ngram", "text", "NGRAM"),
    IndexSpec("text_inverted", "text", "INVERTED"),
    IndexSpec("doc_json", "doc", "JSON"),
    IndexSpec("text_minhash", "text", "MINHASHLSH"),
)
VECTOR_INDICES = (
    IndexSpec("v_flat_ivf_flat", "v_flat", "IVF_FLAT"),
    IndexSpec("v_pq_ivf_pq", "v_pq", "IVF_PQ", {"num_sub_vectors": 2}),
    IndexSpec("v_sq_ivf_sq", "v_sq", "IVF_SQ"),
    IndexSpec("v_hnsw_sq_ivf_hnsw_sq", "v_hnsw_sq", "IVF_HNSW_SQ"),
    IndexSpec("v_hnsw_pq_ivf_hnsw_pq", "v_hnsw_pq", "IVF_HNSW_PQ", {"num_sub_vectors": 2}),
    IndexSpec("v_hnsw_flat_ivf_hnsw_flat", "v_hnsw_flat", "IVF_HNSW_FLAT"),
    IndexSpec("v_rq_ivf_rq", "v_rq", "IVF_RQ"),
)
#: The index types pylance 14 reports in ``describe_indices()`` for each spec.
DESCRIBED_TYPES = {
    "BTREE": "BTree",
    "BITMAP": "Bitmap",
    "LABEL_LIST": "LabelList",
    "ZONEMAP": "ZoneMap",
    "BLOOMFILTER": "BloomFilter",
    "NGRAM": "NGram",
    "INVERTED": "Inverted",
    "JSON": "Json",
    "MINHASHLSH": "MinHashLsh",
    "IVF_FLAT": "IVF_FLAT",
    "IVF_PQ": "IVF_PQ",
    "IVF_SQ": "IVF_SQ",
    "IVF_HNSW_SQ": "IVF_HNSW_SQ",
    "IVF_HNSW_PQ": "IVF_HNSW_PQ",
    "IVF_HNSW_FLAT": "IVF_HNSW_FLAT",
    "IVF_RQ": "IVF_RQ",
}
FRAGMENT_REUSE_INDEX = "__lance_frag_reuse"
#: ``num_indices_to_merge`` asking for every segment of an index.
MERGE_ALL = 1000


# ---------------------------------------------------------------------------
# The walk through an index's life
# ---------------------------------------------------------------------------


@dataclass
class IndexScenario:
    """A built scenario: where it is and which version each step left."""

    name: str
    path: Path
    indices: tuple[IndexSpec, ...]
    #: Step name (see the module docstring) -> the version it committed last.
    steps: dict[str, int] = field(default_factory=dict)
    stable_row_ids: bool = False


def _open(path: Path):
    import lance  # lazy: pylance is optional (the test extra)

    return lance.dataset(str(path))


def _segments(path: Path) -> dict[str, list[list[int]]]:
    """``{index name: [sorted fragment ids of each segment]}`` at the latest version."""
    return {
        index.name: [sorted(segment.fragment_ids) for segment in index.segments]
        for index in _open(path).describe_indices()
    }


@dataclass(frozen=True)
class _Walk:
    """What differs between the scenarios' walks."""

    rows: Callable[[int, int], pa.Table]
    #: The ``update`` assignments: they change an indexed value of each index.
    updates: dict[str, str]
    write_options: dict[str, Any]


def _walk(scenario: IndexScenario, walk: _Walk, scale: int) -> IndexScenario:
    import lance  # lazy: pylance is optional (the test extra)

    path, per_fragment = scenario.path, FRAGMENT_ROWS * scale
    step = scenario.steps

    def mark(name: str) -> None:
        step[name] = _open(path).version

    def append(start: int, count: int) -> None:
        lance.write_dataset(walk.rows(start, count), str(path), mode="append")

    lance.write_dataset(walk.rows(0, 3 * per_fragment), str(path), max_rows_per_file=per_fragment, **walk.write_options)
    for spec in scenario.indices:
        spec.create(_open(path), scale)
    mark("created")
    found = _segments(path)
    _require(
        {spec.name: [[0, 1, 2]] for spec in scenario.indices} == found,
        f"{scenario.name}: indices after creation {found}",
    )
    described = {index.name: index.index_type for index in _open(path).describe_indices()}
    expected = {spec.name: DESCRIBED_TYPES[spec.index_type] for spec in scenario.indices}
    _require(described == expected, f"{scenario.name}: index types {described}, expected {expected}")

    next_id = 3 * per_fragment
    append(next_id, per_fragment // 2)
    next_id += per_fragment // 2
    mark("appended")

    for _ in range(2):
        _open(path).optimize.optimize_indices(num_indices_to_merge=0)
        append(next_id, per_fragment // 4)
        next_id += per_fragment // 4
    _open(path).optimize.optimize_indices(num_indices_to_merge=0)
    mark("delta")
    found = _segments(path)
    _require(all(len(found[spec.name]) == 4 for spec in scenario.indices), f"{scenario.name}: delta segments {found}")

    append(next_id, per_fragment // 4)
    next_id += per_fragment // 4
    # With nothing new, optimize_indices merges nothing; the new fragment
    # and every delta go into one segment.
    _open(path).optimize.optimize_indices(num_indices_to_merge=MERGE_ALL)
    mark("merged")
    found = _segments(path)
    _require(all(len(found[spec.name]) == 1 for spec in scenario.indices), f"{scenario.name}: merged {found}")

    _open(path).delete("id % 10 = 3")
    mark("deleted")
    _open(path).delete(f"id >= {per_fragment} AND id < {2 * per_fragment}")
    mark("fragment_dropped")
    fragments = [fragment.fragment_id for fragment in _open(path).get_fragments()]
    _require(1 not in fragments, f"{scenario.name}: fragment 1 is still there: {fragments}")
    _require(
        all(1 in found[spec.name][0] for spec in scenario.indices), f"{scenario.name}: no segment names fragment 1"
    )

    _open(path).update(walk.updates, where="id % 10 = 4")
    mark("updated")
    _open(path).optimize.optimize_indices(num_indices_to_merge=0)
    mark("update_indexed")

    _open(path).optimize.compact_files(target_rows_per_fragment=2 * per_fragment)
    mark("compacted")

    if not scenario.stable_row_ids:
        # pylance 14 refuses a deferred remap with stable row ids (their
        # segments store row ids, which compaction does not change).
        _open(path).delete("id % 10 = 5")
        metrics = _open(path).optimize.compact_files(
            target_rows_per_fragment=100 * per_fragment, defer_index_remap=True
        )
        mark("compacted_deferred")
        _require(metrics.fragments_removed >= 1, f"{scenario.name}: deferred compaction {metrics}")
        found = _segments(path)
        _require(FRAGMENT_REUSE_INDEX in found, f"{scenario.name}: no fragment reuse index after a deferred remap")

    append(next_id, per_fragment // 4)
    _open(path).optimize.optimize_indices()
    mark("after_compaction")
    return scenario


def build_scalar_indices(path: Path, scale: int = 1) -> IndexScenario:
    """Every scalar index type, one column each."""
    scenario = IndexScenario("scalar_indices", path, SCALAR_INDICES)
    updates = {
        "category": "'purple'",
        "labels": "['updated']",
        "value": "value + 5000",
        "name": "'renamed'",
        "text": "'updated text'",
    }
    return _walk(scenario, _Walk(scalar_rows, updates, {}), scale)


def build_vector_indices(path: Path, scale: int = 1) -> IndexScenario:
    """Every vector index type, one vector column each (an update rewrites
    the rows with their vectors unchanged)."""
    scenario = IndexScenario("vector_indices", path, VECTOR_INDICES)
    return _walk(scenario, _Walk(vector_rows, {"marker": "marker + 1"}, {}), scale)


def _scalar_and_vector_rows(start: int, count: int) -> pa.Table:
    return scalar_rows(start, count).append_column("v_pq", vectors(start, count))


def build_stable_row_ids(path: Path, scale: int = 1) -> IndexScenario:
    """BTREE, BITMAP, LABEL_LIST, ZONEMAP and IVF_PQ with stable row ids:
    segments store row ids, which compaction does not change."""
    indices = (*SCALAR_INDICES[:4], VECTOR_INDICES[1])
    scenario = IndexScenario("stable_row_ids", path, indices, stable_row_ids=True)
    updates = {"category": "'purple'", "labels": "['updated']", "value": "value + 5000"}
    walk = _Walk(_scalar_and_vector_rows, updates, {"enable_stable_row_ids": True})
    return _walk(scenario, walk, scale)


def build_single_index(path: Path, spec: IndexSpec, updates: dict[str, str], *, stable_row_ids: bool = False):
    """One scalar index through the whole walk (for a slice's own tests):
    ``updates`` rewrite the rows the ``updated`` step picks."""
    scenario = IndexScenario(spec.name, path, (spec,), stable_row_ids=stable_row_ids)
    options = {"enable_stable_row_ids": True} if stable_row_ids else {}
    return _walk(scenario, _Walk(scalar_rows, updates, options), 1)


SCENARIOS: dict[str, Callable[..., IndexScenario]] = {
    "scalar_indices": build_scalar_indices,
    "vector_indices": build_vector_indices,
    "stable_row_ids": build_stable_row_ids,
}


def build_all(root: Path, scale: int = 1) -> dict[str, IndexScenario]:
    """Every scenario under ``root``: ``{name: built scenario}``."""
    return {name: build(root / name, scale) for name, build in SCENARIOS.items()}
