"""The one place the zoo's known disagreements are recorded.

Each entry names the features it concerns, the aspect, a regular expression
searched in the disagreement's detail, what differs in words, and where it is
explained: an item of ``docs/spec-discrepancies.md`` (a lasting difference,
with its reproducer), a design decision of the reference and its document, or
an open issue whose fix is under way (remove the entry when the fix lands).
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


KNOWN: tuple[KnownDisagreement, ...] = (
    KnownDisagreement(
        ("blob_v2_external_outside",),
        Aspect.READ,
        r"the reference cannot read the rows: .*ExternalBlobOutsideError",
        "a blob v2 value stored as an external URI outside the dataset root and its base paths: "
        "pylance fetches it, the reference does not unless the caller declares that root "
        "(blob/external-outside reports it)",
        'docs/spec-discrepancies.md, "Blob v2" (external objects are read only where declared)',
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
        "an index without a fragment bitmap (the MemWAL index): the manifest stores none, which the "
        "reference describes as None; pylance reports an empty bitmap, so 'not recorded' and 'no "
        "fragments' look the same there",
        'docs/spec-discrepancies.md, "Golden fixtures", item 4',
    ),
    KnownDisagreement(
        ("fixed_size_list_of_structs",),
        Aspect.READ,
        r"pylance cannot read the rows: .*cannot read columns of differing lengths together",
        "pylance 14 writes a fixed-size list of structs to 2.2 that it cannot read back beside "
        "another column; the spec does not forbid the structure and the reference reads it",
        'docs/spec-discrepancies.md, "JSON columns, the fragment reuse index and nested fixed-size lists", item 6',
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
