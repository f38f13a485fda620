"""The index-query suite in the pytest plugin, run as an implementer runs
it (through pytester): the reference by its scan, pylance 14 and LanceDB
through their indices and without, a driver losing rows, a driver claiming
an index it does not read, and a driver module asked through a worker."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import lance
import lancedb
import pytest

from conformance.drivers import lancedb_driver, pylance_driver
from conformance.suite.checks import Status, Suite
from conformance.suite.queries import checks, query_verdict
from conformance.suite.query_datasets import CASES, DatasetsUnavailable, Scenario
from conformance.suite.run import SuiteRun
from tests.conformance.suite import lossy_query_driver, scanning_query_driver

pytest_plugins = ["pytester"]

# pytester runs pytest in this process and forgets the modules a run
# imported; pylance and LanceDB are imported here once, so no run imports
# them again (when a run imported them anew after an earlier run, LanceDB's
# first query panicked: "a global default trace dispatcher has already been set").
IMPORTED_ONCE = (lance, lancedb, lancedb_driver, pylance_driver)

LOSSY = lossy_query_driver.__name__
SCANNING = scanning_query_driver.__name__


def queries(pytester: pytest.Pytester, driver: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p", "no:cacheprovider", "--pyargs", "conformance.suite", "--lance-suite", "queries",
        "--lance-driver", driver, *args,
    )  # fmt: skip


def test_one_check_per_scenario_query_and_way():
    names = [check.name for check in checks()]
    assert len(names) == len(set(names)) == len(Scenario) * len(CASES) * 2
    assert "appended-vec-nearest-index" in names and "compacted-bucket-range-scan" in names


@pytest.mark.parametrize(
    ("failure", "status", "message"),
    [
        (DatasetsUnavailable("pylance is not installed"), Status.NOT_APPLICABLE, "not applicable: pylance is not"),
        (RuntimeError("disk full"), Status.FAIL, "pylance could not write the index-query datasets: RuntimeError"),
    ],
)
def test_datasets_that_cannot_be_built_are_said_by_each_check(failure, status, message):
    run = SuiteRun("reference", None, frozenset(Suite))
    run.shared["queries:datasets"] = failure
    case = CASES[0]
    verdict = query_verdict(run, Scenario.FRESH, case, through_index=False)
    assert verdict.status is status and verdict.messages[0].startswith(message)


def test_the_reference_answers_by_scan_and_declares_no_index(pytester: pytest.Pytester) -> None:
    result = queries(pytester, "reference", "-k", "appended-score", "-rs")
    result.assert_outcomes(passed=5, skipped=5)
    result.stdout.fnmatch_lines(["SKIPPED * not applicable: the driver does not declare * queries through an index"])


def test_pylance_answers_through_its_index_and_without(pytester: pytest.Pytester) -> None:
    """Every way passes, and where pylance's compaction left the ZONEMAP on
    fragments that are gone, the plan is not judged and the report says so."""
    xml = pytester.path / "junit.xml"
    result = queries(
        pytester, "pylance", "-k", "deleted-vec or compacted-bucket or optimized-text", f"--junitxml={xml}"
    )
    result.assert_outcomes(passed=10)
    cases = {case.get("name"): case for case in ET.parse(xml).getroot().iter("testcase")}
    observed = [
        prop.get("value")
        for prop in cases["compacted-bucket-range-index"].iter("property")
        if prop.get("name") == "lance_observation"
    ]
    assert len(observed) == 1 and "no index segment covers a live fragment" in observed[0]
    assert "bucket_idx" in observed[0]


def test_lancedb_answers_and_its_known_failures_are_expected(pytester: pytest.Pytester) -> None:
    """LanceDB 0.40 skips pylance 14's BTREE version 1 (stable row ids) and
    scans: its shipped expectations record it."""
    result = queries(pytester, "lancedb", "-k", "stable-updated-score-equals or fresh-labels", "-rx")
    result.assert_outcomes(passed=3, xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *stable-updated-score-equals-index*index.query-unusable-segment-scanned*"])


def test_a_driver_losing_rows_fails_naming_them(pytester: pytest.Pytester) -> None:
    result = queries(pytester, LOSSY, "--lance-in-process", "-k", "fresh-score-equals or fresh-vec-nearest-index")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["queries fresh-score-equals-index: fail", "  1 of * expected rows missing: [[]*]"])
    result.stdout.fnmatch_lines(["queries fresh-vec-nearest-index: fail", "  nearest rows differ: expected *"])


def test_a_driver_claiming_an_index_it_does_not_read_fails(pytester: pytest.Pytester) -> None:
    result = queries(pytester, SCANNING, "--lance-in-process", "-k", "fresh-text-match-index or fresh-text-match-scan")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "queries fresh-text-match-index: fail",
            "  the driver declares full-text queries through an index, but its plan reads none*",
        ]
    )


def test_a_driver_module_in_a_worker_is_asked_through_the_protocol(pytester: pytest.Pytester) -> None:
    """A driver module runs in a worker by default: its answers and plans
    travel by the protocol's query request and are judged the same."""
    result = queries(pytester, SCANNING, "-k", "fresh-score-equals")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"lance driver: worker:{SCANNING} (*"])
    result.stdout.fnmatch_lines(
        ["queries fresh-score-equals-index: fail", "  the driver declares equals queries through an index, but*"]
    )


@pytest.mark.slow
@pytest.mark.parametrize(("driver", "xfailed"), [("reference", 0), ("pylance", 0), ("lancedb", 5)])
def test_the_whole_suite_passes_for_the_shipped_drivers(pytester: pytest.Pytester, driver: str, xfailed: int) -> None:
    result = queries(pytester, driver)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("xfailed", 0) == xfailed, outcomes
    total = len(Scenario) * len(CASES) * 2
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) + xfailed == total
    # Only the reference skips: it declares no kind through an index.
    assert outcomes.get("skipped", 0) == (total // 2 if driver == "reference" else 0)
