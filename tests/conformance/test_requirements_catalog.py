"""The requirements catalog (conformance/data/requirements.json): its shape,
its ids, its coverage of the specification, and the generated docs."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from conformance.describe import load_schema
from conformance.requirements import (
    DOCUMENTS,
    GENERATED_NOTICE,
    LEVELS,
    TOPICS,
    Requirement,
    SupersessionError,
    _with_supersession,
    catalog_text,
    check_cited_documents,
    load_requirements,
    render_markdown,
    render_sources,
    requirement,
)
from conformance.spec_revisions import is_at_or_before
from conformance.spec_sources import GENERATED_NOTICE as SOURCES_NOTICE
from conformance.spec_sources import Match, sources_text
from conformance.validator import all_rules

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "requirements.md"
SOURCES_DOC = ROOT / "docs" / "spec-sources.md"
# The five documents the project was asked to cover (table.proto now and in an
# older revision, the older table-format page, the schema page, the overview).
SPECIFICATION = (
    "table-proto",
    "table-format-page-2025-07",
    "schema-format-page",
    "table-proto-2024-01",
    "table-overview-page",
)
ID_SHAPE = re.compile(r"^([a-z]+(?:-[a-z]+)*)\.([a-z0-9]+(?:-[a-z0-9]+)*)$")
# A requirement id mentioned inside another entry's prose.
MENTIONED_ID = re.compile(r"(?<![\w./-])(?:" + "|".join(re.escape(t) for t in TOPICS) + r")\.[a-z0-9]+(?:-[a-z0-9]+)*")
SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)[.!?](?=\s|$)")


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    return json.loads(catalog_text())


@pytest.fixture(scope="module")
def catalog() -> dict[str, Requirement]:
    return load_requirements()


def test_catalog_matches_its_schema(entries):
    schema = load_schema("requirements.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(entries, schema, cls=jsonschema.Draft202012Validator)


def test_ids_are_unique(entries):
    counts = Counter(entry["id"] for entry in entries)
    assert [rid for rid, n in counts.items() if n > 1] == []


def test_ids_are_well_formed_and_prefixed_by_their_topic(catalog):
    for item in catalog.values():
        match = ID_SHAPE.match(item.id)
        assert match, f"{item.id} is not topic.kebab-case-name"
        assert match.group(1) == item.topic, f"{item.id} is filed under topic {item.topic}"
        assert item.topic in TOPICS, item.id


def test_levels_and_sources_are_known(catalog):
    for item in catalog.values():
        assert item.level in LEVELS, item.id
        assert item.source_document in DOCUMENTS, item.id
        assert item.source_section.strip(), item.id
        for document, section in item.also_in:
            assert document in DOCUMENTS and section.strip(), item.id
            assert (document, section) != (item.source_document, item.source_section), item.id


def test_every_specification_document_is_a_primary_source(catalog):
    cited = Counter(item.source_document for item in catalog.values())
    assert [document for document in SPECIFICATION if not cited[document]] == []


def test_source_documents_match_their_schema():
    schema = load_schema("spec-sources.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads(sources_text()), schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("bad_id", ["se" + "ed-000", "seeds", "Table-Proto", "table_proto"])
def test_source_document_ids_are_kebab_case_and_never_name_a_seed(bad_id):
    schema = load_schema("spec-sources.schema.json")
    entry = dict(json.loads(sources_text())[0], id=bad_id)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([entry], schema, cls=jsonschema.Draft202012Validator)


def test_every_source_names_its_upstream_location():
    for document in DOCUMENTS.values():
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", document.repository), document.id
        assert re.fullmatch(r"[0-9a-f]{40}", document.commit), document.id
        assert document.path and not document.path.startswith("/"), document.id
        assert document.url == f"https://github.com/{document.repository}/blob/{document.commit}/{document.path}"
        # A commit that is not the exact text read says how it differs.
        if document.match in (Match.NEAREST, Match.RENDERED):
            assert document.differences, document.id


def test_a_requirement_citing_an_undefined_document_is_refused(catalog):
    item = next(iter(catalog.values()))
    stray = dataclasses.replace(item, also_in=(("no-such-page", "Manifest"),))
    with pytest.raises(ValueError, match="no-such-page.*spec_sources.json does not define"):
        check_cited_documents([stray])
    check_cited_documents(catalog.values())


def test_spec_sources_doc_is_a_fresh_render(catalog):
    rendered = render_sources(catalog.values())
    assert rendered.splitlines()[0] == SOURCES_NOTICE
    for document in DOCUMENTS.values():
        assert document.commit in rendered and document.repository in rendered and document.path in rendered
    assert SOURCES_DOC.read_text(encoding="utf-8") == rendered, (
        "docs/spec-sources.md is stale: run `python -m conformance.requirements --sources > docs/spec-sources.md`"
    )


def test_every_upstream_page_is_cited(catalog):
    cited = {item.source_document for item in catalog.values()}
    cited |= {document for item in catalog.values() for document, _ in item.also_in}
    assert sorted(set(DOCUMENTS) - cited) == []


def test_every_topic_has_requirements(catalog):
    topics = Counter(item.topic for item in catalog.values())
    assert [topic for topic in TOPICS if not topics[topic]] == []


def test_statements_are_short_and_uncheckable_reasons_are_given(catalog):
    for item in catalog.values():
        assert 1 <= len(SENTENCE_END.findall(item.statement)) <= 2, item.id
        assert item.uncheckable is None or len(item.uncheckable.strip()) > 20, item.id


def test_ids_mentioned_in_prose_exist(catalog):
    for item in catalog.values():
        for text in (item.statement, item.notes, item.uncheckable):
            for mentioned in MENTIONED_ID.findall(text or ""):
                assert mentioned in catalog, f"{item.id} mentions unknown requirement {mentioned}"


def test_superseded_requirements_point_at_live_ones(catalog):
    """The catalog is consistent: a successor exists, is itself in force
    under the newest revision, is introduced in the same revision or a
    later one, and ends its predecessor's time in force there."""
    superseded = [item for item in catalog.values() if item.superseded_by]
    assert superseded, "the older revision's contiguity rule should be recorded as superseded"
    for item in superseded:
        successor = catalog[item.superseded_by]
        assert successor.superseded_by is None, item.id
        assert successor.id != item.id
        assert is_at_or_before(item.introduced_in, successor.introduced_in), item.id
        assert item.superseded_in is successor.introduced_in, item.id


