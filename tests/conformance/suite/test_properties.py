"""The properties suite (conformance.suite.properties) on writers' defaults."""

from __future__ import annotations

from conformance.suite.checks import Status, Suite
from conformance.suite.properties import _driver_writes_reference_reads
from conformance.suite.run import SuiteRun
from tests.conformance.suite import default_only_writer


def test_driver_writes_reference_reads_creates_at_the_drivers_default():
    """The driver creates its tables at its own default file version (no
    version named): a writer that declares no versions and refuses a named
    one still has the property checked, and it holds for the reference's
    writer underneath."""
    run = SuiteRun(default_only_writer.__name__, None, frozenset({Suite.PROPERTIES}))
    verdict = _driver_writes_reference_reads(run)
    assert verdict.status is Status.PASS, verdict.messages
