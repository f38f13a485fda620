"""Each kind of input the dashboard reads, from a real run of the command
that writes it (a harness run, a pytest run of the plugin with
``--lance-json``), normalised into results (compat documents: tests/conformance/compat); and
the run date options."""

from __future__ import annotations

import datetime
import json

import pytest

from conformance.cli import main
from conformance.dashboard.inputs import read_file, read_results
from conformance.dashboard.model import tally
from conformance.run_stamp import RunDateError, parse_run_date, stamp
from tests.conformance.suite.test_plugin import SOME_CASES, WRONG_DRIVER, expectations_file, only, suite

pytest_plugins = ["pytester"]


def test_a_harness_run_is_one_check_of_its_writer_on_the_day_it_ran(tmp_path, capsys):
    """The run's ``report.json`` is read with its directory: the writer's
    release from ``writer.json``, the day from the history's wall clock;
    ``run.json``, ``writer.json`` and the dataset are not inputs of their own."""
    out = tmp_path / "results" / "harness-run"
    argv = ["harness", "run", "--writer", "reference", "--writers", "1", "--operations", "2"]
    assert main([*argv, "--master", "local-processes", "--out", str(out)]) == 0
    capsys.readouterr()
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    started = datetime.datetime.fromtimestamp(min(a["start"] for a in history), datetime.timezone.utc)

    inputs = read_results(tmp_path / "results")
    assert inputs.problems == [] and inputs.sources == ["harness-run/report.json"]
    (found,) = inputs.results
    writer = json.loads((out / "writer.json").read_text())["driver"]
    assert (found.suite, found.implementation, found.release) == ("harness", "reference", writer["version"])
    assert found.run_date == started.date().isoformat()
    assert (found.passed, found.failed, found.total) == (1, 0, 1)  # the checker found no anomaly


def test_a_plugin_run_gives_one_result_per_suite(pytester: pytest.Pytester):
    """A pytest run of the suite with ``--lance-json``, read back: the counts
    are pytest's outcomes (an expected failure counts as failed), the day the
    one ``--lance-run-date`` named."""
    path = expectations_file(pytester, "wrong", ("ref-restore",))
    out = pytester.path / "results" / "wrong.json"
    args = ["--lance-driver", WRONG_DRIVER, "--lance-expectations", str(path), "--lance-suite", "readers"]
    result = suite(pytester, *args, "--lance-json", str(out), "--lance-run-date", "2026-10-31", *only(*SOME_CASES))
    outcomes = result.parseoutcomes()
    (found,) = read_file(out, "wrong.json")
    assert (found.suite, found.kind, found.run_date) == ("readers", "pytest", "2026-10-31")
    assert found.passed == outcomes.get("passed", 0) == 0
    assert found.failed == outcomes["failed"] + outcomes["xfailed"] == 2


def test_statuses_count_as_the_model_says():
    assert tally(["pass", "fixed", "fail", "expected-failure", "not-applicable", "skipped"]) == tally(
        ["pass", "pass", "fail", "fail", "skipped", "skipped"]
    )
    counts = tally(["pass", "fixed", "expected-failure", "not-applicable"])
    assert (counts.passed, counts.failed, counts.total, counts.applied) == (2, 1, 4, 3)
    with pytest.raises(ValueError, match="unknown status 'bogus'"):
        tally(["pass", "bogus"])


@pytest.mark.parametrize("text", ["2026-13-01", "29/11/2026", "20261129", "yesterday"])
def test_a_run_date_must_be_a_day(text, capsys):
    with pytest.raises(RunDateError):
        parse_run_date(text)
    with pytest.raises(SystemExit) as exit:
        main(["writer-check", "--driver", "reference", "--run-date", text])
    assert exit.value.code == 2 and "--run-date" in capsys.readouterr().err


def test_a_stamp_files_a_run_under_the_day_given_and_keeps_when_it_ended():
    filed = stamp("2026-01-02", generated="2026-11-29T23:59:59+00:00")
    assert filed.to_json() == {
        "generated": "2026-11-29T23:59:59+00:00",
        "run_date": "2026-01-02",
        "suite_version": filed.suite_version,
    }
    assert stamp(generated="2026-11-29T23:59:59+00:00").run_date == "2026-11-29"
