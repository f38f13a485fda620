"""The bodies of the vector index rules (``rules/index_vector.py``, whose
docstring says what they check and why), loaded only for a version with a
vector index segment (:func:`..index_checks.checks`).

Each public function here is one rule's body by the same name: it yields
the rule's ``(message, location)`` pairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from reference_impl.errors import LanceFormatError
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.types import IndexType, Usability, compatibility
from reference_impl.indices.vector import pq, rq, sq
from reference_impl.indices.vector.distance import assignment_mismatches, indexed_form
from reference_impl.indices.vector.flat import FlatStorage
from reference_impl.indices.vector.hnsw import HnswSubIndex, graph_problems
from reference_impl.indices.vector.ivf import (
    LegacyVectorLayout,
    VectorSegment,
    partition_problems,
    read_vector_segment,
)

from ..context import Loaded, VersionView
from ..facts.index_contents import CoveredRows, checked_rows, key_positions, rewritten_fragments

#: Rows compared with their centroids and codebooks at a time (bounds the
#: ``rows x candidates`` distance arrays).
CHUNK_ROWS = 4096
#: How close a FLAT stored vector must be to the column's (float32 rounding
#: of a normalization, relative).
FLAT_TOLERANCE = 1e-5
#: Row ids named in a message at most.
SHOWN = 5


def _vector_indices(view: VersionView) -> Iterator[tuple[int, IndexMetadata]]:
    for position, index in enumerate(view.manifest_file.indices or []):
        if IndexType.of(index) is IndexType.VECTOR:
            yield position, index


def _at(view: VersionView, position: int) -> str:
    return view.at(f"index_section.indices[{position}]")


def _segment(view: VersionView, index: IndexMetadata) -> Loaded[VectorSegment | LegacyVectorLayout]:
    key: tuple[str, ...]
    try:
        location = view.reader.index_file_location(index, "index.idx")
        key = ("vector-segment", str(location.storage.root), location.relpath)
    except LanceFormatError:
        key = ("vector-segment", index.uuid)
    return view.dataset.cached(key, read_vector_segment, view.reader, index)


def _usable(index: IndexMetadata) -> bool:
    return compatibility(index).usable


def _segments(view: VersionView) -> Iterator[tuple[int, IndexMetadata, VectorSegment]]:
    """The usable V3 segments of this version (each decoded once per run; its
    findings are reported at every version that lists it, as a validation of
    that version alone reports them)."""
    for position, index in _vector_indices(view):
        if not _usable(index):
            continue
        loaded = _segment(view, index)
        if loaded.ok and isinstance(loaded.value, VectorSegment):
            yield position, index, loaded.value


def _shown(ids) -> str:
    ids = [int(i) for i in ids]
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(str(i) for i in ids[:SHOWN]) + more


def files_readable(view: VersionView):
    for position, index in _vector_indices(view):
        if not _usable(index):
            continue
        loaded = _segment(view, index)
        if not loaded.ok:
            yield f"vector index {index.name!r} segment {index.uuid}: {loaded.error}", _at(view, position)


def skipped(view: VersionView):
    for position, index in _vector_indices(view):
        verdict = compatibility(index)
        if verdict.usability is Usability.UNKNOWN_VERSION:
            yield (
                f"vector index {index.name!r} segment {index.uuid} has index_version {index.index_version}, newer than "
                "the reference reads: skipped, as a reader skips it",
                _at(view, position),
            )
            continue
        if verdict.usability is Usability.UNVERSIONED:
            yield (
                f"vector index {index.name!r} segment {index.uuid} records no index_version (a release from before "
                "versioned indices): skipped, as a reader skips a version it does not know",
                _at(view, position),
            )
            continue
        if not verdict.usable:
            continue
        loaded = _segment(view, index)
        if not loaded.ok:
            continue
        segment = loaded.value
        if isinstance(segment, LegacyVectorLayout):
            yield f"vector index {index.name!r} segment {index.uuid} is not read: {segment.reason}", _at(view, position)
        elif isinstance(segment.storage, rq.RqStorage):
            yield (
                f"vector index {index.name!r} segment {index.uuid} ({segment.index_type}): RabitQ codes and factors "
                "are not decoded (their structure and widths are checked)",
                _at(view, position),
            )
        elif isinstance(segment.storage, pq.PqStorage) and segment.storage.num_bits != 8:
            yield (
                f"vector index {index.name!r} segment {index.uuid}: {segment.storage.num_bits}-bit PQ codes are not "
                "decoded (two codes a byte)",
                _at(view, position),
            )


def partition_ranges(view: VersionView):
    for position, index, segment in _segments(view):
        problems = partition_problems(segment.storage_ivf, len(segment.row_ids), "auxiliary.idx")
        rows = _index_file_rows(segment)
        problems += partition_problems(segment.ivf, rows, "index.idx")
        for problem in problems:
            yield f"vector index {index.name!r} segment {index.uuid}: {problem}", _at(view, position)


def _index_file_rows(segment: VectorSegment) -> int:
    if isinstance(segment.sub_index, HnswSubIndex):
        return sum(sum(len(level.nodes) for level in graph.levels) for graph in segment.sub_index.graphs)
    return segment.sub_index.rows


def _ranges_ok(segment: VectorSegment) -> bool:
    return not partition_problems(segment.storage_ivf, len(segment.row_ids), "")


def _column_dimension(view: VersionView, index: IndexMetadata) -> int | None:
    loaded = checked_rows(view, index)
    if not loaded.ok:
        return None
    kind = loaded.value.values.type
    return kind.list_size if pa.types.is_fixed_size_list(kind) else None


def dimensions(view: VersionView):
    for position, index, segment in _segments(view):
        for problem in _dimension_problems(segment, _column_dimension(view, index)):
            yield f"vector index {index.name!r} segment {index.uuid}: {problem}", _at(view, position)


def _dimension_problems(segment: VectorSegment, column: int | None) -> list[str]:
    dimension = segment.dimension
    problems = []
    if column is not None and dimension != column:
        problems.append(f"the centroids have dimension {dimension}, the column {column}")
    storage = segment.storage
    if isinstance(storage, FlatStorage) and storage.dimension != dimension:
        problems.append(f"the flat vectors have dimension {storage.dimension}, the centroids {dimension}")
    elif isinstance(storage, pq.PqStorage):
        if storage.dimension != dimension:
            problems.append(f"storage_metadata says dimension {storage.dimension}, the centroids have {dimension}")
        if storage.stored_codes.shape[1] != storage.code_width:
            problems.append(
                f"__pq_code holds {storage.stored_codes.shape[1]} bytes, not {storage.num_sub_vectors} sub-vectors "
                f"of {storage.num_bits} bits"
            )
    elif isinstance(storage, sq.SqStorage):
        if storage.dimension != dimension or storage.codes.shape[1] != dimension:
            problems.append(
                f"storage_metadata says dim {storage.dimension} and __sq_code holds {storage.codes.shape[1]} "
                f"codes, the centroids have dimension {dimension}"
            )
    elif isinstance(storage, rq.RqStorage):
        if storage.code_dim < dimension:
            problems.append(f"RabitQ code_dim {storage.code_dim} is below the dimension {dimension}")
        problems += rq.width_problems(storage)
    return problems


@dataclass(frozen=True)
class _Matched:
    """The segment's auxiliary rows that are covered rows of this version."""

    #: Positions in the segment's auxiliary rows.
    rows: np.ndarray
    #: Their positions among the covered rows.
    covered: np.ndarray


