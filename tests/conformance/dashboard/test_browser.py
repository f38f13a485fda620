"""The dashboard in a real browser (headless Chromium, tests/browser.py): the
site built from two days of real results over three implementations (the
``two_days`` fixture) is opened as a user opens it, and the pass rate read
from the page is the one counted from the input document."""

from __future__ import annotations

import json

from selenium.webdriver.common.by import By

from conformance.cli import EXIT_OK
from tests.browser import save_screenshot
from tests.conformance.dashboard.conftest import run_cli


def _lancedb_readers(matrix: dict) -> tuple[int, int]:
    """LanceDB's readers counts in the matrix document: (passed, applied)."""
    statuses = [
        o["status"]
        for grid in matrix["grids"]
        if grid["id"] == "readers"
        for cell in grid["cells"]
        if cell["column"] == "lancedb"
        for o in cell["outcomes"]
    ]
    passed = sum(s in ("pass", "fixed") for s in statuses)
    return passed, passed + sum(s in ("fail", "expected-failure") for s in statuses)


def test_the_browser_reads_a_pass_rate_equal_to_the_inputs(browser, two_days, tmp_path):
    """On the index, LanceDB's readers cell shows the pass rate of yesterday's
    matrix; following LanceDB's link, its page shows that rate on yesterday's
    row and today's writer-check on today's, with a chart point for each."""
    site = tmp_path / "site"
    assert run_cli(["dashboard", str(two_days.results), "--out", str(site)])[0] == EXIT_OK
    matrix = json.loads(two_days.matrix.read_text())
    passed, applied = _lancedb_readers(matrix)
    assert 0 < passed < applied
    expected = f"{passed / applied * 100:.1f}%"

    browser.get((site / "index.html").as_uri())
    cell = browser.find_element(By.CSS_SELECTOR, '#latest td.rate[data-implementation="lancedb"][data-suite="readers"]')
    assert cell.find_element(By.CSS_SELECTOR, "a.value").text == expected
    assert f"{passed}/{applied}" in cell.text and two_days.yesterday in cell.text
    save_screenshot(browser, "dashboard-index", tmp_path)

    browser.find_element(By.LINK_TEXT, "lancedb").click()
    assert browser.current_url.endswith("/implementations/lancedb.html")
    rows = {
        row.get_attribute("data-date"): row for row in browser.find_elements(By.CSS_SELECTOR, "#over-time tbody tr")
    }
    today = json.loads(two_days.writer_check.read_text())["run"]["run_date"]
    assert set(rows) == {two_days.yesterday, today}
    yesterday_readers = rows[two_days.yesterday].find_element(By.CSS_SELECTOR, 'td.rate[data-suite="readers"] a.value')
    assert yesterday_readers.text == expected
    steps = json.loads(two_days.writer_check.read_text())["steps"]
    written = sum(s["status"] in ("pass", "fixed") for s in steps)
    applied_steps = written + sum(s["status"] in ("fail", "expected-failure") for s in steps)
    today_writers = rows[today].find_element(By.CSS_SELECTOR, 'td.rate[data-suite="writers"] a.value')
    assert today_writers.text == f"{written / applied_steps * 100:.1f}%"
    series = {g.get_attribute("data-suite"): g for g in browser.find_elements(By.CSS_SELECTOR, "svg.chart g.series")}
    assert set(series) == {"readers", "writers"}
    assert len(series["readers"].find_elements(By.TAG_NAME, "circle")) == 1
    assert len(series["writers"].find_elements(By.TAG_NAME, "circle")) == 2
    save_screenshot(browser, "dashboard-lancedb", tmp_path)
