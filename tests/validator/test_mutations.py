"""Every rule reports a dataset mutated to break it, and only then; and every
requirement a rule checks is broken by some mutation.

Each registered mutation (:mod:`conformance.mutations.topics`) runs on a fresh
copy of its valid base dataset: before it, the base draws no error or
warning; after it, the mutation's rule reports a new finding at its severity
citing the requirements the mutation breaks, and no other rule reports an
error or warning except those the mutation declares it cannot help tripping.
(An info rule may already report on a base, for what pylance does its own
way; the mutation must add a finding of its own.)
"""

from __future__ import annotations

import pytest

from conformance.mutations import all_mutations, broken_requirements, copy_dataset
from conformance.mutations.bases import BASES
from conformance.validator import Severity, all_rules, validate

MUTATIONS = all_mutations()
SERIOUS = (Severity.ERROR, Severity.WARNING)


def _findings(root) -> dict[str, list]:
    found: dict[str, list] = {}
    for finding in validate(root, all_versions=True).findings:
        found.setdefault(finding.rule, []).append(finding)
    return found


def _serious(found: dict[str, list]) -> dict[str, list[str]]:
    return {rule: [f.message for f in fs if f.severity in SERIOUS] for rule, fs in found.items()
            if any(f.severity in SERIOUS for f in fs)}


@pytest.mark.parametrize("case", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_the_mutation_trips_its_rule_and_only_it(case, base_datasets, tmp_path):
    root = copy_dataset(base_datasets[case.base], tmp_path / "ds")
    before = _findings(root)
    assert not _serious(before), f"the base dataset {case.base} is not clean: {_serious(before)}"
    if case.severity in SERIOUS:
        assert case.rule not in before, f"{case.rule} reports before the mutation: {before[case.rule]}"

    case.apply(root)
    after = _findings(root)
    reported = [f for f in after.get(case.rule, []) if f not in before.get(case.rule, [])]
    assert reported, f"{case.rule} reported nothing new; findings were {after}"
    assert any(f.severity is case.severity for f in reported), reported
    assert all(set(case.breaks) <= set(f.requirements) for f in reported), reported
    unexpected = set(_serious(after)) - {case.rule} - case.also
    assert not unexpected, f"the mutation also tripped {sorted(unexpected)}: {[after[r] for r in unexpected]}"


def test_every_requirement_a_rule_checks_has_a_mutation():
    """From the catalog side: a new rule, or a new requirement cited by an old
    one, fails here until a mutation breaks it."""
    cited = {requirement for r in all_rules() for requirement in r.requirements}
    missing = sorted(cited - set(broken_requirements()))
    assert not missing, f"requirements checked by a rule but broken by no mutation: {missing}"


def test_every_rule_has_a_mutation():
    mutated = {m.rule for m in MUTATIONS}
    missing = [r.id for r in all_rules() if r.id not in mutated]
    assert not missing, f"rules without a mutation: {missing}"


def test_every_mutation_starts_from_a_known_base():
    assert {m.base for m in MUTATIONS} <= set(BASES)
