"""Expectations: an implementation's own record of the checks it is known to fail.

An implementation keeps its known failures in a file of its own (JSON Schema
``conformance/schemas/expectations.schema.json``) handed to the run
(``fixtures verify --expectations FILE``, ``pytest --lance-expectations
FILE``); the golden corpus keeps only facts about the cases. The files for
the implementations shipped here are in ``conformance/data/expectations``,
one per implementation, named after it (``pylance.json``); the reference's
is empty.

Each entry names the suite and the case in it, the requirement the
implementation breaks and why, and when the failure is a bug of the
implementation (:attr:`ExpectationKind.BUG`) a reproducer: a short
description of how to trigger it. An entry may concern only some releases
(:attr:`Expectation.releases`, a version specifier set such as ``<0.17`` or
``>=0.11,<0.16``, read by ``packaging.specifiers``); :func:`shipped_expectations`
keeps the entries that hold for the release under test.

An entry of the readers suite may name one column (:attr:`Expectation.column`)
or one Arrow type (:attr:`Expectation.arrow_type`, every column holding it)
instead of the whole case: only those columns' differences are expected, and
every other column of the case is still compared. With a type, the case may
be ``*``: every golden case (:class:`ColumnExpectations` applies them).

A check listed here that fails is an *expected failure*; one that passes is
*fixed* and fails the run (like a strict xfail), so the file stays true.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import jsonschema
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .requirements import load_requirements

#: The version of the expectations file format (its ``format`` field).
EXPECTATIONS_FORMAT = 1
#: The suites an expectation can concern (``pytest --lance-suite``).
SUITES = ("readers", "writers", "conflicts", "properties", "queries")
SCHEMA_NAME = "expectations.schema.json"
#: Driver names that run another driver's implementation in a worker process
#: (``worker:pylance``) share that implementation's expectations.
WORKER_PREFIX = "worker:"
RELEASE_SEPARATOR = "@"
#: Implementations whose installed version is that of a Python distribution,
#: looked up when the driver name carries no release.
DISTRIBUTIONS = {"pylance": "pylance", "lancedb": "lancedb"}

#: What a shipped file's name (the implementation) may be: nothing that
#: could lead out of the directory (``cmd:...`` drivers name command lines).
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
#: ``case`` of an entry naming a column or a type: every case of the suite.
EVERY_CASE = "*"
_NUMERIC_PREFIX = re.compile(r"^\d+(?:\.\d+)*")


class ExpectationsError(Exception):
    """An expectations file that cannot be used; the message names the file and the problem."""


class ExpectationKind(str, Enum):
    """Why the implementation fails the check."""

    #: The implementation is wrong; the entry carries a reproducer.
    BUG = "bug"
    #: The implementation lacks the feature the case uses (it predates it).
    UNSUPPORTED = "unsupported"
    #: The implementation follows another reading of the specification
    #: (recorded in ``docs/spec-discrepancies.md``).
    SPEC_DIFFERENCE = "spec-difference"


@dataclass(frozen=True)
class Expectation:
    """One check an implementation is known to fail."""

    #: One of :data:`SUITES`.
    suite: str
    #: The case within the suite: a golden case's name, a writer step's id, a
    #: conflict matrix cell's id, a property test's name.
    case: str
    #: The requirement id (``conformance/data/requirements.json``) it breaks.
    requirement: str
    reason: str
    #: A link to the implementation's issue tracker, when there is an issue.
    issue: str | None = None
    #: How to trigger it; required for :attr:`ExpectationKind.BUG`.
    reproducer: str | None = None
    kind: ExpectationKind = ExpectationKind.BUG
    #: The releases it concerns, a version range (:func:`release_in_range`);
    #: None: every release.
    releases: str | None = None
    #: Only this top-level column of the case's rows (readers suite).
    column: str | None = None
    #: Only the columns holding this Arrow type at any depth (readers suite),
    #: an :class:`conformance.type_capabilities.ArrowType` value.
    arrow_type: str | None = None

    @property
    def per_column(self) -> bool:
        """Whether it concerns some columns of the case rather than the whole case."""
        return self.column is not None or self.arrow_type is not None

    def covers(self, column: str, types: frozenset[str]) -> bool:
        """Whether a column named ``column`` holding ``types`` is one it concerns."""
        if self.column is not None:
            return column == self.column
        return self.arrow_type in types

    def concerns(self, version: str | None) -> bool:
        """Whether the entry holds for ``version`` of the implementation (an
        entry limited to some releases holds for none when the version is unknown)."""
        if self.releases is None:
            return True
        return version is not None and release_in_range(version, self.releases)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "suite": self.suite,
            "case": self.case,
            "requirement": self.requirement,
            "kind": self.kind.value,
            "reason": self.reason,
        }
        optional = {
            "releases": self.releases,
            "reproducer": self.reproducer,
            "issue": self.issue,
            "column": self.column,
            "type": self.arrow_type,
        }
        document.update({key: value for key, value in optional.items() if value is not None})
        return document

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Expectation:
        """An entry already checked against the JSON Schema."""
        return cls(
            suite=document["suite"],
            case=document["case"],
            requirement=document["requirement"],
            reason=document["reason"],
            issue=document.get("issue"),
            reproducer=document.get("reproducer"),
            kind=ExpectationKind(document.get("kind", ExpectationKind.BUG.value)),
            releases=document.get("releases"),
            column=document.get("column"),
            arrow_type=document.get("type"),
        )


@dataclass(frozen=True)
class Expectations:
    """The known failures of one implementation."""

    implementation: str
    entries: tuple[Expectation, ...] = ()

    def lookup(self, suite: str, case: str) -> Expectation | None:
        """The first entry for the whole of ``case`` of ``suite``, or None
        (entries naming a column or a type are :meth:`per_column`'s)."""
        return next((e for e in self.entries if e.suite == suite and e.case == case and not e.per_column), None)

    def per_column(self, suite: str, case: str) -> ColumnExpectations:
        """The entries naming a column or a type of ``case`` of ``suite`` (or of every case)."""
        return ColumnExpectations(
            tuple(e for e in self.entries if e.suite == suite and e.case in (case, EVERY_CASE) and e.per_column)
        )

    def for_release(self, version: str | None) -> Expectations:
        """The entries that hold for ``version`` of the implementation."""
        return replace(self, entries=tuple(e for e in self.entries if e.concerns(version)))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": EXPECTATIONS_FORMAT,
            "implementation": self.implementation,
            "expectations": [entry.to_json() for entry in self.entries],
        }


