"""``lance-conformance dashboard`` over real results of two days and three
implementations (the ``two_days`` fixture: ``matrix`` filed under yesterday
with ``--run-date``, ``writer-check`` run today): what ``results.json``
holds, what the index and the implementation pages show, and how files the
dashboard cannot read are reported.

The expected numbers are counted here from the input documents themselves,
by the rule docs/dashboard.md states (passed: pass or fixed; failed: fail or
expected failure; the rest did not apply)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from conformance.cli import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from conformance.describe import load_schema
from tests.conformance.dashboard.conftest import DRIVERS, run_cli

PASSING, FAILING = {"pass", "fixed"}, {"fail", "expected-failure"}


def counted(statuses: list[str]) -> tuple[int, int, int]:
    return sum(s in PASSING for s in statuses), sum(s in FAILING for s in statuses), len(statuses)


def matrix_counts(document: dict) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(implementation, suite) -> (passed, failed, total), from the matrix's
    readers grid (a driver is a column) and writers grid (a row)."""
    implementation = {d["name"]: d["info"]["implementation"] for d in document["drivers"]}
    expected = {}
    for grid in document["grids"]:
        axis = {"readers": "column", "writers": "row"}.get(grid["id"])
        if axis is None:
            continue
        for name in DRIVERS:
            statuses = [o["status"] for c in grid["cells"] if c[axis] == name for o in c["outcomes"]]
            expected[implementation[name], grid["id"]] = counted(statuses)
    return expected


def rate_cells(page: Path) -> list[dict[str, str]]:
    """The data attributes of every pass-rate cell of a page, with its shown rate."""
    cells = []
    for attributes, shown in re.findall(
        r'<td class="rate [^"]*" ([^>]*)><a class="value"[^>]*>([^<]*)</a>', page.read_text()
    ):
        cell = dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', attributes))
        cell["shown"] = shown
        cells.append(cell)
    return cells


