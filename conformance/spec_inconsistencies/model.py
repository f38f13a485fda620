"""Claims and the check that finds pages disagreeing about one subject.

A :class:`Claim` records what one upstream page, in one stored state (a
document of ``conformance/data/spec_sources.json``, which names the commit),
says a subject means: a feature flag bit, a field number of a message, or a
name. Two claims agree when they give the same :class:`Meaning` (compared by
its key, not its wording). :func:`find_inconsistencies` groups the claims of
the pages' current states by subject and returns every subject given more
than one meaning; :func:`changed_meanings` returns where a later state of one
page replaced what an earlier state said, which is a change of the page, not
a disagreement between pages. Both are generic over the kinds of subject.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


class SubjectKind(str, enum.Enum):
    """What a claim is about."""

    #: A bit of ``reader_feature_flags`` / ``writer_feature_flags``, by its value (``2048``).
    FLAG_BIT = "flag bit"
    #: A field number of a protobuf message (``DataFragment 12``).
    FIELD_NUMBER = "field number"
    #: A name a page gives something (``FLAG_CLUSTERING_METADATA``).
    NAME = "name"


@dataclass(frozen=True, order=True)
class Subject:
    kind: SubjectKind
    #: The flag's value in decimal, ``Message number`` for a field, or the name itself.
    key: str

    def __str__(self) -> str:
        return f"{self.kind.value} {self.key}"

    @classmethod
    def flag_bit(cls, value: int) -> Subject:
        return cls(SubjectKind.FLAG_BIT, str(value))

    @property
    def bit(self) -> int | None:
        """The flag's value, for a flag bit subject."""
        return int(self.key) if self.kind is SubjectKind.FLAG_BIT else None


@dataclass(frozen=True)
class Meaning:
    """What a subject stands for, in the project's words."""

    #: Compared: two claims agree exactly when their meanings have one key.
    key: str
    text: str


@dataclass(frozen=True)
class Claim:
    """One page, in one stored state, saying what a subject means."""

    #: The page state: an id of ``conformance/data/spec_sources.json``.
    document: str
    #: The heading of the page the claim is made under.
    section: str
    subject: Subject
    meaning: Meaning


@dataclass(frozen=True)
class Inconsistency:
    """A subject the current pages give different meanings."""

    subject: Subject
    #: Each meaning with the claims giving it, in the order the catalog lists them.
    meanings: tuple[tuple[Meaning, tuple[Claim, ...]], ...]
    #: What the suite does while the pages disagree (None until someone writes it).
    meanwhile: str | None

    @property
    def documents(self) -> tuple[str, ...]:
        return tuple(claim.document for _, claims in self.meanings for claim in claims)


@dataclass(frozen=True)
class MeaningChange:
    """An earlier state of a page said something its later state no longer says."""

    subject: Subject
    earlier: Claim
    #: The later state's claims about the subject (empty when it no longer mentions it).
    later: tuple[Claim, ...]


class ClaimCatalogError(ValueError):
    """The claims catalog contradicts itself or cites a document that is not defined."""


def check_catalog(claims: Iterable[Claim], superseded: Mapping[str, str], documents: Iterable[str]) -> None:
    """Raise :class:`ClaimCatalogError` naming the first problem: a claim
    citing an undefined document, one meaning key worded two ways, a claim
    made twice, or a superseded state pointing at an undefined one."""
    known = set(documents)
    wording: dict[str, str] = {}
    seen: set[tuple[str, Subject, str]] = set()
    for claim in claims:
        if claim.document not in known:
            raise ClaimCatalogError(f"claim on {claim.subject} cites {claim.document!r}, which spec_sources.json lacks")
        if wording.setdefault(claim.meaning.key, claim.meaning.text) != claim.meaning.text:
            raise ClaimCatalogError(f"meaning {claim.meaning.key!r} is worded two ways")
        identity = (claim.document, claim.subject, claim.meaning.key)
        if identity in seen:
            raise ClaimCatalogError(f"{claim.document} claims {claim.subject} means {claim.meaning.key!r} twice")
        seen.add(identity)
    for earlier, later in superseded.items():
        if earlier not in known or later not in known:
            raise ClaimCatalogError(f"superseded page state {earlier!r} -> {later!r} names an undefined document")


def current(claims: Iterable[Claim], superseded: Mapping[str, str]) -> list[Claim]:
    """The claims of page states no later state replaces."""
    return [claim for claim in claims if claim.document not in superseded]


def find_inconsistencies(
    claims: Iterable[Claim],
    superseded: Mapping[str, str] | None = None,
    meanwhile: Mapping[Subject, str] | None = None,
) -> list[Inconsistency]:
    """Every subject the current page states give more than one meaning, by subject."""
    by_subject: dict[Subject, dict[str, list[Claim]]] = {}
    meanings: dict[str, Meaning] = {}
    for claim in current(claims, superseded or {}):
        by_subject.setdefault(claim.subject, {}).setdefault(claim.meaning.key, []).append(claim)
        meanings.setdefault(claim.meaning.key, claim.meaning)
    return [
        Inconsistency(
            subject,
            tuple((meanings[key], tuple(group)) for key, group in grouped.items()),
            (meanwhile or {}).get(subject),
        )
        for subject, grouped in sorted(by_subject.items(), key=lambda item: _order(item[0]))
        if len(grouped) > 1
    ]


def changed_meanings(claims: Iterable[Claim], superseded: Mapping[str, str]) -> list[MeaningChange]:
    """Each claim of a replaced page state whose meaning the replacing state
    does not give the subject (following a chain of states to the newest)."""
    claims = list(claims)
    changes = []
    for claim in claims:
        if claim.document not in superseded:
            continue
        newest = _newest(claim.document, superseded)
        later = tuple(c for c in claims if c.document == newest and c.subject == claim.subject)
        if all(c.meaning.key != claim.meaning.key for c in later):
            changes.append(MeaningChange(claim.subject, claim, later))
    return sorted(changes, key=lambda change: _order(change.subject))


def _newest(document: str, superseded: Mapping[str, str]) -> str:
    seen = {document}
    while document in superseded:
        document = superseded[document]
        if document in seen:
            raise ClaimCatalogError(f"page states supersede each other in a cycle through {document!r}")
        seen.add(document)
    return document


def _order(subject: Subject) -> tuple:
    """Flag bits by value, then field numbers, then names."""
    kinds = list(SubjectKind)
    value = subject.bit if subject.bit is not None else 0
    return (kinds.index(subject.kind), value, subject.key)
