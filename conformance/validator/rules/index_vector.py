"""Rules on the contents of vector index segments (upstream
format/index/vector/index.md; the reader is
:mod:`reference_impl.indices.vector`).

Structure is checked whole for every segment: the files hold what the page
says, the partition ranges tile the files, dimensions agree with the
indexed column and the metadata, the HNSW graphs are graphs of their
partitions. Rows are checked against the covered rows of the validator's
facts (a bounded sample unless ``--deep``; ``index-vector/sampled`` says
what went unchecked): every live covered row in exactly one partition, each
row in the partition of its nearest centroid, and its stored code the
nearest code of its vector, each within the float tolerance of
:mod:`reference_impl.indices.vector.distance`.

A segment is decoded once per run; its findings are reported at every
version that lists it, as a validation of that version alone reports them
(row coverage also depends on the version's deletions).

The rule bodies are :mod:`..index_checks.vector`, loaded only for a version
with a vector index segment.
"""

from __future__ import annotations

from reference_impl.indices.types import IndexType

from ..context import VersionView
from ..index_checks import checks
from ..registry import Severity, rule


@rule(
    "index-vector/files-readable",
    severity=Severity.ERROR,
    requirements=("index.vector-files",),
    summary="A vector segment's index.idx and auxiliary.idx hold the metadata, IVF messages, columns and "
    "quantizer parameters the vector index page names",
)
def files_readable(view: VersionView):
    return checks(view, IndexType.VECTOR).files_readable(view)


@rule(
    "index-vector/skipped",
    severity=Severity.INFO,
    requirements=("index.vector-files",),
    summary="Vector segments or parts of them the reference does not read (a layout before V3, a newer "
    "version, RabitQ codes, 4-bit PQ codes) are skipped as index.md says readers skip them",
)
def skipped(view: VersionView):
    return checks(view, IndexType.VECTOR).skipped(view)


@rule(
    "index-vector/partition-ranges",
    severity=Severity.ERROR,
    requirements=("index.vector-partition-ranges",),
    summary="The partitions' offsets and lengths in both vector index files tile each file's rows in partition order",
)
def partition_ranges(view: VersionView):
    return checks(view, IndexType.VECTOR).partition_ranges(view)


@rule(
    "index-vector/dimensions",
    severity=Severity.ERROR,
    requirements=("index.vector-dimensions",),
    summary="Centroids, stored vectors, codes and quantizer metadata of a vector segment have the dimension of "
    "the indexed column",
)
def dimensions(view: VersionView):
    return checks(view, IndexType.VECTOR).dimensions(view)


@rule(
    "index-vector/rows-once",
    severity=Severity.ERROR,
    requirements=("index.vector-rows-once",),
    summary="Every live row of the fragments a vector segment covers is in exactly one of its partitions, and "
    "the segment holds no row of another fragment",
)
def rows_once(view: VersionView):
    return checks(view, IndexType.VECTOR).rows_once(view)


@rule(
    "index-vector/nearest-partition",
    severity=Severity.ERROR,
    requirements=("index.vector-nearest-partition",),
    summary="Each row of an IVF vector segment is in the partition of its nearest centroid (ties within "
    "float tolerance allowed)",
)
def nearest_partition(view: VersionView):
    return checks(view, IndexType.VECTOR).nearest_partition(view)


@rule(
    "index-vector/codes-nearest",
    severity=Severity.ERROR,
    requirements=("index.vector-codes",),
    summary="A vector segment's stored vectors are the rows' vectors (FLAT), and their PQ and SQ codes the "
    "nearest codes of the rows' vectors (float tolerance stated in the reader)",
)
def codes_nearest(view: VersionView):
    return checks(view, IndexType.VECTOR).codes_nearest(view)


@rule(
    "index-vector/hnsw-graph",
    severity=Severity.ERROR,
    requirements=("index.vector-hnsw-graph",),
    summary="Each partition's HNSW graph has every stored row once at level 0, upper levels within the level "
    "below, neighbours within their level, and an entry point on the top level",
)
def hnsw_graph(view: VersionView):
    return checks(view, IndexType.VECTOR).hnsw_graph(view)


@rule(
    "index-vector/sampled",
    severity=Severity.INFO,
    requirements=("index.vector-rows-once", "index.vector-nearest-partition", "index.vector-codes"),
    summary="A default run checks the rows of a bounded sample of a vector segment's fragments; --deep checks all",
)
def sampled(view: VersionView):
    return checks(view, IndexType.VECTOR).sampled(view)
