"""``lance-conformance conflicts``: the stored conflict matrix, as a user prints it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conformance.conflict_matrix.model import check_document, stored_matrix

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, timeout=120)


def test_conflicts_prints_a_text_table_of_every_cell():
    result = run_cli("conflicts")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["first", "->"]
    assert "pylance/pylance" in lines[0]
    rows = [line for line in lines if " -> " in line and not line.startswith("first")]
    assert len(rows) == len(stored_matrix().cells)
    same_rows = next(line for line in rows if line.startswith("delete -> delete:same-rows"))
    assert same_rows.split()[3:5] == ["retryable", "retryable"]


def test_conflicts_format_json_prints_the_data_on_standard_output():
    result = run_cli("conflicts", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    check_document(document)
    stored = json.loads((ROOT / "conformance" / "data" / "conflict_matrix.json").read_text(encoding="utf-8"))
    assert document == stored


def test_conflicts_format_markdown_prints_the_docs_page():
    result = run_cli("conflicts", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (ROOT / "docs" / "conflicts.md").read_text(encoding="utf-8")
