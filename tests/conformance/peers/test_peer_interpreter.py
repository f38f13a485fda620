"""Which Python builds the old releases' venvs (conformance.peers.old_pylance)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.peers.old_pylance import PEER_PYTHONS, peer_interpreter

ROOT = Path(__file__).resolve().parents[3]


def _version_of(python: str) -> tuple[int, int]:
    printed = subprocess.run(
        [python, "-c", "import sys; print(*sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    return int(printed[0]), int(printed[1])


def test_a_python_every_era_has_wheels_for_builds_its_own_venvs(monkeypatch):
    monkeypatch.delenv("LANCE_CONFORMANCE_PEER_PYTHON", raising=False)
    if sys.version_info[:2] in PEER_PYTHONS:
        assert peer_interpreter() == sys.executable
    assert _version_of(peer_interpreter()) in PEER_PYTHONS


def test_the_environment_variable_chooses_the_interpreter(monkeypatch):
    monkeypatch.setenv("LANCE_CONFORMANCE_PEER_PYTHON", "/opt/some/python3.11")
    assert peer_interpreter() == "/opt/some/python3.11"


def test_a_newer_python_than_the_pins_support_hands_the_venvs_to_an_older_one():
    """Under Python 3.13 (no pyarrow 15/17 wheels), the venvs are built by a
    3.10-3.12 interpreter from PATH, as `./dev tox -e py313` provides."""
    pyenv = Path.home() / ".pyenv" / "versions"
    newer = sorted(pyenv.glob("3.13*/bin/python3.13"))
    older = [p.parent for v in ("3.12", "3.11", "3.10") for p in sorted(pyenv.glob(f"{v}*/bin/python{v}"))]
    if not newer or not older:
        pytest.skip("needs pyenv's Python 3.13 and one of 3.10-3.12 (these machines have both)")
    env = {k: v for k, v in os.environ.items() if k != "LANCE_CONFORMANCE_PEER_PYTHON"}
    env["PYTHONPATH"] = str(ROOT)
    env["PATH"] = os.pathsep.join([str(older[0]), env.get("PATH", "")])
    chosen = subprocess.run(
        [str(newer[0]), "-c", "from conformance.peers.old_pylance import peer_interpreter; print(peer_interpreter())"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert chosen.returncode == 0, chosen.stderr
    assert _version_of(chosen.stdout.strip()) in PEER_PYTHONS
    assert shutil.which(chosen.stdout.strip())
