"""The upstream documents the requirements catalog is drawn from, each named by
its upstream location: repository, path and source commit.

The table is package data, ``conformance/data/spec_sources.json`` (schema
``conformance/schemas/spec-sources.schema.json``). Catalog entries cite a
document by its short id and add the section. The human-readable list,
``docs/spec-sources.md``, is generated with the catalog, which counts the
citations of each document::

    python -m conformance.requirements --sources > docs/spec-sources.md

and a test fails when the two drift apart.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

SOURCES_RESOURCE = ("data", "spec_sources.json")


class Match(str, enum.Enum):
    """How the named commit relates to the text the catalog was drawn from."""

    #: The file at the commit is that text, whitespace aside.
    EXACT = "exact"
    #: The text is the documentation site's rendering of the file at the commit.
    RENDERED = "rendered"
    #: The file at the commit holds every section the catalog cites from it.
    SECTIONS = "sections"
    #: The exact revision was not found; ``differences`` says how this one differs.
    NEAREST = "nearest"


@dataclass(frozen=True)
class SourceDocument:
    id: str
    title: str
    #: GitHub ``owner/name``.
    repository: str
    path: str
    commit: str
    match: Match
    differences: str | None = None

    @property
    def url(self) -> str:
        """The document at its source commit on GitHub."""
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"

    @property
    def location(self) -> str:
        """``owner/name:path@commit`` (short commit), for one-line citations."""
        return f"{self.repository}:{self.path}@{self.commit[:10]}"

    @classmethod
    def from_json(cls, entry: Mapping) -> SourceDocument:
        return cls(
            id=entry["id"],
            title=entry["title"],
            repository=entry["repository"],
            path=entry["path"],
            commit=entry["commit"],
            match=Match(entry["match"]),
            differences=entry.get("differences"),
        )


def sources_text() -> str:
    """The raw JSON of the source table as shipped in the package."""
    resource = resources.files("conformance")
    for part in SOURCES_RESOURCE:  # one name at a time: joinpath takes one before Python 3.11
        resource = resource.joinpath(part)
    return resource.read_text(encoding="utf-8")


@cache
def _documents() -> Mapping[str, SourceDocument]:
    documents: dict[str, SourceDocument] = {}
    for entry in json.loads(sources_text()):
        document = SourceDocument.from_json(entry)
        if document.id in documents:
            raise ValueError(f"source document {document.id!r} appears twice in {'/'.join(SOURCES_RESOURCE)}")
        documents[document.id] = document
    return MappingProxyType(documents)


def load_documents() -> Mapping[str, SourceDocument]:
    """Every source document by id, in table order (read-only, read once)."""
    return _documents()


def document(document_id: str) -> SourceDocument:
    """The source document with this id; KeyError naming the table otherwise."""
    try:
        return _documents()[document_id]
    except KeyError:
        raise KeyError(f"no source document {document_id!r} in conformance/{'/'.join(SOURCES_RESOURCE)}") from None


# -- rendering ---------------------------------------------------------------------

GENERATED_NOTICE = (
    "_Generated from `conformance/data/spec_sources.json` by "
    "`python -m conformance.requirements --sources > docs/spec-sources.md`; do not edit by hand._"
)

_MATCH_MEANING = {
    Match.EXACT: "the file at this commit is the text the catalog was drawn from (whitespace aside)",
    Match.RENDERED: "the text read is the documentation site's rendering of the file at this commit",
    Match.SECTIONS: "the file at this commit holds every section the catalog cites from it",
    Match.NEAREST: "the exact revision read was not found; this is the nearest one, and the note says how it differs",
}


def render_markdown(documents: Mapping[str, SourceDocument], cited: Mapping[str, int] | None = None) -> str:
    """The source table as Markdown: one row per document with its upstream
    location, then a note per document whose commit is not an exact match.
    ``cited`` (document id -> number of catalog citations) adds a column."""
    lines = [
        GENERATED_NOTICE,
        "",
        "# Specification sources",
        "",
        "The documents the requirements catalog (docs/requirements.md) is drawn from, each named by its "
        "upstream location. A requirement cites a document by the id below and adds the section "
        "(a heading of the page, or `Message.field` of a protobuf file).",
        "",
        "| id | document | repository | path | source commit | match |" + (" citations |" if cited else ""),
        "| --- | --- | --- | --- | --- | --- |" + (" --: |" if cited else ""),
    ]
    for item in documents.values():
        row = (
            f"| `{item.id}` | {item.title} | `{item.repository}` | [`{item.path}`]({item.url}) "
            f"| `{item.commit}` | {item.match.value} |"
        )
        if cited:
            row += f" {cited.get(item.id, 0)} |"
        lines.append(row)
    lines += ["", "Match:", ""]
    lines += [f"- **{match.value}**: {meaning}." for match, meaning in _MATCH_MEANING.items()]
    notes = [item for item in documents.values() if item.differences]
    if notes:
        lines += ["", "## Notes", ""]
        for item in notes:
            lines += [f"### `{item.id}`", "", item.differences or "", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
