"""The history of a run: one :class:`Attempt` per operation a writer tried,
saved as JSON Lines (``DIR/history.jsonl``) that follow the shipped JSON
Schema ``conformance/schemas/harness-history.schema.json``."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema

SCHEMA_NAME = "harness-history.schema.json"
#: The version of a history line's shape, written on every line (bump it when a
#: field changes meaning or goes away; CHANGELOG.md).
HISTORY_FORMAT = 1
#: The writer index of the attempt that created the dataset (the runner's).
SETUP_WRITER = -1


class AttemptOutcome(enum.Enum):
    ACKNOWLEDGED = "acknowledged"  # the writer said it committed, at ``version``
    CONFLICT = "conflict"  # refused: another writer's commit conflicts
    ERROR = "error"  # failed for any other reason
    INDETERMINATE = "indeterminate"  # the writer died before it could say


class HistoryError(ValueError):
    """A saved history that does not follow its schema (file and line named)."""


@dataclass(frozen=True)
class Attempt:
    """One line of ``history.jsonl``."""

    op_id: str  # unique in the run, e.g. "w3-17"
    writer: int
    kind: str  # a workload kind: "append", "delete", "update", "upsert", "compact", ...
    args: dict  # JSON-able: the ids/keys/values it appends, deletes, updates
    read_version: int | None
    outcome: AttemptOutcome
    version: int | None  # the committed version when acknowledged
    error: str | None
    start: float
    end: float

    def to_json(self) -> dict:
        return {
            "op_id": self.op_id,
            "writer": self.writer,
            "kind": self.kind,
            "args": self.args,
            "read_version": self.read_version,
            "outcome": self.outcome.value,
            "version": self.version,
            "error": self.error,
            "start": self.start,
            "end": self.end,
        }

    @classmethod
    def from_json(cls, document: dict) -> Attempt:
        return cls(
            op_id=document["op_id"],
            writer=document["writer"],
            kind=document["kind"],
            args=document["args"],
            read_version=document["read_version"],
            outcome=AttemptOutcome(document["outcome"]),
            version=document["version"],
            error=document["error"],
            start=document["start"],
            end=document["end"],
        )


@lru_cache(maxsize=1)
def history_schema() -> dict:
    return json.loads(resources.files("conformance").joinpath("schemas").joinpath(SCHEMA_NAME).read_text())


def save_history(path, attempts: Iterable[Attempt]) -> None:
    with Path(path).open("w") as out:
        for attempt in attempts:
            out.write(json.dumps({"format": HISTORY_FORMAT, **attempt.to_json()}, sort_keys=True) + "\n")


def load_history(path) -> list[Attempt]:
    """The attempts saved at ``path``; :class:`HistoryError` names the line
    that is not JSON or breaks the schema."""
    validator = jsonschema.Draft202012Validator(history_schema())
    attempts = []
    with Path(path).open() as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                document = json.loads(line)
            except json.JSONDecodeError as exc:
                raise HistoryError(f"{path}:{number}: not JSON ({exc.msg})") from None
            problem = jsonschema.exceptions.best_match(validator.iter_errors(document))
            if problem is not None:
                raise HistoryError(f"{path}:{number}: {problem.message}")
            attempts.append(Attempt.from_json(document))
    return attempts
