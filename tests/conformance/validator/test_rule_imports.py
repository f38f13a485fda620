"""The validator's modules share helpers only through public names: a rule
module takes what it needs from the facts layer
(:mod:`conformance.validator.facts`) or another module's public API, never
another module's private ``_helper``."""

from __future__ import annotations

import ast
from pathlib import Path

import conformance.validator

VALIDATOR = Path(conformance.validator.__file__).parent


def _private_imports(source: str) -> list[str]:
    """``module: name`` for each ``from module import _name`` in ``source``
    (dunder names such as ``__future__`` features and ``__version__`` aside)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{module}: {alias.name}")
    return found


def test_the_check_sees_a_private_import():
    assert _private_imports("from .data_files import _name, at\nfrom ..facts import text\n") == [".data_files: _name"]
    assert _private_imports("from __future__ import annotations\nfrom x import y as _y\n") == []


def test_no_validator_module_imports_a_private_name():
    offenders = {
        str(path.relative_to(VALIDATOR)): names
        for path in sorted(VALIDATOR.rglob("*.py"))
        if (names := _private_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_rule_modules_take_shared_helpers_from_the_facts_layer_not_from_each_other():
    """A rule module imports no other rule module: what two topics share
    lives in conformance.validator.facts."""
    offenders = {}
    for path in sorted((VALIDATOR / "rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                offenders.setdefault(path.name, []).append(node.module)
    assert offenders == {}
