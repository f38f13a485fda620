"""The compatibility matrix's page in headless Chromium (tests/browser.py):
built from the small run of the installed pylance and 0.20.0, opened as a
user would, hovered, clicked and filtered."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conformance.report.compat_html import cell_label, write_compat_html
from tests.browser import save_screenshot

pytestmark = pytest.mark.old_pylance("0.20.0")

#: Each cell's feature, writer, reader, outcome, text and whether it is shown and dimmed, from the page.
_CELLS = """
return Array.from(document.querySelectorAll('td.cell')).map(function (c) {
  return [c.getAttribute('data-feature'), c.getAttribute('data-writer'), c.getAttribute('data-reader'),
          c.getAttribute('data-status'), c.textContent.trim(), c.offsetParent !== null,
          c.classList.contains('dimmed')];
});
"""


def _open(browser, document, tmp_path):
    page = write_compat_html(tmp_path / "compat.html", document)
    browser.get(page.as_uri())


def test_every_cell_of_the_document_is_in_its_features_grid_with_its_outcome(browser, small_compat, tmp_path):
    _, document = small_compat
    _open(browser, document, tmp_path)
    cells = browser.execute_script(_CELLS)
    assert sorted((f, w, r, o, text) for f, w, r, o, text, _, _ in cells) == sorted(
        (c["feature"], c["writer"], c["reader"], c["status"], cell_label(c)) for c in document["cells"]
    )
    # A release that did not write a feature has one row-wide cell saying why.
    not_written = [w for w in document["writes"] if w["status"] != "written"]
    rows = browser.find_elements(By.CSS_SELECTOR, "td.not-written")
    assert len(rows) == len(not_written) > 0
    titles = [r.get_attribute("title") for r in rows]
    assert sorted(titles) == sorted(w["detail"] for w in not_written)  # the whole reason on hover
    assert all(r.text.startswith(("not-offered: ", "write-error: ")) for r in rows)
    assert "not-reproduced" in browser.find_element(By.ID, "notes").get_attribute("innerHTML")


def test_a_failing_cells_error_shows_on_hover_and_on_click(browser, small_compat, tmp_path):
    _, document = small_compat
    _open(browser, document, tmp_path)
    failing = next(c for c in document["cells"] if c["status"] == "fail")
    selector = (
        f'section[data-feature="{failing["feature"]}"] td.cell[data-writer="{failing["writer"]}"]'
        f'[data-reader="{failing["reader"]}"]'
    )
    element = browser.find_element(By.CSS_SELECTOR, selector)
    assert failing["message"][:100] in element.get_attribute("title")  # the tooltip a hover shows
    panel = browser.find_element(By.ID, "details-panel")
    assert not any(d.is_displayed() for d in panel.find_elements(By.CSS_SELECTOR, ".details"))
    element.click()
    shown = [d for d in panel.find_elements(By.CSS_SELECTOR, ".details") if d.is_displayed()]
    assert len(shown) == 1
    assert failing["message"] in [p.text for p in shown[0].find_elements(By.CSS_SELECTOR, ".problem")]
    assert f"written by {failing['writer']}, read by {failing['reader']}" in shown[0].text
    assert save_screenshot(browser, "compat-failing-cell", tmp_path).stat().st_size > 0


def test_the_filters_show_one_features_grid_and_dim_other_outcomes(browser, small_compat, tmp_path):
    _, document = small_compat
    _open(browser, document, tmp_path)
    Select(browser.find_element(By.ID, "feature-filter")).select_by_value("file-2.2")
    cells = browser.execute_script(_CELLS)
    assert {f for f, _, _, _, _, shown, _ in cells if shown} == {"file-2.2"}
    Select(browser.find_element(By.ID, "outcome-filter")).select_by_value("refused")
    cells = browser.execute_script(_CELLS)
    undimmed = {(w, r) for f, w, r, _, _, shown, dimmed in cells if shown and not dimmed}
    expected = {
        (c["writer"], c["reader"]) for c in document["cells"] if c["feature"] == "file-2.2" and c["status"] == "refused"
    }
    assert undimmed == expected and expected
    save_screenshot(browser, "compat-filters", tmp_path)
    Select(browser.find_element(By.ID, "feature-filter")).select_by_value("")
    Select(browser.find_element(By.ID, "outcome-filter")).select_by_value("")
    cells = browser.execute_script(_CELLS)
    assert all(shown and not dimmed for *_, shown, dimmed in cells)
