"""Rules on the contents of BITMAP and LABEL_LIST segments (upstream
format/index/scalar/bitmap.md and label_list.md; deleted and rewritten rows
as format/index/index.md says).

Each segment a version lists whose type and ``index_version`` the reference
reads (:func:`reference_impl.indices.types.compatibility`) is decoded once
per run and compared, at each version, with the rows of the fragments its
bitmap covers (:mod:`..facts.bitmap_contents`). A default run compares the
covered fragments read within the sample of
:func:`..facts.index_contents.covered_rows`; ``--deep`` compares them all.
What a run left unchecked (fragments past the sample, fragments a deferred
compaction rewrote, whose rows the segment holds under their old addresses,
segments of an unknown version) is said by the ``sampled`` rules, as info.

The rule bodies are :mod:`..index_checks.bitmap`, loaded only for a version
with a segment of either type.
"""

from __future__ import annotations

from ..context import VersionView
from ..index_checks import checks
from ..index_checks.bitmap_kinds import BITMAP, LABEL_LIST, Kind
from ..registry import Severity, rule


def _register(kind: Kind, req: str, value_rule: str) -> None:
    """Register one index type's rules (the two types share them)."""
    topic = kind.topic

    def file_decodes(view: VersionView):
        return checks(view, kind.index_type).file_decodes(view, kind)

    def keys_unique(view: VersionView):
        return checks(view, kind.index_type).keys_unique(view, kind)

    def rows_exist(view: VersionView):
        return checks(view, kind.index_type).rows_exist(view, kind)

    def sampled(view: VersionView):
        return checks(view, kind.index_type).sampled(view, kind)

    rule(
        f"{topic}/file-decodes",
        severity=Severity.ERROR,
        requirements=(f"{req}-file-layout",),
        summary=f"A {kind.index_type.name} segment's bitmap_page_lookup.lance has keys of the column's type "
        "and bitmaps that decode as row address maps",
    )(file_decodes)
    rule(
        f"{topic}/keys-unique",
        severity=Severity.ERROR,
        requirements=(f"{req}-keys-unique",),
        summary=f"Each {kind.noun} of a {kind.index_type.name} segment is stored once",
    )(keys_unique)
    rule(
        f"{topic}/rows-exist",
        severity=Severity.ERROR,
        requirements=(f"{req}-rows-exist",),
        summary=f"Every row a {kind.index_type.name} segment names is or was a row of the dataset",
    )(rows_exist)
    rule(
        f"{topic}/sampled",
        severity=Severity.INFO,
        requirements=(f"{req}-{value_rule}",),
        summary=f"What a run left unchecked of a {kind.index_type.name} segment's contents",
    )(sampled)


_register(BITMAP, "index.bitmap", "rows-match-values")
_register(LABEL_LIST, "index.label-list", "rows-match-labels")


@rule(
    "index-bitmap/rows-match-values",
    severity=Severity.ERROR,
    requirements=("index.bitmap-rows-match-values",),
    summary="Each key's bitmap holds exactly the covered rows holding that value (deleted rows may be left out)",
)
def rows_match_values(view: VersionView):
    return checks(view, BITMAP.index_type).rows_match_values(view)


@rule(
    "index-bitmap/null-rows-match",
    severity=Severity.ERROR,
    requirements=("index.bitmap-null-bitmap",),
    summary="The null key's bitmap holds exactly the covered rows whose value is null",
)
def null_rows_match(view: VersionView):
    return checks(view, BITMAP.index_type).null_rows_match(view)


@rule(
    "index-bitmap/rows-in-one-key",
    severity=Severity.ERROR,
    requirements=("index.bitmap-rows-match-values",),
    summary="No row is in the bitmaps of two keys",
)
def rows_in_one_key(view: VersionView):
    return checks(view, BITMAP.index_type).rows_in_one_key(view, BITMAP)


@rule(
    "index-label-list/rows-match-labels",
    severity=Severity.ERROR,
    requirements=("index.label-list-rows-match-labels",),
    summary="Each label's bitmap holds exactly the covered rows whose list holds it (deleted rows may be left out)",
)
def rows_match_labels(view: VersionView):
    return checks(view, LABEL_LIST.index_type).rows_match_labels(view)


@rule(
    "index-label-list/list-nulls-match",
    severity=Severity.ERROR,
    requirements=("index.label-list-exact",),
    summary="The recorded list-null set holds exactly the covered rows whose list is null",
)
def list_nulls_match(view: VersionView):
    return checks(view, LABEL_LIST.index_type).list_nulls_match(view)
