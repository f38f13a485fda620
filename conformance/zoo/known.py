"""The one place the zoo's known disagreements are recorded.

Each entry names the features it concerns, the aspect, a regular expression
searched in the disagreement's detail, what differs in words, and where it is
fixed or explained: an issue-29 slice (``slice <name>``: another branch is
fixing it; remove the entry when it merges) or an item of
``docs/spec-discrepancies.md`` (a lasting difference, with its reproducer).
A disagreement no entry matches is *unexplained*, and fails the zoo.

An entry that matches nothing in a full zoo run is stale; the checker
reports stale entries (:func:`stale_entries`) so that they are removed when
their fix lands."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .disagreements import Aspect, Disagreement

#: Matches every feature.
EVERY_FEATURE = "*"


@dataclass(frozen=True)
class KnownDisagreement:
    features: tuple[str, ...]
    aspect: Aspect
    pattern: str
    what: str
    fixed_by: str
    #: Shows only when the validator decodes data pages (``validate --deep``).
    deep_only: bool = False
    #: Shows in some builds only (it depends on an order pylance does not
    #: fix), so it is never reported stale: remove it by hand when its fix lands.
    intermittent: bool = False

    def explains(self, disagreement: Disagreement) -> bool:
        return (
            disagreement.aspect is self.aspect
            and (EVERY_FEATURE in self.features or disagreement.feature in self.features)
            and re.search(self.pattern, disagreement.detail) is not None
        )


#: Where a fix is under way: a slice of issue 29 (its branch).
SEMANTICS, BLOB_V2, V23 = "issue 29, slice semantics", "issue 29, slice blobv2", "issue 29, slice v23"

KNOWN: tuple[KnownDisagreement, ...] = (
    KnownDisagreement(
        ("json", "json_index"),
        Aspect.READ,
        r"the reference cannot read the rows: .*field 'doc': string values are not valid",
        "JSON columns (pa.json_(pa.string())) are stored as lance.json binary (JSONB); the reference "
        "decodes them as UTF-8 text and fails where pylance returns the JSON text",
        SEMANTICS,
    ),
    KnownDisagreement(
        ("json", "json_index"),
        Aspect.FINDING,
        r"^error data-page/decodes at .*: field 'doc': string values are not valid",
        "deep validation decodes a JSON column's JSONB values as UTF-8 text and reports every page "
        "of it as undecodable (the same cause as the reference failing to read the rows)",
        SEMANTICS,
        deep_only=True,
    ),
    KnownDisagreement(
        (
            "blob_v1_2_2",
            "blob_v2_inline",
            "blob_v2_packed",
            "blob_v2_dedicated",
            "blob_v2_external",
            "blob_v2_external_outside",
        ),
        Aspect.ROWS,
        r"column 'payload': expected type large_binary, got struct<data: large_binary",
        "blob v2 columns (and blob-marked large_binary columns, which pylance 14 stores as blob v2 "
        "from 2.2 on): the reference returns the stored descriptor struct (values null) where "
        "pylance returns the blob bytes; the type difference hides the values",
        BLOB_V2,
    ),
    KnownDisagreement(
        ("storage_2_3", "encodings_2_3"),
        Aspect.READ,
        r"the reference cannot read the rows: .*file format version 2\.3 is not supported",
        "data files of file format 2.3 (pylance writes them on request) are refused by the reference",
        V23,
    ),
    KnownDisagreement(
        ("storage_legacy",),
        Aspect.READ,
        r"the reference cannot read the rows: .*file format version 0\.2 is not a v2\.x file",
        "legacy (0.2) data files: the reference reads their footers and row counts but not their "
        "pages, by design (no page or proto describes a legacy page)",
        "docs/reference-implementation.md (legacy pages are not decoded)",
    ),
    KnownDisagreement(
        ("mem_wal", "lancedb_mem_wal"),
        Aspect.DESCRIPTION,
        r"^indices\[\d+\]\.fragment_ids: None != \[\]$",
        "an index without a fragment bitmap (the MemWAL index): the reference describes its "
        "fragments as None, pylance as []",
        SEMANTICS,
    ),
    KnownDisagreement(
        ("deferred_index_remap",),
        Aspect.DESCRIPTION,
        r"^indices\[\d+\]\.fragment_ids: \d+ items != \d+ items$",
        "after compact_files(defer_index_remap=True) the reference describes the index as covering "
        "the compacted (gone) fragments; pylance applies the fragment reuse index",
        SEMANTICS,
    ),
    KnownDisagreement(
        # Every dataset with two base paths or more: multiple_bases, a branch of a branch, ...
        (EVERY_FEATURE,),
        Aspect.DESCRIPTION,
        r"^base_paths\[\d+\]\.(id|name|path): ",
        "base paths are described in stored order by the reference and by id by pylance: the "
        "canonical description depends on list order (pylance 14 stores them in a different, "
        "arbitrary order from one commit to the next)",
        SEMANTICS,
        intermittent=True,
    ),
    KnownDisagreement(
        ("cleanup_with_tags",),
        Aspect.FINDING,
        r"^warning history/gapless at _versions: versions 3, 4 between 2 and 5 have no manifest",
        "after cleanup_old_versions kept a tagged version, history/gapless warns of the versions "
        "the cleanup removed (the surviving transaction's read version tells a cleanup gap apart)",
        SEMANTICS,
    ),
    KnownDisagreement(
        ("fixed_size_list_of_structs",),
        Aspect.READ,
        r"pylance cannot read the rows: .*cannot read columns of differing lengths together",
        "pylance 14 writes a fixed-size list of structs to 2.2 that it cannot read back beside "
        "another column; the reference reads it and the validator says nothing",
        SEMANTICS,
    ),
)


def explanation(disagreement: Disagreement, known: Iterable[KnownDisagreement] = KNOWN) -> KnownDisagreement | None:
    """The first entry of ``known`` that explains ``disagreement``, if any."""
    return next((entry for entry in known if entry.explains(disagreement)), None)


def stale_entries(
    found: Iterable[Disagreement],
    features: Iterable[str],
    known: Iterable[KnownDisagreement] = KNOWN,
    *,
    deep: bool = False,
) -> list[KnownDisagreement]:
    """The entries of ``known`` about ``features`` (those checked, deeply or
    not) that explain none of ``found``."""
    found = list(found)
    checked = set(features)
    return [
        entry
        for entry in known
        if (EVERY_FEATURE in entry.features or checked & set(entry.features))
        and (deep or not entry.deep_only)
        and not entry.intermittent
        and not any(entry.explains(d) for d in found)
    ]
