"""``validate --all-versions`` works incrementally (issue 17): a fragment that
many versions list unchanged is decoded and checked once, and the report is
the one validating each version on its own gives (same findings, same order).
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest

from conformance.fixtures import default_corpus
from conformance.mutations import all_mutations, copy_dataset
from conformance.validator import validate
from conformance.validator.facts import fragment_checks
from conformance.validator.registry import Scope
from conformance.validator.ruleset import all_rules
from reference_impl.fragments import Fragment

CASES = sorted(path for path in (default_corpus() / "cases").glob("*/dataset") if path.is_dir())
#: Mutations of the rules whose findings come from per-fragment checks, and of the
#: fragment, deletion and base path rules that walk the same fragments.
FRAGMENT_MUTATIONS = [m for m in all_mutations() if m.rule.split("/")[0] in ("data-file", "fragment", "base-path")]


def _version_findings(report: dict) -> list[dict]:
    """The findings of version-scoped rules (dataset-scoped ones run once per
    call, so a call per version repeats them)."""
    dataset_rules = {r.id for r in all_rules() if r.scope is Scope.DATASET}
    return [f for f in report["findings"] if f["version"] is not None and f["rule"] not in dataset_rules]


def _incremental_and_plain(root, store=None) -> tuple[list[dict], list[dict]]:
    """The version-scoped findings of one ``--all-versions`` run, and those of
    a fresh run per version (nothing shared between versions), concatenated."""
    together = validate(root, all_versions=True, manifest_store=store).to_json()
    apart = []
    for version in together["versions"]:
        apart.extend(_version_findings(validate(root, version=version, manifest_store=store).to_json()))
    return _version_findings(together), apart


@pytest.mark.parametrize("root", CASES, ids=[path.parent.name for path in CASES])
def test_golden_case_reports_the_same_incrementally(root):
    together, apart = _incremental_and_plain(root)
    assert together == apart


@pytest.mark.parametrize("case", FRAGMENT_MUTATIONS, ids=[m.id for m in FRAGMENT_MUTATIONS])
def test_mutated_dataset_reports_the_same_incrementally(case, base_datasets, tmp_path):
    root = copy_dataset(base_datasets[case.base], tmp_path / "ds")
    store = case.store_for(root)
    case.apply(root)
    together, apart = _incremental_and_plain(root, store)
    if case.rule.split("/")[0] == "data-file":
        assert any(f["rule"] == case.rule for f in together), "the mutation is not reported at all"
    assert together == apart


def test_a_defect_in_a_kept_fragment_is_reported_in_every_version_that_lists_it(tmp_path):
    """A data file removed after the fifth of eight appends: its fragment is
    checked once, and data-file/exists reports it in each of the versions
    that list it (all eight), at that version's location."""
    import lance

    root = tmp_path / "ds"
    for number in range(8):
        lance.write_dataset(pa.table({"id": [number]}), root, mode="append" if number else "create")
    first = sorted((root / "data").iterdir(), key=lambda p: p.stat().st_mtime_ns)[0]
    first.unlink()
    report = validate(root, all_versions=True)
    missing = [f for f in report.findings if f.rule == "data-file/exists"]
    assert [f.version for f in missing] == list(range(1, 9))
    assert all(f.location and f.location.endswith("#fragments[0].files[0]") for f in missing)


def test_per_fragment_work_grows_with_fragments_not_versions(tmp_path, monkeypatch):
    """Fifty appends: version v lists v fragments (1,275 listings in all), of
    which 50 are distinct. Each distinct fragment is decoded once and checked
    once; a plain walk would decode and check 1,275."""
    import lance

    root = tmp_path / "ds"
    for number in range(50):
        lance.write_dataset(pa.table({"id": [number]}), root, mode="append" if number else "create")

    decoded: Counter[int] = Counter()
    checked: Counter[int] = Counter()
    decode, check = Fragment.from_proto.__func__, fragment_checks.check_fragments

    def counting_decode(cls, message):
        decoded[message.id] += 1
        return decode(cls, message)

    def counting_check(view, fragments):
        checked.update(fragment.id for fragment in fragments)
        return check(view, fragments)

    monkeypatch.setattr(Fragment, "from_proto", classmethod(counting_decode))
    monkeypatch.setattr(fragment_checks, "check_fragments", counting_check)
    report = validate(root, all_versions=True)
    assert len(report.versions) == 50
    assert sorted(checked) == list(range(50)) and set(checked.values()) == {1}, checked
    # Each fragment is decoded once from the manifests; each append's
    # transaction records its new fragment again (with the placeholder id 0),
    # which shares that decode: 50, not the 1,275 + 50 of a plain walk.
    assert sorted(decoded) == list(range(50)), decoded
    assert sum(decoded.values()) == 50, decoded


def test_only_the_selected_rules_checks_run(tmp_path, monkeypatch):
    """A run of rules that read no footer reads none (the per-fragment checks
    of rules not selected do not run), and a selected rule's findings are
    those of a run of every rule."""
    import lance

    from conformance.validator.facts import data_files as data_file_facts

    root = tmp_path / "ds"
    for number in range(3):
        lance.write_dataset(pa.table({"id": [number]}), root, mode="append" if number else "create")
    first = lance.dataset(root, version=1).get_fragments()[0].data_files()[0].path
    (root / "data" / first).unlink()  # listed by all three versions
    reads: list[str] = []
    read_facts = data_file_facts._read_facts

    def counting(located):
        reads.append(located.key)
        return read_facts(located)

    monkeypatch.setattr(data_file_facts, "_read_facts", counting)
    selected = validate(root, all_versions=True, rules=["data-file/exists", "data-file/extension"])
    assert reads == []
    assert [f.rule for f in selected.findings] == ["data-file/exists"] * 3
    everything = validate(root, all_versions=True)
    assert len(reads) == 2
    wanted = ("data-file/exists", "data-file/extension")
    assert [f for f in everything.findings if f.rule in wanted] == selected.findings
