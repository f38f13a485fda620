"""Links between the project's documents resolve.

Every relative Markdown link (``[text](path)`` or ``[text](path#anchor)``)
of README.md, CONTRIBUTING.md, fixtures/README.md and docs/ names a file or
directory of the repository, and an anchor names a heading of the document it
points into (GitHub's anchors: the heading lower-cased, punctuation dropped,
spaces as hyphens; or an explicit ``<a id="...">``). Links with a scheme (``https:``) are not followed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "fixtures" / "README.md", *(ROOT / "docs").rglob("*.md")]
)

#: A Markdown inline link; the target stops at the closing parenthesis.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def links(text: str) -> list[str]:
    """The link targets of ``text`` outside fenced code blocks and inline code."""
    found: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            found.extend(LINK.findall(re.sub(r"`[^`]*`", "", line)))
    return found


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    headings = {anchor(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.MULTILINE)}
    return headings | set(re.findall(r'<a (?:id|name)="([^"]+)"', text))


def broken_links(document: Path) -> list[str]:
    broken = []
    for target in links(document.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue
        path_part, _, fragment = target.partition("#")
        resolved = (document.parent / path_part).resolve() if path_part else document
        if not resolved.exists():
            broken.append(target)
        elif fragment and resolved.is_file() and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(target)
    return broken


def test_the_documents_are_found():
    assert ROOT / "README.md" in DOCUMENTS and len(DOCUMENTS) > 5


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(document):
    assert broken_links(document) == []


def test_a_broken_link_is_caught(tmp_path):
    (tmp_path / "there.md").write_text('# A heading, here\n<a id="explicit"></a>\n')
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading-here) [ok](there.md#explicit) [web](https://example.org/x)\n"
        "[gone](missing.md) [bad anchor](there.md#nowhere)\n"
        "```\n[in code](also-missing.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md", "there.md#nowhere"]