@dataclass
class ColumnExpectations:
    """The entries naming a column or a type for one case, and what they met.

    :meth:`excuse` takes the differences of a comparison by column
    (``TableComparison.column_differences``) and keeps those no entry covers;
    the others are expected. An entry that covers a column of the case whose
    rows were compared, and met no difference in it, is *fixed*
    (:meth:`stale`)."""

    entries: tuple[Expectation, ...] = ()
    #: Expected differences, each with the entry that covers it.
    expected: list[tuple[Expectation, str]] = field(default_factory=list)
    _relevant: set[Expectation] = field(default_factory=set)
    _met: set[Expectation] = field(default_factory=set)

    def excuse(
        self, column_types: Mapping[str, frozenset[str]], differences: Mapping[str, tuple[str, ...]]
    ) -> list[str]:
        """The differences (of columns whose expected types are ``column_types``)
        that no entry covers; the covered ones are recorded as expected."""
        unexpected: list[str] = []
        for column, types in column_types.items():
            entry = next((e for e in self.entries if e.covers(column, types)), None)
            if entry is None:
                unexpected += differences.get(column, ())
                continue
            self._relevant.add(entry)
            if differences.get(column):
                self._met.add(entry)
                self.expected += [(entry, message) for message in differences[column]]
        unexpected += [m for column, found in differences.items() if column not in column_types for m in found]
        return unexpected

    def stale(self) -> list[Expectation]:
        """Entries that concerned a compared column and met no difference there."""
        return [entry for entry in self.entries if entry in self._relevant and entry not in self._met]


def version_key(version: str) -> tuple[int, ...]:
    """The leading dotted numbers of a version, compared as numbers, missing
    parts as 0 (``0.17 == 0.17.0``; ``1.0.0-beta.2`` counts as ``1.0.0``)."""
    prefix = _NUMERIC_PREFIX.match(version.strip())
    parts = [int(part) for part in prefix.group(0).split(".")] if prefix else []
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def range_problem(releases: str) -> str | None:
    """What is wrong with a version range, or None: a PEP 440 version
    specifier set (comma-separated bounds that must all hold: ``<0.17``,
    ``>=0.11,<0.16``, ``==0.20.*``, ``~=0.20``)."""
    try:
        SpecifierSet(releases)
    except InvalidSpecifier:
        return f"release range {releases!r} is not a version specifier set like '<0.17' or '>=0.11,<0.16'"
    return None


