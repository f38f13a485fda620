"""The numbers of a run's reports (conformance/harness/report.py): the
overlap, the commit window, the counts without the set-up, and anomalies
read as sentences with correct plurals."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from conformance.drivers.writes import WriteKind, WriteOutcome
from conformance.harness.anomalies import Anomaly, AnomalyKind, Role, Witness, sentence
from conformance.harness.history import Attempt
from conformance.harness.report import (
    anomalies_phrase,
    anomaly_document,
    commit_window,
    findings,
    outcome_counts,
    overlapping,
    throughput,
)


def _attempt(writer: int, start: float, end: float, outcome: str = "acknowledged", op_id: str = "") -> Attempt:
    acknowledged = outcome == "acknowledged"
    return Attempt(
        op_id or f"w{writer}-{start}",
        writer,
        WriteKind.APPEND,
        {},
        None,
        WriteOutcome(outcome),
        1 if acknowledged else None,
        None,
        start,
        end,
    )


_intervals = st.lists(
    st.tuples(
        st.integers(min_value=-1, max_value=3),
        st.integers(min_value=0, max_value=40),
        st.integers(min_value=0, max_value=10),
    ),
    max_size=30,
)


@given(_intervals)
def test_overlapping_counts_the_attempts_another_writer_ran_beside(intervals):
    """Property: equal to the pairwise definition (an attempt of writer w
    counts when an attempt of another writer, the set-up aside, started
    before it ended and ended after it started)."""
    history = [_attempt(writer, start, start + length) for writer, start, length in intervals]
    writers = [a for a in history if a.writer >= 0]
    expected = sum(any(b.writer != a.writer and b.start < a.end and b.end > a.start for b in writers) for a in writers)
    assert overlapping(history) == expected


def test_the_commit_window_starts_at_the_first_attempt_and_ends_at_the_last_acknowledged():
    history = [
        _attempt(-1, 0.0, 1.0),  # the set-up, long before an engine's start-up ends
        _attempt(0, 30.0, 31.0),
        _attempt(1, 30.5, 33.0),
        _attempt(0, 31.0, 40.0, "conflict"),
    ]
    assert commit_window(history) == (30.0, 33.0)
    assert throughput(history) == 2 / 3.0
    assert outcome_counts(history) == {"acknowledged": 2, "conflict": 1, "error": 0, "unknown": 0}
    assert commit_window([_attempt(0, 1.0, 2.0, "error")]) is None and throughput([]) is None
    assert outcome_counts([_attempt(0, 1.0, 2.0, "unknown")])["unknown"] == 1


def test_anomalies_are_counted_with_their_consequences_and_phrased_with_plurals():
    lost = Anomaly(AnomalyKind.LOST_COLUMN, Witness.of([("w1-2", Role.LOST)], [4]))
    root = Anomaly(AnomalyKind.BLIND_REBASE, Witness.of([("w0-1", Role.REBASED)], [4]), (lost, lost))
    documents = [anomaly_document(root), anomaly_document(lost)]
    assert findings(documents) == 4
    assert documents[0]["sentence"] == sentence(root)
    assert documents[0]["consequences"][0]["sentence"] == sentence(lost)
    assert anomalies_phrase(documents) == "2 anomalies, with 2 consequences"
    assert anomalies_phrase(documents[1:]) == "1 anomaly"
    assert anomalies_phrase([]) == "none"
