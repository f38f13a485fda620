"""The ecosystem matrix as data: statuses, outcomes, grids and the document.

The document (format :data:`ECOSYSTEM_FORMAT`, JSON Schema
``conformance/schemas/ecosystem-matrix.schema.json``) holds one grid per
suite (golden cases: writers by readers; writer conformance: writing drivers
by operations; the conflict matrix: first by second operation), each cell
with the outcomes behind it, plus what a reader of the page needs to judge
them: the drivers and their exact versions, the expectations applied, and
the requirements and features the outcomes cite.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..describe import schema_validator

#: The version of the document's shape (bump it when a field changes meaning or goes away).
ECOSYSTEM_FORMAT = 1
SCHEMA_NAME = "ecosystem-matrix.schema.json"


class Status(str, enum.Enum):
    """One outcome's result, and a cell's (the worst of its outcomes)."""

    PASS = "pass"
    FAIL = "fail"
    #: Failed as the implementation's expectations file says it does.
    EXPECTED_FAILURE = "expected-failure"
    #: The check needs a capability the driver lacks (the notes name it).
    NOT_APPLICABLE = "not-applicable"
    #: Expected to fail, but passed: the expectation is stale (it fails the run).
    FIXED = "fixed"

    @property
    def fails_run(self) -> bool:
        return self in (Status.FAIL, Status.FIXED)


#: Worst first: a cell takes the first status any of its outcomes has.
SEVERITY = (Status.FAIL, Status.FIXED, Status.EXPECTED_FAILURE, Status.PASS, Status.NOT_APPLICABLE)


def worst(statuses: Iterable[Status]) -> Status:
    """The status a cell shows for its outcomes (not applicable when it has none)."""
    present = set(statuses)
    return next((status for status in SEVERITY if status in present), Status.NOT_APPLICABLE)


@dataclass(frozen=True)
class Outcome:
    """One checked case inside a cell: a golden case, a writer step, a conflict sub-case."""

    case: str
    status: Status
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: Requirement ids the case concerns (the expectation's first when one applied).
    requirements: tuple[str, ...] = ()
    #: Feature ids (conformance.fixtures.features) the case exercises: the page filters on them.
    features: tuple[str, ...] = ()
    #: The expectation applied to it, when one was: its requirement and reason.
    expectation: str | None = None
    #: When a not-applicable case was skipped, what it needed and could not
    #: have (``needs step add-columns``): a grid shows ``skipped: ...``, not ``n/a``.
    skipped: str | None = None

    def to_json(self) -> dict:
        document = {
            "case": self.case,
            "status": self.status.value,
            "problems": list(self.problems),
            "notes": list(self.notes),
            "requirements": list(self.requirements),
            "features": list(self.features),
            "expectation": self.expectation,
        }
        if self.skipped is not None:
            document["skipped"] = self.skipped
        return document

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Outcome:
        return cls(
            case=entry["case"],
            status=Status(entry["status"]),
            problems=tuple(entry["problems"]),
            notes=tuple(entry["notes"]),
            requirements=tuple(entry["requirements"]),
            features=tuple(entry["features"]),
            expectation=entry["expectation"],
            skipped=entry.get("skipped"),
        )


@dataclass(frozen=True)
class Cell:
    row: str
    column: str
    outcomes: tuple[Outcome, ...]

    @property
    def status(self) -> Status:
        return worst(outcome.status for outcome in self.outcomes)

    def count(self, status: Status) -> int:
        return sum(outcome.status is status for outcome in self.outcomes)

    @property
    def empty_label(self) -> str:
        """What a cell whose outcomes are all not applicable reads: why they
        were skipped when one reason covers them all (``skipped: needs step
        X``), else ``n/a``."""
        reasons = {outcome.skipped for outcome in self.outcomes}
        if len(reasons) == 1 and None not in reasons:
            return f"skipped: {reasons.pop()}"
        return "n/a"

    def to_json(self) -> dict:
        return {
            "row": self.row,
            "column": self.column,
            "status": self.status.value,
            "outcomes": [outcome.to_json() for outcome in self.outcomes],
        }

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Cell:
        return cls(entry["row"], entry["column"], tuple(Outcome.from_json(o) for o in entry["outcomes"]))


@dataclass(frozen=True)
class Grid:
    """One suite's results: ``rows`` by ``columns``; a missing cell was not run."""

    id: str
    title: str
    description: str
    row_label: str
    column_label: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: tuple[Cell, ...]

    def cell(self, row: str, column: str) -> Cell | None:
        return next((c for c in self.cells if c.row == row and c.column == column), None)

    @property
    def status(self) -> Status:
        return worst(cell.status for cell in self.cells)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "row_label": self.row_label,
            "column_label": self.column_label,
            "rows": list(self.rows),
            "columns": list(self.columns),
            "cells": [cell.to_json() for cell in self.cells],
        }

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Grid:
        return cls(
            id=entry["id"],
            title=entry["title"],
            description=entry["description"],
            row_label=entry["row_label"],
            column_label=entry["column_label"],
            rows=tuple(entry["rows"]),
            columns=tuple(entry["columns"]),
            cells=tuple(Cell.from_json(c) for c in entry["cells"]),
        )


