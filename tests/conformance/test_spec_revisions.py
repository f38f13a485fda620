"""The format revision model (conformance/spec_revisions.py) and the catalog's
record of which revision introduced each requirement."""

from __future__ import annotations

import json
from importlib import resources
from itertools import pairwise

import pytest

from conformance.requirements import load_requirements
from conformance.spec_revisions import (
    NEWEST,
    OLDEST,
    REVISIONS,
    UNDEFINED_FLAG,
    FlagUse,
    Pairing,
    UnknownRevisionError,
    first_defining,
    is_at_or_before,
    position,
    revision,
)
from conformance.validator.engine import applies_under, iter_rules, newest_revision_of
from conformance.validator.ruleset import rules_by_id


def _schema(name: str) -> dict:
    return json.loads(resources.files("conformance").joinpath("schemas", name).read_text(encoding="utf-8"))


def test_revisions_have_unique_names_and_start_with_the_seeds():
    names = [item.name for item in REVISIONS]
    assert len(set(names)) == len(names)
    assert OLDEST.name == "seeds" and NEWEST is REVISIONS[-1]


def test_a_later_revision_keeps_every_flag_of_an_earlier_one_unchanged():
    """The model's monotonicity, which keeps older datasets valid: no later
    revision drops or redefines a bit an earlier one defines."""
    for earlier, later in pairwise(REVISIONS):
        assert earlier.defined_mask & ~later.defined_mask == 0, (earlier.name, later.name)
        for flag in earlier.flags:
            assert later.flag(flag.bit) == flag, (later.name, flag.bit)


def test_every_flag_is_a_single_bit_defined_once_per_revision():
    for item in REVISIONS:
        bits = [flag.bit for flag in item.flags]
        assert len(set(bits)) == len(bits), item.name
        assert all(bit > 0 and bit & (bit - 1) == 0 for bit in bits), item.name


def test_the_seeds_revision_defines_flags_1_to_16():
    assert OLDEST.defined_mask == 1 | 2 | 4 | 8 | 16
    assert OLDEST.undefined_bits(32 | 1) == [32]


def test_the_newest_revision_matches_the_upstream_flag_table():
    """upstream versioning.md, Current Feature Flags (lance-format/lance):
    bits up to 2048, the writer-only ones, the two paired flags, 4096 unknown."""
    assert NEWEST.defined_mask == 4095
    assert {flag.bit for flag in NEWEST.flags if flag.use is FlagUse.WRITER_ONLY} == {8, 32}
    assert {flag.bit for flag in NEWEST.flags if flag.use is FlagUse.NEITHER} == {4}
    paired = {flag.bit for flag in NEWEST.flags if flag.pairing is Pairing.BOTH_OR_NEITHER}
    assert paired == {256, 2048} == {flag.bit for flag in NEWEST.flags if flag.persists}
    assert NEWEST.undefined_bits(4096 | 2048) == [4096]


def test_first_defining_names_the_later_revision():
    assert first_defining(1024, after=OLDEST) is revision("upstream-2026-11")
    assert first_defining(16) is OLDEST
    assert first_defining(UNDEFINED_FLAG) is None


def test_the_flag_negative_cases_use_is_defined_by_no_revision():
    assert all(item.flag(UNDEFINED_FLAG) is None and item.undefined_bits(UNDEFINED_FLAG) for item in REVISIONS)


def test_an_unknown_revision_name_is_refused_with_the_known_names():
    with pytest.raises(UnknownRevisionError, match="seeds, upstream-2026-11, upstream-2026-11-29"):
        revision("upstream-1999")
    assert revision("seeds") is OLDEST


def test_every_requirement_names_the_revision_that_introduced_it():
    catalog = load_requirements()
    introduced = {item.introduced_in for item in catalog.values()}
    assert introduced <= set(REVISIONS)
    assert OLDEST in introduced and NEWEST in introduced


def test_each_flag_cites_a_requirement_no_younger_than_its_first_revision():
    catalog = load_requirements()
    for item in REVISIONS:
        assert is_at_or_before(catalog[item.known_bits_requirement].introduced_in, item)
        for flag in item.flags:
            first = first_defining(flag.bit)
            assert catalog[flag.requirement].introduced_in is first, (flag.bit, flag.requirement)


