"""Run a writing driver through the script and check what it committed.

:func:`run_writer_conformance` gives each step of :data:`.script.SCRIPT` a
table of its own in a scratch directory: the run creates it and performs the
steps it needs (``Step.needs``) through the reference driver, then the
driver under test performs the step with ``driver.write`` (the ``create``
step needs nothing: the driver under test creates its table). One failing
step therefore never hides another, and a step is skipped only when the
reference cannot prepare its table ("needs step X"). After the step it lists
the versions (through the reference reader: the ``_versions`` directory),
and checks every version that appeared:

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
that reads only the latest version is still checked on each step's result.
Every reader must list the versions each step's table holds.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from reference_impl.file_format.footer import NEWEST_VERSION

from ..describe import Description
from ..drivers import Driver, close_driver, installed_drivers, is_implementation_failure, load_driver
from ..drivers import reference as reference_driver
from ..drivers.protocol import Capability, DriverInfo, DriverInfoError, driver_info
from ..drivers.release import RELEASE_SEPARATOR
from ..drivers.writes import NON_COMMITTING, WriteNotSupported, WriteOp, WriteOpError, WriteResult, write_result
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
    versions_check,
)
from .report import StepResult, StepStatus, WriterReport
from .script import DEFAULT_DATA_STORAGE_VERSION, SCRIPT, ScriptContext, Step, preparation

#: The suite name expectations use for writer conformance (case: the step id).
SUITE = "writers"


class ExpectationSource(Protocol):
    """An implementation's expectations (``conformance.expectations.Expectations``)."""

    def lookup(self, suite: str, case: str) -> Any: ...


class WriterCheckError(Exception):
    """The run cannot start: the driver cannot be loaded or does not write."""


def installed_readers() -> list[str]:
    """The reader drivers a run uses by default: every installed driver that
    reads (:func:`conformance.drivers.installed_drivers`) but the pinned old pylance
    releases, each a child process in a virtual environment of its own (ask
    for one with ``readers``/``--reader``)."""
    return [name for name in installed_drivers(readers=True) if RELEASE_SEPARATOR not in name]


@dataclasses.dataclass(frozen=True)
class _Writer:
    """The driver under test and what it declares."""

    driver: Any
    info: DriverInfo
    #: The write kinds it declares (``DriverInfo.write_operations``, the one
    #: declaration read); None when it has no ``info()``: each operation is
    #: tried and ``WriteNotSupported`` says which it lacks.
    operations: frozenset[str] | None


def _writer(name: str, driver: Any) -> _Writer:
    if not callable(getattr(driver, "write", None)):
        raise WriterCheckError(f"driver {name!r} does not write (it has no write())")
    try:
        info = driver_info(driver, name)
    except DriverInfoError as exc:
        raise WriterCheckError(str(exc)) from None
    if callable(getattr(driver, "info", None)):
        if Capability.WRITE not in info.capabilities:
            raise WriterCheckError(f"driver {name!r} does not declare the {Capability.WRITE.value} capability")
        return _Writer(driver, info, frozenset(info.write_operations))
    return _Writer(driver, info, None)


