"""The grids built from real results: the golden cases read by real drivers,
and the stored conflict matrix judged against the upstream page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.conflict_matrix.model import Mode, PageVerdict, stored_matrix
from conformance.conflict_matrix.model import Outcome as Measured
from conformance.ecosystem.conflicts import REQUIREMENT, conflicts_grid, judge, judged_modes
from conformance.ecosystem.model import Status
from conformance.ecosystem.readers import reader_order, readers_grid
from conformance.ecosystem.run import conflict_expectations, load_cases
from conformance.ecosystem.writers import HISTORY, writers_grid
from conformance.expectations import Expectation, ExpectationKind, Expectations, shipped_expectations
from conformance.fixtures import default_corpus
from conformance.fixtures.verify import verify_corpus
from conformance.requirements import load_requirements
from conformance.writer_conformance import SCRIPT, run_writer_conformance

CASES = {"crafted-external-row-ids", "pylance-types", "ref-tags"}


def test_the_readers_grid_keeps_each_case_with_its_features_and_expectation():
    """pylance's shipped expectation for a case turns its failure into an
    expected failure naming the expectation's requirement first; the
    reference passes the case; features come from case.json."""
    pytest.importorskip("lance")
    corpus = default_corpus()
    cases = load_cases(corpus)
    shipped = shipped_expectations("pylance")
    results = verify_corpus(corpus, "reference", only=CASES) + verify_corpus(
        corpus, "pylance", only=CASES, expectations=shipped
    )
    grid = readers_grid(results, cases)
    assert grid.columns == ("reference", "pylance")
    assert set(grid.rows) == {"lance 14.0.2", "lance-conformance 0.1.0"}
    outcomes = {(cell.column, o.case): o for cell in grid.cells for o in cell.outcomes}
    assert len(outcomes) == 2 * len(CASES)
    entry = shipped.lookup("readers", "crafted-external-row-ids")
    assert entry is not None
    xfail = outcomes["pylance", "crafted-external-row-ids"]
    assert xfail.status is Status.EXPECTED_FAILURE and xfail.problems
    assert xfail.expectation is not None and xfail.expectation.startswith(f"{entry.requirement}: {entry.reason}")
    assert xfail.requirements[0] == entry.requirement
    assert outcomes["reference", "crafted-external-row-ids"].status is Status.PASS
    assert outcomes["pylance", "ref-tags"].features == tuple(sorted(cases["ref-tags"].features))
    assert grid.cell("lance-conformance 0.1.0", "pylance").status is Status.EXPECTED_FAILURE


def test_each_conflict_pair_is_judged_against_the_page_in_every_mode():
    matrix = stored_matrix()
    grid = conflicts_grid(matrix, load_requirements())
    assert sum(len(cell.outcomes) for cell in grid.cells) == len(matrix.cells) * len(Mode)
    for source in matrix.cells:
        cell = grid.cell(source.first.value, source.second.value)
        assert cell is not None
        for mode in Mode:
            outcome = next(o for o in cell.outcomes if o.case == f"{source.subcase} [{mode.value}]")
            expected = source.page.expects()
            measured = source.outcomes[mode]
            if measured in (Measured.NOT_APPLICABLE, Measured.NOT_REACHABLE, Measured.PENDING) or expected is None:
                assert outcome.status is Status.NOT_APPLICABLE
            elif measured is expected and mode not in source.problems:
                assert outcome.status is Status.PASS
            else:
                assert outcome.status is (Status.EXPECTED_FAILURE if source.discrepancy else Status.FAIL)
            assert REQUIREMENT in outcome.requirements
            assert outcome.features == tuple(sorted({f"txn.{source.first.value}", f"txn.{source.second.value}"}))


def test_a_conflict_cell_cites_the_rule_naming_both_operations():
    matrix = stored_matrix()
    source = matrix.cell("overwrite/delete:any")
    assert source.page is PageVerdict.INCOMPATIBLE
    outcome = judge(source, Mode.PYLANCE_PYLANCE, ("conflict.delete-after-overwrite-incompatible", REQUIREMENT))
    assert outcome.status is Status.PASS
    grid = conflicts_grid(matrix, load_requirements())
    cell = grid.cell("overwrite", "delete")
    assert cell is not None
    assert cell.outcomes[0].requirements == ("conflict.delete-after-overwrite-incompatible", REQUIREMENT)


def test_a_conflict_expectation_of_the_second_writer_is_applied_and_stale_when_the_cell_agrees():
    """An expectation of the implementation committing second turns its
    departure from the page into an expected failure; listed for a cell
    that agrees with the page, it is fixed (stale), and the first writer's
    expectations do not count."""
    matrix = stored_matrix()
    departing = matrix.cell("create_index/create_index:same-singleton-index-mem-wal")
    agreeing = matrix.cell("overwrite/delete:any")
    reference_departing = matrix.cell("rewrite/create_index:fragment-reuse-index")
    entries = tuple(
        Expectation("conflicts", cell.id, REQUIREMENT, "measured", kind=ExpectationKind.SPEC_DIFFERENCE)
        for cell in (departing, agreeing, reference_departing)
    )
    expectations = {"pylance": Expectations("pylance", entries)}
    assert judge(departing, Mode.PYLANCE_PYLANCE).status is Status.FAIL
    expected = judge(departing, Mode.PYLANCE_PYLANCE, expectations=expectations)
    assert expected.status is Status.EXPECTED_FAILURE and expected.expectation == f"{REQUIREMENT}: measured"
    # pylance commits first here: its entry does not speak for the reference.
    second_is_reference = judge(reference_departing, Mode.PYLANCE_REFERENCE, expectations=expectations)
    assert second_is_reference.expectation is not None and "measured" not in second_is_reference.expectation
    stale = judge(agreeing, Mode.PYLANCE_PYLANCE, expectations=expectations)
    assert stale.status is Status.FIXED and stale.problems


def test_with_the_shipped_expectations_no_conflict_cell_fails_the_run():
    """Every departure from the page measured in the stored matrix is one the
    second writer's shipped expectations list (the reference's file is empty),
    or a recorded reference/pylance discrepancy; no entry is stale."""
    shipped = {"pylance": shipped_expectations("pylance", "14.0.2"), "reference": shipped_expectations("reference")}
    assert shipped["reference"].entries == ()
    grid = conflicts_grid(stored_matrix(), load_requirements(), shipped)
    failing = [(cell.row, cell.column, o.case) for cell in grid.cells for o in cell.outcomes if o.status.fails_run]
    assert failing == []
    cells = {cell.id for cell in stored_matrix().cells}
    discrepancies = (Path(__file__).parents[3] / "docs" / "spec-discrepancies.md").read_text()
    section = discrepancies.split("\n## Conflict matrix\n", 1)[1].split("\n## ", 1)[0]
    for entry in shipped["pylance"].entries:
        if entry.suite == "conflicts":
            assert entry.case in cells and entry.reproducer
            item = re.search(r'"Conflict matrix", item (\d+)', entry.reason)
            assert item is not None and re.search(rf"^{item.group(1)}\. \*\*", section, re.MULTILINE)


def test_the_writers_grid_has_one_cell_per_step_and_the_history_check():
    """The reference run through the writer script, read back by itself:
    every step is a cell, as the report says, plus the history check."""
    report = run_writer_conformance("reference", readers=["reference"])
    grid = writers_grid([("reference", report)])
    assert grid.rows == ("reference",)
    assert grid.columns == (*(step.id for step in SCRIPT), HISTORY)
    for step in report.steps:
        cell = grid.cell("reference", step.id)
        assert cell is not None and len(cell.outcomes) == 1
        outcome = cell.outcomes[0]
        assert outcome.case.startswith(f"{step.id}: ")
        assert outcome.problems == tuple(step.messages())
        assert outcome.status.value == ("not-applicable" if step.status.value == "skipped" else step.status.value)
    history = grid.cell("reference", HISTORY)
    assert history is not None and history.status is (Status.FAIL if report.history_problems else Status.PASS)
    assert grid.cell("reference", "tag").outcomes[0].features == ("refs.tags",)


def test_readers_are_ordered_reference_first_and_releases_by_version():
    names = ["pylance@10.0.0", "pylance", "lancedb", "reference", "pylance@0.20.0", "pylance@2.0.1", "pylance@0.9.0"]
    assert reader_order(names) == [
        "reference",
        "lancedb",
        "pylance",
        "pylance@0.9.0",
        "pylance@0.20.0",
        "pylance@2.0.1",
        "pylance@10.0.0",
    ]


def test_the_conflict_grid_judges_only_the_implementations_under_test():
    """Without pylance's expectations, a stored pylance/pylance cell departs
    from the page and fails; judged for the reference only, no pylance mode
    is in the grid and nothing fails. A pinned release is not the release
    measured, and a worker of an implementation is that implementation."""
    every = conflicts_grid(stored_matrix(), load_requirements(), {})
    assert any(o.status.fails_run and o.case.endswith("/pylance]") for c in every.cells for o in c.outcomes)
    modes = judged_modes({"reference"})
    assert modes and all(mode.second.value == "reference" for mode in modes)
    grid = conflicts_grid(stored_matrix(), load_requirements(), {}, modes)
    outcomes = [o for cell in grid.cells for o in cell.outcomes]
    assert outcomes and not any(o.case.endswith("/pylance]") for o in outcomes)
    assert not any(o.status.fails_run for o in outcomes)
    mine = Expectations("pylance")
    assert conflict_expectations(["pylance@0.20.0", "worker:pylance", "duckdb"], {"worker:pylance": mine}) == {
        "pylance": mine
    }
