"""The datasets and queries of the index-query suite (:mod:`.queries`).

Small datasets written by pylance 14 with one index per queried column
(:class:`~conformance.drivers.queries.IndexKind`): ``score`` BTREE,
``category`` BITMAP, ``bucket`` ZONEMAP, ``labels`` LABEL_LIST, ``text``
INVERTED, ``vec`` IVF_FLAT. Each :class:`Scenario` is a history after the
indices were built:

* ``fresh``: every row indexed;
* ``appended``: rows appended after the indices, in a fragment no index
  covers (the index covers only some fragments);
* ``deleted``: rows deleted after the indices, a whole fragment among them
  (the index still names rows and a fragment that are gone);
* ``updated``: values of indexed columns updated after the indices (pylance
  moves the updated rows to a new fragment, unindexed, and deletes them
  where they were);
* ``optimized``: rows appended, then ``optimize_indices`` (the new fragment
  indexed by a delta segment or a merged one, as pylance chooses);
* ``compacted``: rows deleted, then ``compact_files`` (the indices remapped
  to the new fragment);
* ``compacted-deferred``: the same with ``defer_index_remap`` (the indices
  keep the old row addresses; the fragment reuse index maps them);
* ``stable-updated``: the ``updated`` writes on a dataset with stable row
  ids (an updated row keeps its id in its new fragment).

Each scenario is written twice: ``indexed`` as above, and ``plain`` by the
same writes without any index, so that "without the index" means the same
rows with no index to plan through, whatever the driver can switch off.
Both have the same row ids (the writes are identical; building an index
moves no row). Every value is drawn from a seeded generator: the same
datasets every run.
"""

from __future__ import annotations

import enum
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..drivers.queries import (
    Equals,
    FullTextMatch,
    In,
    IndexKind,
    IsNull,
    LabelContains,
    Nearest,
    Query,
    QueryCase,
    Range,
    answer_from_rows,
)

#: Rows written first, in fragments of :data:`FRAGMENT_ROWS`.
ROWS = 600
FRAGMENT_ROWS = 200
#: Rows appended after the indices (``appended``).
APPENDED_ROWS = 150
DIMENSIONS = 8
PARTITIONS = 4
SEED = 30
#: Words of the text and label columns: no English stop word, no two with one stem.
WORDS = ("apple", "banana", "cherry", "grape", "lemon", "mango")
#: The word the ``updated`` scenario writes; no other row holds it.
UPDATED_WORD = "quince"
CATEGORIES = ("red", "green", "blue")

#: The index each column gets.
COLUMN_INDICES: dict[str, IndexKind] = {
    "score": IndexKind.BTREE,
    "category": IndexKind.BITMAP,
    "bucket": IndexKind.ZONEMAP,
    "labels": IndexKind.LABEL_LIST,
    "text": IndexKind.INVERTED,
    "vec": IndexKind.IVF_FLAT,
}


class Scenario(str, enum.Enum):
    """What happened to the dataset after its indices were built."""

    FRESH = "fresh"
    APPENDED = "appended"
    DELETED = "deleted"
    UPDATED = "updated"
    OPTIMIZED = "optimized"
    COMPACTED = "compacted"
    COMPACTED_DEFERRED = "compacted-deferred"
    STABLE_UPDATED = "stable-updated"


#: The ``deleted`` scenario's predicate: scattered rows, and the whole last fragment.
DELETE_WHERE = f"id % 7 = 3 OR id >= {ROWS - FRAGMENT_ROWS}"
#: The compacted scenarios' predicate (deletions compaction materialises).
COMPACT_DELETE_WHERE = "id % 7 = 3"
#: Large enough that compaction merges every fragment into one.
COMPACTED_FRAGMENT_ROWS = 10 * ROWS
#: The ``updated`` scenario's predicate and new values (SQL expressions).
UPDATE_WHERE = "id % 5 = 0"
UPDATE_VALUES = {
    "score": "score + 100",
    "category": "'violet'",
    "text": f"'{UPDATED_WORD} pie'",
    "bucket": "bucket + 20",
}


