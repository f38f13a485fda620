"""The conflict matrix as data: operations, sub-cases, modes, outcomes, and
the stored measurements (``conformance/data/conflict_matrix.json``, checked
against ``conformance/schemas/conflict-matrix.schema.json`` when loaded)."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..describe import schema_validator

DATA_RESOURCE = ("data", "conflict_matrix.json")
#: The version of the matrix document's shape (bump it when a field changes
#: meaning or goes away; CHANGELOG.md).
MATRIX_FORMAT = 1
SCHEMA_NAME = "conflict-matrix.schema.json"


class Operation(str, enum.Enum):
    """The operation types of ``Transaction.operation`` in ``protos/transaction.proto``
    (the oneof names)."""

    APPEND = "append"
    DELETE = "delete"
    OVERWRITE = "overwrite"
    CREATE_INDEX = "create_index"
    REWRITE = "rewrite"
    MERGE = "merge"
    RESTORE = "restore"
    RESERVE_FRAGMENTS = "reserve_fragments"
    UPDATE = "update"
    PROJECT = "project"
    UPDATE_CONFIG = "update_config"
    DATA_REPLACEMENT = "data_replacement"
    UPDATE_MEM_WAL_STATE = "update_mem_wal_state"
    CLONE = "clone"
    UPDATE_BASES = "update_bases"
    #: Field 115 (newest transaction.proto): overlay files attached to fragments (experimental).
    DATA_OVERLAY = "data_overlay"
    #: Field 116 (newest transaction.proto): stable row ids set aside.
    RESERVE_ROW_IDS = "reserve_row_ids"


class Implementation(str, enum.Enum):
    PYLANCE = "pylance"
    REFERENCE = "reference"


class Mode(str, enum.Enum):
    """Who commits first and who second."""

    PYLANCE_PYLANCE = "pylance/pylance"
    REFERENCE_REFERENCE = "reference/reference"
    PYLANCE_REFERENCE = "pylance/reference"
    REFERENCE_PYLANCE = "reference/pylance"

    @property
    def first(self) -> Implementation:
        return Implementation(self.value.split("/")[0])

    @property
    def second(self) -> Implementation:
        return Implementation(self.value.split("/")[1])


class Outcome(str, enum.Enum):
    """What happened to the second writer's commit."""

    #: It committed (as it was, or rebased over the first); then both readers
    #: saw the same rows and the validator found no error.
    COMMITTED = "committed"
    RETRYABLE = "retryable"
    INCOMPATIBLE = "incompatible"
    #: The pair cannot race (a Clone only starts a new dataset).
    NOT_APPLICABLE = "not_applicable"
    #: One side's implementation cannot produce its operation (the cell says why).
    NOT_REACHABLE = "not_reachable"
    #: Not measured yet (the reference's conflict resolution had not landed).
    PENDING = "pending"
    #: The second writer failed with something other than a conflict (the
    #: cell's note says what).
    ERROR = "error"


class PageVerdict(str, enum.Enum):
    """What the upstream transaction page says about a cell."""

    COMPATIBLE = "compatible"
    REBASE = "rebase"
    RETRYABLE = "retryable"
    INCOMPATIBLE = "incompatible"
    #: The page has no compatibility section for the second operation.
    UNSPECIFIED = "unspecified"
    NOT_APPLICABLE = "not_applicable"

    def expects(self) -> Outcome | None:
        """The observable outcome this verdict implies (None: the page is silent)."""
        return {
            PageVerdict.COMPATIBLE: Outcome.COMMITTED,
            PageVerdict.REBASE: Outcome.COMMITTED,
            PageVerdict.RETRYABLE: Outcome.RETRYABLE,
            PageVerdict.INCOMPATIBLE: Outcome.INCOMPATIBLE,
            PageVerdict.NOT_APPLICABLE: Outcome.NOT_APPLICABLE,
        }.get(self)


