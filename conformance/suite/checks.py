"""A check of the suite and its verdict, and how a verdict becomes a pytest outcome.

A check is one test id: a golden case, a writer step, a conflict cell, a
property. Running it gives a :class:`Verdict`; the implementation's
expectations then turn a failure it records into an expected failure, and a
pass it records as failing into ``fixed``, which fails the run as a strict
xfail does (:func:`with_expectation`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from ..expectations import Expectation
    from .run import SuiteRun


class Suite(str, enum.Enum):
    """The parts of the suite, as ``--lance-suite`` names them."""

    READERS = "readers"
    WRITERS = "writers"
    CONFLICTS = "conflicts"
    PROPERTIES = "properties"
    QUERIES = "queries"


class Status(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    #: The check needs a capability the driver does not declare.
    NOT_APPLICABLE = "not-applicable"
    #: It failed, as the implementation's expectations say it does.
    EXPECTED_FAILURE = "expected-failure"
    #: The expectations say it fails, and it passed: the expectation is stale.
    FIXED = "fixed"


@dataclass(frozen=True)
class Verdict:
    status: Status
    #: What was found (a failure's problems), or why (not applicable, expected).
    messages: tuple[str, ...] = ()
    #: Representation differences that do not fail (reported with any outcome).
    observations: tuple[str, ...] = ()

    @classmethod
    def passed(cls) -> Verdict:
        return cls(Status.PASS)

    @classmethod
    def failed(cls, problems: list[str] | tuple[str, ...]) -> Verdict:
        return cls(Status.FAIL, tuple(problems) or ("failed (no problem was named)",))

    @classmethod
    def not_applicable(cls, capability: str, why: str = "") -> Verdict:
        reason = f"not applicable: the driver lacks the {capability!r} capability"
        return cls(Status.NOT_APPLICABLE, (f"{reason} ({why})" if why else reason,))


def expectation_text(expectation: Expectation) -> str:
    parts = [f"{expectation.requirement}: {expectation.reason}"]
    if expectation.issue:
        parts.append(f"issue: {expectation.issue}")
    return "; ".join(parts)


def with_expectation(verdict: Verdict, expectation: Expectation | None) -> Verdict:
    """The verdict once the implementation's expectation for the check (if
    any) is taken into account."""
    if expectation is None:
        return verdict
    if verdict.status is Status.FAIL:
        return Verdict(
            Status.EXPECTED_FAILURE, (expectation_text(expectation), *verdict.messages), verdict.observations
        )
    if verdict.status is Status.PASS:
        return Verdict(
            Status.FIXED,
            (
                f"passes although the expectations record it as failing ({expectation_text(expectation)}); "
                "remove the entry from the expectations file",
            ),
            verdict.observations,
        )
    return verdict


@dataclass(frozen=True)
class Check:
    """One test id of the suite."""

    suite: Suite
    #: Unique within its suite; the id an expectation names (``Expectation.case``).
    name: str
    run: Callable[[SuiteRun], Verdict]
    #: What it checks, one line (shown by ``pytest --collect-only -v`` as the location).
    summary: str = ""
