"""The acceptance run of an implementer: build the wheel, install it into a
fresh virtual environment, run the suite from an empty directory.

It builds from a copy of the source tree (without ``build/``, virtual
environments and caches, as an sdist would carry it), so that nothing left
over from an earlier build reaches the wheel, and installs it with pip from
the configured index (with uv where it is installed, as the test extra does:
the dependencies come from the cache the set-up filled, else from PyPI). About
a minute on an idle machine with a warm pip cache (half of it the suite's own
run), so it stays in the default run; marked ``wheel`` so that ``-m "not
wheel"`` leaves it out and ``-m wheel`` runs it alone. (``tox -e reference``
is the same acceptance run through tox: the wheel, and the plugin from an
empty directory.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.fixtures import CORPUS_VERSION_FILE, checkout_corpus
from conformance.fixtures.case import case_dirs
from conformance.peers.old_pylance import uv_executable
from conformance.suite.queries import checks as query_checks

ROOT = Path(__file__).resolve().parents[3]
#: Not part of a source distribution.
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".venv*", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", ".cache"
)


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result


@pytest.mark.wheel
def test_an_installed_wheel_runs_the_whole_golden_corpus_from_an_empty_directory(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT)
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", ".", "-w", str(wheels)], source)
    (wheel,) = wheels.glob("lance_conformance-*.whl")
    corpus = checkout_corpus()
    assert corpus is not None
    cases = case_dirs(corpus)
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.split("/")[4] for name in archive.namelist() if name.startswith("conformance/fixtures/corpus/cases/")
        }
    # Every case, and the corpus's version file beside them.
    assert shipped == {case.name for case in cases} | {CORPUS_VERSION_FILE}

    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    uv = uv_executable()
    if uv is not None:
        # uv installs from the cache the project's own set-up filled (./dev):
        # on a fresh machine pip would download every dependency again.
        _run([uv, "venv", "--quiet", "--no-python-downloads", "--python", sys.executable, str(venv)], tmp_path)
        _run([uv, "pip", "install", "--quiet", "--python", str(python), str(wheel)], tmp_path)
    else:
        _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
        _run([str(python), "-m", "pip", "install", "-q", str(wheel)], tmp_path)

    empty = tmp_path / "implementer"
    empty.mkdir()
    # Nothing of this checkout may leak in: no corpus override, no PYTHONPATH.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LANCE_CONFORMANCE_FIXTURES")}
    env.pop("LANCE_CONFORMANCE_DRIVER", None)
    result = _run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "conformance.suite"]
        + ["--lance-driver", "reference", "-v"],
        empty,
        env,
    )
    for case in cases:
        assert f"readers.py::{case.name} PASSED" in result.stdout, result.stdout[-3000:]
    summary = result.stdout.strip().splitlines()[-1]
    # Everything passes but the one step the reference does not perform and
    # the index queries: their datasets are written by pylance, which the
    # wheel does not install.
    skipped = 1 + len(query_checks())
    assert re.fullmatch(rf"=+ \d+ passed, {skipped} skipped in .*", summary), result.stdout[-3000:]
    assert "writers.py::upsert SKIPPED" in result.stdout
    assert "queries.py::fresh-score-equals-scan SKIPPED" in result.stdout
    # The corpus read is the wheel's, inside the new environment.
    installed = _run([str(python), "-c", "import conformance.fixtures as f; print(f.corpus_root())"], empty, env)
    assert Path(installed.stdout.strip()).is_relative_to(venv)