def test_a_requirement_superseded_where_it_was_introduced_is_history_only(catalog):
    """A requirement superseded in the revision that introduced it (an older
    document's statement, like the 2024 proto's contiguous v1 field ids) is
    in force under no revision: nothing checks it, and it says why."""
    history = [item for item in catalog.values() if item.superseded_by and not item.revisions_in_force]
    assert [item.id for item in history] == ["data-file.v1-field-ids-contiguous"]
    cited = {rid for rule in all_rules() for rid in rule.requirements}
    for item in history:
        assert item.uncheckable and item.id not in cited, item.id


def test_a_superseded_requirement_names_no_successor_it_lacks():
    """Loading refuses a ``superseded_by`` naming no entry, and a successor
    introduced before the requirement it replaces."""
    later = requirement("row-id.kept-on-update")
    earlier = requirement("row-id.unique")
    missing = dataclasses.replace(earlier, id="row-id.gone-test", superseded_by="row-id.no-such-successor")
    with pytest.raises(SupersessionError, match="no-such-successor.*not in the catalog"):
        _with_supersession((missing,))
    backwards = dataclasses.replace(later, id="row-id.backwards-test", superseded_by=earlier.id, superseded_in=None)
    with pytest.raises(SupersessionError, match="introduced earlier"):
        _with_supersession((backwards, earlier))


def test_docs_are_a_fresh_render(catalog):
    rendered = render_markdown(catalog)
    assert rendered.splitlines()[0] == GENERATED_NOTICE
    assert DOCS.read_text(encoding="utf-8") == rendered, (
        "docs/requirements.md is stale: run `python -m conformance.requirements --markdown > docs/requirements.md`"
    )


def test_render_groups_by_topic_in_order(catalog):
    rendered = render_markdown(catalog.values())
    positions = [rendered.index(f"## `{topic}` - ") for topic in TOPICS]
    assert positions == sorted(positions)
    for rid in catalog:
        assert rendered.count(f"### `{rid}` (") == 1, rid


def test_load_is_cached_but_returns_a_fresh_dict():
    first = load_requirements()
    first.clear()
    second = load_requirements()
    assert second and second is not first
    assert requirement("naming.no-mixture") is second["naming.no-mixture"]


def test_unknown_id_raises_a_helpful_key_error():
    with pytest.raises(KeyError, match=r"naming\.no-mixture"):
        requirement("naming.no-mixtures")
    with pytest.raises(KeyError, match="no requirement"):
        requirement("nothing.like-this")


def test_requirements_are_frozen():
    item = requirement("fragment.id-unique")
    with pytest.raises(AttributeError):
        item.level = "may"  # type: ignore[misc]


# -- spot checks: statements the validator relies on exist with the right level ----


@pytest.mark.parametrize(
    "rid, level, words",
    [
        ("naming.no-mixture", "must", ("V1", "V2", "error")),
        ("naming.name-matches-version", "must", ("version",)),
        ("data-file.no-unassigned-field-id", "must", ("-1",)),
        ("data-file.tombstone-allowed", "may", ("-2",)),
        ("data-file.column-indices-distinct", "must", ("-1",)),
        ("feature-flags.reader-refuses-unknown", "must", ("reader_feature_flags",)),
        ("feature-flags.known-bits", "must", ("32",)),
        ("deletion.count-matches-metadata", "must", ("num_deleted_rows",)),
        ("deletion.at-most-one", "must", ("one deletion file",)),
        ("fragment.max-id-absent-without-fragments", "must", ("max_fragment_id",)),
        ("schema.field-ids-unique", "must", ("id",)),
        ("primary-key.non-nullable", "must", ("ancestors",)),
        ("transaction.file-name-format", "must", ("{read_version}-{uuid}.txn",)),
        ("commit.missing-transaction-conflicts", "must", ("conflicting",)),
        ("config.lance-prefix-reserved", "must", ("`lance.`",)),
        ("index.type-url-unique-ignoring-case", "must", ("case",)),
    ],
)
def test_spot_check(rid, level, words):
    item = requirement(rid)
    assert item.level == level
    for word in words:
        assert word in item.statement, f"{rid}: {word!r} not in {item.statement!r}"


def test_writer_race_rules_are_marked_uncheckable():
    for rid in ("commit.atomic", "commit.one-winner", "commit.retry-after-lost-race", "mem-wal.single-writer"):
        assert requirement(rid).uncheckable, rid
    for rid in ("naming.no-mixture", "deletion.count-matches-metadata", "fragment.id-unique"):
        assert requirement(rid).checkable, rid
