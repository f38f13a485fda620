"""``lance-conformance matrix``: the ecosystem matrix as a page and JSON, run
as a user would run it, on a small copy of the golden corpus."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from conformance.ecosystem.model import check_document
from tests.conformance.report.small_matrix import BROKEN_CASE, CASES, small_corpus

TIMEOUT = 300


def _matrix_command(tmp_path, *extra: str) -> list[str]:
    corpus = small_corpus(tmp_path / "corpus")
    return [
        sys.executable,
        "-m",
        "conformance.cli",
        "matrix",
        "--corpus",
        str(corpus),
        "--html",
        str(tmp_path / "out" / "matrix.html"),
        *extra,
    ]


def _without_ci() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "CI"}


def test_matrix_writes_the_page_and_the_versioned_json(tmp_path):
    """The broken case fails the run; the JSON fits its schema, names the
    drivers' versions and the environment's, and the page holds every cell;
    a driver that cannot be loaded is named, not fatal. Nothing goes to
    stderr when it is not a terminal."""
    pytest.importorskip("lance")
    command = _matrix_command(tmp_path, "--json", str(tmp_path / "m.json"), "--drivers", "reference,pylance,no_such")
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=_without_ci())
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "golden cases: reading" not in result.stderr
    document = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    check_document(document)
    assert [d["name"] for d in document["drivers"]] == ["reference", "pylance", "no_such"]
    assert document["drivers"][2]["error"] and "driver no_such not run" in result.stdout
    pylance = document["drivers"][1]["info"]
    import lance
    import pyarrow

    assert pylance["version"] == lance.__version__
    assert document["versions"]["pyarrow"] == pyarrow.__version__
    readers = next(g for g in document["grids"] if g["id"] == "readers")
    assert readers["columns"] == ["reference", "pylance"]
    assert {o["case"] for c in readers["cells"] for o in c["outcomes"]} == set(CASES)
    assert f"fail: lance-conformance 0.1.0 x reference: {BROKEN_CASE}" in result.stdout
    page = (tmp_path / "out" / "matrix.html").read_text(encoding="utf-8")
    assert page.count('<td class="cell ') == sum(len(g["cells"]) for g in document["grids"])


def test_matrix_shows_progress_on_a_terminal_only(tmp_path):
    """With stderr on a terminal (a pseudo-terminal here) each step is
    announced; with CI set, nothing is."""
    pytest.importorskip("lance")

    def stderr_on_a_terminal(run: str, env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        try:
            subprocess.run(
                _matrix_command(tmp_path / run, "--drivers", "reference"),
                stdout=subprocess.DEVNULL,
                stderr=follower,
                timeout=TIMEOUT,
                env=env,
            )
        finally:
            os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        return b"".join(chunks).decode(errors="replace")

    shown = stderr_on_a_terminal("terminal", _without_ci())
    assert "golden cases: reading the corpus with reference" in shown
    assert "conflict matrix" in shown
    assert "golden cases: reading" not in stderr_on_a_terminal("ci", {**_without_ci(), "CI": "1"})


READ_ONLY = "tests.conformance.ecosystem.read_only_reference"
#: A driver module runs in a worker by default, and the matrix names it so.
RUNS_AS = f"worker:{READ_ONLY}"


def _expectations_file(path, *cases: str) -> str:
    """An implementation's expectations file listing ``cases`` of the readers suite."""
    entries = [
        {
            "suite": "readers",
            "case": case,
            "requirement": "transaction.file-decodes",
            "kind": "bug",
            "reason": "listed by the test",
            "reproducer": "lance-conformance fixtures verify",
        }
        for case in cases
    ]
    path.write_text(json.dumps({"format": 1, "implementation": "read-only", "expectations": entries}))
    return str(path)


def test_matrix_judges_only_its_drivers_against_their_expectations_file(tmp_path):
    """A driver that is neither pylance nor the reference, whose one failure
    (the broken case) its file lists: exit 0, whatever the stored conflict
    matrix holds (it is left out: it measured neither); the same run without
    the file fails; a file that also lists a case that passes names it as an
    unexpected pass and fails."""
    listed = _expectations_file(tmp_path / "exact.json", BROKEN_CASE)
    command = _matrix_command(tmp_path / "exact", "--drivers", READ_ONLY, "--expectations", listed)
    result = subprocess.run(
        [*command, "--json", str(tmp_path / "m.json")], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert [grid["id"] for grid in document["grids"]] == ["readers"]
    assert [(e["driver"], e["case"]) for e in document["expectations"]] == [(RUNS_AS, BROKEN_CASE)]

    bare = subprocess.run(
        _matrix_command(tmp_path / "bare", "--drivers", READ_ONLY), capture_output=True, text=True, timeout=TIMEOUT
    )
    assert bare.returncode == 1 and f"fail: lance-conformance 0.1.0 x {RUNS_AS}: {BROKEN_CASE}" in bare.stdout

    stale = _expectations_file(tmp_path / "stale.json", BROKEN_CASE, "pylance-types")
    command = _matrix_command(tmp_path / "stale", "--drivers", READ_ONLY, "--expectations", stale)
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 1
    assert "unexpected pass: readers lance 14.0.2 x" in result.stdout and "pylance-types" in result.stdout


def test_matrix_expectations_name_their_driver_when_several_run(tmp_path):
    """A bare FILE with two drivers is a usage error (exit 2) naming the
    DRIVER=FILE form; DRIVER=FILE applies the file to that driver only."""
    listed = _expectations_file(tmp_path / "f.json", BROKEN_CASE)
    drivers = f"reference,{READ_ONLY}"
    command = _matrix_command(
        tmp_path / "bare", "--drivers", drivers, "--expectations", listed, "--json", str(tmp_path / "m.json")
    )
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2 and "DRIVER=FILE" in result.stderr and "Traceback" not in result.stderr
    command[command.index(listed)] = f"{READ_ONLY}={listed}"
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    # The reference has no entry for the broken case: it fails there, and only there.
    assert result.returncode == 1, result.stdout + result.stderr
    readers = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["grids"][0]
    statuses = {(c["column"], o["case"]): o["status"] for c in readers["cells"] for o in c["outcomes"]}
    assert statuses[RUNS_AS, BROKEN_CASE] == "expected-failure"
    assert statuses["reference", BROKEN_CASE] == "fail"
