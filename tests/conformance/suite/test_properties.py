"""The properties suite (conformance.suite.properties) on writers' defaults."""

from __future__ import annotations

from conformance.suite.checks import Status, Suite
from conformance.suite.properties import _driver_writes_reference_reads
from conformance.suite.run import SuiteRun
from tests.conformance.suite import default_only_writer, legacy_default_writer


def test_driver_writes_reference_reads_creates_at_the_drivers_default():
    """The driver creates its tables at its own default file version (no
    version named): a writer that declares no versions and refuses a named
    one still has the property checked, and it holds for the reference's
    writer underneath."""
    run = SuiteRun(default_only_writer.__name__, None, frozenset({Suite.PROPERTIES}))
    verdict = _driver_writes_reference_reads(run)
    assert verdict.status is Status.PASS, verdict.messages


def test_driver_writes_reference_reads_is_not_applicable_to_a_default_the_reference_does_not_read():
    """A writer whose default file version is one the reference does not
    read (legacy 0.1) gets not-applicable naming that version, not a failure
    blamed on the writer."""
    run = SuiteRun(legacy_default_writer.__name__, None, frozenset({Suite.PROPERTIES}))
    verdict = _driver_writes_reference_reads(run)
    assert verdict.status is Status.NOT_APPLICABLE, verdict.messages
    assert "file version 0.1" in verdict.messages[0]
