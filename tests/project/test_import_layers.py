"""The layering of both packages holds (README, "Layout"; the contracts are in
pyproject.toml, ``[tool.importlinter]``), and reference_impl imports inside
functions only where a comment says why."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept(capsys, monkeypatch):
    """Every import-linter contract is kept: no module imports a layer above
    its own, reference_impl imports nothing from conformance, and no sibling
    modules import each other in a cycle."""
    monkeypatch.chdir(ROOT)
    exit_code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    report = capsys.readouterr().out
    assert exit_code == 0, report
    assert "broken" not in report.lower().replace("0 broken", ""), report


def _function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each import inside a function of ``path`` that is
    neither under ``if TYPE_CHECKING:`` nor explained by a comment on its own
    line or the line before it."""
    lines = path.read_text().splitlines()
    tree = ast.parse("\n".join(lines))
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            text = lines[node.lineno - 1]
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            if "#" in text or above.startswith("#"):
                continue
            found.append((node.lineno, text.strip()))
    return found


@pytest.mark.parametrize(
    "path", sorted((ROOT / "reference_impl").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_imports_inside_functions_say_why(path):
    """reference_impl imports at the top of its modules; an import inside a
    function (deliberately lazy, or optional) carries a comment saying why."""
    assert _function_level_imports(path) == []


def test_the_function_import_check_sees_an_unexplained_import(tmp_path):
    """The check above finds an unexplained import inside a function and
    accepts one with a reason."""
    module = tmp_path / "module.py"
    module.write_text(
        "def bare():\n    import json\n\ndef explained():\n    import csv  # optional: only needed for the CSV export\n"
    )
    assert _function_level_imports(module) == [(2, "import json")]
