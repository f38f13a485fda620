"""No false finding on real indices: every version of every dataset of
``tests/index_scenarios.py`` (pylance 14, every index type it creates, through
appends, delta and merged segments, deletes, updates, compaction with and
without a deferred remap) validates without an error or a warning, shallow
and deep, under every rule the validator has: the index rules of each index
page are picked up as they are registered, with no change here. And the
reference reads every version's rows as pylance does."""

from __future__ import annotations

import json

import pytest

from conformance.comparison.tables import compare_tables
from conformance.requirements import load_requirements
from conformance.spec_revisions import NEWEST
from conformance.validator import Severity, all_rules, validate
from conformance.validator.engine import applies_under
from reference_impl.dataset import Dataset
from tests.index_scenarios import FRAGMENT_REUSE_INDEX, SCENARIOS, IndexScenario, build_all

lance = pytest.importorskip("lance")


def _problems(scenario: IndexScenario, deep: bool) -> list[str]:
    report = validate(scenario.path, all_versions=True, deep=deep)
    assert report.versions == sorted(Dataset.open(scenario.path).versions()), scenario.name
    # Every registered rule of the newest revision ran: the index rules of every slice included.
    expected = {rule.id for rule in all_rules() if (deep or not rule.deep) and applies_under(rule, NEWEST)}
    assert set(report.rules) == expected, sorted(expected ^ set(report.rules))
    # Every finding, infos included, cites requirements the catalog has.
    cited = {requirement for finding in report.findings for requirement in finding.requirements}
    assert cited <= set(load_requirements()), sorted(cited - set(load_requirements()))
    return [
        f"v{f.version} {f.rule}: {f.message} ({f.location})"
        for f in report.findings
        if f.severity in (Severity.ERROR, Severity.WARNING)
    ]


def _assert_clean(datasets: dict[str, IndexScenario], deep: bool) -> None:
    failures = {name: _problems(scenario, deep) for name, scenario in sorted(datasets.items())}
    failures = {name: found for name, found in failures.items() if found}
    assert not failures, json.dumps(failures, indent=2)


def test_the_scenarios_hold_every_index_type_and_step(pylance_index_datasets):
    """What the other tests rely on: each scenario walked every step, and the
    latest version still lists every index it made (plus the fragment reuse
    index where compaction deferred the remap)."""
    assert sorted(pylance_index_datasets) == sorted(SCENARIOS)
    for name, scenario in pylance_index_datasets.items():
        versions = list(scenario.steps.values())
        assert versions == sorted(versions) and len(set(versions)) == len(versions), (name, scenario.steps)
        names = {index.name for index in lance.dataset(str(scenario.path)).describe_indices()}
        deferred = "compacted_deferred" in scenario.steps
        assert deferred is not scenario.stable_row_ids, name
        assert names == {spec.name for spec in scenario.indices} | ({FRAGMENT_REUSE_INDEX} if deferred else set())
    types = {spec.index_type for scenario in pylance_index_datasets.values() for spec in scenario.indices}
    assert types >= {
        "BTREE",
        "BITMAP",
        "LABEL_LIST",
        "ZONEMAP",
        "BLOOMFILTER",
        "NGRAM",
        "INVERTED",
        "JSON",
        "MINHASHLSH",
    }
    assert types >= {"IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ", "IVF_HNSW_FLAT", "IVF_RQ"}


@pytest.mark.parametrize(
    "deep",
    # A deep run makes every comparison a default run makes on its sample; each type's own module
    # checks the sampling (what a default run says it left unchecked). Shallow here runs nightly.
    [pytest.param(False, marks=pytest.mark.slow), True],
    ids=["shallow", "deep"],
)
def test_every_version_of_every_index_scenario_is_clean(pylance_index_datasets, deep):
    _assert_clean(pylance_index_datasets, deep)


def _same_rows_as_pylance(datasets: dict[str, IndexScenario]) -> int:
    compared = 0
    for name, scenario in sorted(datasets.items()):
        for version in Dataset.open(scenario.path).versions():
            ours = Dataset.open(scenario.path, version).to_table(with_row_id=True)
            theirs = lance.dataset(str(scenario.path), version=version).to_table(with_row_id=True)
            comparison = compare_tables(theirs, ours)
            assert comparison.equal, (name, version, comparison.differences)
            compared += 1
    return compared


def test_the_reference_reads_every_index_scenario_as_pylance_does(pylance_index_datasets):
    compared = _same_rows_as_pylance(pylance_index_datasets)
    assert compared >= sum(max(s.steps.values()) for s in pylance_index_datasets.values())


@pytest.mark.slow
def test_ten_times_larger_index_scenarios_are_clean_and_read_alike(tmp_path):
    """The same walks with ten times the rows (a few thousand per fragment,
    twenty IVF partitions): more pages per index file, more partitions."""
    datasets = build_all(tmp_path, scale=10)
    _assert_clean(datasets, deep=True)
    _same_rows_as_pylance(datasets)