#: Outcomes that say something about conflict resolution (the others say a
#: cell could not be run).
MEASURED = frozenset({Outcome.COMMITTED, Outcome.RETRYABLE, Outcome.INCOMPATIBLE, Outcome.ERROR})


@dataclass(frozen=True)
class Discrepancy:
    """A known difference in one cell, recorded in docs/spec-discrepancies.md."""

    #: The heading of its entry in docs/spec-discrepancies.md.
    entry: str
    #: Which side follows the newest upstream page: "pylance", "reference",
    #: "both" (they differ only where the page is silent) or "neither".
    follows_page: str


@dataclass(frozen=True)
class Cell:
    """One ordered pair of operations in one sub-case, measured in every mode."""

    first: Operation
    second: Operation
    subcase: str
    first_action: str
    second_action: str
    page: PageVerdict
    page_reason: str
    outcomes: dict[Mode, Outcome]
    #: Why a mode was not run, or how it failed.
    notes: dict[Mode, str] = field(default_factory=dict)
    #: Modes whose result failed a check after the race (readers disagree,
    #: the validator reports an error), and what failed.
    problems: dict[Mode, str] = field(default_factory=dict)
    #: Known pylance/reference differences in this cell, by mode pair.
    discrepancy: Discrepancy | None = None

    @property
    def id(self) -> str:
        return f"{self.first.value}/{self.second.value}:{self.subcase}"

    def to_json(self) -> dict:
        document: dict = {
            "id": self.id,
            "first": self.first.value,
            "second": self.second.value,
            "subcase": self.subcase,
            "first_action": self.first_action,
            "second_action": self.second_action,
            "page": self.page.value,
            "page_reason": self.page_reason,
            "outcomes": {mode.value: self.outcomes[mode].value for mode in Mode},
        }
        if self.notes:
            document["notes"] = {mode.value: self.notes[mode] for mode in Mode if mode in self.notes}
        if self.problems:
            document["problems"] = {mode.value: self.problems[mode] for mode in Mode if mode in self.problems}
        if self.discrepancy is not None:
            document["discrepancy"] = {
                "entry": self.discrepancy.entry,
                "follows_page": self.discrepancy.follows_page,
            }
        return document

    @classmethod
    def from_json(cls, entry: dict) -> Cell:
        discrepancy = entry.get("discrepancy")
        return cls(
            first=Operation(entry["first"]),
            second=Operation(entry["second"]),
            subcase=entry["subcase"],
            first_action=entry["first_action"],
            second_action=entry["second_action"],
            page=PageVerdict(entry["page"]),
            page_reason=entry["page_reason"],
            outcomes={Mode(m): Outcome(o) for m, o in entry["outcomes"].items()},
            notes={Mode(m): n for m, n in entry.get("notes", {}).items()},
            problems={Mode(m): n for m, n in entry.get("problems", {}).items()},
            discrepancy=Discrepancy(discrepancy["entry"], discrepancy["follows_page"]) if discrepancy else None,
        )


@dataclass(frozen=True)
class NotCovered:
    """An operation type (or a sub-case) the matrix does not measure, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class SpecSource:
    repository: str
    path: str
    commit: str


@dataclass(frozen=True)
class ConflictMatrix:
    pylance: str
    spec: SpecSource
    cells: tuple[Cell, ...]
    not_covered: tuple[NotCovered, ...]

    def cell(self, cell_id: str) -> Cell:
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise KeyError(cell_id)

    def to_json(self) -> dict:
        return {
            "format": MATRIX_FORMAT,
            "pylance": self.pylance,
            "spec": {"repository": self.spec.repository, "path": self.spec.path, "commit": self.spec.commit},
            "modes": [mode.value for mode in Mode],
            "not_covered": [{"name": n.name, "reason": n.reason} for n in self.not_covered],
            "cells": [cell.to_json() for cell in self.cells],
        }

    @classmethod
    def from_json(cls, document: dict) -> ConflictMatrix:
        spec = document["spec"]
        return cls(
            pylance=document["pylance"],
            spec=SpecSource(spec["repository"], spec["path"], spec["commit"]),
            cells=tuple(Cell.from_json(c) for c in document["cells"]),
            not_covered=tuple(NotCovered(n["name"], n["reason"]) for n in document["not_covered"]),
        )


def check_document(document: dict) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` fits the schema."""
    schema_validator(SCHEMA_NAME).validate(document)


