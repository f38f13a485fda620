"""The ecosystem matrix page (conformance/report/html.py), read back with
html.parser and compared with the matrix it was built from."""

from __future__ import annotations

from html.parser import HTMLParser

from conformance.ecosystem.model import Status
from conformance.expectations import shipped_expectations
from conformance.report.html import render_html, write_html
from tests.conformance.report.small_matrix import BROKEN_CASE


class PageReader(HTMLParser):
    """The cells (their attributes), the details blocks' texts by id, the
    requirement links, every run of text, and anything that would fetch from
    elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict] = []
        self.details: dict[str, list[str]] = {}
        self.requirement_links: list[dict] = []
        self.external: list[str] = []
        self.ids: set[str] = set()
        #: The page's text, character references resolved, one string per run of text.
        self.texts: list[str] = []
        self._details: str | None = None
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if tag == "td" and "cell" in (attributes.get("class") or "").split():
            self.cells.append(attributes)
        if tag in ("script", "img", "iframe") and attributes.get("src"):
            self.external.append(f"{tag} src={attributes['src']}")
        if tag == "link":
            self.external.append(f"link {attributes}")
        if tag == "a" and "requirement" in (attributes.get("class") or ""):
            self.requirement_links.append(attributes)
        if self._details is not None:
            self._depth += 1
        elif tag == "div" and "details" in (attributes.get("class") or "").split():
            self._details, self._depth = attributes["id"], 1
            self.details[self._details] = []

    def handle_endtag(self, tag):
        if self._details is not None:
            self._depth -= 1
            if self._depth == 0:
                self._details = None

    def handle_data(self, data):
        self.texts.append(data)
        if self._details is not None:
            self.details[self._details].append(data)


def _read(page: str) -> PageReader:
    reader = PageReader()
    reader.feed(page)
    reader.close()
    return reader


def test_every_cell_is_on_the_page_with_its_status_and_its_details(ecosystem_matrix, tmp_path):
    """One coloured cell per cell of every grid, in the grid's status; each
    opens a details block naming every case of the cell, and the failing
    ones with their messages."""
    path = write_html(tmp_path / "matrix.html", ecosystem_matrix)
    page = _read(path.read_text(encoding="utf-8"))
    expected = {(cell.row, cell.column): cell for grid in ecosystem_matrix.grids for cell in grid.cells}
    assert len(page.cells) == sum(len(grid.cells) for grid in ecosystem_matrix.grids)
    for attributes in page.cells:
        cell = expected[attributes["data-row"], attributes["data-column"]]
        assert attributes["data-status"] == cell.status.value
        assert f"status-{cell.status.value}" in attributes["class"]
        text = "".join(page.details[attributes["data-details"]])
        for outcome in cell.outcomes:
            assert outcome.case in text
            for problem in outcome.problems:
                assert problem in text
    assert page.external == []


def test_the_broken_case_fails_for_both_readers_and_its_requirements_link_upstream(ecosystem_matrix):
    readers = ecosystem_matrix.grid("readers")
    failing = [(cell, outcome) for cell in readers.cells for outcome in cell.outcomes if outcome.status is Status.FAIL]
    assert {(cell.column, outcome.case) for cell, outcome in failing} == {
        ("reference", BROKEN_CASE),
        ("pylance", BROKEN_CASE),
    }
    assert all("num_rows" in " ".join(outcome.problems) for _, outcome in failing)
    page = _read(render_html(ecosystem_matrix))
    cited = {requirement for _, outcome in failing for requirement in outcome.requirements}
    links = {link["href"] for link in page.requirement_links}
    for requirement in cited:
        url = ecosystem_matrix.requirements[requirement].url
        assert url is not None and url.startswith("https://github.com/") and url in links


def test_expected_failures_versions_and_drivers_are_shown(ecosystem_matrix):
    readers = ecosystem_matrix.grid("readers")
    xfails = [o for c in readers.cells if c.column == "pylance" for o in c.outcomes if o.expectation]
    assert [o.case for o in xfails] == ["crafted-external-row-ids"]
    assert xfails[0].status is Status.EXPECTED_FAILURE
    import lance

    page_text = render_html(ecosystem_matrix)
    page = _read(page_text)
    assert {"drivers", "versions", "expectations", "feature-filter", "details-panel"} <= page.ids
    shipped = shipped_expectations("pylance", lance.__version__)
    assert [(e.driver, e.suite, e.case, e.reason) for e in ecosystem_matrix.expectations] == [
        ("pylance", e.suite, e.case, e.reason) for e in shipped.entries
    ]
    texts = set(page.texts)
    for entry in shipped.entries:
        assert entry.reason in texts
    import pyarrow

    assert pyarrow.__version__ in page_text and ecosystem_matrix.versions["python"] in page_text


def test_text_from_the_results_is_escaped(ecosystem_matrix):
    """A problem message with markup in it stays text."""
    from dataclasses import replace

    grid = ecosystem_matrix.grids[0]
    cell = grid.cells[0]
    hostile = replace(cell.outcomes[0], status=Status.FAIL, problems=("<script>alert(1)</script>",))
    grid = replace(grid, cells=(replace(cell, outcomes=(hostile,)),))
    page_text = render_html(replace(ecosystem_matrix, grids=(grid,)))
    assert "<script>alert(1)</script>" not in page_text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page_text
