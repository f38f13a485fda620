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
(:attr:`Expectation.releases`, a version range such as ``<0.17`` or
``>=0.11,<0.16``); :func:`shipped_expectations` keeps the entries that hold
for the release under test.

A check listed here that fails is an *expected failure*; one that passes is
*fixed* and fails the run (like a strict xfail), so the file stays true.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from enum import Enum
from importlib import metadata, resources
from pathlib import Path
from typing import Any

#: The version of the expectations file format (its ``format`` field).
EXPECTATIONS_FORMAT = 1
#: The suites an expectation can concern (``pytest --lance-suite``).
SUITES = ("readers", "writers", "conflicts", "properties")
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
_BOUND = re.compile(r"^(?P<op><=|>=|<|>|==)(?P<version>\d+(?:\.\d+)*)$")
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
        optional = {"releases": self.releases, "reproducer": self.reproducer, "issue": self.issue}
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
        )


@dataclass(frozen=True)
class Expectations:
    """The known failures of one implementation."""

    implementation: str
    entries: tuple[Expectation, ...] = ()

    def lookup(self, suite: str, case: str) -> Expectation | None:
        """The first entry for ``case`` of ``suite``, or None."""
        return next((e for e in self.entries if e.suite == suite and e.case == case), None)

    def for_release(self, version: str | None) -> Expectations:
        """The entries that hold for ``version`` of the implementation."""
        return replace(self, entries=tuple(e for e in self.entries if e.concerns(version)))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": EXPECTATIONS_FORMAT,
            "implementation": self.implementation,
            "expectations": [entry.to_json() for entry in self.entries],
        }


def version_key(version: str) -> tuple[int, ...]:
    """The leading dotted numbers of a version, compared as numbers, missing
    parts as 0 (``0.17 == 0.17.0``; ``1.0.0-beta.2`` counts as ``1.0.0``)."""
    prefix = _NUMERIC_PREFIX.match(version.strip())
    parts = [int(part) for part in prefix.group(0).split(".")] if prefix else []
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def range_problem(releases: str) -> str | None:
    """What is wrong with a version range, or None: comma-separated bounds,
    each ``<``, ``<=``, ``>``, ``>=`` or ``==`` and a dotted version; every
    bound must hold."""
    bounds = releases.split(",")
    bad = [bound for bound in bounds if _BOUND.match(bound.strip()) is None]
    if bad:
        return f"release range {releases!r}: {bad[0].strip()!r} is not a bound like '<0.17' or '>=0.11'"
    return None


def release_in_range(version: str, releases: str) -> bool:
    """Whether ``version`` satisfies every bound of ``releases`` (see :func:`range_problem`)."""
    problem = range_problem(releases)
    if problem is not None:
        raise ValueError(problem)
    here = version_key(version)
    compare = {
        "<": lambda limit: here < limit,
        "<=": lambda limit: here <= limit,
        ">": lambda limit: here > limit,
        ">=": lambda limit: here >= limit,
        "==": lambda limit: here == limit,
    }
    for bound in releases.split(","):
        parsed = _BOUND.match(bound.strip())
        assert parsed is not None  # range_problem checked every bound
        if not compare[parsed["op"]](version_key(parsed["version"])):
            return False
    return True


def _schema_validator():
    import jsonschema

    schema = json.loads(resources.files("conformance").joinpath("schemas").joinpath(SCHEMA_NAME).read_text())
    return jsonschema.Draft202012Validator(schema)


def expectations_problems(document: Any) -> list[str]:
    """What is wrong with an expectations document: the JSON Schema first,
    then release ranges and requirement ids."""
    errors = sorted(_schema_validator().iter_errors(document), key=str)
    if errors:
        return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]
    from .requirements import load_requirements

    known = set(load_requirements())
    problems = []
    for index, entry in enumerate(document["expectations"]):
        where = f"expectations/{index} ({entry['suite']} {entry['case']})"
        if entry["requirement"] not in known:
            problems.append(f"{where}: unknown requirement id {entry['requirement']!r}")
        if "releases" in entry and (problem := range_problem(entry["releases"])) is not None:
            problems.append(f"{where}: {problem}")
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
