"""The requirements catalog: every normative statement of the specification,
restated in the project's words, with a permanent id for validator rules to
cite.

The catalog is package data, ``conformance/data/requirements.json``; its JSON
Schema is ``conformance/schemas/requirements.schema.json``. The human-readable
copy, ``docs/requirements.md``, is generated from it::

    python -m conformance.requirements --markdown > docs/requirements.md

and a test fails when the two drift apart. Entries cite their sources by the
ids of ``conformance/data/spec_sources.json`` (:mod:`conformance.spec_sources`),
which names each document by repository, path and source commit; its list,
``docs/spec-sources.md``, is generated here too::

    python -m conformance.requirements --sources > docs/spec-sources.md
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

from .spec_revisions import REVISIONS, SpecRevision, is_at_or_before, position
from .spec_revisions import revision as spec_revision
from .spec_sources import SourceDocument, load_documents
from .spec_sources import render_markdown as render_sources_markdown

CATALOG_RESOURCE = ("data", "requirements.json")

LEVELS = ("must", "should", "may")

# Topics in the order the rendered catalog presents them, each with the title
# of its section.
TOPICS: Mapping[str, str] = MappingProxyType(
    {
        "manifest": "Manifest files: container, sections and fields",
        "writer-version": "Writer version",
        "naming": "Manifest naming schemes",
        "history": "Versions and history",
        "transaction": "Transactions: files, operations and conflicts",
        "commit": "Commit protocol",
        "conflict": "Conflict resolution: the outcome of each pair of concurrent operations",
        "external-store": "External manifest store",
        "schema": "Schema and fields",
        "primary-key": "Unenforced primary key",
        "fragment": "Fragments",
        "data-file": "Data files",
        "deletion": "Deletion files",
        "feature-flags": "Feature flags",
        "row-id": "Row addresses, stable row ids and row versions",
        "index": "Index metadata",
        "base-path": "Base paths",
        "blob": "Blob v2 columns: descriptors, sidecars and external objects",
        "config": "Table config",
        "refs": "Tags and branches",
        "mem-wal": "MemWAL index details",
    }
)

# The source documents requirements cite, by id (conformance/data/spec_sources.json).
DOCUMENTS: Mapping[str, SourceDocument] = load_documents()


@dataclass(frozen=True)
class Requirement:
    """One entry of the catalog."""

    id: str
    statement: str
    level: str
    topic: str
    source_document: str
    source_section: str
    #: The format revision whose documents first state the requirement.
    introduced_in: SpecRevision
    # None when a validator can check it on a dataset at rest; otherwise why not.
    uncheckable: str | None
    notes: str | None = None
    # Other (document, section) pairs stating the same requirement.
    also_in: tuple[tuple[str, str], ...] = ()
    # The id of the requirement that replaced this one in a later revision.
    superseded_by: str | None = None
    #: The revision from which the successor is in force, and this one no
    #: longer: the successor's ``introduced_in``, filled in when the catalog
    #: is loaded (:func:`_with_supersession`), never written in the JSON.
    #: None while nothing supersedes the requirement.
    superseded_in: SpecRevision | None = None

    @property
    def checkable(self) -> bool:
        return self.uncheckable is None

    def in_force_under(self, revision: SpecRevision) -> bool:
        """Whether ``revision`` requires this: it was introduced at or before
        ``revision`` and is not superseded at or before it. A requirement
        superseded in the revision that introduced it (an older document's
        statement, recorded for history) is in force under none."""
        if not is_at_or_before(self.introduced_in, revision):
            return False
        return self.superseded_in is None or position(revision) < position(self.superseded_in)

    @property
    def revisions_in_force(self) -> tuple[SpecRevision, ...]:
        """The revisions, oldest first, under which the requirement is in force."""
        return tuple(item for item in REVISIONS if self.in_force_under(item))

    @classmethod
    def from_json(cls, entry: Mapping) -> Requirement:
        source = entry["source"]
        return cls(
            id=entry["id"],
            statement=entry["statement"],
            level=entry["level"],
            topic=entry["topic"],
            source_document=source["document"],
            source_section=source["section"],
            introduced_in=spec_revision(entry["introduced_in"]),
            uncheckable=entry.get("uncheckable"),
            notes=entry.get("notes"),
            also_in=tuple((s["document"], s["section"]) for s in entry.get("also_in", ())),
            superseded_by=entry.get("superseded_by"),
        )


def catalog_text() -> str:
    """The raw JSON of the catalog as shipped in the package."""
    resource = resources.files("conformance")
    for name in CATALOG_RESOURCE:  # one name per joinpath: Traversable takes only one before Python 3.11
        resource = resource.joinpath(name)
    return resource.read_text(encoding="utf-8")


@cache
def _catalog() -> tuple[Requirement, ...]:
    entries = json.loads(catalog_text())
    requirements = tuple(Requirement.from_json(entry) for entry in entries)
    seen: set[str] = set()
    for item in requirements:
        if item.id in seen:
            raise ValueError(f"requirement id {item.id!r} appears twice in {'/'.join(CATALOG_RESOURCE)}")
        seen.add(item.id)
    check_cited_documents(requirements)
    return _with_supersession(requirements)


class SupersessionError(ValueError):
    """A ``superseded_by`` that names no requirement, or a successor
    introduced before the requirement it replaces."""


def _with_supersession(requirements: tuple[Requirement, ...]) -> tuple[Requirement, ...]:
    """The requirements with ``superseded_in`` filled in from each
    successor's ``introduced_in``: the one place the end of a requirement's
    time in force is decided."""
    by_id = {item.id: item for item in requirements}
    done = []
    for item in requirements:
        if item.superseded_by is None:
            done.append(item)
            continue
        successor = by_id.get(item.superseded_by)
        if successor is None:
            raise SupersessionError(
                f"requirement {item.id!r} is superseded by {item.superseded_by!r}, which is not in the catalog"
            )
        if not is_at_or_before(item.introduced_in, successor.introduced_in):
            raise SupersessionError(
                f"requirement {item.id!r} (introduced in {item.introduced_in}) is superseded by {successor.id!r}, "
                f"introduced earlier ({successor.introduced_in})"
            )
        done.append(dataclasses.replace(item, superseded_in=successor.introduced_in))
    return tuple(done)


def check_cited_documents(requirements: Iterable[Requirement]) -> None:
    """ValueError naming the first requirement that cites a document
    ``conformance/data/spec_sources.json`` does not define."""
    for item in requirements:
        for cited in (item.source_document, *(document for document, _ in item.also_in)):
            if cited not in DOCUMENTS:
                raise ValueError(
                    f"requirement {item.id!r} cites {cited!r}, which conformance/data/spec_sources.json does not define"
                )


@cache
def _by_id() -> Mapping[str, Requirement]:
    return MappingProxyType({item.id: item for item in _catalog()})


def load_requirements() -> dict[str, Requirement]:
    """Every requirement by id, in catalog order. The file is read once; each
    call returns a fresh dict, so callers may change it freely."""
    return dict(_by_id())


def requirement(requirement_id: str) -> Requirement:
    """The requirement with this id; KeyError (naming close ids) when the
    catalog has none."""
    catalog = _by_id()
    try:
        return catalog[requirement_id]
    except KeyError:
        close = difflib.get_close_matches(requirement_id, list(catalog), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no requirement {requirement_id!r} in conformance/{'/'.join(CATALOG_RESOURCE)}{hint}") from None


# -- rendering ---------------------------------------------------------------------

GENERATED_NOTICE = (
    "_Generated from `conformance/data/requirements.json` by "
    "`python -m conformance.requirements --markdown > docs/requirements.md`; do not edit by hand._"
)


def citation_counts(requirements: Iterable[Requirement] | None = None) -> Counter[str]:
    """How many times the catalog cites each source document (source and
    also_in together)."""
    items = _catalog() if requirements is None else requirements
    return Counter(document for item in items for document in (item.source_document, *(doc for doc, _ in item.also_in)))


def render_sources(requirements: Iterable[Requirement] | None = None) -> str:
    """docs/spec-sources.md: every source document with its upstream location
    and how often the catalog cites it."""
    return render_sources_markdown(DOCUMENTS, citation_counts(requirements))


def _render_entry(item: Requirement) -> list[str]:
    lines = [f"### `{item.id}` ({item.level})", "", item.statement, ""]
    lines.append(f"- Source: {item.source_document}, {item.source_section}")
    lines.append(f"- Introduced in format revision `{item.introduced_in.name}`")
    if item.also_in:
        lines.append("- Also in: " + "; ".join(f"{doc}, {section}" for doc, section in item.also_in))
    if item.uncheckable is not None:
        lines.append(f"- Not checkable at rest: {item.uncheckable}")
    if item.superseded_by:
        when = f" from revision `{item.superseded_in.name}`" if item.superseded_in else ""
        force = ", ".join(f"`{r.name}`" for r in item.revisions_in_force) or "no revision the suite knows"
        lines.append(f"- Superseded by: `{item.superseded_by}`{when}; in force under {force}")
    if item.notes:
        lines.append(f"- Notes: {item.notes}")
    lines.append("")
    return lines


def _render_revisions() -> list[str]:
    lines = [
        "## Format revisions",
        "",
        "Named states of the format, oldest first (`conformance/spec_revisions.py`); each entry below says "
        "which one introduced it, and `lance-conformance validate --spec-revision NAME` checks one of them. "
        "A later revision keeps every flag of an earlier one; a bit a revision does not define is unknown to it.",
        "",
    ]
    for item in REVISIONS:
        lines += [f"### Revision `{item.name}`", "", item.summary[0].upper() + item.summary[1:] + ".", ""]
        lines += [f"- Source: {source}" for source in item.sources]
        lines += [
            "",
            "| bit | flag | set in | pairing | meaning | requirement |",
            "| --: | --- | --- | --- | --- | --- |",
        ]
        for flag in item.flags:
            pairing = flag.pairing.value + (", stays set" if flag.persists else "")
            lines.append(
                f"| {flag.bit} | `{flag.name}` | {flag.use.value} | {pairing} | {flag.meaning} | `{flag.requirement}` |"
            )
        lines.append("")
    return lines


def render_markdown(requirements: Mapping[str, Requirement] | Iterable[Requirement]) -> str:
    """The catalog as Markdown, grouped by topic (in TOPICS order, unknown
    topics last), entries in catalog order within a topic."""
    items = list(requirements.values()) if isinstance(requirements, Mapping) else list(requirements)
    order = {topic: i for i, topic in enumerate(TOPICS)}
    topics = sorted({item.topic for item in items}, key=lambda t: (order.get(t, len(order)), t))
    by_topic = {topic: [item for item in items if item.topic == topic] for topic in topics}
    levels = Counter(item.level for item in items)
    uncheckable = sum(1 for item in items if item.uncheckable is not None)

    lines = [
        GENERATED_NOTICE,
        "",
        "# Requirements catalog",
        "",
        "Every normative statement of the Lance table format specification as this project covers it, "
        "restated in our own words. Validator rules cite these ids; an id never changes meaning once "
        "published (a requirement a later revision relaxed is kept and marked as superseded).",
        "",
        f"{len(items)} requirements: "
        + ", ".join(f"{levels.get(level, 0)} {level}" for level in LEVELS)
        + f"; {uncheckable} cannot be fully checked on a dataset at rest.",
        "",
        "Levels: **must** is required; **should** is recommended; **may** is explicitly allowed, "
        "so a validator must not reject it. *Not checkable at rest* says why a validator looking at "
        "the stored dataset (its retained versions, transaction files and refs included) cannot check "
        "the requirement, and which part it can check after all.",
        "",
        "## Sources",
        "",
        "Each entry cites a source document by its id and a section (a heading of the page, or "
        "`Message.field` of a protobuf file). docs/spec-sources.md names every document by repository, "
        "path and source commit.",
        "",
        "| document | what it is | upstream location |",
        "| --- | --- | --- |",
    ]
    lines += [f"| `{doc.id}` | {doc.title} | `{doc.location}` |" for doc in DOCUMENTS.values()]
    lines += [""] + _render_revisions()
    lines += [
        "## Topics",
        "",
        "| topic | must | should | may | not checkable at rest |",
        "| --- | --: | --: | --: | --: |",
    ]
    for topic in topics:
        group = by_topic[topic]
        counts = Counter(item.level for item in group)
        unchecked = sum(1 for item in group if item.uncheckable is not None)
        lines.append(
            f"| [{topic}](#{topic}) | {counts.get('must', 0)} | {counts.get('should', 0)} | "
            f"{counts.get('may', 0)} | {unchecked} |"
        )
    lines.append("")
    for topic in topics:
        title = TOPICS.get(topic, topic)
        lines += [f'<a id="{topic}"></a>', "", f"## `{topic}` - {title}", ""]
        for item in by_topic[topic]:
            lines += _render_entry(item)
    return "\n".join(lines).rstrip("\n") + "\n"


# -- command line ------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.requirements",
        description="Print the requirements catalog or its source documents.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--markdown", action="store_true", help="the catalog as Markdown (docs/requirements.md)")
    what.add_argument("--ids", action="store_true", help="one requirement id per line")
    what.add_argument("--sources", action="store_true", help="the source documents as Markdown (docs/spec-sources.md)")
    args = parser.parse_args(argv)
    catalog = load_requirements()
    if args.markdown:
        sys.stdout.write(render_markdown(catalog))
    elif args.sources:
        sys.stdout.write(render_sources(catalog.values()))
    else:
        sys.stdout.write("".join(f"{rid}\n" for rid in catalog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
