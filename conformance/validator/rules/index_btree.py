"""Rules on the contents of BTREE index segments (upstream
format/index/scalar/btree.md; rows and deletions: format/index/index.md).

Each segment whose type is BTREE and whose version the reference reads
(:func:`reference_impl.indices.types.compatibility`) is decoded once per run
(:func:`reference_impl.indices.btree.decode_btree`). The file-level rules
(layout, order, page bounds) look at every entry; the row rules compare the
entries with the rows of the fragments the segment covers at each version
listing it (:func:`..facts.index_contents.covered_rows`): a default run a
sample of whole fragments, a deep run all of them, and
``index-btree/sampled`` says when something went unchecked.

Deleted rows (index.md, "Handling deleted and invalidated rows"): a row
deleted before the segment was built may be missing, one deleted after it
is still there; either way an entry that is there holds the row's value
(deleting a row leaves its values in the data file). Entries of fragments
the bitmap no longer names, or that the version no longer has, are the
readers' to filter and are not looked at.

Compactions with deferred remapping (index.md, "Compaction and remapping"):
the entries keep the old row addresses, and the bitmap names the old
fragments (or, after pylance 14's next commit, the new ones). The rules see
what readers see: the bitmap and the entries' row addresses translated
through the version's fragment reuse index
(:func:`reference_impl.fragment_reuse.translate_row_addresses`); a reuse
index the reference cannot read leaves the rows unchecked, with an info.

The rule bodies are :mod:`..index_checks.btree`, loaded only for a version
with a BTREE segment.
"""

from __future__ import annotations

from reference_impl.indices.types import IndexType

from ..context import VersionView
from ..index_checks import checks
from ..registry import Severity, rule


@rule(
    "index-btree/files-decode",
    severity=Severity.ERROR,
    requirements=("index.btree-files-schema",),
    summary="A BTREE segment's page_lookup.lance and page_data.lance hold the columns and metadata btree.md names",
)
def files_decode(view: VersionView):
    return checks(view, IndexType.BTREE).files_decode(view)


@rule(
    "index-btree/page-layout",
    severity=Severity.ERROR,
    requirements=("index.btree-page-layout",),
    summary="The page lookup lists each page of page_data.lance once, numbered 0 to n-1, at batch_size rows a page",
)
def page_layout(view: VersionView):
    return checks(view, IndexType.BTREE).page_layout(view)


@rule(
    "index-btree/keys-sorted",
    severity=Severity.ERROR,
    requirements=("index.btree-keys-sorted",),
    summary="The keys of page_data.lance are sorted within and across pages (nulls first, NaN last)",
)
def keys_sorted(view: VersionView):
    return checks(view, IndexType.BTREE).keys_sorted(view)


@rule(
    "index-btree/page-bounds",
    severity=Severity.ERROR,
    requirements=("index.btree-page-bounds",),
    summary="Each page's min and max bound its keys and its null_count counts its nulls",
)
def page_bounds(view: VersionView):
    return checks(view, IndexType.BTREE).page_bounds(view)


@rule(
    "index-btree/rows-present",
    severity=Severity.ERROR,
    requirements=("index.btree-rows-present",),
    summary="Every row of a covered fragment has one entry in its BTREE segment (a deleted row at most one)",
)
def rows_present(view: VersionView):
    return checks(view, IndexType.BTREE).rows_present(view)


@rule(
    "index-btree/entries-valid",
    severity=Severity.ERROR,
    requirements=("index.btree-entries-valid",),
    summary="Each BTREE entry of a covered fragment names a row of it that holds the entry's key",
)
def entries_valid(view: VersionView):
    return checks(view, IndexType.BTREE).entries_valid(view)


@rule(
    "index-btree/sampled",
    severity=Severity.INFO,
    requirements=("index.btree-rows-present", "index.btree-entries-valid"),
    summary="A BTREE segment whose rows were checked only in part: a default run's sample, or a layout not read",
)
def sampled(view: VersionView):
    return checks(view, IndexType.BTREE).sampled(view)
