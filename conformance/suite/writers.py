"""The writers suite: the driver run through the writer conformance script.

:func:`conformance.writer_conformance.run_writer_conformance` runs once per
session (each step on a table of its own, the steps it needs performed
first by the reference driver) and every version it commits is checked with the validator and
every installed reader; each step of :data:`~conformance.writer_conformance.SCRIPT`
is then one check, and ``history`` a last one: every reader lists the
versions the steps committed. A driver without the ``write`` capability gets
not-applicable for each; a step the driver does not perform is not
applicable, naming the operation; a step whose table the reference could
not prepare is skipped, its reason naming the step it needs.
Expectations apply here per step (suite ``writers``, case the step id).
"""

from __future__ import annotations

from functools import partial

from ..drivers.protocol import Capability
from ..writer_conformance import SCRIPT, StepStatus, WriterCheckError, WriterReport, run_writer_conformance
from .checks import Check, Status, Suite, Verdict
from .run import SuiteRun

HISTORY = "history"
_REPORT = "writers:report"

_STATUSES = {
    StepStatus.PASS: Status.PASS,
    StepStatus.FAIL: Status.FAIL,
    StepStatus.NOT_APPLICABLE: Status.NOT_APPLICABLE,
}


def report(run: SuiteRun) -> WriterReport | str:
    """The session's writer run, or why it could not start."""
    if _REPORT not in run.shared:
        try:
            # Expectations are the suite's to apply (per check), not the run's.
            run.shared[_REPORT] = run_writer_conformance(run.driver_name, driver=run.driver)
        except WriterCheckError as exc:
            run.shared[_REPORT] = str(exc)
    found = run.shared[_REPORT]
    assert isinstance(found, (WriterReport, str))
    return found


def step_verdict(run: SuiteRun, step_id: str) -> Verdict:
    if not run.has(Capability.WRITE):
        return Verdict.not_applicable(Capability.WRITE.value)
    found = report(run)
    if isinstance(found, str):
        return Verdict.failed([f"the writer run could not start: {found}"])
    result = found.step(step_id)
    if result.status is StepStatus.SKIPPED:
        # The reference could not prepare its table: nothing of the driver's to judge.
        return Verdict(Status.NOT_APPLICABLE, (f"skipped: {result.reason}",))
    if result.status is StepStatus.NOT_APPLICABLE:
        return Verdict(Status.NOT_APPLICABLE, (f"not applicable: {result.reason}",))
    status = _STATUSES.get(result.status)
    if status is None:  # expectations are applied by the plugin, never by the run
        return Verdict.failed([f"unexpected step status {result.status.value!r}"])
    return Verdict(status, tuple(result.messages()) + tuple(result.notes if status is Status.FAIL else ()))


def history_verdict(run: SuiteRun) -> Verdict:
    if not run.has(Capability.WRITE):
        return Verdict.not_applicable(Capability.WRITE.value)
    found = report(run)
    if isinstance(found, str):
        return Verdict.failed([f"the writer run could not start: {found}"])
    return Verdict.failed(found.history_problems) if found.history_problems else Verdict.passed()


def checks() -> list[Check]:
    found = [Check(Suite.WRITERS, step.id, partial(step_verdict, step_id=step.id), step.description) for step in SCRIPT]
    found.append(Check(Suite.WRITERS, HISTORY, history_verdict, "every reader lists the versions the steps committed"))
    return found
