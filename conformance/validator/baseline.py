"""Baselines: findings a team has accepted, so that a CI gate fails on new ones only.

A baseline file is JSON (schema: ``conformance/schemas/validation-baseline.schema.json``)::

    {"baseline_format": 1,
     "entries": [{"rule": "base-path/absolute", "location": "_versions/*.manifest#base_paths[0]",
                  "reason": "our bases are relative on purpose"}]}

An entry suppresses every finding of its ``rule`` whose location matches its
``location`` pattern and, when the entry has a ``version``, that is about
that version. The pattern is a glob in which ``*`` matches any run of
characters (``/`` included) and ``?`` one character; every other character,
brackets included (locations use them for positions such as
``fragments[2]``), matches itself. A finding without a location has the
empty location.

Suppressed findings are still reported, apart from the others, and never
gate; an entry that suppresses nothing is reported as stale, so that a
baseline shrinks as its findings are fixed.

:func:`entries_for` makes the entries of a new baseline. They pin no
version, so that a finding that persists into the next version stays
accepted; for the same reason a location inside the manifest of the version
a finding is about, which names that manifest's file (a new name with every
commit), becomes ``_versions/*.manifest#...``. A user who wants an entry to
hold for one version only adds ``version`` by hand.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TypedDict, cast

from ..describe import schema_validator
from .registry import Finding, Severity

BASELINE_FORMAT = 1
SCHEMA_NAME = "validation-baseline.schema.json"
#: What --write-baseline puts in each new entry's reason, for the user to replace.
REASON_PLACEHOLDER = "TODO: say why this finding is accepted"
#: Severities from least to most serious; a gate at one fails on it and every later one.
SEVERITY_ORDER = (Severity.INFO, Severity.WARNING, Severity.ERROR)
#: A baseline is a short list written by people; refuse anything far larger before parsing it.
MAX_BASELINE_BYTES = 16 << 20

_MANIFEST_LOCATION = re.compile(r"^_versions/[0-9]+\.manifest(?=#|$)")


class BaselineError(Exception):
    """A baseline file that cannot be read, is not JSON, or breaks its schema."""

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"baseline {self.path}: {problem}")


class _BaselineEntryRequired(TypedDict):
    rule: str
    location: str
    reason: str


class BaselineEntryJson(_BaselineEntryRequired, total=False):
    """One entry as the baseline file holds it."""

    version: int


class BaselineJson(TypedDict):
    """A baseline file's document."""

    baseline_format: int
    entries: list[BaselineEntryJson]


@dataclass(frozen=True)
class BaselineEntry:
    """One accepted finding (or family of findings)."""

    rule: str
    #: A glob over finding locations (see the module docstring).
    location: str
    reason: str
    #: Only findings about this version; None for any version.
    version: int | None = None

    @cached_property
    def _pattern(self) -> re.Pattern:
        parts = []
        for char in self.location:
            parts.append(".*" if char == "*" else "." if char == "?" else re.escape(char))
        return re.compile("".join(parts), re.DOTALL)

    def matches(self, finding: Finding) -> bool:
        if finding.rule != self.rule:
            return False
        if self.version is not None and finding.version != self.version:
            return False
        return self._pattern.fullmatch(finding.location or "") is not None

    def to_json(self) -> BaselineEntryJson:
        # Keys in this order (version, when pinned, before the reason): the file reads as written by hand.
        if self.version is None:
            return {"rule": self.rule, "location": self.location, "reason": self.reason}
        return {"rule": self.rule, "location": self.location, "version": self.version, "reason": self.reason}


@dataclass(frozen=True)
class Baseline:
    entries: tuple[BaselineEntry, ...]
    #: Where it was read from (None for one built in memory).
    path: str | None = None

    def to_json(self) -> BaselineJson:
        return {"baseline_format": BASELINE_FORMAT, "entries": [e.to_json() for e in self.entries]}


@dataclass(frozen=True)
class Suppressed:
    finding: Finding
    entry: BaselineEntry

    def to_json(self) -> dict:
        return {**self.finding.to_json(), "reason": self.entry.reason, "baseline_location": self.entry.location}


@dataclass(frozen=True)
class BaselineOutcome:
    """What a baseline did to one report."""

    baseline: Baseline
    suppressed: tuple[Suppressed, ...]
    #: Entries that matched no finding of the run.
    stale: tuple[BaselineEntry, ...]

    def to_json(self) -> dict:
        return {
            "file": self.baseline.path,
            "suppressed": [s.to_json() for s in self.suppressed],
            "stale": [e.to_json() for e in self.stale],
        }


