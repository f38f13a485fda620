"""The plugin's results as one JSON document: ``--lance-json FILE``.

A pytest run of the suite already writes JUnit XML (``--junitxml``), but that
format cannot say what the dashboard (:mod:`conformance.dashboard`) needs:
it has no place for the implementation and release under test, nor for the
day a run is filed under, and it folds the suite's statuses into pytest's
(a check not applicable and an expected failure are both ``skipped``),
leaving them only as free-form properties. So the plugin writes its own
document (format :data:`REPORT_FORMAT`, JSON Schema
``conformance/schemas/suite-run-report.schema.json``, recognised by
``"report": "suite-run"``): the driver as it describes itself, the run's
stamp (:mod:`conformance.run_stamp`: ``--lance-run-date`` files it under a
day), the suites run, and one entry per check with its status.

The statuses come from the checks' own verdicts (the ``lance_status`` user
property :class:`~conformance.suite.plugin.CheckItem` records), gathered from
the reports pytest sends to the process that writes the file, so ``-n``
(pytest-xdist) runs give the same document. A check that raised before it
had a verdict (a driver that crashed) is a ``fail``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..describe import schema_validator
from ..run_stamp import RunStamp
from .checks import Status, Suite

REPORT_FORMAT = 1
REPORT_KIND = "suite-run"
SCHEMA_NAME = "suite-run-report.schema.json"
#: The user properties a check item records: its suite, then its verdict's status.
SUITE_PROPERTY = "lance_suite"
STATUS_PROPERTY = "lance_status"


@dataclass(frozen=True)
class CheckResult:
    suite: Suite
    name: str
    nodeid: str
    status: Status

    def to_json(self) -> dict[str, str]:
        return {"suite": self.suite.value, "check": self.name, "nodeid": self.nodeid, "status": self.status.value}


@dataclass
class SuiteRunReport:
    """The checks of one plugin run, gathered as their reports arrive."""

    checks: list[CheckResult] = field(default_factory=list)

    def record(self, report: Any) -> None:
        """Take one pytest ``TestReport``: the call phase of a check item
        (setup and teardown carry no verdict)."""
        if report.when != "call":
            return
        properties = dict(report.user_properties)
        suite = properties.get(SUITE_PROPERTY)
        if suite is None:
            return  # not a check of the suite
        status = properties.get(STATUS_PROPERTY)
        name = report.nodeid.rsplit("::", 1)[-1]
        self.checks.append(CheckResult(Suite(suite), name, report.nodeid, Status(status) if status else Status.FAIL))

    def to_json(
        self, *, driver: dict[str, Any], suites: frozenset[Suite], expectations: str, run: RunStamp
    ) -> dict[str, Any]:
        summary: dict[str, dict[str, int]] = {}
        for suite in sorted(suites, key=lambda s: s.value):
            counted = Counter(check.status for check in self.checks if check.suite is suite)
            summary[suite.value] = {status.value: counted[status] for status in Status}
        return {
            "report": REPORT_KIND,
            "report_format": REPORT_FORMAT,
            "run": run.to_json(),
            "driver": driver,
            "expectations": expectations,
            "suites": sorted(suite.value for suite in suites),
            "summary": summary,
            "checks": [check.to_json() for check in sorted(self.checks, key=lambda c: (c.suite.value, c.name))],
        }


def check_document(document: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` fits the schema."""
    schema_validator(SCHEMA_NAME).validate(document)


def write_report(path: str | Path, document: dict[str, Any]) -> Path:
    check_document(document)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return out
