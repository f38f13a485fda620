"""The bodies of the index content rules, one module per rule module of
``rules/``: :mod:`.btree` (``index_btree``), :mod:`.bitmap` (BITMAP and
LABEL_LIST), :mod:`.zonemap` (ZONEMAP and BLOOMFILTER), :mod:`.text`
(INVERTED, NGRAM and JSON), :mod:`.vector`, :mod:`.rtree` and
:mod:`.minhash_lsh`.

They decode index files with numpy and pyarrow, which neither the rule
catalog nor the validation of a version without such an index needs (the
command line's start-up, issue 17). So a rule module declares its rules
(ids, severities, requirements, summaries) with light code, and each rule
body hands the version to :func:`checks`, the one place that decides
whether the heavy module is loaded: only for a version that lists a segment
of the rule's index type.

This package's ``__init__`` stays light: it imports nothing of its
submodules.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from reference_impl.indices.types import IndexType

from ..context import VersionView

#: The module of this package holding the checks of each index type.
MODULES: dict[IndexType, str] = {
    IndexType.BTREE: "btree",
    IndexType.BITMAP: "bitmap",
    IndexType.LABEL_LIST: "bitmap",
    IndexType.ZONEMAP: "zonemap",
    IndexType.BLOOM_FILTER: "zonemap",
    IndexType.INVERTED: "text",
    IndexType.NGRAM: "text",
    IndexType.JSON: "text",
    IndexType.VECTOR: "vector",
    IndexType.MINHASH_LSH: "minhash_lsh",
    IndexType.RTREE: "rtree",
}


def has_segments(view: VersionView, index_type: IndexType) -> bool:
    """Whether the version lists a segment of ``index_type`` (usable by the
    reference or not: the checks say what they skip)."""
    return any(IndexType.of(index) is index_type for index in view.manifest_file.indices or [])


def _no_findings(*_args: object) -> Iterator[Any]:
    yield from ()


class _NoSegments:
    """What :func:`checks` gives for a version without a segment of the
    type: every check finds nothing, as the check itself would, since each
    looks only at segments of its type."""

    def __getattr__(self, name: str):
        return _no_findings


_NO_SEGMENTS = _NoSegments()


def checks(view: VersionView, index_type: IndexType) -> Any:
    """The module of checks for ``index_type`` (:data:`MODULES`), imported on
    first use, when ``view`` lists a segment of that type; otherwise a
    stand-in whose every check yields nothing. A rule body reads
    ``return checks(view, IndexType.BTREE).keys_sorted(view)``."""
    if not has_segments(view, index_type):
        return _NO_SEGMENTS
    # lazy: the checks import numpy and pyarrow, which only a version with such a segment needs
    return importlib.import_module(f"{__name__}.{MODULES[index_type]}")
