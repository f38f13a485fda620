"""The expectations a writer conformance run is held to.

An implementation lists its known failures in its own expectations file
(``conformance.expectations``, suite ``writers``, case the step id); this
module reads one for the run. Until that module is on this branch, the file
is read here in the same shape: ``{"implementation": ..., "entries": [{"suite",
"case", "requirement", "reason", "issue"?, "reproducer"?}]}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class ExpectationsFileError(ValueError):
    """An expectations file that cannot be read or is not well formed."""


@dataclass(frozen=True)
class WriterExpectation:
    suite: str
    case: str
    requirement: str
    reason: str
    issue: str | None = None
    reproducer: str | None = None


@dataclass(frozen=True)
class WriterExpectations:
    implementation: str
    entries: tuple[WriterExpectation, ...]

    def lookup(self, suite: str, case: str) -> WriterExpectation | None:
        return next((entry for entry in self.entries if entry.suite == suite and entry.case == case), None)


def load_writer_expectations(path: str | Path) -> WriterExpectations:
    try:
        document = json.loads(Path(path).read_text())
        entries = tuple(
            WriterExpectation(
                suite=str(entry["suite"]),
                case=str(entry["case"]),
                requirement=str(entry["requirement"]),
                reason=str(entry["reason"]),
                issue=entry.get("issue"),
                reproducer=entry.get("reproducer"),
            )
            for entry in document.get("entries", [])
        )
        return WriterExpectations(str(document.get("implementation", "")), entries)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ExpectationsFileError(f"expectations file {path}: {exc}") from None