def test_the_seeds_known_bits_are_superseded_by_the_newest_list():
    catalog = load_requirements()
    assert catalog[OLDEST.known_bits_requirement].superseded_by == NEWEST.known_bits_requirement


def test_the_schemas_list_exactly_the_known_revisions():
    names = [item.name for item in REVISIONS]
    requirement_schema = _schema("requirements.schema.json")
    assert requirement_schema["$defs"]["requirement"]["properties"]["introduced_in"]["enum"] == names
    assert "introduced_in" in requirement_schema["$defs"]["requirement"]["required"]
    report_schema = _schema("validation-report.schema.json")
    assert report_schema["properties"]["spec_revision"]["enum"] == names
    assert "spec_revision" in report_schema["required"]


def test_a_requirement_is_in_force_from_its_revision_until_its_successors():
    """The seeds' statement on updates (a new id) holds under the seeds and
    under upstream-2026-11, which re-read no row id page; the newest page's
    (the id is kept) holds from upstream-2026-11-29 on, and only there."""
    catalog = load_requirements()
    old, new = catalog["row-id.new-id-on-update"], catalog["row-id.kept-on-update"]
    assert old.superseded_by == new.id and old.superseded_in is new.introduced_in is NEWEST
    assert old.revisions_in_force == (OLDEST, revision("upstream-2026-11"))
    assert new.revisions_in_force == (NEWEST,)
    assert old.in_force_under(old.introduced_in) and not old.in_force_under(new.introduced_in)
    assert not new.in_force_under(OLDEST)
    unsuperseded = catalog["row-id.unique"]
    assert unsuperseded.superseded_in is None and unsuperseded.revisions_in_force == REVISIONS


def test_every_successor_is_introduced_later_than_what_it_supersedes():
    """Outside the one history-only entry (a statement older than the
    seeds), a successor comes from a strictly later revision."""
    catalog = load_requirements()
    for item in catalog.values():
        if item.superseded_by and item.revisions_in_force:
            successor = catalog[item.superseded_by]
            assert position(item.introduced_in) < position(successor.introduced_in), item.id
            assert item.revisions_in_force[-1] is REVISIONS[position(successor.introduced_in) - 1], item.id


def test_a_rule_runs_under_the_revisions_where_a_requirement_it_cites_is_in_force():
    """applies_under honours supersession: the seeds' rule on updated rows
    runs under seeds and upstream-2026-11 and not under the newest revision;
    the rule of the reserved external arms only under the newest."""
    rules = rules_by_id()
    seeds_rule, reserved = rules["row-id/kept-on-update"], rules["row-id/external-arms-reserved"]
    assert [item.name for item in REVISIONS if applies_under(seeds_rule, item)] == ["seeds", "upstream-2026-11"]
    assert [item.name for item in REVISIONS if applies_under(reserved, item)] == [NEWEST.name]
    assert newest_revision_of(seeds_rule) is revision("upstream-2026-11")
    assert newest_revision_of(rules["row-id/unique"]) is NEWEST


#: Successors of retired requirements that no rule checks yet, with why: the
#: test below accepts these and no others.
SUCCESSORS_WITHOUT_A_RULE = {
    # Which rows an Update rewrote is not stored apart from the rows a merge
    # inserted or deleted, and the reference writer still gives updated rows
    # new ids; tests/conformance/validator/test_row_lineage.py checks pylance
    # 14's updates keep them.
    "row-id.kept-on-update",
}


def test_a_rule_retires_only_where_its_successor_requirements_are_checked_or_declared_uncheckable():
    """A rule whose requirements are all superseded by the newest revision
    stops running under it; that is right only when what replaced them is
    checked by another rule or declared uncheckable at rest: a successor no
    rule cites would leave the newest revision's requirement unchecked."""
    checked = {rid for rule in iter_rules(None) if applies_under(rule, NEWEST) for rid in rule.requirements}
    retired = [rule for rule in iter_rules(None) if not applies_under(rule, NEWEST)]
    assert retired, "no rule retires under the newest revision: the test would check nothing"
    for rule in retired:
        for rid in rule.requirements:
            successor = load_requirements()[rid].superseded_by
            assert successor is not None, (rule.id, rid)
            item = load_requirements()[successor]
            assert successor in checked or not item.checkable or successor in SUCCESSORS_WITHOUT_A_RULE, (
                rule.id,
                successor,
            )
