"""The pytest plugin run as an implementer runs it, through pytester: the
suite against the reference, against a deliberately wrong driver, with an
expectations file, and without a driver."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.fixtures import corpus_root
from conformance.fixtures.case import case_dirs
from conformance.suite.checks import Suite
from conformance.suite.json_report import check_document
from tests.conformance.fixtures import aborting_native_reader
from tests.conformance.suite import blind_writer, wrong_driver

pytest_plugins = ["pytester"]

# pytester runs pytest in this process and forgets the modules a run
# imported; the driver is imported here once, so no run imports it again.
WRONG_DRIVER = wrong_driver.__name__
BLIND_WRITER = blind_writer.__name__
#: Two golden cases with rows at every version: the wrong driver fails both.
SOME_CASES = ("ref-tags", "ref-restore")
#: A catalog requirement the wrong driver breaks.
REQUIREMENT = "fragment.physical-rows-include-deleted"


def suite(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--pyargs", "conformance.suite", *args)


def only(*cases: str) -> list[str]:
    return ["-k", " or ".join(cases)]


def expectations_file(pytester: pytest.Pytester, implementation: str, cases: tuple[str, ...]) -> Path:
    path = pytester.path / "expectations.json"
    entries = [
        {
            "suite": "readers",
            "case": case,
            "requirement": REQUIREMENT,
            "kind": "bug",
            "reason": f"drops the last row of {case}",
            "reproducer": f"read {case} and count the rows",
        }
        for case in cases
    ]
    path.write_text(json.dumps({"format": 1, "implementation": implementation, "expectations": entries}))
    return path


def test_the_reference_passes_every_golden_case(pytester: pytest.Pytester) -> None:
    result = suite(pytester, "--lance-driver", "reference", "--lance-suite", "readers", "-v")
    cases = case_dirs(corpus_root())
    assert len(cases) > 50
    result.assert_outcomes(passed=len(cases))
    # One test id per case, named after it.
    for case in cases:
        result.stdout.fnmatch_lines([f"*::{case.name} PASSED*"])
    result.stdout.fnmatch_lines(["lance driver: reference (*", f"lance corpus: {corpus_root()}"])


def test_a_wrong_driver_fails_per_case_with_what_differs(pytester: pytest.Pytester) -> None:
    result = suite(pytester, "--lance-driver", WRONG_DRIVER, "--lance-suite", "readers", *only(*SOME_CASES))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*FAILED*::ref-restore*",
            "*FAILED*::ref-tags*",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(["readers ref-tags: fail", "  v1: content: expected 5 rows, got 4"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_driver_module_runs_in_a_worker_so_an_abort_fails_one_check(pytester: pytest.Pytester) -> None:
    """The driver module's native abort kills its worker, not pytest: the
    check it was on fails with the panic's message, the others pass."""
    aborting = sorted(aborting_native_reader.ABORTS_ON)
    result = suite(
        pytester,
        "--lance-driver",
        aborting_native_reader.NAME,
        "--lance-suite",
        "readers",
        *only("ref-naming-v1", *aborting),
    )
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([f"lance driver: worker:{aborting_native_reader.NAME} (*"])
    result.stdout.fnmatch_lines(
        ["*aborted (signal 6); stderr: thread 'main' panicked at *: fixed-size list of null items"]
    )


@pytest.mark.parametrize("how", ["option", "ini"])
def test_in_process_is_asked_for_by_an_option_or_the_ini_file(pytester: pytest.Pytester, how: str) -> None:
    if how == "ini":
        pytester.makeini("[pytest]\nlance_in_process = true\n")
    options = ["--lance-in-process"] if how == "option" else []
    result = suite(pytester, "--lance-driver", WRONG_DRIVER, *options, "--lance-suite", "readers", "--co")
    result.stdout.fnmatch_lines([f"lance driver: {WRONG_DRIVER} (*"])


def test_the_environment_variable_names_the_driver(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("LANCE_CONFORMANCE_DRIVER", WRONG_DRIVER)
    result = suite(pytester, "--lance-suite", "readers", *only("ref-tags"))
    result.assert_outcomes(failed=1)


def test_expected_failures_are_xfailed_with_their_reason(pytester: pytest.Pytester) -> None:
    path = expectations_file(pytester, "wrong", SOME_CASES)
    result = suite(
        pytester, "--lance-driver", WRONG_DRIVER, "--lance-expectations", str(path), "-rx", *only(*SOME_CASES)
    )
    result.assert_outcomes(xfailed=2)
    result.stdout.fnmatch_lines(
        ["XFAIL*::ref-tags - fragment.physical-rows-include-deleted: drops the last row of ref-tags*"]
    )
    assert result.ret == pytest.ExitCode.OK


def test_an_expectation_that_passes_fails_the_run(pytester: pytest.Pytester) -> None:
    path = expectations_file(pytester, "reference", ("ref-tags",))
    result = suite(pytester, "--lance-driver", "reference", "--lance-expectations", str(path), *only(*SOME_CASES))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "readers ref-tags: fixed",
            "  passes although the expectations record it as failing (fragment.physical-rows-include-deleted: *",
        ]
    )


def test_junit_xml_has_one_testcase_per_check(pytester: pytest.Pytester) -> None:
    path = expectations_file(pytester, "wrong", ("ref-restore",))
    xml = pytester.path / "junit.xml"
    suite(
        pytester,
        "--lance-driver",
        WRONG_DRIVER,
        "--lance-expectations",
        str(path),
        f"--junitxml={xml}",
        *only(*SOME_CASES),
    )
    cases = {case.get("name"): case for case in ET.parse(xml).getroot().iter("testcase")}
    assert set(cases) == set(SOME_CASES)
    assert cases["ref-tags"].find("failure") is not None
    assert "expected 5 rows, got 4" in cases["ref-tags"].find("failure").text
    skipped = cases["ref-restore"].find("skipped")
    assert skipped is not None and skipped.get("type") == "pytest.xfail"


