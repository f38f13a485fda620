"""Where the upstream pages disagree: a flag bit, a field number or a name
given different meanings by different pages.

This package holds the **claims** (:mod:`.claims`: which page, at which
commit and section, says a subject means what, restated in the project's
words), the **check** that groups them by subject and finds the subjects
given more than one meaning (:mod:`.model`), what the suite does meanwhile
about each one, and the rendering of ``docs/spec-inconsistencies.md``::

    python -m conformance.spec_inconsistencies --markdown > docs/spec-inconsistencies.md

A test fails when that page is not a fresh render. The validator rule
``feature-flags/contested-bit`` (requirement
``feature-flags.one-meaning-per-bit``) reports a dataset that sets a contested
bit, through :func:`contested_bit`. The pages are not resolved here: the
validator keeps reading flags by the format revision it checks
(:mod:`conformance.spec_revisions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from ..spec_sources import load_documents
from .claims import CLAIMS, MEANWHILE, SUPERSEDED, THREADS, Thread
from .model import (
    Claim,
    ClaimCatalogError,
    Inconsistency,
    Meaning,
    MeaningChange,
    Subject,
    SubjectKind,
    changed_meanings,
    check_catalog,
    find_inconsistencies,
)

__all__ = [
    "CLAIMS",
    "Claim",
    "ClaimCatalogError",
    "Inconsistency",
    "Meaning",
    "MeaningChange",
    "Subject",
    "SubjectKind",
    "THREADS",
    "Thread",
    "changed_meanings",
    "check_catalog",
    "contested_bit",
    "find_inconsistencies",
    "inconsistencies",
    "meaning_changes",
]


@cache
def inconsistencies() -> tuple[Inconsistency, ...]:
    """The disagreements of the project's claims catalog (checked once, on first use)."""
    check_catalog(CLAIMS, SUPERSEDED, load_documents())
    return tuple(find_inconsistencies(CLAIMS, SUPERSEDED, MEANWHILE))


def meaning_changes() -> list[MeaningChange]:
    """Where a later state of a page replaced what an earlier state said."""
    return changed_meanings(CLAIMS, SUPERSEDED)


@cache
def _contested_bits() -> Mapping[int, Inconsistency]:
    return MappingProxyType({item.subject.bit: item for item in inconsistencies() if item.subject.bit is not None})


def contested_bit(bit: int) -> Inconsistency | None:
    """The disagreement about flag ``bit`` (a single bit's value), if the pages have one."""
    return _contested_bits().get(bit)
