"""Run a writing driver through the script and check what it committed.

:func:`run_writer_conformance` creates a dataset in a scratch directory with
the driver under test and performs each step of :data:`.script.SCRIPT` with
``driver.write``. After each step it lists the versions (through the
reference reader: the ``_versions`` directory), and checks every version that
appeared:

* the operation's own promises: a committing operation's returned version is
  the newest that appeared, a tag commits nothing;
* the validator on that version (errors fail, warnings are notes);
* the reference reader's description (it must fit the describe schema), and
  every reader's description against it;
* every reader's rows against the content :mod:`.model` computes (the version
  the step returned holds the operation's result; a version committed on the
  way, such as compaction's ``ReserveFragments``, holds the rows before it);
* the step's facts (an index, a tag, a config key) on the reference's
  description of the returned version.

Versions are checked right after the step that committed them, so a reader
that reads only the latest version is still checked on each step's result;
when the driver protocol lands, such a reader is asked only for those. At the
end, every reader must list the versions the run saw committed.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from ..drivers import DRIVERS, Driver, is_implementation_failure, load_driver
from ..drivers import reference as reference_driver
from ..drivers.writes import NON_COMMITTING, WriteNotSupported, WriteOp
from . import model
from .checks import (
    Check,
    CheckStatus,
    describe_check,
    facts_check,
    failure_text,
    reference_description,
    rows_check,
    validator_check,
)
from .report import StepResult, StepStatus, WriterReport
from .script import DEFAULT_DATA_STORAGE_VERSION, SCRIPT, ScriptContext, Step

#: The suite name expectations use for writer conformance (case: the step id).
SUITE = "writers"


class ExpectationSource(Protocol):
    """An implementation's expectations (``conformance.expectations.Expectations``)."""

    def lookup(self, suite: str, case: str) -> Any: ...


class WriterCheckError(Exception):
    """The run cannot start: the driver cannot be loaded or does not write."""


def installed_readers() -> list[str]:
    """The reader drivers installed here (the reference always)."""
    readers = ["reference"]
    try:
        import lance  # noqa: F401  (pylance installed: its driver reads)
    except ImportError:
        return readers
    return readers + ["pylance"]


def write_operations(driver: Any) -> frozenset[str] | None:
    """The write kinds a driver declares (None: it declares nothing, so each
    operation is tried and ``WriteNotSupported`` says which it lacks)."""
    declared = getattr(driver, "WRITE_OPERATIONS", None)
    return None if declared is None else frozenset(declared)


def unreported(driver: Any) -> frozenset[str]:
    return frozenset(getattr(driver, "UNREPORTED", frozenset()))


@dataclasses.dataclass
class _Run:
    uri: str
    writer: Any
    readers: dict[str, Driver]
    context: ScriptContext
    #: Expected content by version.
    contents: dict[int, pa.Table] = dataclasses.field(default_factory=dict)
    current: pa.Table | None = None
    #: Steps that ran (performed their operation) and steps that failed.
    failed: set[str] = dataclasses.field(default_factory=set)
    not_applicable: set[str] = dataclasses.field(default_factory=set)
    committed: list[int] = dataclasses.field(default_factory=list)


def run_writer_conformance(
    writer: str,
    *,
    driver: Any = None,
    readers: Sequence[str] | None = None,
    scratch: str | Path | None = None,
    expectations: ExpectationSource | None = None,
    expectations_label: str | None = None,
    data_storage_version: str | None = DEFAULT_DATA_STORAGE_VERSION,
    steps: Sequence[Step] = SCRIPT,
) -> WriterReport:
    """Run the writer named ``writer`` (or the ``driver`` object given, named
    ``writer`` in the report) through ``steps`` in ``scratch`` (a new
    temporary directory, removed afterwards, by default) and check every
    version it commits with the validator and ``readers`` (the installed
    readers by default)."""
    if driver is None:
        driver = load_driver(writer)
    if not callable(getattr(driver, "write", None)):
        raise WriterCheckError(f"driver {writer!r} does not write (it has no write())")
    reader_names = list(readers) if readers is not None else installed_readers()
    reader_drivers = {name: (driver if name == writer else load_driver(name)) for name in reader_names}
    owned = scratch is None
    root = Path(tempfile.mkdtemp(prefix="writer-check-")) if scratch is None else Path(scratch)
    try:
        run = _Run(str(root / "dataset.lance"), driver, reader_drivers, ScriptContext(data_storage_version))
        results = [_expected(_step(run, step), expectations) for step in steps]
        history = _history_problems(run)
    finally:
        if owned:
            shutil.rmtree(root, ignore_errors=True)
    return WriterReport(
        driver=_driver_document(writer, driver),
        readers=tuple(reader_names),
        data_storage_version=data_storage_version,
        steps=tuple(results),
        history_problems=tuple(history),
        expectations=expectations_label,
        notes=(
            f"tables are created with data storage version {data_storage_version or 'the writer default'} "
            "so that every reader compares rows (the reference reads 2.0 data files only)",
        ),
    )


