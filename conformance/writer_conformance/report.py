"""The writer conformance report: one result per script step, as JSON
(``conformance/schemas/writer-conformance-report.schema.json``, format
:data:`REPORT_FORMAT`) and as a text summary.

A step's status:

* ``pass``: the operation ran and every version it committed passed every check;
* ``fail``: the operation raised, or a version it committed failed a check;
* ``not-applicable``: the driver does not perform the operation (it does not
  declare it, or it raised ``WriteNotSupported``);
* ``skipped``: the reference driver could not prepare the table it starts
  from (the reason says ``needs step X``, the notes why);
* ``expected-failure``: it failed and the implementation's expectations file
  lists it (suite ``writers``, case the step id);
* ``fixed``: the expectations file lists it, but it passed: the run fails until
  the entry is removed, so the file stays honest.

The run passes when no step is ``fail`` or ``fixed`` and every reader lists the
versions committed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import jsonschema

from ..describe import schema_validator
from ..run_stamp import RunStamp, stamp
from .checks import Check, CheckStatus

#: The version of the report's JSON format.
REPORT_FORMAT = 1
REPORT_SCHEMA = "writer-conformance-report.schema.json"


class StepStatus(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not-applicable"
    SKIPPED = "skipped"
    EXPECTED_FAILURE = "expected-failure"
    FIXED = "fixed"


#: Statuses that fail the run.
FAILING = frozenset({StepStatus.FAIL, StepStatus.FIXED})


@dataclass(frozen=True)
class StepResult:
    id: str
    kind: str
    description: str
    status: StepStatus
    requirements: tuple[str, ...]
    #: The version the driver said it committed (None when it did not run).
    returned_version: int | None = None
    #: Every version that appeared while the step ran.
    versions: tuple[int, ...] = ()
    #: Problems of the step itself (the write raised, versions out of place).
    problems: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    #: Why the step is not applicable or skipped.
    reason: str | None = None
    #: The expectation that covers it (its reason), when one does.
    expectation: dict[str, Any] | None = None
    #: Non-failing remarks on the step.
    notes: tuple[str, ...] = ()

    @property
    def failed_checks(self) -> list[Check]:
        return [check for check in self.checks if check.status is CheckStatus.FAIL]

    def messages(self) -> list[str]:
        """Every problem, each prefixed with where it was seen."""
        lines = list(self.problems)
        lines += [f"v{check.version} {check.check}: {problem}" for check in self.checks for problem in check.problems]
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "description": self.description,
            "status": self.status.value,
            "requirements": list(self.requirements),
            "returned_version": self.returned_version,
            "versions": list(self.versions),
            "problems": list(self.problems),
            "checks": [check.to_json() for check in self.checks],
            "reason": self.reason,
            "expectation": self.expectation,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class WriterReport:
    #: The driver under test, as it describes itself (``DriverInfo.to_json()``
    #: when it has one; at least its name).
    driver: dict[str, Any]
    readers: tuple[str, ...]
    data_storage_version: str | None
    steps: tuple[StepResult, ...]
    #: Problems of the history as a whole (a reader lists other versions).
    history_problems: tuple[str, ...] = ()
    expectations: str | None = None
    notes: tuple[str, ...] = field(default=())
    #: When the run ended and the day it is filed under (``--run-date``), for the dashboard.
    run: RunStamp = field(default_factory=stamp)

    @property
    def passed(self) -> bool:
        return not self.history_problems and not any(step.status in FAILING for step in self.steps)

    def step(self, step_id: str) -> StepResult:
        return next(step for step in self.steps if step.id == step_id)

    def counts(self) -> dict[str, int]:
        counts = {status.value: 0 for status in StepStatus}
        for step in self.steps:
            counts[step.status.value] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "report_format": REPORT_FORMAT,
            "suite": "writers",
            "run": self.run.to_json(),
            "driver": self.driver,
            "readers": list(self.readers),
            "data_storage_version": self.data_storage_version,
            "expectations": self.expectations,
            "passed": self.passed,
            "summary": self.counts(),
            "history_problems": list(self.history_problems),
            "notes": list(self.notes),
            "steps": [step.to_json() for step in self.steps],
        }


def to_json_text(report: WriterReport) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=False)


def to_text(report: WriterReport) -> str:
    """A summary: one line per step, its messages below a failing one."""
    name = report.driver.get("name", "?")
    lines = [
        f"writer conformance of {name} (data storage version {report.data_storage_version or 'default'}; "
        f"readers: {', '.join(report.readers)})"
    ]
    for step in report.steps:
        versions = ",".join(f"v{version}" for version in step.versions)
        lines.append(f"  {step.status.value:16} {step.id:20} {versions}")
        if step.reason:
            lines.append(f"      {step.reason}")
        if step.status in (StepStatus.FAIL, StepStatus.EXPECTED_FAILURE):
            lines += [f"      {message}" for message in step.messages()]
        if step.expectation is not None:
            lines.append(f"      expected: {step.expectation.get('reason')}")
    lines += [f"  history: {problem}" for problem in report.history_problems]
    counts = ", ".join(f"{count} {status}" for status, count in report.counts().items() if count)
    lines.append(f"{'PASSED' if report.passed else 'FAILED'}: {counts}")
    return "\n".join(lines)


def check_report_document(document: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` fits the report schema."""
    error = jsonschema.exceptions.best_match(schema_validator(REPORT_SCHEMA).iter_errors(document))
    if error is not None:
        raise error


def failing_steps(report: WriterReport) -> Sequence[StepResult]:
    return [step for step in report.steps if step.status in FAILING]
