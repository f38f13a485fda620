"""The drivers' answers to index queries (reference, pylance 14, LanceDB) on
the index-query suite's datasets, and the datasets themselves: written by
pylance 14, with and without indices, each query meaningful on each."""

from __future__ import annotations

import pytest

from conformance.drivers import lancedb_driver, pylance_driver, reference
from conformance.drivers.protocol import QueryKind, QueryNotSupported
from conformance.drivers.queries import Nearest, answer_from_rows, answer_problems, nearest_gap
from conformance.suite.query_datasets import CASES, QueryDatasets, Scenario, build_datasets

#: Nearest-neighbour answers are ordered: the fixtures keep their k + 1
#: nearest (squared, at most ~30) distances this far apart, a hundred times
#: what float32 arithmetic can get wrong at that size, so no driver can
#: reorder them.
MIN_NEAREST_GAP = 1e-4
FILTER_KINDS = {kind for kind in QueryKind if kind is not QueryKind.NEAREST}


@pytest.fixture(scope="module")
def datasets() -> QueryDatasets:
    return build_datasets()


def _scan(path) -> dict[str, list]:
    table = reference.Dataset.open(path).to_table(with_row_id=True)
    return {name: table.column(name).to_pylist() for name in table.column_names}


@pytest.mark.parametrize("scenario", list(Scenario), ids=lambda s: s.value)
def test_the_two_datasets_of_a_scenario_hold_the_same_rows_under_the_same_ids(datasets, scenario):
    pair = datasets.scenarios[scenario]
    assert _scan(pair.indexed) == _scan(pair.plain)
    assert reference.Dataset.open(pair.plain).indices == []
    assert {index.name for index in reference.Dataset.open(pair.indexed).indices} >= {
        f"{column}_idx" for column in ("score", "category", "bucket", "labels", "text", "vec")
    }


@pytest.mark.parametrize("scenario", list(Scenario), ids=lambda s: s.value)
def test_every_query_is_meaningful_on_every_scenario(datasets, scenario):
    """A filter selects some rows but not all (but the updated word, found
    only where rows were updated); the nearest rows are far from a tie."""
    pair = datasets.scenarios[scenario]
    scan = _scan(pair.indexed)
    total = len(scan["_rowid"])
    for case in CASES:
        answer = pair.reference(case.query)
        assert answer == answer_from_rows(case.query, scan["_rowid"], scan[case.query.column])
        if isinstance(case.query, Nearest):
            assert len(answer) == case.query.k
            assert nearest_gap(case.query, scan["_rowid"], scan[case.query.column]) > MIN_NEAREST_GAP, case.name
        elif case.name == "text-match-updated":
            assert bool(answer) == (scenario in (Scenario.UPDATED, Scenario.STABLE_UPDATED)), case.name
        else:
            assert 0 < len(answer) < total, case.name


def test_the_indices_cover_what_each_scenario_says(datasets):
    live = {scenario: datasets.scenarios[scenario].coverage("score") for scenario in Scenario}
    assert all(coverage.covers_live_rows for coverage in live.values())
    # Compaction remaps the BTREE onto the new fragment; the ZONEMAP stays on the old ones.
    compacted = datasets.scenarios[Scenario.COMPACTED]
    assert compacted.coverage("score").segments[0][1] == compacted.coverage("score").live_fragments
    assert not compacted.coverage("bucket").covers_live_rows
    # Deferred remap: the old bitmaps, read through the fragment reuse index.
    assert datasets.scenarios[Scenario.COMPACTED_DEFERRED].coverage("bucket").covers_live_rows
    appended = datasets.scenarios[Scenario.APPENDED].coverage("vec")
    assert len(appended.live_fragments) == 4 and len(appended.segments[0][1]) == 3


@pytest.mark.parametrize("scenario", [Scenario.APPENDED, Scenario.DELETED], ids=lambda s: s.value)
def test_pylance_answers_through_the_index_and_past_it_on_the_indexed_dataset(datasets, scenario):
    """``use_index=False`` plans a scan even where every column has an index
    (``use_scalar_index=False``, a flat search, ``contains_tokens``)."""
    pair = datasets.scenarios[scenario]
    for case in CASES:
        expected = pair.reference(case.query)
        through = pylance_driver.query(pair.indexed, case.query, use_index=True)
        past = pylance_driver.query(pair.indexed, case.query, use_index=False)
        assert answer_problems(case.query, expected, through.row_ids) == [], case.name
        assert answer_problems(case.query, expected, past.row_ids) == [], case.name
        assert through.used_index is True, (case.name, through.plan)
        assert past.used_index is False, (case.name, past.plan)


@pytest.mark.parametrize("scenario", [Scenario.UPDATED, Scenario.COMPACTED_DEFERRED], ids=lambda s: s.value)
def test_lancedb_answers_through_the_index_and_by_a_scan_without_one(datasets, scenario):
    pair = datasets.scenarios[scenario]
    for case in CASES:
        expected = pair.reference(case.query)
        through = lancedb_driver.query(pair.indexed, case.query, use_index=True)
        scanned = lancedb_driver.query(pair.plain, case.query, use_index=False)
        assert answer_problems(case.query, expected, through.row_ids) == [], case.name
        assert answer_problems(case.query, expected, scanned.row_ids) == [], case.name
        assert through.used_index is True and scanned.used_index is False, case.name


def test_lancedb_refuses_to_scan_a_filter_its_index_would_answer(datasets):
    """LanceDB has no switch to plan a filter past a scalar index: asked to
    scan an indexed column it refuses rather than answer through the index;
    full-text and nearest-neighbour queries it scans past the index."""
    pair = datasets.scenarios[Scenario.FRESH]
    for case in CASES:
        if case.query.kind in FILTER_KINDS - {QueryKind.FULL_TEXT}:
            with pytest.raises(QueryNotSupported, match="has no switch to scan"):
                lancedb_driver.query(pair.indexed, case.query, use_index=False)
        else:
            answer = lancedb_driver.query(pair.indexed, case.query, use_index=False)
            assert answer.used_index is False, case.name
            assert answer_problems(case.query, pair.reference(case.query), answer.row_ids) == [], case.name


def test_the_reference_answers_by_its_scan_whatever_it_is_asked(datasets):
    pair = datasets.scenarios[Scenario.STABLE_UPDATED]
    one_of_each_kind = {case.query.kind: case for case in CASES}.values()
    for case in one_of_each_kind:
        for use_index in (True, False):
            answer = reference.query(pair.indexed, case.query, use_index=use_index)
            assert answer.row_ids == pair.reference(case.query) and answer.used_index is False
