"""The grids built from real results: the golden cases read by real drivers,
and the stored conflict matrix judged against the upstream page."""

from __future__ import annotations

import pytest

from conformance.conflict_matrix.model import Mode, PageVerdict, stored_matrix
from conformance.conflict_matrix.model import Outcome as Measured
from conformance.ecosystem.conflicts import REQUIREMENT, conflicts_grid, judge
from conformance.ecosystem.model import Status
from conformance.ecosystem.readers import readers_grid
from conformance.ecosystem.run import load_cases
from conformance.fixtures import default_corpus
from conformance.fixtures.verify import verify_corpus
from conformance.requirements import load_requirements

CASES = {"crafted-external-row-ids", "pylance-types", "ref-tags"}


def test_the_readers_grid_keeps_each_case_with_its_features_and_expectation():
    pytest.importorskip("lance")
    corpus = default_corpus()
    cases = load_cases(corpus)
    results = verify_corpus(corpus, "reference", only=CASES) + verify_corpus(corpus, "pylance", only=CASES)
    grid = readers_grid(results, cases)
    assert grid.columns == ("reference", "pylance")
    assert set(grid.rows) == {"lance 14.0.2", "lance-conformance 0.1.0"}
    outcomes = {(cell.column, o.case): o for cell in grid.cells for o in cell.outcomes}
    assert len(outcomes) == 2 * len(CASES)
    deviation = cases["crafted-external-row-ids"].deviation_for("pylance")
    assert deviation is not None
    xfail = outcomes["pylance", "crafted-external-row-ids"]
    assert xfail.status is Status.EXPECTED_FAILURE and xfail.problems
    assert xfail.expectation == f"{deviation.requirement}: {deviation.explanation}"
    assert xfail.requirements[0] == deviation.requirement
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
