"""The claims catalog and its check (conformance/spec_inconsistencies): the
disagreements of issue 31 are found, agreeing pages are not reported, the
check is the same for every kind of subject, and docs/spec-inconsistencies.md
is a fresh render (feature-flags.one-meaning-per-bit)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import spec_inconsistencies as si
from conformance.spec_inconsistencies import (
    CLAIMS,
    Claim,
    ClaimCatalogError,
    Meaning,
    Subject,
    SubjectKind,
    changed_meanings,
    check_catalog,
    find_inconsistencies,
)
from conformance.spec_inconsistencies.__main__ import main
from conformance.spec_inconsistencies.claims import MEANWHILE, SUPERSEDED
from conformance.spec_inconsistencies.markdown import GENERATED_NOTICE, render_markdown
from conformance.spec_sources import load_documents

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "spec-inconsistencies.md"

A = Meaning("a", "one thing")
B = Meaning("b", "another thing")


def _found(subject: Subject) -> si.Inconsistency:
    [item] = [item for item in si.inconsistencies() if item.subject == subject]
    return item


def _pages(item: si.Inconsistency) -> dict[str, set[str]]:
    """Meaning key -> the page paths giving it."""
    documents = load_documents()
    return {
        meaning.key: {documents[c.document].path.rsplit("/", 1)[1] for c in claims} for meaning, claims in item.meanings
    }


def test_the_check_finds_the_flag_bit_disagreements_of_the_pages():
    assert _pages(_found(Subject.flag_bit(512))) == {
        "frag-reuse-with-stable-row-ids": {"versioning.md"},
        "fragment-metadata-tree": {"fragment_metadata.md"},
    }
    assert _pages(_found(Subject.flag_bit(2048))) == {
        "managed-blobs": {"versioning.md", "blob.md"},
        "spilled-row-lineage": {"row_id_lineage.md"},
        "liquid-clustering-metadata": {"liquid_clustering.md"},
    }
    assert _pages(_found(Subject.flag_bit(4096))) == {
        "unknown": {"versioning.md"},
        "clustering-provider-metadata": {"clustering.md"},
    }
    assert _pages(_found(Subject(SubjectKind.NAME, "FLAG_CLUSTERING_METADATA"))) == {
        "bit-2048": {"liquid_clustering.md"},
        "bit-4096": {"clustering.md"},
    }


def test_pages_that_agree_are_not_reported():
    # versioning.md and blob.md both put FLAG_MANAGED_BLOBS at 2048.
    assert Subject(SubjectKind.NAME, "FLAG_MANAGED_BLOBS") not in {item.subject for item in si.inconsistencies()}
    agreeing = [
        Claim("versioning-page-2026-11", "s", Subject.flag_bit(64), A),
        Claim("blob-page-2026-11", "t", Subject.flag_bit(64), A),
    ]
    assert find_inconsistencies(agreeing) == []


@pytest.mark.parametrize(
    "subject",
    [
        Subject.flag_bit(8),
        Subject(SubjectKind.FIELD_NUMBER, "DataFragment 12"),
        Subject(SubjectKind.NAME, "FLAG_SOMETHING"),
    ],
    ids=lambda subject: subject.kind.name,
)
def test_the_check_is_the_same_for_every_kind_of_subject(subject):
    claims = [Claim("table-proto", "s", subject, A), Claim("row-id-lineage-page-2026-11-29", "t", subject, B)]
    [found] = find_inconsistencies(claims, meanwhile={subject: "waits"})
    assert found.subject == subject and found.meanwhile == "waits"
    assert [(meaning, [c.document for c in group]) for meaning, group in found.meanings] == [
        (A, ["table-proto"]),
        (B, ["row-id-lineage-page-2026-11-29"]),
    ]


def test_subjects_of_different_kinds_are_never_compared():
    claims = [
        Claim("table-proto", "s", Subject.flag_bit(12), A),
        Claim("table-proto", "s", Subject(SubjectKind.FIELD_NUMBER, "12"), B),
    ]
    assert find_inconsistencies(claims) == []


def test_an_earlier_state_of_a_page_is_a_change_not_a_disagreement():
    subject = Subject.flag_bit(1024)
    claims = [
        Claim("versioning-page-2026-11-earlier", "s", subject, A),
        Claim("versioning-page-2026-11", "s", subject, B),
    ]
    superseded = {"versioning-page-2026-11-earlier": "versioning-page-2026-11"}
    assert find_inconsistencies(claims, superseded) == []
    [change] = changed_meanings(claims, superseded)
    assert change.earlier.meaning == A and [c.meaning for c in change.later] == [B]
    # The catalog's own earlier state of versioning.md: 1024 and 2048 were unknown there.
    changed = {(change.subject.bit, change.earlier.meaning.key) for change in si.meaning_changes()}
    assert changed == {(1024, "unknown"), (2048, "unknown")}


@given(st.permutations(CLAIMS))
def test_the_disagreements_do_not_depend_on_the_order_of_the_claims(claims):
    """Property: the subjects reported, and the claims behind each meaning, are
    the same whatever order the catalog lists its claims in."""

    def shape(found):
        return {item.subject: {m.key: frozenset(group) for m, group in item.meanings} for item in found}

    assert shape(find_inconsistencies(claims, SUPERSEDED)) == shape(si.inconsistencies())


def test_the_catalog_refuses_claims_that_contradict_it():
    documents = load_documents()
    claim = CLAIMS[0]
    with pytest.raises(ClaimCatalogError, match="no-such-page"):
        check_catalog([dataclasses.replace(claim, document="no-such-page")], {}, documents)
    reworded = dataclasses.replace(claim.meaning, text="said otherwise")
    with pytest.raises(ClaimCatalogError, match="worded two ways"):
        check_catalog([claim, dataclasses.replace(claim, subject=Subject.flag_bit(1), meaning=reworded)], {}, documents)
    with pytest.raises(ClaimCatalogError, match="twice"):
        check_catalog([claim, claim], {}, documents)
    with pytest.raises(ClaimCatalogError, match="undefined document"):
        check_catalog([claim], {"no-such-page": claim.document}, documents)
    cycle = {"versioning-page-2026-11": "versioning-page-2026-11-earlier", **SUPERSEDED}
    with pytest.raises(ClaimCatalogError, match="cycle"):
        changed_meanings(CLAIMS, cycle)
    check_catalog(CLAIMS, SUPERSEDED, documents)


def test_every_disagreement_says_what_the_suite_does_meanwhile_and_nothing_else_does():
    found = {item.subject for item in si.inconsistencies()}
    assert all(item.meanwhile for item in si.inconsistencies())
    assert set(MEANWHILE) == found


def test_claims_cite_pages_or_protos_of_the_format():
    documents = load_documents()
    for claim in CLAIMS:
        assert documents[claim.document].path.startswith(("docs/src/format/", "protos/")), claim


def test_contested_bit_looks_up_single_bits():
    assert si.contested_bit(512) is _found(Subject.flag_bit(512))
    assert si.contested_bit(1024) is None and si.contested_bit(1) is None


def test_the_doc_is_a_fresh_render():
    rendered = render_markdown(si.inconsistencies(), si.meaning_changes(), si.THREADS, load_documents())
    assert rendered.splitlines()[0] == GENERATED_NOTICE
    for item in si.inconsistencies():
        assert f"`{item.subject.key}`" in rendered
        for document in item.documents:
            assert load_documents()[document].commit in rendered
    assert "lance-format/lance/pull/9420" in rendered and "lance-format/lance/pull/7670" in rendered
    assert DOC.read_text(encoding="utf-8") == rendered, (
        "docs/spec-inconsistencies.md is stale: run "
        "`python -m conformance.spec_inconsistencies --markdown > docs/spec-inconsistencies.md`"
    )


def test_the_command_prints_one_line_per_disagreement(capsys):
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [str(item.subject) for item in si.inconsistencies()]
    assert main(["--markdown"]) == 0
    assert capsys.readouterr().out == DOC.read_text(encoding="utf-8")


def test_the_readme_lists_the_doc_with_the_other_reference_pages():
    assert "docs/spec-inconsistencies.md" in (ROOT / "README.md").read_text(encoding="utf-8")
