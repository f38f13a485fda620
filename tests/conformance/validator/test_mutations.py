"""Every rule reports a dataset mutated to break it, and only then; and every
requirement a rule checks is broken by some mutation.

Each registered mutation (:mod:`conformance.mutations.topics`) runs on a fresh
copy of its valid base dataset: before it, the base draws no error or
warning; after it, the mutation's rule reports a new finding at its severity
citing the requirements the mutation breaks, and no other rule reports an
error or warning except those the mutation declares it cannot help tripping.
(An info rule may already report on a base, for what pylance does its own
way; the mutation must add a finding of its own.)

A pristine copy of each base is validated once per session and way of
validating it (with an external manifest store or not, deep or not), not
before every mutation: the copies are byte for byte the same, so what the
validator finds on one it finds on every other (the ``pristine_findings`` fixture).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import InvalidArgument

from conformance import strategies
from conformance.mutations import Mutation, all_mutations, copy_dataset
from conformance.mutations.bases import BASES
from conformance.requirements import load_requirements
from conformance.spec_revisions import NEWEST, SpecRevision
from conformance.validator import Severity, all_rules, validate
from conformance.validator.ruleset import rules_by_id
from tests.hypothesis_budget import examples

MUTATIONS = all_mutations()
SERIOUS = (Severity.ERROR, Severity.WARNING)
#: The rules that run only in a deep validation: their mutations are validated with --deep.
DEEP_RULES = {rule.id for rule in rules_by_id().values() if rule.deep}


def _findings(root, store=None, deep: bool = False, spec_revision: SpecRevision = NEWEST) -> dict[str, list]:
    """Findings by rule, every version validated under ``spec_revision``; a
    message or location naming the dataset's root names it as ``<root>``
    (a message may quote a path under it), so that the
    findings of two copies of one dataset compare equal wherever the copies are."""
    found: dict[str, list] = {}
    report = validate(root, all_versions=True, manifest_store=store, deep=deep, spec_revision=spec_revision)
    for finding in report.findings:
        finding = replace(
            finding,
            message=finding.message.replace(str(root), "<root>"),
            location=finding.location and finding.location.replace(str(root), "<root>"),
        )
        found.setdefault(finding.rule, []).append(finding)
    return found


@pytest.fixture(scope="session")
def pristine_findings(base_datasets, tmp_path_factory) -> Callable[[Mutation], dict[str, list]]:
    """What the validator finds on an unbroken copy of a mutation's base,
    validated as the mutation's dataset will be (with an empty external
    manifest store beside it when the mutation uses one, deep when its rule
    is deep, under the rule's revision): computed once per base and way, and shared by the mutations
    of that base (a copy is validated whole in about a second for the
    index bases, and 371 mutations share 15 bases)."""
    found: dict[tuple[str, bool, bool, SpecRevision], dict[str, list]] = {}

    def findings(case: Mutation) -> dict[str, list]:
        deep = case.rule in DEEP_RULES
        key = (case.base, case.manifest_store, deep, case.spec_revision)
        if key not in found:
            root = copy_dataset(base_datasets[case.base], tmp_path_factory.mktemp("pristine") / "ds")
            found[key] = _findings(root, case.store_for(root), deep, case.spec_revision)
        return found[key]

    return findings


def _serious(found: dict[str, list]) -> dict[str, list[str]]:
    return {
        rule: [f.message for f in fs if f.severity in SERIOUS]
        for rule, fs in found.items()
        if any(f.severity in SERIOUS for f in fs)
    }


@pytest.mark.parametrize("case", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_the_mutation_trips_its_rule_and_only_it(case, base_datasets, pristine_findings, tmp_path):
    root = copy_dataset(base_datasets[case.base], tmp_path / "ds")
    store = case.store_for(root)
    deep = case.rule in DEEP_RULES
    # The rule's own revision: the newest, or an earlier one for a rule of
    # superseded requirements only (Mutation.spec_revision).
    revision = case.spec_revision
    before = pristine_findings(case)
    assert not _serious(before), f"the base dataset {case.base} is not clean: {_serious(before)}"
    if case.severity in SERIOUS:
        assert case.rule not in before, f"{case.rule} reports before the mutation: {before[case.rule]}"

    case.apply(root)
    after = _findings(root, store, deep, revision)
    reported = [f for f in after.get(case.rule, []) if f not in before.get(case.rule, [])]
    assert reported, f"{case.rule} reported nothing new; findings were {after}"
    # A finding cites its rule's requirements, among which the registry
    # already requires ``breaks`` (test_a_mutation_must_name_what_its_rule_cites).
    assert any(f.severity is case.severity for f in reported), reported
    unexpected = set(_serious(after)) - {case.rule} - case.also
    assert not unexpected, f"the mutation also tripped {sorted(unexpected)}: {[after[r] for r in unexpected]}"


def test_every_requirement_a_rule_checks_has_a_mutation():
    """From the catalog side: every catalog requirement that some rule cites
    can be drawn from ``strategies.mutations()``. A new rule, or a new
    requirement cited by an old one, fails here until a mutation breaks it."""
    cited_by = {}
    for r in all_rules():
        for requirement in r.requirements:
            cited_by.setdefault(requirement, []).append(r.id)
    checked = [requirement for requirement in load_requirements() if requirement in cited_by]
    assert set(cited_by) <= set(checked), "rules cite requirements missing from the catalog"
    missing = {r: cited_by[r] for r in checked if r not in strategies.mutated_requirements()}
    assert not missing, f"requirements checked by a rule (listed) but broken by no mutation: {missing}"


@settings(
    max_examples=examples(1 / 5),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(drawn=strategies.mutations())
def test_a_drawn_mutation_breaks_the_requirement_it_names(base_datasets, drawn):
    """Property of the public strategy: whatever ``mutations()`` draws,
    applying it to a copy of its base makes the validator report a finding
    that cites the drawn requirement, at the severity of the rule the
    mutation names."""
    assert drawn.requirement_id in drawn.mutation.breaks
    with tempfile.TemporaryDirectory(prefix="drawn-mutation-") as directory:
        root = drawn.apply_to_copy(base_datasets, Path(directory))
        store, deep = drawn.mutation.store_for(root), drawn.mutation.rule in DEEP_RULES
        findings = validate(
            root, all_versions=True, manifest_store=store, deep=deep, spec_revision=drawn.mutation.spec_revision
        ).findings
    citing = [f for f in findings if f.rule == drawn.mutation.rule and drawn.requirement_id in f.requirements]
    assert any(f.severity is drawn.mutation.severity for f in citing), findings


def test_mutations_can_be_restricted_to_requirements():
    """``mutations(ids)`` draws only mutations breaking one of ``ids``, and
    refuses a requirement nothing breaks."""
    wanted = ["fragment.id-unique", "deletion.file-exists"]

    @settings(max_examples=20, database=None)
    @given(drawn=strategies.mutations(wanted))
    def check(drawn):
        assert drawn.requirement_id in wanted
        assert drawn.requirement_id in drawn.mutation.breaks

    check()
    with pytest.raises(InvalidArgument, match="no-such.requirement"):  # a caller's mistake (ValueError before issue 11)
        strategies.mutations(["no-such.requirement"])


def test_every_rule_has_a_mutation():
    mutated = {m.rule for m in MUTATIONS}
    missing = [r.id for r in all_rules() if r.id not in mutated]
    assert not missing, f"rules without a mutation: {missing}"


def test_every_mutation_starts_from_a_known_base():
    assert {m.base for m in MUTATIONS} <= set(BASES)


def test_a_mutation_must_name_what_its_rule_cites():
    """The registry refuses a mutation of an unknown rule, one that says it
    breaks a requirement its rule does not cite, and one of a rule citing
    several requirements that does not say which it breaks."""
    from conformance.mutations import MutationDeclarationError, mutation

    def noop(root):
        pass

    with pytest.raises(MutationDeclarationError, match="no rule"):
        mutation("no-such/rule")(noop)
    with pytest.raises(MutationDeclarationError, match="does not cite"):
        mutation("fragment/id-unique", breaks="deletion.file-exists")(noop)
    with pytest.raises(MutationDeclarationError, match="say which one it breaks"):
        mutation("refs/tag-name")(noop)
    assert not [m for m in all_mutations() if m.name == "noop"], "a refused mutation was registered"


def test_a_manifest_mutator_must_break_a_cited_requirement_once():
    """The registry refuses a manifest mutator for a requirement no rule
    cites, and a second one for a requirement that already has one."""
    from conformance.mutations import MutationDeclarationError, manifest_mutator, manifest_mutators

    def noop(manifest, indices):
        pass

    before = manifest_mutators()
    with pytest.raises(MutationDeclarationError, match="no rule cites"):
        manifest_mutator("no-such.requirement")(noop)
    with pytest.raises(MutationDeclarationError, match="registered twice"):
        manifest_mutator("fragment.id-unique")(noop)
    assert manifest_mutators() == before, "a refused manifest mutator was registered"
