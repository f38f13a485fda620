"""The history of a run: one :class:`Attempt` per operation a writer tried,
saved as JSON Lines (``DIR/history.jsonl``) that follow the shipped JSON
Schema ``conformance/schemas/harness-history.schema.json``.

An attempt's kind is a :class:`~conformance.drivers.writes.WriteKind` and its
outcome a :class:`~conformance.drivers.writes.WriteOutcome`: the one write
vocabulary. Histories of format 1 (kinds such as ``add_column``, outcome
``indeterminate``) are read as their format-2 equivalents."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema

from conformance.drivers.writes import WriteKind, WriteOutcome

SCHEMA_NAME = "harness-history.schema.json"
#: The version of a history line's shape, written on every line (bump it when a
#: field changes meaning or goes away; CHANGELOG.md).
HISTORY_FORMAT = 2
#: The writer index of the attempt that created the dataset (the runner's).
SETUP_WRITER = -1


#: What format-1 histories called a kind, where the vocabulary's name differs.
FORMAT_1_KINDS = {"add_column": "add-columns", "create_index": "create-index", "upsert_race": "upsert"}
#: ... and an outcome.
_FORMAT_1_OUTCOMES = {"indeterminate": WriteOutcome.UNKNOWN.value}


class HistoryError(ValueError):
    """A saved history that does not follow its schema (file and line named)."""


@dataclass(frozen=True)
class Attempt:
    """One line of ``history.jsonl``: one operation a writer tried.

    ``read_version`` is the version the operation was asked to build on (or,
    for a writer that cannot be asked, the latest version the harness saw
    just before); ``versions`` every version the writer said it committed
    (``version`` the last), ``engine_read_versions`` the read versions the
    implementation said it used. The checker believes none of these without
    the transaction files (:mod:`.attribution`)."""

    op_id: str  # unique in the run, e.g. "w3-17"
    writer: int
    kind: WriteKind
    args: dict  # JSON-able: the ids/keys/values/names it writes (workloads.py says which per kind)
    read_version: int | None
    outcome: WriteOutcome
    version: int | None  # the last version it said it committed, when acknowledged
    error: str | None
    start: float
    end: float
    versions: tuple[int, ...] = ()
    engine_read_versions: tuple[int, ...] = ()
    #: ``read_version`` was asked of the writer (it writes at a version): a
    #: commit built on a newer one is a rebase the checker verifies.
    read_asked: bool = False

    def __post_init__(self) -> None:
        if self.version is not None and not self.versions:
            object.__setattr__(self, "versions", (self.version,))

    def to_json(self) -> dict:
        return {
            "op_id": self.op_id,
            "writer": self.writer,
            "kind": self.kind.value,
            "args": self.args,
            "read_version": self.read_version,
            "outcome": self.outcome.value,
            "version": self.version,
            "versions": list(self.versions),
            "engine_read_versions": list(self.engine_read_versions),
            "read_asked": self.read_asked,
            "error": self.error,
            "start": self.start,
            "end": self.end,
        }

    @classmethod
    def from_json(cls, document: dict) -> Attempt:
        kind = document["kind"]
        args = dict(document["args"])
        if kind == "upsert_race":  # format 1: racing upserts were a kind of their own
            args.setdefault("shared", True)
        if kind in ("add_column", "drop_column") and "name" in args:  # format 1: one column by name
            args.setdefault("columns", [args["name"]])
        if kind == "config" and "key" in args:  # format 1: one key
            args.setdefault("values", [[args["key"], args.get("value")]])
        outcome = document["outcome"]
        return cls(
            op_id=document["op_id"],
            writer=document["writer"],
            kind=WriteKind(FORMAT_1_KINDS.get(kind, kind)),
            args=args,
            read_version=document["read_version"],
            outcome=WriteOutcome(_FORMAT_1_OUTCOMES.get(outcome, outcome)),
            version=document["version"],
            error=document["error"],
            start=document["start"],
            end=document["end"],
            versions=tuple(document.get("versions", ())),
            engine_read_versions=tuple(document.get("engine_read_versions", ())),
            read_asked=bool(document.get("read_asked", False)),
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
