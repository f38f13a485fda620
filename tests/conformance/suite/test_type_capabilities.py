"""The suite with zones and type capabilities: ``pylance-types`` passes for
a reader that returns ``Etc/UTC`` for ``UTC`` (conformance/comparison/time_zones.py),
and the properties suite bounds shrinking and reports a failure short
(conformance/suite/properties.py)."""

from __future__ import annotations

import pyarrow as pa

from conformance.fixtures import default_corpus
from conformance.suite import readers
from conformance.suite.checks import Status, Suite
from conformance.suite.properties import _fingerprint, _holds
from conformance.suite.run import SuiteRun

from . import etc_utc_driver

PYLANCE_TYPES = default_corpus() / "cases" / "pylance-types"


def test_pylance_types_passes_for_a_reader_returning_etc_utc_for_utc():
    run = SuiteRun(etc_utc_driver.__name__, None, frozenset({Suite.READERS}))
    try:
        verdict = readers.verify(PYLANCE_TYPES, run)
    finally:
        run.close()
    assert verdict.status is Status.PASS, verdict.messages
    # The zone's other name is observed, not hidden: the reader really did rename it.
    assert any("ts time-zone" in o and etc_utc_driver.ALIAS in o for o in verdict.observations), verdict.observations


def _run() -> SuiteRun:
    # The properties below never touch the driver: none is loaded.
    return SuiteRun("reference", None, frozenset({Suite.PROPERTIES}))


def test_a_property_failure_is_short_with_the_example_and_the_replay_line():
    def fails_on_rows(run, table: pa.Table) -> None:
        if table.num_rows:
            raise RuntimeError(f"saw {table.num_rows} rows")

    verdict = _holds(_run(), fails_on_rows)
    assert verdict.status is Status.FAIL
    text = "\n".join(verdict.messages)
    assert verdict.messages[0].startswith("the property could not run: RuntimeError: saw 1 rows")
    assert "check(" in text and "table=pyarrow.Table" in text and "@reproduce_failure(" in text
    assert "Traceback" not in text and len(text.splitlines()) < 60


def test_shrinking_stops_at_the_deadline_running_only_tables_seen_failing():
    """With no time to shrink, every table run after the first failure is one
    that failed before (Hypothesis replaying it); all others are taken to pass."""
    executed: list[tuple[bytes, bool]] = []

    def fails_on_rows(run, table: pa.Table) -> None:
        failing = table.num_rows > 0
        executed.append((_fingerprint(table), failing))
        if failing:
            raise AssertionError("rows")

    verdict = _holds(_run(), fails_on_rows, shrink_seconds=0)
    assert verdict.status is Status.FAIL
    assert verdict.messages[-1].startswith("(shrinking stopped after 0 s")
    # However large the unshrunk example, the report stays short; the replay line is whole.
    assert all(len(message) < 2100 for message in verdict.messages)
    assert any("@reproduce_failure(" in message for message in verdict.messages)
    first = next(index for index, (_, failing) in enumerate(executed) if failing)
    seen_failing = {key for key, failing in executed[: first + 1] if failing}
    assert all(key in seen_failing and failing for key, failing in executed[first + 1 :])
