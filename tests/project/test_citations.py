"""Citations resolve: no file of the project cites a specification document
that is not in the repository by its file name or number.

The specification the project was built from came as five numbered files
outside the repository; a reader cannot follow a citation of one of them.
Code, docs and tests cite requirement ids (conformance/data/requirements.json)
or an upstream document and section instead; docs/spec-sources.md names every
upstream document by repository, path and source commit.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("reference_impl", "conformance", "tests", "docs", "protos", "README.md", "fixtures/README.md")
TEXT_SUFFIXES = {".py", ".md", ".json", ".proto", ".toml", ".txt", ".ini", ".cfg", ".yaml", ".yml"}
SKIPPED_DIRS = {"__pycache__", ".venv", ".git"}

# Built from parts so that this file does not match itself.
_WORD = "se" + "eds?"
#: A numbered citation ("<word> 001", "<word>:003", "<word>s 000/001", "<word>_002",
#: also broken across two lines of a docstring or comment) or the file name of one of the
#: documents (three digits, "_", sixteen hex digits), or the place their index lived.
UNRESOLVABLE_CITATION = re.compile(
    rf"\b{_WORD}[\s:_-]*(?:(?:#|//)\s*)?\(?0\d\d\b|\b\d{{3}}_[0-9a-f]{{16}}\b|shared/{_WORD}\b|{_WORD}/README",
    re.IGNORECASE,
)


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            files.append(path)
            continue
        for child in path.rglob("*"):
            if child.is_file() and child.suffix in TEXT_SUFFIXES and not SKIPPED_DIRS & set(child.parts):
                files.append(child)
    return sorted(files)


@pytest.mark.parametrize(
    "text",
    [
        "(" + "se" + 'ed 002, "Data Types")',
        "Se" + "ed 004 forbids key columns",
        '"document": "se' + 'ed:000"',
        "Se" + "eds 001/004 say only",
        "crafted-se" + "ed-003-legacy",
        "(transaction specification; se" + "ed\n001, committing datasets)",
        "# the older se" + "ed\n    # 003 revision",
        "/work/shared/se" + "eds/" + "000_" + "0654a22beabd64cd.txt",
    ],
)
def test_the_pattern_finds_every_form_of_citation(text):
    assert UNRESOLVABLE_CITATION.search(text)


@pytest.mark.parametrize(
    "text",
    ["random_seed=0", "derandomize with a fixed seed", "format revision `seeds`", "table.proto, DataFile.fields"],
)
def test_the_pattern_leaves_other_uses_of_the_word_alone(text):
    assert not UNRESOLVABLE_CITATION.search(text)


def test_no_file_cites_a_document_outside_the_repository():
    files = _scanned_files()
    assert len(files) > 100, "the scan found too few files to be looking in the right place"
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in UNRESOLVABLE_CITATION.finditer(text):
            number = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    assert found == [], "cite a requirement id or an upstream page and section instead:\n" + "\n".join(found)