def _driver_document(name: str, driver: Any) -> dict[str, Any]:
    info = getattr(driver, "info", None)
    if callable(info):
        try:
            return dict(info().to_json())
        except Exception as exc:  # a driver's self-description must not stop the report
            return {"name": name, "info_error": failure_text(exc)}
    return {"name": name, "module": DRIVERS.get(name, name)}


def _result(step: Step, status: StepStatus, **fields: Any) -> StepResult:
    return StepResult(
        id=step.id,
        kind=step.kind.value,
        description=step.description,
        status=status,
        requirements=step.requirements,
        **fields,
    )


def _step(run: _Run, step: Step) -> StepResult:
    declared = write_operations(run.writer)
    if declared is not None and step.kind.value not in declared:
        run.not_applicable.add(step.id)
        return _result(step, StepStatus.NOT_APPLICABLE, reason=f"the driver does not perform {step.kind.value}")
    blocked = [need for need in step.needs if need not in run.context.versions]
    if blocked:
        failed = [need for need in blocked if need in run.failed]
        if failed:
            run.failed.add(step.id)
            return _result(step, StepStatus.SKIPPED, reason=f"needs step {failed[0]!r}, which failed")
        run.not_applicable.add(step.id)
        return _result(step, StepStatus.NOT_APPLICABLE, reason=f"needs step {blocked[0]!r}, which did not run")
    op = step.make(run.context)
    before = _listed(run.uri)
    try:
        returned = run.writer.write(run.uri, op)
    except WriteNotSupported as exc:
        run.not_applicable.add(step.id)
        return _result(step, StepStatus.NOT_APPLICABLE, reason=f"the driver does not perform it: {exc}")
    except BaseException as exc:  # WriteConflict, the implementation's own errors, a Rust panic
        if not is_implementation_failure(exc):
            raise
        run.failed.add(step.id)
        appeared = [version for version in _listed(run.uri) if version not in before]
        run.committed += appeared
        problems = [f"the write raised {failure_text(exc)}"]
        if appeared:
            problems.append(f"yet versions {appeared} appeared")
        return _result(step, StepStatus.FAIL, versions=tuple(appeared), problems=tuple(problems))
    appeared = [version for version in _listed(run.uri) if version not in before]
    problems = _version_problems(op, returned, appeared, before)
    try:
        result = model.apply(run.current, op, run.contents)
    except model.ModelError as exc:  # the script met a table it did not shape: a fault of the script
        raise RuntimeError(f"writer conformance script, step {step.id}: {exc}") from exc
    # The newest version that appeared holds the operation's result, whatever
    # the driver returned (a wrong number is a problem of its own, above).
    final = max(appeared) if appeared else returned
    checks: list[Check] = []
    for version in appeared:
        expected = result if version == final else run.current
        if expected is None:
            problems.append(f"version {version} appeared before the table was created")
            continue
        run.contents[version] = expected
        checks += _version_checks(run, version, expected, step if version == final else None)
    if op.kind in NON_COMMITTING:
        checks += _facts(run, step, returned)
    notes: list[str] = []
    if any(check.check == "rows:reference" and check.status is CheckStatus.FAIL for check in checks):
        result = _rebased(run, final, result, notes)
    run.committed += appeared
    run.current = result
    run.context.versions[step.id] = final if appeared else returned
    step_failed = bool(problems) or any(check.status is CheckStatus.FAIL for check in checks)
    if step_failed:
        run.failed.add(step.id)
    return _result(
        step,
        StepStatus.FAIL if step_failed else StepStatus.PASS,
        returned_version=returned,
        versions=tuple(appeared),
        problems=tuple(problems),
        checks=tuple(checks),
        notes=tuple(notes),
    )


