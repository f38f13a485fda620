"""The HTML pages in a real browser: headless Chromium (Debian's, through
chromedriver and selenium; tests/browser.py) opens the ecosystem matrix page
as a user would, clicks, reads what is shown, and saves screenshots as test
artifacts (a harness run's page: tests/conformance/harness/test_browser.py)."""

from __future__ import annotations

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conformance.ecosystem.model import Status, worst
from conformance.report.html import status_label, write_html
from tests.browser import save_screenshot
from tests.conformance.report.small_matrix import BROKEN_CASE

#: Each cell's (row, column) and whether it is shown (computed style), from the page.
_CELLS_SHOWN = """
return Array.from(document.querySelectorAll('td.cell')).map(function (c) {
  return [c.closest('section').id, c.getAttribute('data-row'), c.getAttribute('data-column'),
          getComputedStyle(c).visibility !== 'hidden', c.getAttribute('data-status'),
          c.querySelector('.count').textContent];
});
"""


def _open(browser, matrix, tmp_path):
    page = write_html(tmp_path / "matrix.html", matrix)
    browser.get(page.as_uri())
    return page


def test_clicking_a_failing_cell_shows_its_cases_messages_and_requirement_links(browser, ecosystem_matrix, tmp_path):
    """The readers grid's failing cell opens, in the details panel, the broken
    case with the message the run produced and a link for each requirement it
    concerns to the upstream document stating it; the cases that passed are
    listed too, after it."""
    _open(browser, ecosystem_matrix, tmp_path)
    grid = ecosystem_matrix.grid("readers")
    cell = next(c for c in grid.cells if c.status is Status.FAIL and c.column == "reference")
    failing = next(o for o in cell.outcomes if o.status is Status.FAIL)
    assert failing.case == BROKEN_CASE

    element = browser.find_element(
        By.CSS_SELECTOR, f'#grid-readers td.cell[data-row="{cell.row}"][data-column="reference"]'
    )
    assert element.get_attribute("data-status") == "fail"
    panel = browser.find_element(By.ID, "details-panel")
    assert not any(d.is_displayed() for d in panel.find_elements(By.CSS_SELECTOR, ".details"))
    element.click()

    shown = [d for d in panel.find_elements(By.CSS_SELECTOR, ".details") if d.is_displayed()]
    assert len(shown) == 1
    details = shown[0]
    outcomes = details.find_elements(By.CSS_SELECTOR, "li.outcome")
    assert outcomes[0].get_attribute("data-status") == "fail"  # the failing cases come first
    assert BROKEN_CASE in outcomes[0].text
    problems = [p.text for p in outcomes[0].find_elements(By.CSS_SELECTOR, ".problem")]
    assert problems == list(failing.problems) and any("num_rows" in p for p in problems)
    links = {a.text: a.get_attribute("href") for a in outcomes[0].find_elements(By.CSS_SELECTOR, "a.requirement")}
    assert set(links) == set(failing.requirements) and links
    for requirement, href in links.items():
        assert href == ecosystem_matrix.requirements[requirement].url
        assert ecosystem_matrix.requirements[requirement].statement in outcomes[0].text
    assert {o.get_attribute("data-status") for o in outcomes[1:]} <= {"pass", "expected-failure"}
    assert len(outcomes) == len(cell.outcomes)
    assert save_screenshot(browser, "matrix-failing-cell", tmp_path).stat().st_size > 0


def test_the_feature_filter_hides_cells_without_the_feature_and_recounts_the_others(
    browser, ecosystem_matrix, tmp_path
):
    """Choosing a feature leaves shown exactly the cells holding an outcome
    with that feature, each with the status and count of those outcomes only
    (the broken case's cells turn from expected failure to fail); choosing
    every feature shows every cell again, with the status and text it was
    rendered with."""
    _open(browser, ecosystem_matrix, tmp_path)
    feature = "refs.tags"  # the broken case has it, and so does the writers' tag step
    expected = {}
    for grid in ecosystem_matrix.grids:
        for cell in grid.cells:
            statuses = [o.status for o in cell.outcomes if feature in o.features]
            if statuses:
                expected[f"grid-{grid.id}", cell.row, cell.column] = (
                    worst(statuses).value,
                    status_label(statuses, cell.empty_label),
                )

    Select(browser.find_element(By.ID, "feature-filter")).select_by_value(feature)
    cells = browser.execute_script(_CELLS_SHOWN)
    shown = {(g, r, c): (status, count) for g, r, c, visible, status, count in cells if visible}
    assert shown == expected
    assert ("grid-readers", "lance-conformance 0.1.0", "pylance") in shown and len(shown) < len(cells)
    assert shown["grid-readers", "lance-conformance 0.1.0", "pylance"] == ("fail", "0/1 \u00b7 1 fail")
    hidden = browser.find_element(By.CSS_SELECTOR, '#grid-readers td.cell[data-row="lance 14.0.2"]')
    assert not hidden.is_displayed()
    save_screenshot(browser, "matrix-feature-filter", tmp_path)

    Select(browser.find_element(By.ID, "feature-filter")).select_by_value("")
    cells = browser.execute_script(_CELLS_SHOWN)
    assert all(visible for _, _, _, visible, _, _ in cells)
    shown = {(g, r, c): (status, count) for g, r, c, _, status, count in cells}
    for grid in ecosystem_matrix.grids:
        for cell in grid.cells:
            statuses = [o.status for o in cell.outcomes]
            assert shown[f"grid-{grid.id}", cell.row, cell.column] == (
                cell.status.value,
                status_label(statuses, cell.empty_label),
            )
    assert "n/a" in {count for _, count in shown.values()}  # the script labels as the page was rendered