def rows(start: int, count: int) -> pa.Table:
    """Rows ``start`` to ``start + count`` of the generated data (seeded by
    ``start``: the same rows every run)."""
    rng = np.random.default_rng(SEED + start)
    ids = range(start, start + count)
    vectors = rng.standard_normal(count * DIMENSIONS).astype(np.float32)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "score": pa.array([None if i % 17 == 0 else (i * 7) % 50 for i in ids], pa.int64()),
            "category": pa.array([None if i % 13 == 0 else CATEGORIES[i % 3] for i in ids], pa.string()),
            "bucket": pa.array([i // 40 for i in ids], pa.int64()),
            "labels": pa.array([[WORDS[i % 6], WORDS[(i // 6) % 6]] for i in ids], pa.list_(pa.string())),
            "text": pa.array([f"{WORDS[i % 6]} and {WORDS[(i * 5 + 1) % 6]} pie" for i in ids], pa.string()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors), DIMENSIONS),
        }
    )


def query_vector(seed: int) -> tuple[float, ...]:
    return tuple(float(x) for x in np.random.default_rng(seed).standard_normal(DIMENSIONS).astype(np.float32))


#: The queries, each on the column whose index it exercises.
CASES: tuple[QueryCase, ...] = tuple(
    QueryCase(name, query, COLUMN_INDICES[query.column])
    for name, query in (
        ("score-equals", Equals("score", 7)),
        ("score-range", Range("score", 10, 20)),
        ("score-at-least", Range("score", lower=40)),
        ("score-in", In("score", (1, 2, 3, 107))),
        ("score-is-null", IsNull("score")),
        ("category-equals", Equals("category", "red")),
        ("category-in", In("category", ("green", "violet"))),
        ("category-is-null", IsNull("category")),
        ("bucket-range", Range("bucket", 3, 6)),
        ("labels-contain", LabelContains("labels", "apple")),
        ("text-match", FullTextMatch("text", "banana")),
        ("text-match-updated", FullTextMatch("text", UPDATED_WORD)),
        ("vec-nearest", Nearest("vec", query_vector(1), 10)),
        ("vec-nearest-many", Nearest("vec", query_vector(2), 40)),
    )
)


def _create_indices(dataset: Any) -> None:
    for column, index in COLUMN_INDICES.items():
        if index is IndexKind.IVF_FLAT:
            dataset.create_index(column, index.value, num_partitions=PARTITIONS)
        else:
            dataset.create_scalar_index(column, index.value)


def write_scenario(path: Path, scenario: Scenario, *, indexed: bool) -> None:
    """Write ``scenario`` at ``path`` with pylance (its indices only when ``indexed``)."""
    import lance  # lazy: pylance builds the datasets; the suite imports without it

    dataset = lance.write_dataset(
        rows(0, ROWS),
        str(path),
        max_rows_per_file=FRAGMENT_ROWS,
        enable_stable_row_ids=scenario is Scenario.STABLE_UPDATED,
    )
    if indexed:
        _create_indices(dataset)
    if scenario in (Scenario.APPENDED, Scenario.OPTIMIZED):
        dataset = lance.write_dataset(rows(ROWS, APPENDED_ROWS), str(path), mode="append")
        if scenario is Scenario.OPTIMIZED and indexed:
            dataset.optimize.optimize_indices()
    elif scenario is Scenario.DELETED:
        dataset.delete(DELETE_WHERE)
    elif scenario in (Scenario.UPDATED, Scenario.STABLE_UPDATED):
        dataset.update(UPDATE_VALUES, where=UPDATE_WHERE)
    elif scenario in (Scenario.COMPACTED, Scenario.COMPACTED_DEFERRED):
        dataset.delete(COMPACT_DELETE_WHERE)
        dataset.optimize.compact_files(
            target_rows_per_fragment=COMPACTED_FRAGMENT_ROWS,
            defer_index_remap=scenario is Scenario.COMPACTED_DEFERRED,
        )


@dataclass(frozen=True)
class Coverage:
    """What the index segments on one column of a version cover, as the
    reference reads the manifest (fragment bitmaps translated through the
    fragment reuse index: :func:`reference_impl.fragment_reuse.covered_fragment_ids`)."""

    column: str
    #: Fragment ids each segment on the column covers, by segment name and uuid.
    segments: tuple[tuple[str, tuple[int, ...]], ...]
    live_fragments: tuple[int, ...]

    @property
    def covers_live_rows(self) -> bool:
        """Whether some segment covers a fragment the version still has: only
        then can a query on the column be planned through an index."""
        live = set(self.live_fragments)
        return any(live.intersection(fragments) for _, fragments in self.segments)

    def describe(self) -> str:
        segments = ", ".join(f"{name} over fragments {list(fragments)}" for name, fragments in self.segments)
        return f"{self.column}: {segments or 'no index'}; live fragments {list(self.live_fragments)}"


@dataclass
class ScenarioDatasets:
    """One scenario's two datasets and its reference scan."""

    scenario: Scenario
    indexed: Path
    plain: Path
    #: The reference's scan of ``indexed``, read once: row ids and column values.
    _scan: dict[str, list] | None = field(default=None, repr=False)

    def reference(self, query: Query) -> tuple[int, ...]:
        """The reference's answer (its scan, filtered or ranked:
        :func:`~conformance.drivers.queries.answer_from_rows`)."""
        if self._scan is None:
            # lazy: the reference reader is needed only once the suite runs
            from reference_impl.dataset import Dataset

            table = Dataset.open(self.indexed).to_table(with_row_id=True)
            self._scan = {name: table.column(name).to_pylist() for name in table.column_names}
        return answer_from_rows(query, self._scan["_rowid"], self._scan[query.column])

    def coverage(self, column: str) -> Coverage:
        """The index segments of ``indexed`` on the top-level ``column``."""
        # lazy: the reference reader is needed only once the suite runs
        from reference_impl.dataset import Dataset
        from reference_impl.fragment_reuse import covered_fragment_ids

        dataset = Dataset.open(self.indexed)
        field_ids = {f.id for f in dataset.manifest.schema.fields if f.name == column and f.parent_id == -1}
        covered = covered_fragment_ids(dataset.indices, dataset.storage.read)
        segments = tuple(
            (f"{index.name} ({index.uuid})", tuple(covered[index.uuid] or ()))
            for index in dataset.indices
            if field_ids.intersection(index.fields)
        )
        return Coverage(column, segments, tuple(fragment.id for fragment in dataset.manifest.fragments))


@dataclass
class QueryDatasets:
    """Every scenario written under one scratch directory (removed when this
    object is collected or the process ends)."""

    directory: tempfile.TemporaryDirectory
    scenarios: dict[Scenario, ScenarioDatasets]


class DatasetsUnavailable(Exception):
    """The datasets cannot be built here (pylance is not installed)."""


def build_datasets() -> QueryDatasets:
    """Write every scenario, indexed and plain, into a new scratch directory."""
    try:
        import lance  # noqa: F401 - lazy: only checks that pylance can build the datasets
    except ImportError:
        raise DatasetsUnavailable("the index-query datasets are written by pylance, which is not installed") from None
    directory = tempfile.TemporaryDirectory(prefix="lance-suite-queries-")
    root = Path(directory.name)
    scenarios = {}
    for scenario in Scenario:
        indexed, plain = root / f"{scenario.value}-indexed.lance", root / f"{scenario.value}-plain.lance"
        write_scenario(indexed, scenario, indexed=True)
        write_scenario(plain, scenario, indexed=False)
        scenarios[scenario] = ScenarioDatasets(scenario, indexed, plain)
    return QueryDatasets(directory, scenarios)


__all__ = [
    "CASES",
    "COLUMN_INDICES",
    "Coverage",
    "DatasetsUnavailable",
    "QueryDatasets",
    "Scenario",
    "ScenarioDatasets",
    "build_datasets",
    "rows",
    "write_scenario",
]
