"""The linter and the type checker pass, as configured in ``pyproject.toml``
(``[tool.ruff]``, ``[tool.mypy]``): the default test run keeps them green.

Each runs as its own process from the repository root, so it reads the
project's configuration and checks the paths configured there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=600
    )


def test_ruff_finds_nothing():
    result = _run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_formatted_as_ruff_formats_it():
    result = _run("ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_nothing():
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_checks_can_fail(tmp_path):
    """The configuration checks something: an unused import and a wrong
    type against the project's own types are reported."""
    linted = _run("ruff", "check", "--no-cache", "--stdin-filename", "conformance/probe.py", "-", stdin="import os\n")
    assert linted.returncode == 1 and "F401" in linted.stdout, linted.stdout + linted.stderr
    probe = tmp_path / "probe.py"
    probe.write_text("from reference_impl.naming import NamingScheme\n\nscheme: NamingScheme = 'v1'\n")
    typed = _run("mypy", "--cache-dir", str(tmp_path / "cache"), str(probe))
    assert typed.returncode == 1 and "Incompatible types in assignment" in typed.stdout, typed.stdout + typed.stderr
