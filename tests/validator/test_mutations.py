"""Every error rule fires on a dataset mutated to break it, and only then.

Each registered mutation (tests/validator/mutations_*.py) runs on a fresh copy
of a valid base dataset: before it, the rule is silent; after it, the rule
reports an error, and no other error rule fires except those the mutation
declares it cannot help tripping.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from conformance.validator import Severity, all_rules, validate

from . import mutate

for module in pkgutil.iter_modules([str(Path(mutate.__file__).parent)]):
    if module.name.startswith("mutations_"):
        importlib.import_module(f"tests.validator.{module.name}")

MUTATIONS = mutate.MUTATIONS


def _errors(root) -> dict[str, list[str]]:
    report = validate(root, all_versions=True)
    found: dict[str, list[str]] = {}
    for finding in report.findings:
        if finding.severity is Severity.ERROR:
            found.setdefault(finding.rule, []).append(finding.message)
    return found


@pytest.mark.parametrize("case", MUTATIONS, ids=[f"{m.rule}:{m.name}" for m in MUTATIONS])
def test_the_mutation_trips_its_rule_and_only_it(case, base_datasets, tmp_path):
    root = mutate.copy_dataset(base_datasets[case.base], tmp_path / "ds")
    before = _errors(root)
    assert case.rule not in before, f"{case.rule} fires before the mutation: {before[case.rule]}"
    assert not before, f"the base dataset {case.base} is not clean: {before}"

    case.apply(root)
    after = _errors(root)
    assert case.rule in after, f"{case.rule} did not fire; errors were {after}"
    unexpected = set(after) - {case.rule} - case.also
    assert not unexpected, f"the mutation also tripped {sorted(unexpected)}: {[after[r] for r in unexpected]}"


def test_every_error_rule_has_a_mutation():
    mutated = {m.rule for m in MUTATIONS}
    missing = [r.id for r in all_rules() if r.severity is Severity.ERROR and r.id not in mutated]
    assert not missing, f"error rules without a mutation test: {missing}"