@dataclass(frozen=True)
class DriverEntry:
    """A driver of the run: what it reported about itself (``DriverInfo.to_json()``),
    or why it could not be loaded."""

    name: str
    info: Mapping[str, Any] | None
    error: str | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "info": dict(self.info) if self.info is not None else None, "error": self.error}

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> DriverEntry:
        return cls(entry["name"], entry["info"], entry["error"])


@dataclass(frozen=True)
class ExpectationEntry:
    """One expectation a driver's run applied."""

    driver: str
    suite: str
    case: str
    requirement: str
    reason: str
    issue: str | None = None
    reproducer: str | None = None

    def to_json(self) -> dict:
        return {
            "driver": self.driver,
            "suite": self.suite,
            "case": self.case,
            "requirement": self.requirement,
            "reason": self.reason,
            "issue": self.issue,
            "reproducer": self.reproducer,
        }

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> ExpectationEntry:
        return cls(**{key: entry[key] for key in cls.__dataclass_fields__})


@dataclass(frozen=True)
class RequirementLink:
    """What the page shows for a cited requirement: its statement and where it is defined."""

    id: str
    level: str
    statement: str
    #: The upstream document it comes from (an address on GitHub, at a commit).
    url: str | None
    section: str

    def to_json(self) -> dict:
        return {"level": self.level, "statement": self.statement, "url": self.url, "section": self.section}


@dataclass(frozen=True)
class EcosystemMatrix:
    generated: str
    #: Name -> version of everything outside the drivers: the suite, Python, pyarrow, the corpus.
    versions: Mapping[str, str]
    drivers: tuple[DriverEntry, ...]
    expectations: tuple[ExpectationEntry, ...]
    grids: tuple[Grid, ...]
    requirements: Mapping[str, RequirementLink] = field(default_factory=dict)
    #: Feature id -> its summary, for the features the outcomes name.
    features: Mapping[str, str] = field(default_factory=dict)
    #: The day the run is filed under when ``--run-date`` named one
    #: (conformance.run_stamp); else the day of ``generated`` is.
    run_date: str | None = None

    def grid(self, grid_id: str) -> Grid:
        return next(grid for grid in self.grids if grid.id == grid_id)

    @property
    def passed(self) -> bool:
        return not any(cell.status.fails_run for grid in self.grids for cell in grid.cells)

    def to_json(self) -> dict:
        return {
            "format": ECOSYSTEM_FORMAT,
            "generated": self.generated,
            "versions": dict(self.versions),
            "drivers": [driver.to_json() for driver in self.drivers],
            "expectations": [entry.to_json() for entry in self.expectations],
            "grids": [grid.to_json() for grid in self.grids],
            "requirements": {key: link.to_json() for key, link in sorted(self.requirements.items())},
            "features": dict(sorted(self.features.items())),
            **({"run_date": self.run_date} if self.run_date is not None else {}),
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> EcosystemMatrix:
        return cls(
            generated=document["generated"],
            versions=dict(document["versions"]),
            drivers=tuple(DriverEntry.from_json(d) for d in document["drivers"]),
            expectations=tuple(ExpectationEntry.from_json(e) for e in document["expectations"]),
            grids=tuple(Grid.from_json(g) for g in document["grids"]),
            requirements={key: RequirementLink(id=key, **value) for key, value in document["requirements"].items()},
            features=dict(document["features"]),
            run_date=document.get("run_date"),
        )


def check_document(document: Mapping[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` fits the schema."""
    schema_validator(SCHEMA_NAME).validate(document)


def dumps(matrix: EcosystemMatrix) -> str:
    document = matrix.to_json()
    check_document(document)
    return json.dumps(document, indent=2) + "\n"


def load_file(path: str | Path) -> EcosystemMatrix:
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    check_document(document)
    return EcosystemMatrix.from_json(document)