def release_in_range(version: str, releases: str) -> bool:
    """Whether ``version`` satisfies every bound of ``releases`` (see
    :func:`range_problem`). Pre-releases count (``1.0.0-beta.2`` is
    ``1.0.0b2``, below ``1.0.0``); a version PEP 440 cannot read is taken by
    its leading dotted numbers, and one without any is in no range."""
    problem = range_problem(releases)
    if problem is not None:
        raise ValueError(problem)
    try:
        parsed = Version(version)
    except InvalidVersion:
        prefix = _NUMERIC_PREFIX.match(version.strip())
        if prefix is None:
            return False
        parsed = Version(prefix.group(0))
    return SpecifierSet(releases).contains(parsed, prereleases=True)


def _schema_validator() -> jsonschema.Draft202012Validator:
    # Not describe.schema_validator: the catalogs sit below describe in the layers.
    schema = json.loads(resources.files("conformance").joinpath("schemas").joinpath(SCHEMA_NAME).read_text())
    return jsonschema.Draft202012Validator(schema)


def expectations_problems(document: Any) -> list[str]:
    """What is wrong with an expectations document: the JSON Schema first,
    then release ranges and requirement ids."""
    errors = sorted(_schema_validator().iter_errors(document), key=str)
    if errors:
        return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]

    known = set(load_requirements())
    problems = []
    for index, entry in enumerate(document["expectations"]):
        where = f"expectations/{index} ({entry['suite']} {entry['case']})"
        if entry["requirement"] not in known:
            problems.append(f"{where}: unknown requirement id {entry['requirement']!r}")
        if "releases" in entry and (problem := range_problem(entry["releases"])) is not None:
            problems.append(f"{where}: {problem}")
        naming = [key for key in ("column", "type") if key in entry]
        if len(naming) > 1:
            problems.append(f"{where}: names both a column and a type; name one")
        if naming and entry["suite"] != "readers":
            problems.append(f"{where}: a {naming[0]} can be named only in the readers suite (rows compared by column)")
        if entry["case"] == EVERY_CASE and "type" not in entry:
            problems.append(f"{where}: case {EVERY_CASE!r} (every case) needs a 'type'")
    return problems


def parse_expectations(document: Any, *, source: str = "expectations") -> Expectations:
    """An expectations document already read from JSON; raises
    :class:`ExpectationsError` naming ``source`` and every problem."""
    problems = expectations_problems(document)
    if problems:
        raise ExpectationsError(f"{source}: " + "; ".join(problems))
    return Expectations(
        implementation=document["implementation"],
        entries=tuple(Expectation.from_json(entry) for entry in document["expectations"]),
    )


def load_expectations(path: str | Path) -> Expectations:
    """The expectations file at ``path``; raises :class:`ExpectationsError`
    naming the file when it cannot be read or does not fit the schema."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectationsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ExpectationsError(f"{path}: not JSON: {exc}") from None
    return parse_expectations(document, source=str(path))


def shipped_path(implementation: str) -> Path:
    """Where the shipped expectations of ``implementation`` live (the file may not exist)."""
    return (
        Path(str(resources.files("conformance").joinpath("data").joinpath("expectations"))) / f"{implementation}.json"
    )


def implementation_and_release(driver_name: str) -> tuple[str, str | None]:
    """The implementation a driver name runs and the release it names:
    ``pylance@0.20.0`` -> (``pylance``, ``0.20.0``), ``worker:reference`` ->
    (``reference``, None)."""
    name = driver_name.removeprefix(WORKER_PREFIX)
    implementation, _, release = name.partition(RELEASE_SEPARATOR)
    return implementation, release or None


def installed_version(implementation: str) -> str | None:
    """The installed version of an implementation that is a Python distribution here."""
    distribution = DISTRIBUTIONS.get(implementation)
    if distribution is None:
        return None
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def shipped_expectations(driver_name: str, version: str | None = None) -> Expectations:
    """The shipped expectations for a driver, narrowed to the release under
    test: ``version`` when given (a driver's ``DriverInfo.version``), else the
    release the name carries (``pylance@0.20.0``), else the installed
    distribution's version. Empty when nothing is shipped for it."""
    implementation, release = implementation_and_release(driver_name)
    if _FILE_NAME.match(implementation) is None or ".." in implementation:
        return Expectations(implementation, ())
    path = shipped_path(implementation)
    if not path.is_file():
        return Expectations(implementation, ())
    return load_expectations(path).for_release(version or release or installed_version(implementation))
