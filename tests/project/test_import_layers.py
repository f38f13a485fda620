"""The layering of both packages holds (docs/layout.md, "Layers"; the contracts are in
pyproject.toml, ``[tool.importlinter]``), reference_impl imports inside
functions only where a comment says why, and no module imports another's
private names."""

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


def _private_imports(path: Path) -> list[str]:
    """``from module import _name`` in ``path``: a private name used from another module."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(
                        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:"
                        f"{node.lineno} imports {alias.name} from {node.module}"
                    )
    return found


def test_no_module_imports_a_private_name_from_another():
    """Modules share through public names (the validator's rules through
    ``facts/``); a leading underscore means "this module only"."""
    found = [
        line
        for package in ("reference_impl", "conformance")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "wire" not in path.parts
        for line in _private_imports(path)
    ]
    assert found == []


def test_the_private_import_check_sees_one(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from reference_impl.commit.build import _Builder\nfrom reference_impl import __version__\n")
    assert [line.split(" imports ")[1] for line in _private_imports(probe)] == [
        "_Builder from reference_impl.commit.build"
    ]
