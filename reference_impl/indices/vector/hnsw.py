"""The HNSW sub-index (format/index/vector/index.md, "HNSW" in the index
file, ``lance:hnsw``).

Each partition's graph is a range of the index file's rows (the index
file's IVF ranges); inside it the levels follow each other from level 0,
each starting at its ``level_offsets`` entry (relative to the partition).
A row is one node of one level: ``__vector_id`` (the node, a row number of
the partition's storage), ``__neighbors`` and their ``_distance``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ..files import IndexFileContents, IndexFormatError

if TYPE_CHECKING:
    from .ivf import Ivf

VECTOR_ID, NEIGHBORS, DISTANCES = "__vector_id", "__neighbors", "_distance"


@dataclass(frozen=True)
class HnswLevel:
    #: Node ids of the level (row numbers of the partition's storage).
    nodes: np.ndarray
    #: Node ``i``'s neighbours are ``neighbors[neighbor_offsets[i]:neighbor_offsets[i + 1]]``.
    neighbor_offsets: np.ndarray
    neighbors: np.ndarray
    #: Likewise for the distance to each neighbour.
    distance_offsets: np.ndarray
    distances: np.ndarray

    def neighbors_of(self, position: int) -> np.ndarray:
        """The neighbours of the level's ``position``-th node."""
        return self.neighbors[self.neighbor_offsets[position] : self.neighbor_offsets[position + 1]]


@dataclass(frozen=True)
class HnswGraph:
    entry_point: int
    max_level: int
    m: int
    levels: tuple[HnswLevel, ...]


@dataclass(frozen=True)
class HnswSubIndex:
    #: One graph per partition.
    graphs: tuple[HnswGraph, ...]


def _lists(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A list column as (offsets from 0, flat values): a null list is empty."""
    combined = column.combine_chunks()
    offsets = combined.offsets.to_numpy().astype(np.int64)
    return offsets - offsets[0], combined.flatten().to_numpy(zero_copy_only=False)


def _level(nodes, neighbors, distances, start: int, end: int) -> HnswLevel:
    (n_offsets, n_values), (d_offsets, d_values) = neighbors, distances
    return HnswLevel(
        nodes=nodes[start:end].astype(np.int64),
        neighbor_offsets=n_offsets[start : end + 1] - n_offsets[start],
        neighbors=n_values[n_offsets[start] : n_offsets[end]].astype(np.int64),
        distance_offsets=d_offsets[start : end + 1] - d_offsets[start],
        distances=d_values[d_offsets[start] : d_offsets[end]],
    )


def read_hnsw(main: IndexFileContents, ivf: Ivf, described: Any) -> HnswSubIndex:
    if not isinstance(described, list) or len(described) != ivf.num_partitions:
        raise IndexFormatError(main.path, f"lance:hnsw is not a JSON list of {ivf.num_partitions} partition entries")
    rows = main.table.num_rows
    nodes = main.column(VECTOR_ID).to_numpy(zero_copy_only=False)
    if main.column(VECTOR_ID).null_count:
        raise IndexFormatError(main.path, f"{VECTOR_ID} has null rows")
    neighbors, distances = _lists(main.column(NEIGHBORS)), _lists(main.column(DISTANCES))
    graphs = []
    for partition, text in enumerate(described):
        start, length = int(ivf.offsets[partition]), int(ivf.lengths[partition])
        if start + length > rows:
            raise IndexFormatError(main.path, f"HNSW partition {partition} ends at row {start + length} of {rows}")
        try:
            entry = json.loads(text)
            level_offsets = [int(n) for n in entry["level_offsets"]]
            params = entry.get("params", {})
            graph_entry, max_level, m = (
                int(entry["entry_point"]),
                int(params.get("max_level", 0)),
                int(params.get("m", 0)),
            )
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise IndexFormatError(main.path, f"lance:hnsw entry {partition} is not the page's object: {exc}") from None
        bounds = [*level_offsets, length]
        if any(b < a for a, b in zip(bounds[:-1], bounds[1:], strict=True)) or (
            level_offsets and level_offsets[0] != 0
        ):
            raise IndexFormatError(
                main.path, f"HNSW partition {partition} has level offsets {level_offsets} of {length} rows"
            )
        levels = []
        for level in range(len(level_offsets)):
            a, b = start + bounds[level], start + bounds[level + 1]
            levels.append(_level(nodes, neighbors, distances, a, b))
        graphs.append(HnswGraph(graph_entry, max_level, m, tuple(levels)))
    return HnswSubIndex(tuple(graphs))


def graph_problems(graph: HnswGraph, nodes: int) -> list[str]:
    """What is wrong with a partition's graph over ``nodes`` stored rows:
    level 0 holds every node once, upper levels are subsets of the level
    below, neighbours are nodes of their level with one distance each, and
    the entry point is a node of the top non-empty level."""
    problems = []
    if not graph.levels:
        return ["the graph has no levels"] if nodes else []
    bottom = graph.levels[0].nodes
    if (
        len(bottom) != nodes
        or len(np.unique(bottom)) != nodes
        or (nodes and (bottom.min() < 0 or bottom.max() >= nodes))
    ):
        problems.append(
            f"level 0 holds {len(bottom)} nodes ({len(np.unique(bottom))} distinct), not each of the {nodes}"
        )
    below = bottom
    top = 0
    for number, level in enumerate(graph.levels):
        extra = np.setdiff1d(level.nodes, below)
        if number and len(extra):
            problems.append(f"level {number} has nodes {extra[:5].tolist()} that level {number - 1} lacks")
        counts = np.diff(level.neighbor_offsets)
        uneven = np.nonzero(counts != np.diff(level.distance_offsets))[0]
        if len(uneven):
            node = int(level.nodes[uneven[0]])
            problems.append(f"level {number} node {node} has a neighbour list and a distance list of other lengths")
        outside = np.nonzero(~np.isin(level.neighbors, level.nodes))[0]
        if len(outside):
            owner = int(np.searchsorted(level.neighbor_offsets, outside[0], side="right")) - 1
            stray = sorted(set(level.neighbors[outside].tolist()))
            problems.append(
                f"level {number} node {int(level.nodes[owner])} links to {stray[:5]}, no nodes of the level"
                f" ({len(outside)} links so)"
            )
        if len(level.nodes):
            top = number
        below = level.nodes
    if nodes and not np.isin(graph.entry_point, graph.levels[top].nodes):
        problems.append(f"the entry point {graph.entry_point} is no node of the top level {top}")
    return problems
