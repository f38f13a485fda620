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
from ..drivers import Driver, is_implementation_failure
from ..drivers import reference as reference_driver
from ..validator import Severity, validate

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


def validator_check(uri: str, version: int) -> Check:
    """The validator on one version: errors fail, warnings are notes."""
    try:
        report = validate(uri, version=version)
    except Exception as exc:  # the validator reports bad datasets as findings; anything else is a bug to show
        return Check.of(version, "validator", [f"the validator failed: {failure_text(exc)}"])
    problems = [
        f"{finding.rule}: {finding.message}" for finding in report.findings if finding.severity is Severity.ERROR
    ]
    notes = [
        f"warning {finding.rule}: {finding.message}"
        for finding in report.findings
        if finding.severity is Severity.WARNING
    ]
    return Check.of(version, "validator", problems, notes)


# -- rows ----------------------------------------------------------------------------------


def _canonical(table: pa.Table) -> pa.Table:
    """The table without system columns, its rows sorted by every column."""
    table = table.drop_columns([name for name in _SYSTEM_COLUMNS if name in table.column_names])
    if table.num_columns == 0 or table.num_rows == 0:
        return table
    return table.sort_by([(name, "ascending") for name in table.column_names])


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


def rows_check(reader_name: str, reader: Driver, uri: str, version: int, expected: pa.Table) -> Check:
    """The rows ``reader`` reads at ``version`` against the expected content."""
    check = f"rows:{reader_name}"
    try:
        actual = reader.read_table(uri, version)
    except BaseException as exc:
        if not is_implementation_failure(exc):
            raise
        return Check.of(version, check, [f"{reader_name} cannot read the rows: {failure_text(exc)}"])
    try:
        problems, notes = compare_content(expected, actual)
    except (pa.ArrowException, ValueError, TypeError) as exc:  # rows a sort or comparison cannot take
        return Check.of(version, check, [f"the rows {reader_name} read cannot be compared: {failure_text(exc)}"])
    return Check.of(version, check, problems, notes)


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
    reader_name: str, reader: Driver, uri: str, version: int, ours: Description | None, unreported: frozenset[str]
) -> Check:
    """``reader``'s description of ``version`` against the reference reader's."""
    check = f"describe:{reader_name}"
    if ours is None:
        return Check(version, check, CheckStatus.NOT_APPLICABLE, notes=("the reference could not describe it",))
    try:
        theirs = reader.describe(uri, version)
    except BaseException as exc:
        if not is_implementation_failure(exc):
            raise
        return Check.of(version, check, [f"{reader_name} cannot describe it: {failure_text(exc)}"])
    found = differences(ours, theirs, ignore=unreported)
    return Check.of(version, check, [f"{reader_name} differs from reference: {line}" for line in found])


def facts_check(version: int, problems: Sequence[str]) -> Check:
    return Check.of(version, "facts", problems)


def statuses(checks: Sequence[Check]) -> Mapping[str, int]:
    counts: dict[str, int] = {}
    for check in checks:
        counts[check.status.value] = counts.get(check.status.value, 0) + 1
    return counts
