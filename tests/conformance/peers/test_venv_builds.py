"""How the old releases' venvs are built (conformance.peers.old_pylance)."""

from __future__ import annotations

import subprocess

from conformance.peers.old_pylance import uv_executable


def test_the_test_extra_gives_the_venv_builds_uv():
    """uv is in the test extra, so the default run builds the release venvs
    with it; without it they fall back to pip, minutes slower on a fresh
    machine, and this fails rather than let the run slow down unseen."""
    uv = uv_executable()
    assert uv is not None
    version = subprocess.run([uv, "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("uv "), version.stdout + version.stderr