@dataclasses.dataclass
class _Run:
    """One step's table and what is known of it."""

    uri: str
    writer: _Writer
    readers: dict[str, Driver]
    reader_infos: dict[str, DriverInfo]
    context: ScriptContext
    #: Expected content by version.
    contents: dict[int, pa.Table] = dataclasses.field(default_factory=dict)
    current: pa.Table | None = None
    #: Every version committed on the table (the preparation's and the step's).
    committed: list[int] = dataclasses.field(default_factory=list)
    #: Dataset-wide validator findings already reported (each fails one step).
    dataset_findings: set[str] = dataclasses.field(default_factory=set)


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
    ``writer`` in the report) through ``steps``, each on a table of its own in
    ``scratch`` (a new temporary directory, removed afterwards, by default),
    and check every version it commits with the validator and ``readers``
    (the installed readers by default)."""
    if driver is None:
        driver = load_driver(writer)
    under_test = _writer(writer, driver)
    reader_names = list(readers) if readers is not None else installed_readers()
    reader_drivers: dict[str, Driver] = {}
    owned = scratch is None
    root = Path(tempfile.mkdtemp(prefix="writer-check-")) if scratch is None else Path(scratch)
    by_id = {step.id: step for step in steps}
    results = []
    history: list[str] = []
    try:
        for name in reader_names:
            reader_drivers[name] = driver if name == writer else load_driver(name)
        infos = {name: driver_info(reader, name) for name, reader in reader_drivers.items()}
        for step in steps:
            run = _Run(
                str(root / f"{step.id}.lance"), under_test, reader_drivers, infos, ScriptContext(data_storage_version)
            )
            result = _step(run, step, by_id)
            if result.status in (StepStatus.PASS, StepStatus.FAIL):
                history += [f"{step.id}: {problem}" for problem in _history_problems(run)]
            results.append(_expected(result, expectations))
    finally:
        for reader in reader_drivers.values():
            if reader is not driver:
                close_driver(reader)
        if owned:
            shutil.rmtree(root, ignore_errors=True)
    return WriterReport(
        driver=under_test.info.to_json(),
        readers=tuple(reader_names),
        data_storage_version=data_storage_version,
        steps=tuple(results),
        history_problems=tuple(history),
        expectations=expectations_label,
        notes=(
            f"tables are created with data storage version {data_storage_version or 'the writer default'} "
            "so that every reader compares rows",
            "each step runs on a table of its own, the steps it needs performed first by the reference driver",
        ),
    )


def _result(step: Step, status: StepStatus, **fields: Any) -> StepResult:
    return StepResult(
        id=step.id,
        kind=step.kind.value,
        description=step.description,
        status=status,
        requirements=step.requirements,
        **fields,
    )


def _prepare(run: _Run, step: Step, by_id: dict[str, Step]) -> StepResult | None:
    """Perform the steps ``step`` needs (:func:`.script.preparation`) on its
    table through the reference driver, recording what each leaves; the skipped result naming the first
    it cannot prepare, or None when the table is ready."""
    for need in preparation(step, by_id):
        prerequisite = by_id.get(need)
        try:
            if prerequisite is None:
                raise WriteOpError(f"the script has no step {need!r}")
            op = prerequisite.make(run.context)
            before = _listed(run.uri)
            said = write_result(reference_driver.write(run.uri, op))
            run.current = model.apply(run.current, op, run.contents)
        except Exception as exc:  # the reference cannot prepare it (WriteNotSupported, a script fault)
            return _result(
                step,
                StepStatus.SKIPPED,
                reason=f"needs step {need}",
                notes=(f"the reference driver could not prepare step {need}: {failure_text(exc)}",),
            )
        appeared = [version for version in _listed(run.uri) if version not in before]
        for number in appeared:
            run.contents[number] = run.current
        run.committed += appeared
        made = max(appeared) if appeared else said.version
        if made is not None:
            run.context.versions[need] = made
    return None


def _step(run: _Run, step: Step, by_id: dict[str, Step]) -> StepResult:
    declared = run.writer.operations
    if declared is not None and step.kind.value not in declared:
        return _result(step, StepStatus.NOT_APPLICABLE, reason=f"the driver does not perform {step.kind.value}")
    skipped = _prepare(run, step, by_id)
    if skipped is not None:
        return skipped
    op = step.make(run.context)
    before = _listed(run.uri)
    try:
        returned = run.writer.driver.write(run.uri, op)
    except WriteNotSupported as exc:
        return _result(step, StepStatus.NOT_APPLICABLE, reason=f"the driver does not perform it: {exc}")
    except BaseException as exc:  # WriteConflict, the implementation's own errors, a Rust panic
        if not is_implementation_failure(exc):
            raise
        appeared = [version for version in _listed(run.uri) if version not in before]
        run.committed += appeared
        problems = [f"the write raised {failure_text(exc)}"]
        if appeared:
            problems.append(f"yet versions {appeared} appeared")
        return _result(step, StepStatus.FAIL, versions=tuple(appeared), problems=tuple(problems))
    appeared = [version for version in _listed(run.uri) if version not in before]
    said = _said(returned)
    problems = _version_problems(op, returned, said, appeared, before)
    returned_version = None if said is None else said.version
    result: pa.Table | None
    try:
        result = model.apply(run.current, op, run.contents)
    except model.ModelError as exc:  # a fault of the script: what the step should leave is unknown
        problems.append(f"the rows this step should leave cannot be known: {exc}")
        result = None
    # The newest version that appeared holds the operation's result, whatever
    # the driver returned (a wrong number is a problem of its own, above).
    final = max(appeared) if appeared else returned_version
    if final is not None:
        run.context.versions[step.id] = final
    checks: list[Check] = []
    for version in appeared:
        expected = result if version == final else run.current
        if expected is not None:
            run.contents[version] = expected
        checks += _version_checks(run, version, expected, step if version == final else None)
    if op.kind in NON_COMMITTING:
        checks += _facts(run, step, returned_version)
    run.committed += appeared
    step_failed = bool(problems) or any(check.status is CheckStatus.FAIL for check in checks)
    return _result(
        step,
        StepStatus.FAIL if step_failed else StepStatus.PASS,
        returned_version=returned_version,
        versions=tuple(appeared),
        problems=tuple(problems),
        checks=tuple(checks),
    )


def _listed(uri: str) -> list[int]:
    try:
        return reference_driver.versions(uri)
    except Exception:  # no dataset yet, or none the reference can list: nothing listed
        return []


def _said(returned: object) -> WriteResult | None:
    """What ``write`` returned, as a result; None when it is neither a version
    number nor a :class:`~conformance.drivers.writes.WriteResult`."""
    try:
        return write_result(returned)
    except WriteOpError:
        return None


def _version_problems(
    op: WriteOp, returned: object, said: WriteResult | None, appeared: list[int], before: list[int]
) -> list[str]:
    if said is None:
        return [f"write returned {returned!r}, not the version it committed"]
    if said.version is None:  # the driver does not say (a WriteResult without versions): nothing to compare
        return [f"a {op.kind.value} committed versions {appeared}"] if op.kind in NON_COMMITTING and appeared else []
    if op.kind in NON_COMMITTING:
        problems = [f"a {op.kind.value} committed versions {appeared}"] if appeared else []
        if said.version not in before:
            problems.append(f"it returned version {said.version}, which is not a committed version")
        return problems
    if not appeared:
        return [f"it returned version {said.version} but committed no new version"]
    if list(said.versions) != appeared[-len(said.versions) :] or said.version != max(appeared):
        return [f"it returned versions {list(said.versions)}, but the versions that appeared are {appeared}"]
    return []


def _version_checks(run: _Run, version: int, expected: pa.Table | None, step: Step | None) -> list[Check]:
    checks = [validator_check(run.uri, version, run.dataset_findings)]
    ours, described = reference_description(run.uri, version)
    checks.append(described)
    latest = max(_listed(run.uri), default=version)
    for name, reader in run.readers.items():
        info = run.reader_infos[name]
        asked = None if version == latest and Capability.TIME_TRAVEL not in info.capabilities else version
        if version != latest and Capability.TIME_TRAVEL not in info.capabilities:
            # Checked right after the step, its result is the latest version;
            # a version committed on the way (ReserveFragments) is not.
            note = f"{name} lacks {Capability.TIME_TRAVEL.value}: it reads only the latest version"
            checks.append(Check(version, f"rows:{name}", CheckStatus.NOT_APPLICABLE, notes=(note,)))
            continue
        newer = _newer_data_files(ours) if name == "reference" else None
        if expected is None:
            note = "the rows it should hold are not known (see the step's problems)"
            checks.append(Check(version, f"rows:{name}", CheckStatus.NOT_APPLICABLE, notes=(note,)))
        elif newer:
            newest = _version_name(_REFERENCE_FILE_VERSION)
            note = f"the reference reads data files up to version {newest}; this version has {newer}"
            checks.append(Check(version, f"rows:{name}", CheckStatus.NOT_APPLICABLE, notes=(note,)))
        else:
            checks.append(rows_check(name, reader, run.uri, asked, expected, reported_as=version))
        if name == "reference":
            continue
        if Capability.DESCRIBE not in info.capabilities:
            note = f"{name} lacks {Capability.DESCRIBE.value}"
            checks.append(Check(version, f"describe:{name}", CheckStatus.NOT_APPLICABLE, notes=(note,)))
        else:
            checks.append(describe_check(name, reader, run.uri, asked, ours, info.unreported, reported_as=version))
    if step is not None and step.checks and ours is not None:
        checks.append(facts_check(version, [problem for check in step.checks for problem in check(ours, run.context)]))
    return checks


#: The newest data file version the reference's file reader decodes.
_REFERENCE_FILE_VERSION = NEWEST_VERSION


def _version_name(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _newer_data_files(ours: Description | None) -> str | None:
    """The data file versions of a description newer than the reference's
    file reader decodes (their rows are compared by the other readers until
    the reference reads them), or None."""
    if ours is None:
        return None
    newer = sorted(
        {
            (data_file["file_major_version"], data_file["file_minor_version"])
            for fragment in ours["fragments"]
            for data_file in fragment["files"]
            if (data_file["file_major_version"], data_file["file_minor_version"]) > _REFERENCE_FILE_VERSION
        }
    )
    return ", ".join(f"{major}.{minor}" for major, minor in newer) or None


def _facts(run: _Run, step: Step, version: int | None) -> list[Check]:
    # An operation that commits nothing (a tag) is checked on the latest
    # version's description, where its effect shows.
    latest = max(run.committed) if run.committed else version
    if latest is None:  # nothing committed and no version returned: reported as a problem already
        return []
    ours, described = reference_description(run.uri, latest)
    if ours is None:
        return [described]
    return [facts_check(latest, [problem for check in step.checks for problem in check(ours, run.context)])]


def _history_problems(run: _Run) -> list[str]:
    problems = []
    expected = _listed(run.uri)
    if sorted(run.committed) != expected:
        problems.append(f"the versions listed are {expected}; the steps committed {sorted(run.committed)}")
    listing = {
        name: reader
        for name, reader in run.readers.items()
        if Capability.LIST_VERSIONS in run.reader_infos[name].capabilities
    }
    return problems + versions_check(run.uri, listing, expected)


def _expected(result: StepResult, expectations: ExpectationSource | None) -> StepResult:
    """The result as the implementation's expectations see it."""
    if expectations is None:
        return result
    entry = expectations.lookup(SUITE, result.id)
    if entry is None:
        return result
    to_json = getattr(entry, "to_json", None)
    document = to_json() if callable(to_json) else {"reason": str(entry)}
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
