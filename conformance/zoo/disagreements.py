"""What the checker compares and what it finds: the aspects of a dataset
version the reference and pylance (or the validator and a valid dataset) can
disagree on, and one disagreement."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Aspect(enum.Enum):
    """Where a disagreement shows."""

    #: The validator reports a finding on a dataset pylance or LanceDB wrote
    #: (any severity: the zoo's datasets are valid, so each one is a false
    #: finding or a real writer defect, and either must be explained).
    FINDING = "finding"
    #: The validator could not run on the dataset at all.
    VALIDATION = "validation"
    #: The reference and pylance list different versions.
    VERSIONS = "versions"
    #: One side cannot read a version that the other reads.
    READ = "read"
    #: The rows differ (:func:`conformance.comparison.compare_tables`).
    ROWS = "rows"
    #: The canonical descriptions differ (:func:`conformance.describe.differences`).
    DESCRIPTION = "description"


@dataclass(frozen=True)
class Disagreement:
    """One thing the checker found: in ``feature``'s ``dataset`` (its path
    relative to the zoo root), at ``version`` (None: the whole dataset)."""

    feature: str
    dataset: str
    version: int | None
    aspect: Aspect
    detail: str

    def __str__(self) -> str:
        at = f" v{self.version}" if self.version is not None else ""
        return f"[{self.feature}] {self.dataset}{at} {self.aspect.value}: {self.detail}"