@pytest.fixture(scope="session")
def site(two_days, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    code, printed = run_cli(["dashboard", str(two_days.results), "--out", str(out)])
    assert code == EXIT_OK, printed
    assert "3 implementations, 2 days" in printed and "0 files not read" in printed
    return out


def test_results_json_holds_each_implementation_and_suite_of_both_days(two_days, site):
    document = json.loads((site / "results.json").read_text())
    jsonschema.validate(document, load_schema("dashboard-results.schema.json"))
    matrix = json.loads(two_days.matrix.read_text())
    writers = json.loads(two_days.writer_check.read_text())
    today = writers["run"]["run_date"]
    assert today != two_days.yesterday and matrix["run_date"] == two_days.yesterday

    found = {(r["implementation"], r["suite"], r["run_date"]): r for r in document["results"]}
    expected = {(impl, suite, two_days.yesterday): n for (impl, suite), n in matrix_counts(matrix).items()}
    expected["lancedb", "writers", today] = counted([step["status"] for step in writers["steps"]])
    assert {key: (r["passed"], r["failed"], r["total"]) for key, r in found.items()} == expected
    assert {impl for impl, _, _ in found} == {"reference", "pylance", "lancedb"}
    lancedb = found["lancedb", "readers", two_days.yesterday]
    assert 0 < lancedb["pass_rate"] < 1  # the tiny corpus holds a case LanceDB is known to fail
    assert lancedb["release"] == next(d["info"]["version"] for d in matrix["drivers"] if d["name"] == "lancedb")
    assert lancedb["suite_version"] == matrix["versions"]["lance-conformance"]
    assert lancedb["source"] == f"{two_days.yesterday}/matrix.json"
    assert document["problems"] == []


def test_the_index_shows_the_latest_run_of_each_implementation_and_suite(two_days, site):
    """LanceDB's writers cell is today's writer-check (the later day), its
    readers cell yesterday's matrix; each shows the rate of its counts."""
    today = json.loads(two_days.writer_check.read_text())["run"]["run_date"]
    cells = {(c["data-implementation"], c["data-suite"]): c for c in rate_cells(site / "index.html")}
    assert set(cells) == {(i, s) for i in ("reference", "pylance", "lancedb") for s in ("readers", "writers")}
    assert cells["lancedb", "writers"]["data-date"] == today
    assert cells["lancedb", "readers"]["data-date"] == two_days.yesterday
    assert cells["pylance", "writers"]["data-date"] == two_days.yesterday
    for cell in cells.values():
        passed, applied = int(cell["data-passed"]), int(cell["data-applied"])
        assert cell["shown"] == f"{passed / applied * 100:.1f}%"


def test_an_implementation_page_shows_its_releases_and_each_day(two_days, site):
    page = site / "implementations" / "lancedb.html"
    text = page.read_text()
    cells = rate_cells(page)
    over_time = text[text.index('id="over-time"') :]
    for day in (two_days.yesterday, json.loads(two_days.writer_check.read_text())["run"]["run_date"]):
        assert f'<tr data-date="{day}">' in over_time
    # One chart point per day and suite with a result: readers yesterday, writers on both days.
    assert text.count("<circle ") == 3
    matrix = json.loads(two_days.matrix.read_text())
    release = next(d["info"]["version"] for d in matrix["drivers"] if d["name"] == "lancedb")
    assert {c["data-release"] for c in cells} == {release}  # the matrix's and the writer-check's LanceDB
    # Every run links to its input, copied into the site.
    for link in set(re.findall(r'href="\.\./(inputs/[^"]+)"', text)):
        assert (site / link).read_bytes() == (two_days.results / link.removeprefix("inputs/")).read_bytes()


def test_files_it_cannot_read_are_named_in_warnings_and_left_out(two_days, tmp_path, capsys):
    """A file no adapter recognises, one that is not JSON, a writer-check
    report that breaks its schema and one without a run date (as written
    before reports were stamped): each is a warning line naming the file and
    the problem, exit 1, and the site is built from the rest."""
    results = tmp_path / "results"
    results.mkdir()
    report = json.loads(two_days.writer_check.read_text())
    (results / "good.json").write_text(json.dumps(report))
    (results / "other.json").write_text(json.dumps({"name": "not results"}))
    (results / "truncated.json").write_text(two_days.writer_check.read_text()[:200])
    broken = dict(report, steps=[dict(report["steps"][0], status="great")])
    (results / "broken.json").write_text(json.dumps(broken))
    (results / "unstamped.json").write_text(json.dumps({k: v for k, v in report.items() if k != "run"}))
    out = tmp_path / "site"

    assert run_cli(["dashboard", str(results), "--out", str(out)])[0] == EXIT_FINDINGS
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]
    assert len(warnings) == 4
    said = {re.search(r"warning: (\S+):", line).group(1): line for line in warnings}
    assert set(said) == {"other.json", "truncated.json", "broken.json", "unstamped.json"}
    assert "not a results document of a known kind" in said["other.json"]
    assert "not JSON" in said["truncated.json"]
    assert "writer-conformance-report.schema.json" in said["broken.json"] and "steps/0/status" in said["broken.json"]
    assert "no run date" in said["unstamped.json"]
    document = json.loads((out / "results.json").read_text())
    assert {r["source"] for r in document["results"]} == {"good.json"}
    assert {p["path"] for p in document["problems"]} == set(said)
    assert "Files not read (4)" in (out / "index.html").read_text()


def test_a_site_rebuilt_inside_the_results_reads_only_the_results(two_days, tmp_path):
    """The site written into RESULTS_DIR is not read back as results, and a
    rebuild leaves no page of an implementation whose results went away."""
    results = tmp_path / "results"
    (results / "today").mkdir(parents=True)
    (results / "today" / "w.json").write_bytes(two_days.writer_check.read_bytes())
    (results / "old").mkdir()
    (results / "old" / "m.json").write_bytes(two_days.matrix.read_bytes())
    site = results / "site"
    assert run_cli(["dashboard", str(results), "--out", str(site)])[0] == EXIT_OK
    assert {p.name for p in (site / "implementations").iterdir()} == {"lancedb.html", "pylance.html", "reference.html"}
    (results / "old" / "m.json").unlink()
    code, printed = run_cli(["dashboard", str(results), "--out", str(site)])
    assert code == EXIT_OK and "1 results from 1 files" in printed
    assert {p.name for p in (site / "implementations").iterdir()} == {"lancedb.html"}
    assert not (site / "inputs" / "old").exists()


def test_a_directory_without_results_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.json").write_text("[]")
    assert run_cli(["dashboard", str(tmp_path / "empty"), "--out", str(tmp_path / "site")])[0] == EXIT_USAGE
    assert "holds no results" in capsys.readouterr().err
    assert run_cli(["dashboard", str(tmp_path / "missing"), "--out", str(tmp_path / "site")])[0] == EXIT_USAGE
    (tmp_path / "file").write_text("")
    assert run_cli(["dashboard", str(tmp_path / "empty"), "--out", str(tmp_path / "file")])[0] == EXIT_USAGE
    assert not (tmp_path / "site").exists()
