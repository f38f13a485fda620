"""The checks of one committed version: the validator, each reader's rows, and
each reader's description against the reference reader's.

Every check is a :class:`Check` (pass, fail or not-applicable, with its
problems and non-failing notes); nothing here raises on a bad dataset or a
reader that fails: what went wrong becomes the check's problem, so one broken
version never stops the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import pyarrow as pa

from ..comparison import compare_tables
from ..describe import Description, differences, validate_description
from ..drivers import Driver, is_implementation_failure, read_rows
from ..drivers import reference as reference_driver
from ..drivers.protocol import driver_info
from ..validator import Finding, Severity, validate

#: The columns readers add on request; a version's content never includes them.
_SYSTEM_COLUMNS = ("_rowid", "_rowaddr")


class CheckStatus(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Check:
    """One check of one version: ``check`` is ``validator``, ``rows:<reader>``,
    ``describe:<reader>`` or ``facts``."""

    version: int
    check: str
    status: CheckStatus
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @classmethod
    def of(cls, version: int, check: str, problems: Sequence[str], notes: Sequence[str] = ()) -> Check:
        status = CheckStatus.FAIL if problems else CheckStatus.PASS
        return cls(version, check, status, tuple(problems), tuple(notes))

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "check": self.check,
            "status": self.status.value,
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def failure_text(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    lines = str(exc).splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def validator_check(uri: str, version: int, seen: set[str] | None = None) -> Check:
    """The validator on one version: errors fail, warnings are notes. A
    dataset-wide finding (no version) already in ``seen`` is not reported
    again, so a problem fails the step that brought it, once; ``seen``
    collects the new ones."""
    try:
        report = validate(uri, version=version)
    except Exception as exc:  # the validator reports bad datasets as findings; anything else is a bug to show
        return Check.of(version, "validator", [f"the validator failed: {failure_text(exc)}"])
    findings = []
    for finding in report.findings:
        if finding.version is None and seen is not None:
            key = f"{finding.rule}: {finding.message}"
            if key in seen:
                continue
            seen.add(key)
        findings.append(finding)
    return _validator_check(version, findings)


def _validator_check(version: int, findings: Sequence[Finding]) -> Check:
    problems = [f"{finding.rule}: {finding.message}" for finding in findings if finding.severity is Severity.ERROR]
    notes = [
        f"warning {finding.rule}: {finding.message}" for finding in findings if finding.severity is Severity.WARNING
    ]
    return Check.of(version, "validator", problems, notes)


def validator_checks(uri: str, versions: Sequence[int]) -> list[Check]:
    """The validator over the whole history at once (cheaper than one call a
    version), its findings split by version; dataset-wide findings are
    reported with the last version."""
    try:
        report = validate(uri, all_versions=True)
    except Exception as exc:  # as in validator_check
        return [Check.of(versions[-1], "validator", [f"the validator failed: {failure_text(exc)}"])] if versions else []
    by_version: dict[int, list[Finding]] = {version: [] for version in versions}
    for finding in report.findings:
        version = finding.version if finding.version is not None else (versions[-1] if versions else None)
        if version in by_version:
            by_version[version].append(finding)
    return [_validator_check(version, findings) for version, findings in by_version.items()]


# -- rows ----------------------------------------------------------------------------------


def _canonical(table: pa.Table) -> pa.Table:
    """The table without system columns, its rows in a canonical order:
    sorted by every column when Arrow can sort them all, else by the text of
    each row's values (nested columns: lists, structs, maps)."""
    table = table.drop_columns([name for name in _SYSTEM_COLUMNS if name in table.column_names])
    if table.num_columns == 0 or table.num_rows == 0:
        return table
    try:
        return table.sort_by([(name, "ascending") for name in table.column_names])
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
        rows = table.to_pylist()
        order = sorted(range(len(rows)), key=lambda index: [repr(value) for value in rows[index].values()])
        return table.take(pa.array(order, pa.int64()))


def compare_content(expected: pa.Table, actual: pa.Table) -> tuple[list[str], list[str]]:
    """How ``actual`` differs from ``expected`` as a version's content, by
    meaning (:func:`conformance.comparison.compare_tables`): the rows as a
    multiset (order is not part of a version's content; both sides are
    sorted first), the columns in order. Returns the value differences (they
    fail) and the representation observations (notes)."""
    expected, actual = _canonical(expected), _canonical(actual)
    if expected.num_rows != actual.num_rows:
        return [f"expected {expected.num_rows} rows, got {actual.num_rows}"], []
    comparison = compare_tables(expected, actual)
    return list(comparison.differences), [f"observed {observation}" for observation in comparison.observations]


