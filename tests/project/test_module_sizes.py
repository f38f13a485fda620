"""Modules stay small enough to read in one sitting: a module over about 600
lines is allowed only when it is listed in :data:`OVERSIZED` below, with the
most lines it may grow to and one line saying why it is one concept. The list
is reviewed in code review like any other code, so that growth past the limit
is a decision rather than an accident; no module, listed or not, may pass
:data:`HARD_LIMIT`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("reference_impl", "conformance", "benchmarks")
# "About 600": a little slack so that a small edit does not force a split.
LIMIT = 620
# No module grows past this, whatever its reason: split it instead.
HARD_LIMIT = 1000


@dataclass(frozen=True)
class Oversized:
    """A module allowed past :data:`LIMIT`: at most ``lines_at_most`` lines,
    because ``reason``."""

    lines_at_most: int
    reason: str


#: Every module over :data:`LIMIT`, by path from the repository root. An entry
#: names the ceiling (about its size when listed, so that further growth is
#: reviewed again) and the reason in one line.
OVERSIZED: dict[str, Oversized] = {
    "reference_impl/transactions.py": Oversized(
        950, "transaction.proto's fifteen operation messages, one dataclass each with its own proto conversion"
    ),
    "reference_impl/commit/conflicts.py": Oversized(
        890, "the transaction page's compatibility table, one function per row beside the rebase it implies"
    ),
    "reference_impl/file_format/writer_v2_1.py": Oversized(
        820, "Arrow to 2.1/2.2 pages: one level walk whose levels and value buffers all three layouts share"
    ),
    "reference_impl/file_format/reader.py": Oversized(
        720, "decoding the 2.0 encodings (the 2.1+ structural encodings are the package v2_1)"
    ),
    "reference_impl/arrow_schema.py": Oversized(
        720, "Arrow schemas to Lance fields and back, both directions sharing extension and metadata handling"
    ),
    "reference_impl/file_format/writer.py": Oversized(
        700, "encoding Arrow as the 2.0 encodings and the v2 container the 2.1 writer reuses"
    ),
}


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "wire" not in path.relative_to(ROOT).parts:  # protoc's output
                yield path


def _lines(path: Path) -> int:
    return path.read_text().count("\n")


def size_problems(sizes: dict[str, int], allowed: dict[str, Oversized]) -> list[str]:
    """What is wrong with modules of ``sizes`` lines (by path) against the
    ``allowed`` list: an unlisted module over the limit, a listed one past its
    ceiling or past the hard limit."""
    problems = []
    for name, lines in sorted(sizes.items()):
        entry = allowed.get(name)
        if lines > HARD_LIMIT:
            problems.append(f"{name}: {lines} lines, past the hard limit of {HARD_LIMIT}: split it")
        elif entry is None and lines > LIMIT:
            problems.append(f"{name}: {lines} lines, over {LIMIT}: split it or list it in OVERSIZED with a reason")
        elif entry is not None and lines > entry.lines_at_most:
            problems.append(f"{name}: {lines} lines, past its listed ceiling of {entry.lines_at_most}")
    return problems


def test_modules_over_the_limit_are_listed_and_within_their_ceiling():
    sizes = {str(path.relative_to(ROOT)): _lines(path) for path in _modules()}
    assert size_problems(sizes, OVERSIZED) == []


def test_every_listed_module_is_still_oversized_and_says_why():
    """Entries do not outlive their reason: a listed module exists and is
    still over the limit, its ceiling within the hard limit, its reason one
    line of its own words."""
    for name, entry in OVERSIZED.items():
        path = ROOT / name
        assert path.is_file(), f"{name} is listed in OVERSIZED but does not exist"
        assert _lines(path) > LIMIT, f"{name} is back under {LIMIT} lines: remove it from OVERSIZED"
        assert LIMIT < entry.lines_at_most <= HARD_LIMIT, f"{name}: ceiling {entry.lines_at_most}"
        assert len(entry.reason.split()) >= 6 and "\n" not in entry.reason, f"{name}: give a reason in one line"


@pytest.mark.parametrize(
    ("lines", "listed", "complaint"),
    [
        (LIMIT, None, None),
        (LIMIT + 1, None, "list it in OVERSIZED"),
        (LIMIT + 50, Oversized(LIMIT + 50, "a reason"), None),
        (LIMIT + 51, Oversized(LIMIT + 50, "a reason"), "past its listed ceiling"),
        (HARD_LIMIT + 1, Oversized(HARD_LIMIT + 100, "a reason"), "past the hard limit"),
    ],
)
def test_the_check_tells_listed_unlisted_and_overgrown_modules_apart(lines, listed, complaint):
    allowed = {} if listed is None else {"m.py": listed}
    problems = size_problems({"m.py": lines}, allowed)
    if complaint is None:
        assert problems == []
    else:
        assert len(problems) == 1 and complaint in problems[0]
