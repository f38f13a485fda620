"""Representation differences: what a comparison by meaning notes without
failing, each with the requirement id it concerns."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ObservationKind(str, Enum):
    """The kinds of representation difference (their values are what reports show)."""

    NULLABILITY = "nullability"
    CHILD_NAME = "child-name"
    OFFSET_WIDTH = "offset-width"
    VIEW_LAYOUT = "view-layout"
    DICTIONARY = "dictionary"
    WIDER_TYPE = "wider-type"
    EXTENSION = "extension"
    #: A timestamp's zone under another name, or the zone the reader declares it reads in.
    TIME_ZONE = "time-zone"
    #: A coarser time unit the reader declares as its finest.
    PRECISION = "precision"
    #: A blob v2 column in its logical struct shape against its values: its
    #: ``data`` bytes compared (:mod:`.blobs`).
    BLOB_PAYLOAD = "blob-payload"
    #: A column of a type the reader declares it cannot represent: not compared.
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Observation:
    """A representation difference that does not fail.

    ``column`` is the path of the field in the expected schema: the top-level
    name, then child names joined by dots (``tags.item``, ``point.x``).
    ``expected`` and ``actual`` show the two representations (a type, a
    flag, a name); ``requirement`` is the id in the requirements catalog it
    concerns."""

    column: str
    kind: str
    expected: str
    actual: str
    requirement: str

    def to_json(self) -> dict[str, str]:
        return {
            "column": self.column,
            "kind": self.kind,
            "expected": self.expected,
            "actual": self.actual,
            "requirement": self.requirement,
        }

    def __str__(self) -> str:
        return f"{self.column}: {self.kind} {self.expected} -> {self.actual} ({self.requirement})"
