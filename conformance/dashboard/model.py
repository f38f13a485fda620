"""The dashboard's one model: a :class:`Result` per suite, implementation
release and run, whatever command wrote it, and a :class:`Problem` per file
that could not be read.

How checks count (:func:`tally`), the same for every input:

* *passed*: the check passed, or passed although the implementation's
  expectations said it fails (``fixed``: stale for the run's verdict, but the
  implementation did conform);
* *failed*: the check failed, expected (``expected-failure``, a known bug)
  or not;
* the rest (``not-applicable``, ``skipped``) did not apply: counted in
  *total* only.

The pass rate is passed over the checks that applied (passed + failed), so
that an implementation is not marked down for a capability it honestly does
not declare; the pages show the checks that did not apply beside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..ecosystem.model import Status
from ..writer_conformance.report import StepStatus

#: The version of the normalised document (``results.json``; schema dashboard-results.schema.json).
DASHBOARD_FORMAT = 1
SCHEMA_NAME = "dashboard-results.schema.json"

#: Statuses (as every report spells them) of a check that passed; of one that failed.
PASSING = frozenset({Status.PASS.value, Status.FIXED.value})
FAILING = frozenset({Status.FAIL.value, Status.EXPECTED_FAILURE.value})
#: Statuses of a check that did not apply.
NOT_APPLYING = frozenset({Status.NOT_APPLICABLE.value, StepStatus.SKIPPED.value})
KNOWN_STATUSES = PASSING | FAILING | NOT_APPLYING


@dataclass(frozen=True)
class Tally:
    passed: int
    failed: int
    total: int

    @property
    def applied(self) -> int:
        return self.passed + self.failed


def tally(statuses: Iterable[str]) -> Tally:
    """The counts of ``statuses`` (``pass``, ``fail``, ...); a status outside
    :data:`KNOWN_STATUSES` is a ``ValueError`` (an input's problem)."""
    passed = failed = total = 0
    for status in statuses:
        if status not in KNOWN_STATUSES:
            raise ValueError(f"unknown status {status!r}")
        total += 1
        passed += status in PASSING
        failed += status in FAILING
    return Tally(passed, failed, total)


def tally_counts(counts: dict[str, int]) -> Tally:
    """:func:`tally` of a summary (status -> how many)."""
    return tally(status for status, count in counts.items() for _ in range(count))


@dataclass(frozen=True)
class Result:
    """One suite's result for one implementation release in one run."""

    #: ``readers``, ``writers``, ``conflicts``, ``properties``, ``queries``, ``harness``, ``compat``.
    suite: str
    implementation: str
    #: The implementation's release (``DriverInfo.version``), ``unknown`` when the input does not say.
    release: str
    #: The lance-conformance version that judged the run, ``unknown`` when the input does not say.
    suite_version: str
    #: The day the run is filed under (``YYYY-MM-DD``, conformance.run_stamp).
    run_date: str
    passed: int
    failed: int
    total: int
    #: The input it comes from, relative to the results directory; the site links its copy.
    source: str
    #: What wrote it: ``matrix``, ``writer-check``, ``harness``, ``pytest``, ``compat``.
    kind: str
    #: When the run ended (ISO 8601), orders two runs of one day; empty when not known.
    generated: str = ""

    @property
    def applied(self) -> int:
        return self.passed + self.failed

    @property
    def not_applicable(self) -> int:
        return self.total - self.applied

    @property
    def pass_rate(self) -> float | None:
        """Passed over the checks that applied; None when none did."""
        return self.passed / self.applied if self.applied else None

    @property
    def order(self) -> tuple[str, str, str]:
        """Later runs sort later: by day filed under, then end time, then input."""
        return (self.run_date, self.generated, self.source)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "implementation": self.implementation,
            "release": self.release,
            "suite_version": self.suite_version,
            "run_date": self.run_date,
            "generated": self.generated,
            "passed": self.passed,
            "failed": self.failed,
            "total": self.total,
            "pass_rate": self.pass_rate,
            "kind": self.kind,
            "source": self.source,
        }


def result(
    suite: str, implementation: str, release: str, counts: Tally, *, run: RunOf, source: str, kind: str
) -> Result:
    return Result(
        suite=suite,
        implementation=implementation,
        release=release or "unknown",
        suite_version=run.suite_version,
        run_date=run.run_date,
        passed=counts.passed,
        failed=counts.failed,
        total=counts.total,
        source=source,
        kind=kind,
        generated=run.generated,
    )


@dataclass(frozen=True)
class RunOf:
    """What an input says about its run: the day filed under, when it ended, the suite's version."""

    run_date: str
    generated: str = ""
    suite_version: str = "unknown"


@dataclass(frozen=True)
class Problem:
    """An input file the dashboard could not use, and why."""

    path: str
    message: str

    def line(self) -> str:
        return f"warning: {self.path}: {self.message}"

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.message}
