"""The installable package: its public entry points and declared dependencies."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_dataset_is_importable_from_the_package_top_level():
    result = _python(
        "from reference_impl import Dataset\n"
        "from reference_impl.dataset import Dataset as Direct\n"
        "import reference_impl\n"
        "assert Dataset is Direct and 'Dataset' in reference_impl.__all__\n"
    )
    assert result.returncode == 0, result.stderr


def test_importing_a_submodule_does_not_load_pyarrow():
    """The top-level export is lazy: a tool that only needs names or refs
    does not pay for Arrow."""
    result = _python(
        "import sys\n"
        "import reference_impl.naming\n"
        "import reference_impl\n"
        "assert 'pyarrow' not in sys.modules, sorted(m for m in sys.modules if m.startswith('pyarrow'))\n"
        "try:\n"
        "    reference_impl.NoSuchThing\n"
        "except AttributeError as exc:\n"
        "    assert 'NoSuchThing' in str(exc)\n"
        "else:\n"
        "    raise SystemExit('an unknown attribute was found')\n"
    )
    assert result.returncode == 0, result.stderr
