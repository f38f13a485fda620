"""What a run says: its numbers, a text summary and a JSON document (with its
``anomalies`` list) following ``conformance/schemas/harness-report.schema.json``.

The numbers are computed here once, from the history, and the summary, the
JSON document and the page (:mod:`.html`) all show these: the attempts are
the writers' (the set-up that created the dataset, writer
:data:`~.history.SETUP_WRITER`, is not one); the throughput is taken over
the commit window (the first attempt's start to the last acknowledged
attempt's end, so an engine's start-up does not count); the overlap is how
many attempts overlapped an attempt of another writer (how much the run
raced).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from conformance.drivers.writes import WriteOutcome

from ..validator.facts.text import plural
from .anomalies import Anomaly

if TYPE_CHECKING:
    from .history import Attempt
    from .runner import RunResult

REPORT_SCHEMA_NAME = "harness-report.schema.json"


#: The version of the harness report's shape (bump it when a field changes meaning
#: or goes away; CHANGELOG.md).
REPORT_FORMAT = 2

ACKNOWLEDGED = WriteOutcome.ACKNOWLEDGED.value
#: The outcomes of an attempt, in the order reports show them.
OUTCOMES = tuple(outcome.value for outcome in WriteOutcome)


def outcome_of(attempt: Attempt) -> str:
    """An attempt's outcome as reports name it (one of :data:`OUTCOMES`)."""
    return attempt.outcome.value


def kind_of(attempt: Attempt) -> str:
    """An attempt's operation kind as reports name it (a ``WriteKind``'s value)."""
    return attempt.kind.value


def writer_attempts(history: Iterable[Attempt]) -> list[Attempt]:
    """The writers' attempts: the history without the set-up."""
    return [attempt for attempt in history if attempt.writer >= 0]


def failed_attempts(history: Iterable[Attempt]) -> list[Attempt]:
    """The writers' attempts that were not acknowledged (conflict, error, unknown)."""
    return [attempt for attempt in writer_attempts(history) if outcome_of(attempt) != ACKNOWLEDGED]


def outcome_counts(history: Iterable[Attempt]) -> dict[str, int]:
    """How many of the writers' attempts ended in each outcome (every one of
    :data:`OUTCOMES` named, zero included)."""
    counted = Counter(outcome_of(attempt) for attempt in writer_attempts(history))
    return {outcome: counted[outcome] for outcome in OUTCOMES}


def overlapping(history: Iterable[Attempt]) -> int:
    """How many of the writers' attempts overlapped in time an attempt of
    another writer (open intervals: an attempt that ends as another starts
    did not overlap it). O(n log n): attempts sorted by start, each asks
    whether, among those that started before it ended, one of another writer
    ended after it started; for that the prefix keeps its latest end and the
    latest end of any other writer than that one."""
    attempts = sorted(writer_attempts(history), key=lambda a: a.start)
    starts = [attempt.start for attempt in attempts]
    #: For each prefix: (latest end, its writer, latest end among the other writers).
    prefix: list[tuple[float, int, float]] = []
    best, best_writer, second = float("-inf"), -1, float("-inf")
    for attempt in attempts:
        if attempt.writer == best_writer:
            best = max(best, attempt.end)
        elif attempt.end > best:
            best, best_writer, second = attempt.end, attempt.writer, best
        else:
            second = max(second, attempt.end)
        prefix.append((best, best_writer, second))
    count = 0
    for attempt in attempts:
        started_before_its_end = bisect.bisect_left(starts, attempt.end)
        if started_before_its_end == 0:
            continue
        latest, latest_writer, other = prefix[started_before_its_end - 1]
        count += (latest if latest_writer != attempt.writer else other) > attempt.start
    return count


def commit_window(history: Iterable[Attempt]) -> tuple[float, float] | None:
    """From the first attempt's start to the last acknowledged attempt's
    end (None without an acknowledged attempt)."""
    attempts = writer_attempts(history)
    acknowledged = [attempt.end for attempt in attempts if outcome_of(attempt) == ACKNOWLEDGED]
    if not acknowledged:
        return None
    return min(attempt.start for attempt in attempts), max(acknowledged)


