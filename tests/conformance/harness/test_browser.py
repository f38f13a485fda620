"""A harness run's page in a real browser: headless Chromium (Debian's,
through chromedriver and selenium; tests/browser.py) opens the report.html of
a real run and reads what a person sees: a failed attempt's error, an
anomaly's sentence, and a timeline whose first bar starts at its left edge."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from conformance.harness.executors import ProcessExecutor
from conformance.harness.faulty import FAULTY_WRITERS
from conformance.harness.report import anomaly_document, failed_attempts, outcome_of
from conformance.harness.runner import RunResult, run
from conformance.harness.spec import FAULT_KILL_MID_COMMIT, RunSpec
from conformance.harness.workloads import parse_workload, workload_to_json
from conformance.validator.facts.text import plural
from tests.browser import save_screenshot

#: Where each bar and its lane are drawn (the page's own layout, in CSS pixels).
_BARS = """
return Array.from(document.querySelectorAll('#timeline .bar')).map(function (bar) {
  var lane = bar.closest('.lane').getBoundingClientRect(), box = bar.getBoundingClientRect();
  return [bar.getAttribute('data-op-id'), box.left - lane.left, box.right - lane.left, lane.width];
});
"""


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory) -> RunResult:
    """The stale-read faulty writer racing in processes, writers 0 and 1
    killed around a commit (kill-mid-commit): its page has anomalies and
    failed attempts (their outcome unknown, their error saying why), whatever
    the machine's speed."""
    root = tmp_path_factory.mktemp("harness-page")
    faulty = FAULTY_WRITERS["stale-read"]
    spec = RunSpec(
        uri=str(root / "t.lance"),
        storage_options={},
        writer=f"faulty:{faulty.name}",
        writers=3,
        operations=6,
        workloads=workload_to_json(parse_workload(faulty.workload)),
        seed=3,
        stable_row_ids=True,
        naming="v2",
        fault=FAULT_KILL_MID_COMMIT,
    )
    result = run(spec, ProcessExecutor(), root / "out", validate=False)
    assert faulty.anomaly in result.report.names()
    assert any(outcome_of(a) == "unknown" for a in failed_attempts(result.history))
    return result


def test_the_page_shows_a_failed_attempts_error_and_the_anomalies_as_sentences(browser, faulty_run, tmp_path):
    browser.get((faulty_run.out_dir / "report.html").as_uri())
    documents = [anomaly_document(a) for a in faulty_run.report.anomalies]
    verdict = browser.find_element(By.ID, "verdict")
    assert verdict.is_displayed() and verdict.text.startswith(plural(len(documents), "anomaly", "anomalies"))

    failed = failed_attempts(faulty_run.history)
    rows = browser.find_elements(By.CSS_SELECTOR, "#failed tr.failed")
    assert [row.get_attribute("data-op-id") for row in rows] == [a.op_id for a in failed]
    # A killed writer's last attempt: its outcome unknown, its error the journal's (any conflict is listed too).
    killed = next(a for a in failed if outcome_of(a) == "unknown")
    row = next(row for row in rows if row.get_attribute("data-op-id") == killed.op_id)
    error = row.find_element(By.CSS_SELECTOR, "pre.attempt-error")
    assert error.is_displayed() and error.text == killed.error == "the writer died during the operation"
    unknown = sum(outcome_of(a) == "unknown" for a in failed)
    assert browser.find_element(By.ID, "total-unknown").text == str(unknown)

    sentences = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "#anomalies > li.anomaly > p.sentence")]
    assert sentences == [document["sentence"] for document in documents]
    shown = browser.find_element(By.CSS_SELECTOR, "#anomalies > li.anomaly")
    assert shown.is_displayed() and shown.get_attribute("data-name") == documents[0]["name"]
    versions = shown.find_element(By.CSS_SELECTOR, ".witness .versions").text
    assert versions == ", ".join(str(v) for v in documents[0]["witness"]["versions"])
    save_screenshot(browser, "harness-run", tmp_path)


def test_the_timeline_starts_at_the_first_attempt(browser, faulty_run, tmp_path):
    """The earliest attempt's bar starts at its lane's left edge (the set-up,
    before the writers started, is not drawn) and every bar stays inside its
    lane; one lane per writer."""
    browser.get((faulty_run.out_dir / "report.html").as_uri())
    bars = {op_id: (left, right, width) for op_id, left, right, width in browser.execute_script(_BARS)}
    attempts = [a for a in faulty_run.history if a.writer >= 0]
    assert set(bars) == {a.op_id for a in attempts}
    first = min(attempts, key=lambda a: a.start)
    assert abs(bars[first.op_id][0]) < 1.0
    # A bar is at least 2 px wide (page.css), so one that ends at the edge may overrun it by that much.
    assert all(-0.5 <= left and right <= width + 2.5 for left, right, width in bars.values())
    lanes = browser.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")
    assert [int(lane.get_attribute("data-writer")) for lane in lanes] == list(range(faulty_run.spec.writers))
    browser.execute_script("document.getElementById('timeline').scrollIntoView()")
    save_screenshot(browser, "harness-timeline", tmp_path)
