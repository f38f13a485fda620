"""Rules on the contents of RTREE index segments (upstream
format/index/scalar/rtree.md; rows and deletions: format/index/index.md).

The rule declarations stay light: a version without an RTREE segment costs
no numpy or pyarrow import. The checks, which read the segment's files and
the covered rows, are :mod:`..index_checks.rtree` (see its docstring for
what each compares). A default run compares a bounded sample of covered
fragments with the entries and ``index-rtree/sampled`` says what it left
unchecked; ``--deep`` compares every covered fragment.
"""

from __future__ import annotations

from reference_impl.indices.types import IndexType

from ..context import VersionView
from ..index_checks import checks
from ..registry import Severity, rule


@rule(
    "index-rtree/files-decode",
    severity=Severity.ERROR,
    requirements=("index.rtree-files-schema",),
    summary="An RTREE segment's page_data.lance and nulls.lance hold the columns, types and metadata rtree.md names",
)
def files_decode(view: VersionView):
    return checks(view, IndexType.RTREE).files_decode(view)


@rule(
    "index-rtree/tree-structure",
    severity=Severity.ERROR,
    requirements=("index.rtree-tree-structure",),
    summary="page_data.lance holds the leaf entries then one branch entry per page below the root, each branch "
    "level naming every page of the level below once",
)
def tree_structure(view: VersionView):
    return checks(view, IndexType.RTREE).tree_structure(view)


@rule(
    "index-rtree/page-bounds",
    severity=Severity.ERROR,
    requirements=("index.rtree-page-bounds",),
    summary="Each branch entry's box contains the boxes of its page's entries, and the bbox metadata the root's",
)
def page_bounds(view: VersionView):
    return checks(view, IndexType.RTREE).page_bounds(view)


@rule(
    "index-rtree/hilbert-order",
    severity=Severity.WARNING,
    requirements=("index.rtree-hilbert-order",),
    summary="The leaf entries are sorted by the Hilbert value of their box centres over the bbox metadata",
)
def hilbert_order(view: VersionView):
    return checks(view, IndexType.RTREE).hilbert_order(view)


@rule(
    "index-rtree/rows-present",
    severity=Severity.ERROR,
    requirements=("index.rtree-rows-present",),
    summary="Every covered row with a non-empty geometry has one leaf entry (a deleted row at most one), a null "
    "row none",
)
def rows_present(view: VersionView):
    return checks(view, IndexType.RTREE).rows_present(view)


@rule(
    "index-rtree/entries-valid",
    severity=Severity.ERROR,
    requirements=("index.rtree-entries-valid",),
    summary="Each leaf entry of a covered fragment names a row of it and its box contains that row's geometry",
)
def entries_valid(view: VersionView):
    return checks(view, IndexType.RTREE).entries_valid(view)


@rule(
    "index-rtree/null-rows",
    severity=Severity.ERROR,
    requirements=("index.rtree-null-rows",),
    summary="nulls.lance records the null rows of the covered fragments (deleted ones may be left out), and no others",
)
def null_rows(view: VersionView):
    return checks(view, IndexType.RTREE).null_rows(view)


@rule(
    "index-rtree/sampled",
    severity=Severity.INFO,
    requirements=("index.rtree-rows-present", "index.rtree-entries-valid"),
    summary="An RTREE segment whose rows were checked in part: a default run's sample, a geometry encoding the "
    "reference computes no boxes for, or fragments a deferred remap wrote",
)
def sampled(view: VersionView):
    return checks(view, IndexType.RTREE).sampled(view)