def test_lance_json_writes_each_checks_status_with_the_driver_and_run_date(pytester: pytest.Pytester) -> None:
    """``--lance-json``: one entry per check with its verdict's status (a
    failure, an expected failure), the driver as it describes itself
    and the day ``--lance-run-date`` files the run under; the summary counts
    what pytest reported."""
    path = expectations_file(pytester, "wrong", ("ref-restore",))
    out = pytester.path / "results" / "run.json"
    result = suite(
        pytester,
        "--lance-driver",
        WRONG_DRIVER,
        "--lance-expectations",
        str(path),
        "--lance-json",
        str(out),
        "--lance-run-date",
        "2026-11-02",
        *only(*SOME_CASES),
    )
    result.assert_outcomes(failed=1, xfailed=1)
    document = json.loads(out.read_text())
    check_document(document)
    assert {c["check"]: c["status"] for c in document["checks"]} == {
        "ref-tags": "fail",
        "ref-restore": "expected-failure",
    }
    assert document["summary"]["readers"] == {
        "pass": 0,
        "fail": 1,
        "not-applicable": 0,
        "expected-failure": 1,
        "fixed": 0,
    }
    assert document["run"]["run_date"] == "2026-11-02" and document["run"]["generated"][:10] != ""
    assert WRONG_DRIVER in document["driver"]["name"] and document["suites"] == sorted(s.value for s in Suite)
    assert document["expectations"] == str(path)


def test_a_bad_run_date_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = suite(pytester, "--lance-driver", "reference", "--lance-json", "x.json", "--lance-run-date", "29/11/2026")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert not (pytester.path / "x.json").exists()


def test_the_suite_without_a_driver_says_what_is_missing(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("LANCE_CONFORMANCE_DRIVER", raising=False)
    result = suite(pytester, "--lance-suite", "readers")
    result.stdout.fnmatch_lines(["*conformance.suite needs the implementation to check: --lance-driver*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_an_unknown_driver_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = suite(pytester, "--lance-driver", "no_such_driver_module")
    result.stderr.fnmatch_lines(["ERROR: unknown driver 'no_such_driver_module'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_an_unknown_suite_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = suite(pytester, "--lance-driver", "reference", "--lance-suite", "readers,speed")
    result.stderr.fnmatch_lines(["ERROR: --lance-suite: unknown suite 'speed'*"])


def test_other_test_runs_are_left_alone(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("LANCE_CONFORMANCE_DRIVER", raising=False)
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "lance driver" not in result.stdout.str()


def test_the_property_suite_finds_a_driver_that_loses_rows(pytester: pytest.Pytester) -> None:
    """The reference-writes-driver-reads property fails for the wrong driver
    with a shrunk counterexample; both properties hold for the reference."""
    wrong = suite(pytester, "--lance-driver", WRONG_DRIVER, "--lance-suite", "properties")
    # It does not write: the other direction is not applicable.
    wrong.assert_outcomes(failed=1, skipped=1)
    wrong.stdout.fnmatch_lines(["properties reference-writes-driver-reads: fail", "  expected 1 rows, got 0"])
    suite(pytester, "--lance-driver", "reference", "--lance-suite", "properties").assert_outcomes(passed=2)


def test_checks_needing_a_capability_the_driver_lacks_are_skipped_naming_it(pytester: pytest.Pytester) -> None:
    """The wrong driver reads but does not write: every writer step and
    conflict cell is not applicable, never passed."""
    result = suite(pytester, "--lance-driver", WRONG_DRIVER, "--lance-suite", "writers,conflicts", "-rs")
    outcomes = result.parseoutcomes()
    assert set(outcomes) == {"skipped"} and outcomes["skipped"] > 100
    result.stdout.fnmatch_lines(["SKIPPED * not applicable: the driver lacks the 'write' capability*"])


#: Two cells the reference resolves as conflicts, one it commits.
CONFLICT_CELLS = ("delete/delete:same-rows", "update_config/update_config:same-config-key", "append/append:any")


def test_conflict_cells_pass_for_the_reference_and_fail_for_a_writer_ignoring_the_read_version(
    pytester: pytest.Pytester,
) -> None:
    selected = only(*CONFLICT_CELLS)
    reference = suite(pytester, "--lance-driver", "reference", "--lance-suite", "conflicts", *selected)
    reference.assert_outcomes(passed=3)
    blind = suite(pytester, "--lance-driver", BLIND_WRITER, "--lance-suite", "conflicts", *selected)
    blind.assert_outcomes(passed=1, failed=2)
    blind.stdout.fnmatch_lines(
        [
            "conflicts delete/delete:same-rows: fail",
            "  the second write ended in committed, where the stored matrix records reference/reference retryable*",
        ]
    )


def test_the_writer_script_passes_for_the_reference_step_by_step(pytester: pytest.Pytester) -> None:
    result = suite(pytester, "--lance-driver", "reference", "--lance-suite", "writers", "-v", "-rs")
    result.stdout.fnmatch_lines(["*::create PASSED*", "*::history PASSED*"])
    # The reference has no upsert: that step is not applicable, the others pass.
    result.assert_outcomes(passed=16, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED * not applicable: the driver does not perform upsert"])
