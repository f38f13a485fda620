"""Requirements checked by tests rather than by validator rules.

Some requirements constrain what a reader or writer *does* (refuse unknown
flags, never replace a committed manifest, filter deleted rows) and leave
nothing a validator could see at rest. Tests check those, and say so with a
marker::

    @pytest.mark.requirements("commit.one-winner", "commit.atomic")
    def test_threads_racing_...

``python -m conformance.test_coverage > conformance/data/tested_requirements.json``
scans the test suite for these markers (statically, without running it) and
writes the map shipped with the package; a test fails when the committed map
differs from a fresh scan, so it is never maintained by hand.
"""

from __future__ import annotations

import ast
import json
import sys
from functools import cache
from importlib import resources
from pathlib import Path

MARKER = "requirements"


def _marker_ids(decorator: ast.expr) -> list[str] | None:
    """The ids of a ``pytest.mark.requirements(...)`` decorator, else None."""
    if not isinstance(decorator, ast.Call):
        return None
    target = decorator.func
    if not (isinstance(target, ast.Attribute) and target.attr == MARKER):
        return None
    ids = []
    for argument in decorator.args:
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            ids.append(argument.value)
    return ids


def scan_tests(tests_dir: Path) -> dict[str, list[str]]:
    """requirement id -> sorted test node ids (``path::function``) marked with it."""
    found: dict[str, set[str]] = {}
    for path in sorted(tests_dir.rglob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        relative = path.relative_to(tests_dir.parent).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                for decorator in node.decorator_list:
                    for requirement in _marker_ids(decorator) or ():
                        found.setdefault(requirement, set()).add(f"{relative}::{node.name}")
    return {requirement: sorted(tests) for requirement, tests in sorted(found.items())}


@cache
def tested_requirements() -> dict[str, list[str]]:
    """The shipped map of requirement id -> tests that check it."""
    # One name per joinpath: importlib's Traversable takes only one before Python 3.11.
    text = resources.files("conformance").joinpath("data").joinpath("tested_requirements.json").read_text()
    return json.loads(text)


def render(mapping: dict[str, list[str]]) -> str:
    return json.dumps(mapping, indent=2) + "\n"


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests"
    sys.stdout.write(render(scan_tests(root)))