def parse_baseline(document: object, path: str | os.PathLike) -> Baseline:
    """A :class:`Baseline` from a decoded JSON document; :class:`BaselineError` when it breaks the schema."""
    errors = sorted(schema_validator(SCHEMA_NAME).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "the top level"
        raise BaselineError(path, f"does not match {SCHEMA_NAME} at {where}: {first.message}")
    # The schema has checked the document's shape.
    validated = cast(BaselineJson, document)
    entries = tuple(
        BaselineEntry(rule=e["rule"], location=e["location"], reason=e["reason"], version=e.get("version"))
        for e in validated["entries"]
    )
    return Baseline(entries, str(path))


def load_baseline(path: str | os.PathLike) -> Baseline:
    """Read and check a baseline file; every problem is a :class:`BaselineError` naming it."""
    file = Path(path)
    try:
        if not file.is_file():
            raise BaselineError(path, "no such file" if not file.exists() else "not a regular file")
        if file.stat().st_size > MAX_BASELINE_BYTES:
            raise BaselineError(path, f"larger than {MAX_BASELINE_BYTES >> 20} MB; not a baseline")
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise BaselineError(path, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BaselineError(path, f"not UTF-8: {exc}") from None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise BaselineError(path, f"not valid JSON: {exc}") from None
    return parse_baseline(document, path)


def apply_baseline(findings: list[Finding], baseline: Baseline) -> tuple[list[Finding], BaselineOutcome]:
    """Split ``findings`` into those the baseline does not list and what it suppressed."""
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    used: set[int] = set()
    for finding in findings:
        matching = [number for number, entry in enumerate(baseline.entries) if entry.matches(finding)]
        if matching:
            suppressed.append(Suppressed(finding, baseline.entries[matching[0]]))
            used.update(matching)
        else:
            kept.append(finding)
    stale = tuple(entry for number, entry in enumerate(baseline.entries) if number not in used)
    return kept, BaselineOutcome(baseline, tuple(suppressed), stale)


def gates(finding: Finding, fail_on: Severity) -> bool:
    """Whether ``finding`` fails a gate set at ``fail_on`` (it is at least that serious)."""
    return SEVERITY_ORDER.index(finding.severity) >= SEVERITY_ORDER.index(fail_on)


def _entry_location(finding: Finding) -> str:
    # A location holding a literal * or ? still matches itself as a pattern
    # (and a little more); locations this validator writes hold neither.
    location = finding.location or ""
    if finding.version is not None and _MANIFEST_LOCATION.match(location):
        return _MANIFEST_LOCATION.sub("_versions/*.manifest", location, count=1)
    return location


def entries_for(findings: list[Finding], fail_on: Severity, *, keep: tuple[BaselineEntry, ...] = ()) -> Baseline:
    """A baseline accepting every finding in ``findings`` that gates at ``fail_on`` (see the module docstring).

    Entries of ``keep`` (those of the baseline in use that still match a
    finding) come first, with their reasons; each other finding gets an entry
    with :data:`REASON_PLACEHOLDER` as its reason.
    """
    entries: list[BaselineEntry] = list(dict.fromkeys(keep))
    seen = {(e.rule, e.location, e.version) for e in entries}
    for finding in findings:
        if not gates(finding, fail_on) or any(e.matches(finding) for e in entries):
            continue
        location = _entry_location(finding)
        if (finding.rule, location, None) in seen:
            continue
        seen.add((finding.rule, location, None))
        entries.append(BaselineEntry(finding.rule, location, REASON_PLACEHOLDER))
    return Baseline(tuple(entries))


def write_baseline(path: str | os.PathLike, baseline: Baseline) -> Baseline:
    """Write ``baseline`` to ``path`` (replacing the file); the written baseline, named by its path."""
    try:
        Path(path).write_text(json.dumps(baseline.to_json(), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(path, f"cannot write: {exc.strerror or exc}") from None
    return Baseline(baseline.entries, str(path))


def suppress(report, baseline: Baseline) -> None:
    """Take the findings ``baseline`` lists out of ``report`` (an
    :class:`~conformance.validator.engine.Report`) into ``report.baseline``."""
    report.findings, report.baseline = apply_baseline(report.findings, baseline)


def settle(report, baseline: Baseline | None, *, write_to: str | os.PathLike | None, fail_on: Severity) -> None:
    """Apply ``baseline`` to ``report``; with ``write_to``, first write there a
    baseline of the run's findings that gate at ``fail_on`` (keeping the
    entries of ``baseline`` that still match, with their reasons), then
    apply that one instead."""
    everything = list(report.findings)
    if baseline is not None:
        suppress(report, baseline)
    if write_to is None:
        return
    kept = tuple(item.entry for item in report.baseline.suppressed) if report.baseline is not None else ()
    written = write_baseline(write_to, entries_for(everything, fail_on, keep=kept))
    report.findings = everything
    suppress(report, written)