def throughput(history: Sequence[Attempt]) -> float | None:
    """Acknowledged commits per second over the :func:`commit_window` (None
    when there is no window to divide by)."""
    window = commit_window(history)
    if window is None or window[1] <= window[0]:
        return None
    return outcome_counts(history)[ACKNOWLEDGED] / (window[1] - window[0])


# -- anomalies ------------------------------------------------------------------------


def anomaly_document(anomaly: Anomaly) -> dict:
    """An anomaly as the report and the page show it: ``name``, ``witness``
    (operation ids with their roles, versions, rows, detail), ``sentence``
    and ``consequences`` (the same shape, nested)."""
    return anomaly.to_json()


def findings(documents: Iterable[dict]) -> int:
    """The anomalies of :func:`anomaly_document` documents, each consequence counted."""
    return sum(1 + findings(document["consequences"]) for document in documents)


def anomalies_phrase(documents: Sequence[dict]) -> str:
    """``"none"``, ``"1 anomaly"``, ``"2 anomalies, with 3 consequences"``."""
    if not documents:
        return "none"
    consequences = findings(documents) - len(documents)
    phrase = plural(len(documents), "anomaly", "anomalies")
    return phrase + (f", with {plural(consequences, 'consequence')}" if consequences else "")


# -- the report -----------------------------------------------------------------------


def counts(result: RunResult) -> dict[str, int]:
    """The numbers every report of the run shows."""
    by_outcome = outcome_counts(result.history)
    documents = [anomaly_document(a) for a in result.report.anomalies]
    return {
        "operations": sum(by_outcome.values()),
        "acknowledged": by_outcome[ACKNOWLEDGED],
        "conflicts": by_outcome["conflict"],
        "errors": by_outcome["error"],
        "unknown": by_outcome["unknown"],
        "overlapping": overlapping(result.history),
        "anomaly_count": len(documents),
        "finding_count": findings(documents),
    }


def report_document(result: RunResult) -> dict:
    window = commit_window(result.history)
    return {
        "report_format": REPORT_FORMAT,
        "writer": result.spec.writer,
        "writers": result.spec.writers,
        **counts(result),
        "versions": result.report.versions,
        "skipped_workloads": result.skipped,
        "commit_window_seconds": None if window is None else window[1] - window[0],
        "acknowledged_per_second": throughput(result.history),
        "anomalies": [anomaly_document(a) for a in result.report.anomalies],
        "known_departures": [anomaly_document(a) for a in result.report.known_departures],
        "clean": result.report.clean,
    }


def skipped_phrase(skipped: Sequence[str] | None) -> str:
    """The workload kinds the writer could not do, or why they are unknown."""
    if skipped is None:
        return "unknown (the run predates writer.json)"
    return ", ".join(skipped) if skipped else "none"


def _anomaly_lines(document: dict, depth: int) -> list[str]:
    lines = ["  " * depth + ("- " if depth > 1 else "") + document["sentence"]]
    for consequence in document["consequences"]:
        lines += _anomaly_lines(consequence, depth + 1)
    return lines


def summary_text(result: RunResult) -> str:
    numbers = counts(result)
    lines = [
        f"writer {' and '.join(result.spec.distinct_writers())}: {plural(result.spec.writers, 'writer')}, "
        f"{plural(numbers['operations'], 'operation')}, {numbers['acknowledged']} acknowledged, "
        f"{plural(numbers['conflicts'], 'conflict')}, {plural(numbers['errors'], 'error')}, "
        f"{numbers['unknown']} unknown; {plural(result.report.versions, 'version')}",
        f"overlap: {numbers['overlapping']} of {plural(numbers['operations'], 'attempt')} "
        "overlapped another writer's attempt",
    ]
    per_second = throughput(result.history)
    if per_second is not None:
        lines.append(f"throughput: {per_second:.1f} acknowledged commits per second over the commit window")
    if result.skipped is None or result.skipped:
        lines.append(f"skipped workloads (the writer cannot do them): {skipped_phrase(result.skipped)}")
    if result.report.known_departures:
        lines.append(
            f"known departures of pylance from the spec (not anomalies): {len(result.report.known_departures)}"
        )
    documents = [anomaly_document(a) for a in result.report.anomalies]
    lines.append(f"anomalies: {anomalies_phrase(documents)}")
    for document in documents:
        lines += _anomaly_lines(document, 1)
    return "\n".join(lines)