def rows_check(
    reader_name: str,
    reader: Driver,
    uri: str,
    version: int | None,
    expected: pa.Table,
    *,
    reported_as: int | None = None,
) -> Check:
    """The rows ``reader`` reads at ``version`` (None: the latest, for a reader
    without time travel; the check then names ``reported_as``) against the
    expected content."""
    check = f"rows:{reader_name}"
    number = reported_as if reported_as is not None else version
    assert number is not None, "name the version a latest-version read stands for"
    try:
        actual = read_rows(reader, uri, version, schema=expected.schema)
    except BaseException as exc:
        if not is_implementation_failure(exc):
            raise
        return Check.of(number, check, [f"{reader_name} cannot read the rows: {failure_text(exc)}"])
    try:
        problems, notes = compare_content(expected, actual)
    except (pa.ArrowException, ValueError, TypeError) as exc:  # rows a sort or comparison cannot take
        return Check.of(number, check, [f"the rows {reader_name} read cannot be compared: {failure_text(exc)}"])
    return Check.of(number, check, problems, notes)


# -- descriptions ------------------------------------------------------------------------------


def reference_description(uri: str, version: int) -> tuple[Description | None, Check]:
    """The reference reader's description of ``version`` and the check that it
    could be made and fits the describe schema."""
    try:
        document = reference_driver.describe(uri, version)
        validate_description(document)
    except Exception as exc:
        return None, Check.of(version, "describe:reference", [f"reference cannot describe it: {failure_text(exc)}"])
    return document, Check.of(version, "describe:reference", [])


def describe_check(
    reader_name: str,
    reader: Driver,
    uri: str,
    version: int | None,
    ours: Description | None,
    unreported: frozenset[str],
    *,
    reported_as: int | None = None,
) -> Check:
    """``reader``'s description of ``version`` (None: the latest, named
    ``reported_as``) against the reference reader's."""
    check = f"describe:{reader_name}"
    number = reported_as if reported_as is not None else version
    assert number is not None, "name the version a latest-version read stands for"
    if ours is None:
        return Check(number, check, CheckStatus.NOT_APPLICABLE, notes=("the reference could not describe it",))
    try:
        theirs = reader.describe(uri, version)
    except BaseException as exc:
        if not is_implementation_failure(exc):
            raise
        return Check.of(number, check, [f"{reader_name} cannot describe it: {failure_text(exc)}"])
    found = differences(ours, theirs, ignore=unreported)
    return Check.of(number, check, [f"{reader_name} differs from reference: {line}" for line in found])


def facts_check(version: int, problems: Sequence[str]) -> Check:
    return Check.of(version, "facts", problems)


def statuses(checks: Sequence[Check]) -> Mapping[str, int]:
    counts: dict[str, int] = {}
    for check in checks:
        counts[check.status.value] = counts.get(check.status.value, 0) + 1
    return counts


def versions_check(uri: str, readers: Mapping[str, Driver], expected: Sequence[int]) -> list[str]:
    """Problems with the versions each reader lists (they must be ``expected``)."""
    problems = []
    for name, reader in readers.items():
        try:
            listed = list(reader.versions(uri))
        except BaseException as exc:
            if not is_implementation_failure(exc):
                raise
            problems.append(f"{name} cannot list the versions: {failure_text(exc)}")
            continue
        if listed != list(expected):
            problems.append(f"{name} lists versions {listed}, not {list(expected)}")
    return problems


def agreement_checks(
    uri: str, readers: Mapping[str, Driver], versions: Sequence[int] | None = None, *, compare_rows: bool = True
) -> list[Check]:
    """The checks of a dataset written by anyone, without a script: every
    version (or ``versions``) through the validator, described by the
    reference reader, and read and described by each of ``readers`` the same
    way (rows compared by meaning with the reference reader's; not when
    ``compare_rows`` is False, for a caller that compares them more strictly
    itself). What a test of a writer runs on the datasets it wrote."""
    selected = list(versions) if versions is not None else reference_driver.versions(uri)
    checks = validator_checks(uri, selected)
    for version in selected:
        ours, described = reference_description(uri, version)
        checks.append(described)
        expected = None
        try:
            if compare_rows:
                expected = reference_driver.read_table(uri, version)
        except Exception as exc:
            checks.append(Check.of(version, "rows:reference", [f"reference cannot read it: {failure_text(exc)}"]))
        for name, reader in readers.items():
            if name == "reference":
                continue
            if expected is not None:
                checks.append(rows_check(name, reader, uri, version, expected))
            checks.append(describe_check(name, reader, uri, version, ours, driver_info(reader, name).unreported))
    return checks
