"""Known defects of Lance writers, and the findings they explain.

The table format records in every manifest which library and release wrote
it (``Manifest.writer_version``) so that readers can recognise files that
"may have known bugs associated with that writer" (requirement
writer-version.identifies-writer). The defects this project knows are data,
``conformance/data/writer_defects.json`` (JSON Schema:
``conformance/schemas/writer-defects.schema.json``); each was measured by
writing datasets with the releases themselves (``conformance/peers``).

The validator consults the table for every version it checks: a finding that
a defect of that version's writer explains (the rule and the symptom the
defect lists, see :attr:`conformance.validator.registry.Rule.symptoms`) is
kept under its rule id, but becomes a warning that names the defect and the
affected releases. An error the writer is not known for stays an error.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from reference_impl.manifest import WriterVersion

from ..describe import schema_validator
from .registry import Finding, Severity

TABLE_RESOURCE = ("data", "writer_defects.json")
SCHEMA_NAME = "writer-defects.schema.json"
#: ``MAJOR.MINOR.PATCH`` at the start of a writer version (a prerelease or
#: build suffix does not move a release out of a range).
_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def release_key(version: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` of a release number, None when it has none."""
    match = _RELEASE.match(version.strip())
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def _table_release(version: str) -> tuple[int, int, int]:
    """:func:`release_key` of a release the defect table names (its schema
    requires a release number, so a missing one is a broken table)."""
    release = release_key(version)
    if release is None:
        raise ValueError(f"the writer defect table names {version!r}, which is not a release number")
    return release


@dataclass(frozen=True)
class Symptom:
    """A finding a defect explains: a rule id and one of that rule's symptoms."""

    rule: str
    symptom: str


@dataclass(frozen=True)
class WriterDefect:
    """One known defect of a writer, over a range of its releases."""

    id: str
    #: ``writer_version.library`` as the affected releases record it.
    library: str
    #: The first release known to have the defect.
    first_affected: str
    #: The first release without it; None while every later release has it.
    first_fixed: str | None
    #: What the affected releases write wrong.
    wrong: str
    #: The catalog requirement (conformance/data/requirements.json) it breaks.
    requirement: str
    #: How readers cope with what the affected releases wrote.
    readers_cope: str
    #: The findings it explains.
    symptoms: tuple[Symptom, ...]
    #: The releases whose datasets showed the range (tests check them).
    measured_with: tuple[str, ...]

    def affects(self, writer: WriterVersion | None) -> bool:
        """Whether the release that wrote a manifest lies in the range."""
        if writer is None or writer.library != self.library:
            return False
        release = release_key(writer.version)
        if release is None:
            return False
        if release < _table_release(self.first_affected):
            return False
        return self.first_fixed is None or release < _table_release(self.first_fixed)

    def explains(self, finding: Finding) -> bool:
        return finding.symptom is not None and Symptom(finding.rule, finding.symptom) in self.symptoms

    @property
    def releases(self) -> str:
        """The affected releases in words, for messages."""
        if self.first_fixed is None:
            return f"{self.library} releases >= {self.first_affected}"
        return f"{self.library} releases >= {self.first_affected} and < {self.first_fixed}"


def _defect(entry: dict) -> WriterDefect:
    return WriterDefect(
        id=entry["id"],
        library=entry["library"],
        first_affected=entry["first_affected"],
        first_fixed=entry.get("first_fixed"),
        wrong=entry["wrong"],
        requirement=entry["requirement"],
        readers_cope=entry["readers_cope"],
        symptoms=tuple(Symptom(s["rule"], s["symptom"]) for s in entry["symptoms"]),
        measured_with=tuple(entry["measured_with"]),
    )


@lru_cache(maxsize=1)
def known_defects() -> tuple[WriterDefect, ...]:
    """The table, checked against its JSON Schema (loaded once)."""
    table = resources.files("conformance")
    for part in TABLE_RESOURCE:  # one part at a time: Traversable.joinpath takes one before Python 3.11
        table = table.joinpath(part)
    document = json.loads(table.read_text(encoding="utf-8"))
    schema_validator(SCHEMA_NAME).validate(document)
    return tuple(_defect(entry) for entry in document["defects"])


def defects_of(writer: WriterVersion | None) -> tuple[WriterDefect, ...]:
    """The known defects of the release that wrote a manifest."""
    if writer is None:
        return ()
    return tuple(defect for defect in known_defects() if defect.affects(writer))


def explain(findings: list[Finding], writer: WriterVersion | None) -> list[Finding]:
    """``findings`` of one version, with those a known defect of its writer
    explains turned into warnings that name the defect (same rule id)."""
    if writer is None:
        return findings
    defects = defects_of(writer)
    if not defects:
        return findings
    explained = []
    for finding in findings:
        defect = next((d for d in defects if d.explains(finding)), None)
        if defect is None:
            explained.append(finding)
            continue
        severity = Severity.WARNING if finding.severity is Severity.ERROR else finding.severity
        message = (
            f"{finding.message} [known writer defect {defect.id} of {defect.releases}; "
            f"this version was written by {writer.library} {writer.version}: {defect.readers_cope}]"
        )
        explained.append(dataclasses.replace(finding, severity=severity, message=message, known_defect=defect.id))
    return explained