def dumps(matrix: ConflictMatrix) -> str:
    document = matrix.to_json()
    check_document(document)
    return json.dumps(document, indent=2) + "\n"


def load_file(path: str | Path) -> ConflictMatrix:
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    check_document(document)
    return ConflictMatrix.from_json(document)


@lru_cache(maxsize=1)
def stored_matrix() -> ConflictMatrix:
    """The matrix shipped with the package, checked against its schema (loaded once)."""
    # One name per joinpath: importlib's Traversable takes only one before Python 3.11.
    resource = resources.files("conformance").joinpath(DATA_RESOURCE[0]).joinpath(DATA_RESOURCE[1])
    document = json.loads(resource.read_text(encoding="utf-8"))
    check_document(document)
    return ConflictMatrix.from_json(document)


class Subcase(str, enum.Enum):
    """The situations the page tells apart within one pair."""

    ANY = "any"
    #: Both touch fragment 0.
    OVERLAPPING = "overlapping-fragments"
    #: They touch different fragments.
    DISJOINT = "disjoint-fragments"
    #: Delete/Update pairs: both touch row id 0.
    SAME_ROWS = "same-rows"
    #: Delete/Update pairs: rows 0 and 1 of fragment 0.
    DIFFERENT_ROWS = "different-rows-same-fragment"
    #: The Delete/Update removes fragment 0 outright (every live row of it).
    WHOLE_FRAGMENT = "removes-whole-fragment"
    #: The Update rewrites column ``value`` of fragment 0 in place (REWRITE_COLUMNS).
    UPDATE_COLUMNS = "update-rewrite-columns"
    #: The Update rewrites ``extra`` of fragment 0 in place; the DataReplacement replaces ``value``.
    UPDATE_COLUMNS_OTHER_FIELD = "update-rewrite-columns-other-field"
    #: DataReplacement pairs: fragment 0, but different fields replaced.
    OTHER_FIELD = "overlapping-other-field"
    SAME_INDEX_NAME = "same-index-name"
    DIFFERENT_INDEX_NAME = "different-index-name"
    #: Both create the MemWAL index, a singleton.
    SINGLETON_MEM_WAL = "same-singleton-index-mem-wal"
    NO_STABLE_ROW_IDS = "no-stable-row-ids"
    STABLE_ROW_IDS = "stable-row-ids"
    #: The Rewrite carries a fragment reuse index (compaction with deferred index remapping).
    FRAGMENT_REUSE_INDEX = "fragment-reuse-index"
    #: The index is on the column the DataReplacement replaces.
    INDEXED_COLUMN = "replaced-column-indexed"
    UNINDEXED_COLUMN = "replaced-column-not-indexed"
    SAME_CONFIG_KEY = "same-config-key"
    DIFFERENT_CONFIG_KEY = "different-config-key"
    #: UpdateMemWalState pairs: merge progress of the same region (generations 1, then 2).
    SAME_MEM_WAL_REGION = "same-mem-wal-region"
    DIFFERENT_MEM_WAL_REGIONS = "different-mem-wal-regions"
    SAME_BASE_ID = "same-base-id"
    SAME_BASE_NAME = "same-base-name"
    SAME_BASE_PATH = "same-base-path"
    DIFFERENT_BASES = "different-bases"

    @property
    def same_fragment(self) -> bool:
        """Whether the two operations touch a common fragment."""
        return self not in (Subcase.DISJOINT, Subcase.ANY)
