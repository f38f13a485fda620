"""The history checker's own properties, on histories generated from a
serial model (``conformance.harness.serial_model``): every such history is
accepted, and each anomaly injected into one is reported under its name."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.drivers.writes import WriteKind, WriteOutcome
from conformance.harness import checker
from conformance.harness.anomalies import AnomalyKind
from conformance.harness.checker import analyze
from conformance.harness.history import Attempt
from conformance.harness.observe import ConflictObservation, VersionObservation
from conformance.harness.serial_model import SerialRun, serial_run

runs = st.builds(serial_run, st.integers(min_value=5, max_value=150), st.integers(min_value=0, max_value=2**32))


@settings(max_examples=40, deadline=None)
@given(run=runs)
def test_histories_from_a_serial_model_are_accepted(run):
    """Property: a history in which every acknowledged operation took effect
    at its version, failed ones never did, and writers that died committed
    at most once, shows no anomaly."""
    assert analyze(run.history, run.observations) == []


def _next(run: SerialRun, kind: str, args: dict, *, outcome=WriteOutcome.ACKNOWLEDGED) -> Attempt:
    """An attempt committed as the version after the last (acknowledged)."""
    version = len(run.observations.versions) + 1
    attempt = Attempt(
        f"x-{version}",
        0,
        WriteKind(kind),
        args,
        version - 1,
        outcome,
        version if outcome is WriteOutcome.ACKNOWLEDGED else None,
        None,
        0.0,
        0.0,
    )
    run.history.append(attempt)
    return attempt


def _observe(run: SerialRun, added=(), removed=(), fragments=(), *, skip: int = 0) -> None:
    version = len(run.observations.versions) + 1 + skip
    run.observations.versions.append(
        VersionObservation(version, "x", version - 1, list(added), list(removed), list(fragments))
    )


def _visible(run: SerialRun):
    row_id, (value, stable) = next(iter(sorted(run.rows.items())))
    return row_id, value, stable


def lost_append(run):
    _next(run, "append", {"ids": [10**12]})
    _observe(run)


def lost_delete(run):
    row_id, _, _ = _visible(run)
    _next(run, "delete", {"ids": [row_id]})
    _observe(run)


def lost_update(run):
    row_id, _, _ = _visible(run)
    _next(run, "update", {"ids": [row_id], "value": 7 * 10**12})
    _observe(run)


def resurrected_delete(run):
    row_id = sorted(run.deleted)[0]
    _next(run, "compact", {})
    _observe(run, added=[(row_id, 0, 10**12)])


def duplicate(run):
    row_id, value, _ = _visible(run)
    _next(run, "compact", {})
    _observe(run, added=[(row_id, value, 10**12)])


def phantom(run):
    _next(run, "append", {"ids": [10**12]}, outcome=WriteOutcome.CONFLICT)
    _next(run, "config", {})
    _observe(run, added=[(10**12, 0, 10**12)])


def fragment_id_reuse(run):
    _next(run, "compact", {})
    _observe(run, fragments=[(0, "other content")])


def incompatible_commit(run):
    _next(run, "config", {})
    _observe(run)
    version = len(run.observations.versions)
    run.observations.conflicts.append(ConflictObservation(version, version - 1, "retryable", "same rows"))


def row_id_not_unique(run):
    _, _, stable = _visible(run)
    _next(run, "append", {"ids": [10**12]})
    _observe(run, added=[(10**12, 0, stable)])


def versions_not_linear(run):
    _observe(run, skip=1)


def validator_not_clean(run):
    run.observations.validator_errors.append((1, "manifest.some-rule", "broken"))


INJECTIONS: dict[AnomalyKind, Callable[[SerialRun], None]] = {
    AnomalyKind.LOST_APPEND: lost_append,
    AnomalyKind.LOST_DELETE: lost_delete,
    AnomalyKind.LOST_UPDATE: lost_update,
    AnomalyKind.RESURRECTED_DELETE: resurrected_delete,
    AnomalyKind.DUPLICATE: duplicate,
    AnomalyKind.PHANTOM: phantom,
    AnomalyKind.FRAGMENT_ID_REUSE: fragment_id_reuse,
    AnomalyKind.INCOMPATIBLE_COMMIT: incompatible_commit,
    AnomalyKind.ROW_ID_NOT_UNIQUE: row_id_not_unique,
    AnomalyKind.NON_LINEAR_VERSIONS: versions_not_linear,
    AnomalyKind.VALIDATOR_NOT_CLEAN: validator_not_clean,
}


@pytest.mark.parametrize("name", sorted(INJECTIONS))
@settings(max_examples=15, deadline=None)
@given(run=runs)
def test_each_injected_anomaly_is_reported_by_name(name, run):
    """Property: after a serial history, one more version that breaks one
    promise (an acknowledged append missing, a delete undone, ...) is
    reported as one root anomaly under that promise's name (what follows from
    it grouped under it), with a witness naming a version."""
    if name == AnomalyKind.RESURRECTED_DELETE and not run.deleted:
        run.history.clear()
        run = serial_run(40, 1)  # a history with an acknowledged delete
        assert run.deleted
    if not run.rows:
        return  # an overwrite emptied nothing: there is always a row; kept for safety
    INJECTIONS[name](run)
    anomalies = analyze(run.history, run.observations)
    assert [a.kind for a in anomalies] == [name], anomalies
    assert anomalies[0].witness.versions


def test_an_indeterminate_append_visible_twice_is_a_duplicate():
    """An operation whose writer died may show up once, never twice."""
    run = serial_run(10, 5)
    unsure = _next(run, "append", {"ids": [10**12]}, outcome=WriteOutcome.UNKNOWN)
    _observe(run, added=[(10**12, 0, 10**12)])
    assert analyze(run.history, run.observations) == []
    _observe(run, added=[(10**12, 0, 10**12 + 1)])
    assert AnomalyKind.DUPLICATE in {a.name for a in analyze(run.history, run.observations)}
    assert unsure.version is None


@pytest.mark.parametrize("library, known", [("lance", True), ("lance-conformance", False)])
def test_a_known_pylance_departure_is_listed_apart(library, known):
    """pylance's UpdateConfig over an Overwrite is a measured departure from
    the page (docs/spec-discrepancies.md): listed apart for pylance only."""
    run = serial_run(10, 2)
    incompatible_commit(run)
    version = len(run.observations.versions)
    run.observations.conflicts[-1] = ConflictObservation(
        version,
        version - 1,
        "incompatible",
        "the table was overwritten",
        ("conflict.update-config-after-overwrite-incompatible",),
        library,
    )
    anomalies, departures = checker.split_known_departures(analyze(run.history, run.observations))
    assert [a.name for a in (departures if known else anomalies)] == [AnomalyKind.INCOMPATIBLE_COMMIT]
    assert not (anomalies if known else departures)


def _racing_upsert(run: SerialRun, op_id: str, key: int, value: int, read: int, version: int | None, outcome):
    attempt = Attempt(
        op_id,
        0,
        WriteKind.UPSERT,
        {"ids": [key], "new_ids": [key], "value": value, "shared": True},
        read,
        outcome,
        version,
        None,
        0.0,
        0.0,
    )
    run.history.append(attempt)
    return attempt


@pytest.mark.parametrize("second", ["inserts too", "conflicts", "updates"])
def test_concurrent_upserts_of_one_new_key_are_a_duplicate_unless_one_gives_way(second):
    """Two upserts read the same version, neither sees key k: the first
    inserts it. A second that inserts it too leaves k visible twice (a
    duplicate, its witness both operations, both versions and the key); one
    refused with a conflict, or one that read the first's version and
    updated k, leaves one row."""
    run = serial_run(10, 3)
    read = len(run.observations.versions)
    key, first_value, second_value = 10**12, 7 * 10**12, 8 * 10**12
    _racing_upsert(run, "first", key, first_value, read, read + 1, WriteOutcome.ACKNOWLEDGED)
    _observe(run, added=[(key, first_value, None)])
    if second == "inserts too":
        _racing_upsert(run, "second", key, second_value, read, read + 2, WriteOutcome.ACKNOWLEDGED)
        _observe(run, added=[(key, second_value, None)])
    elif second == "conflicts":
        _racing_upsert(run, "second", key, second_value, read, None, WriteOutcome.CONFLICT)
    else:
        _racing_upsert(run, "second", key, second_value, read + 1, read + 2, WriteOutcome.ACKNOWLEDGED)
        _observe(run, added=[(key, second_value, None)], removed=[(key, first_value, None)])
    anomalies = analyze(run.history, run.observations)
    if second != "inserts too":
        assert anomalies == []
        return
    assert [a.name for a in anomalies] == [AnomalyKind.DUPLICATE]
    witness = anomalies[0].witness
    assert (witness.op_ids, list(witness.versions), list(witness.rows)) == (
        ["first", "second"],
        [read + 1, read + 2],
        [key],
    )


def test_a_key_visible_three_times_is_one_anomaly_naming_every_copy():
    run = serial_run(10, 4)
    read = len(run.observations.versions)
    for n in range(3):
        _racing_upsert(run, f"u{n}", 10**12, (7 + n) * 10**12, read, read + 1 + n, WriteOutcome.ACKNOWLEDGED)
        _observe(run, added=[(10**12, (7 + n) * 10**12, None)])
    anomalies = analyze(run.history, run.observations)
    assert [(a.name, a.witness.op_ids, list(a.witness.versions)) for a in anomalies] == [
        (AnomalyKind.DUPLICATE, ["u0", "u1", "u2"], [read + 1, read + 2, read + 3])
    ]


@settings(max_examples=15, deadline=None)
@given(run=runs, writers=st.integers(min_value=2, max_value=4))
def test_racing_upserts_injected_into_a_generated_history_are_one_duplicate(run, writers):
    """Property: after any serial history, ``writers`` upserts that read the
    last version and each insert the same new key leave one duplicate
    anomaly naming every one of them and every version they made."""
    read = len(run.observations.versions)
    key = 10**12
    for n in range(writers):
        value = (7 + n) * 10**12
        _racing_upsert(run, f"race-{n}", key, value, read, read + 1 + n, WriteOutcome.ACKNOWLEDGED)
        _observe(run, added=[(key, value, None)])
    anomalies = analyze(run.history, run.observations)
    assert [(a.name, a.witness.op_ids, list(a.witness.versions), list(a.witness.rows)) for a in anomalies] == [
        (AnomalyKind.DUPLICATE, [f"race-{n}" for n in range(writers)], list(range(read + 1, read + 1 + writers)), [key])
    ]
