"""Modules stay small enough to read in one sitting: a module over about 600
lines is allowed only when it is one cohesive concept and says so (and why)
in its docstring, so that growth is a decision rather than an accident."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("reference_impl", "conformance", "benchmarks")
# "About 600": a little slack so that a small edit does not force a split.
LIMIT = 620
DECLARATION = "one cohesive concept"


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "wire" not in path.relative_to(ROOT).parts:  # protoc's output
                yield path


def _oversized(paths):
    for path in paths:
        source = path.read_text()
        if source.count("\n") <= LIMIT:
            continue
        docstring = ast.get_docstring(ast.parse(source)) or ""
        if DECLARATION not in docstring.lower():
            yield path


def test_long_modules_declare_themselves_one_concept():
    assert [str(path.relative_to(ROOT)) for path in _oversized(_modules())] == []


@pytest.mark.parametrize("declared", [True, False])
def test_the_check_tells_a_declared_module_from_an_undeclared_one(tmp_path, declared):
    docstring = "One cohesive concept: a probe." if declared else "A probe."
    probe = tmp_path / "probe.py"
    probe.write_text(f'"""{docstring}"""\n' + "x = 1\n" * (LIMIT + 1))
    assert list(_oversized([probe])) == ([] if declared else [probe])