def _match(segment: VectorSegment, covered: CoveredRows) -> _Matched:
    positions = key_positions(covered.row_ids, segment.row_ids)
    rows = np.flatnonzero(positions >= 0)
    return _Matched(rows, positions[rows])


def _vector_values(covered: CoveredRows, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vectors at ``positions`` of the covered rows (float64
    ``[rows, dim]``) and whether each is non-null."""
    values = covered.values
    valid = ~np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    size = values.type.list_size
    # The child array of all rows, nulls included (flatten() would drop them),
    # converted to float64 only for the rows asked for.
    flat = values.values.slice(values.offset * size, len(values) * size).to_numpy(zero_copy_only=False)
    matrix = flat.reshape(len(values), size)
    return matrix[positions].astype(np.float64), valid[positions]


def rows_once(view: VersionView):
    for position, index in _vector_indices(view):
        if not _usable(index):
            continue
        loaded, rows = _segment(view, index), checked_rows(view, index)
        if not loaded.ok or not isinstance(loaded.value, VectorSegment) or not rows.ok:
            continue
        segment, covered = loaded.value, rows.value
        unique, counts = np.unique(segment.row_ids, return_counts=True)
        if (counts > 1).any():
            yield (
                f"vector index {index.name!r} segment {index.uuid} holds row ids {_shown(unique[counts > 1])} "
                "more than once",
                _at(view, position),
            )
        held = np.isin(covered.row_ids, segment.row_ids)
        live = ~covered.deleted
        if pa.types.is_fixed_size_list(covered.values.type) and len(covered.values):
            live &= ~np.asarray(covered.values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        missing = covered.row_ids[live & ~held]
        if len(missing):
            yield (
                f"vector index {index.name!r} segment {index.uuid} covers rows {_shown(missing)} of its fragments "
                "but holds them in no partition",
                _at(view, position),
            )
        stray = _stray_rows(view, index, segment, covered)
        if len(stray):
            yield (
                f"vector index {index.name!r} segment {index.uuid} holds rows {_shown(stray)} of no fragment it covers",
                _at(view, position),
            )


def _stray_rows(view: VersionView, index: IndexMetadata, segment: VectorSegment, covered: CoveredRows) -> np.ndarray:
    """Row ids the segment holds that belong to none of its fragments, as
    far as this version can tell (rows of gone fragments and, by row
    address, of fragments not read in a sampled run or read by a compaction
    with deferred remap, which readers translate, are left out)."""
    unknown = ~np.isin(segment.row_ids, covered.row_ids)
    if view.reader.uses_stable_row_ids:
        # A stable id says nothing about its fragment: judge only a complete read.
        return segment.row_ids[unknown] if covered.complete and not covered.gone_fragment_ids else np.zeros(0)
    fragments = segment.row_ids >> np.uint64(32)
    unread = set(index.fragment_ids() or []) - set(covered.fragment_ids)
    remapped, _ = rewritten_fragments(view)
    left_out = unread | set(covered.gone_fragment_ids) | remapped
    skip = np.isin(fragments, np.asarray(sorted(left_out), dtype=np.uint64))
    return segment.row_ids[unknown & ~skip]


def _chunks(count: int) -> Iterator[slice]:
    for start in range(0, count, CHUNK_ROWS):
        yield slice(start, min(start + CHUNK_ROWS, count))


def nearest_partition(view: VersionView):
    for position, index, segment in _segments(view):
        rows = checked_rows(view, index)
        if not rows.ok or not _ranges_ok(segment) or not pa.types.is_fixed_size_list(rows.value.values.type):
            continue
        if rows.value.values.type.list_size != segment.dimension:
            continue  # index-vector/dimensions reports it
        matched = _match(segment, rows.value)
        vectors, valid = _vector_values(rows.value, matched.covered)
        partitions = segment.partition_of_rows()[matched.rows]
        wrong = np.zeros(len(matched.rows), dtype=bool)
        for part in _chunks(len(matched.rows)):
            wrong[part] = assignment_mismatches(
                vectors[part], segment.ivf.centroids.astype(np.float64), partitions[part], segment.distance_type
            )
        wrong &= valid
        if wrong.any():
            yield (
                f"vector index {index.name!r} segment {index.uuid} ({segment.distance_type.value}): rows "
                f"{_shown(segment.row_ids[matched.rows[wrong]])} are in partitions whose centroid is not their nearest",
                _at(view, position),
            )


def codes_nearest(view: VersionView):
    for position, index, segment in _segments(view):
        rows = checked_rows(view, index)
        if not rows.ok or not _ranges_ok(segment) or not pa.types.is_fixed_size_list(rows.value.values.type):
            continue
        if rows.value.values.type.list_size != segment.dimension or _dimension_problems(segment, None):
            continue  # index-vector/dimensions reports it
        matched = _match(segment, rows.value)
        vectors, valid = _vector_values(rows.value, matched.covered)
        wrong = _code_mismatches(segment, matched.rows, vectors) & valid
        if wrong.any():
            yield (
                f"vector index {index.name!r} segment {index.uuid} ({segment.index_type}): the stored codes of rows "
                f"{_shown(segment.row_ids[matched.rows[wrong]])} are not the nearest codes of their vectors",
                _at(view, position),
            )


def _code_mismatches(segment: VectorSegment, rows: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    storage, distance = segment.storage, segment.distance_type
    wrong = np.zeros(len(rows), dtype=bool)
    if isinstance(storage, FlatStorage):
        expected = indexed_form(vectors, distance)
        stored = storage.vectors[rows]
        close = np.isclose(stored, expected, rtol=FLAT_TOLERANCE, atol=FLAT_TOLERANCE)
        return ~close.all(axis=1)
    if isinstance(storage, sq.SqStorage):
        for part in _chunks(len(rows)):
            wrong[part] = sq.code_mismatches(storage, vectors[part], storage.codes[rows[part]], distance)
        return wrong
    if isinstance(storage, pq.PqStorage):
        codes = storage.codes(segment.storage_ivf.offsets, segment.storage_ivf.lengths)
        if codes is None:
            return wrong  # index-vector/skipped says so
        centroids = segment.ivf.centroids.astype(np.float64)[segment.partition_of_rows()[rows]]
        for part in _chunks(len(rows)):
            encoded = pq.encoded_vectors(vectors[part], centroids[part], distance)
            wrong[part] = pq.code_mismatches(storage, encoded, codes[rows[part]], distance)
    return wrong


def hnsw_graph(view: VersionView):
    for position, index, segment in _segments(view):
        if not isinstance(segment.sub_index, HnswSubIndex):
            continue
        lengths = segment.storage_ivf.lengths
        for partition, graph in enumerate(segment.sub_index.graphs):
            for problem in graph_problems(graph, int(lengths[partition])):
                yield (
                    f"vector index {index.name!r} segment {index.uuid} partition {partition}: {problem}",
                    _at(view, position),
                )


def sampled(view: VersionView):
    for position, index in _vector_indices(view):
        if not _usable(index):
            continue
        rows = checked_rows(view, index)
        if rows.ok and not rows.value.complete:
            unread = sorted(
                set(index.fragment_ids() or []) - set(rows.value.fragment_ids) - set(rows.value.gone_fragment_ids)
            )
            yield (
                f"vector index {index.name!r} segment {index.uuid}: the rows of fragments {_shown(unread)} went "
                "unchecked (a bounded sample; validate --deep checks every row)",
                _at(view, position),
            )