def _rebased(run: _Run, version: int, result: pa.Table, notes: list[str]) -> pa.Table:
    """The rows ``version`` actually holds (as the reference reads them),
    which later steps are judged against, so that one wrong step fails once
    rather than every step after it."""
    try:
        actual = reference_driver.read_table(run.uri, version)
    except Exception:  # unreadable: later steps stay judged against the model
        return result
    notes.append(f"later steps are judged against the rows v{version} holds, not the rows it should hold")
    run.contents[version] = actual
    return actual


def _listed(uri: str) -> list[int]:
    try:
        return reference_driver.versions(uri)
    except Exception:  # no dataset yet, or none the reference can list: nothing listed
        return []


def _version_problems(op: WriteOp, returned: object, appeared: list[int], before: list[int]) -> list[str]:
    if not isinstance(returned, int) or isinstance(returned, bool):
        return [f"write returned {returned!r}, not a version number"]
    if op.kind in NON_COMMITTING:
        problems = [f"a {op.kind.value} committed versions {appeared}"] if appeared else []
        if returned not in before:
            problems.append(f"it returned version {returned}, which is not a committed version")
        return problems
    if not appeared:
        return [f"it returned version {returned} but committed no new version"]
    if returned != max(appeared):
        return [f"it returned version {returned}, but the versions that appeared are {appeared}"]
    return []


def _version_checks(run: _Run, version: int, expected: pa.Table, step: Step | None) -> list[Check]:
    checks = [validator_check(run.uri, version)]
    ours, described = reference_description(run.uri, version)
    checks.append(described)
    for name, reader in run.readers.items():
        checks.append(rows_check(name, reader, run.uri, version, expected))
        if name != "reference":
            checks.append(describe_check(name, reader, run.uri, version, ours, unreported(reader)))
    if step is not None and step.checks and ours is not None:
        checks.append(facts_check(version, [problem for check in step.checks for problem in check(ours, run.context)]))
    return checks


def _facts(run: _Run, step: Step, version: int) -> list[Check]:
    # An operation that commits nothing (a tag) is checked on the latest
    # version's description, where its effect shows.
    latest = max(run.committed) if run.committed else version
    ours, described = reference_description(run.uri, latest)
    if ours is None:
        return [described]
    return [facts_check(latest, [problem for check in step.checks for problem in check(ours, run.context)])]


def _history_problems(run: _Run) -> list[str]:
    problems = []
    expected = _listed(run.uri)
    if sorted(run.committed) != expected:
        problems.append(f"the versions listed are {expected}; the steps committed {sorted(run.committed)}")
    for name, reader in run.readers.items():
        try:
            listed = reader.versions(run.uri)
        except BaseException as exc:
            if not is_implementation_failure(exc):
                raise
            problems.append(f"{name} cannot list the versions: {failure_text(exc)}")
            continue
        if list(listed) != expected:
            problems.append(f"{name} lists versions {list(listed)}, not {expected}")
    return problems


def _expected(result: StepResult, expectations: ExpectationSource | None) -> StepResult:
    """The result as the implementation's expectations see it."""
    if expectations is None:
        return result
    entry = expectations.lookup(SUITE, result.id)
    if entry is None:
        return result
    if dataclasses.is_dataclass(entry) and not isinstance(entry, type):
        document = dataclasses.asdict(entry)
    else:
        document = {"reason": str(entry)}
    if result.status is StepStatus.FAIL:
        return dataclasses.replace(result, status=StepStatus.EXPECTED_FAILURE, expectation=document)
    if result.status is StepStatus.PASS:
        return dataclasses.replace(
            result,
            status=StepStatus.FIXED,
            expectation=document,
            reason="listed as an expected failure, but it passes: remove the expectation",
        )
    return dataclasses.replace(result, expectation=document)
