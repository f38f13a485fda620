"""The installable package: its public entry points and declared dependencies."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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


def _declared_dependencies() -> set[str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {_normalized(re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0]) for spec in project["dependencies"]}


def _normalized(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _module_level_imports(path: Path) -> set[str]:
    """Top-level names of the absolute imports a module runs as it loads
    (imports inside functions are lazy and optional, such as pylance)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_every_module_level_import_is_a_declared_dependency():
    """A plain install (no test extra) must be able to import every module
    of the package: each third-party module imported at load time belongs to
    a distribution listed in [project].dependencies."""
    own = {"reference_impl", "conformance", "__future__"}
    to_distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    declared = _declared_dependencies()
    for package in ("reference_impl", "conformance"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "wire" in path.relative_to(ROOT).parts:
                continue  # generated protobuf code: google.protobuf, declared as protobuf
            if "peers" in path.relative_to(ROOT).parts and '__name__ == "__main__"' in path.read_text(encoding="utf-8"):
                continue  # a script an old pylance release's own interpreter runs, with that venv's packages
            for name in _module_level_imports(path) - own - set(sys.stdlib_module_names):
                distributions = {_normalized(d) for d in to_distributions.get(name, [name])}
                if not distributions & declared:
                    undeclared.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert not undeclared, f"imported at load time but not declared in pyproject.toml: {undeclared}"


def test_an_editable_install_prints_no_packaging_warnings(tmp_path):
    """What a new user sees first (``./dev demo`` installs the package): the
    build backend finds nothing deprecated in pyproject.toml (such as the
    license table setuptools 77 deprecated)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=300)
    # -v shows the build backend's own output, which some pip releases hide
    # (the one ./dev installs shows it even with -q).
    result = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "-v", "--no-deps", "-e", ROOT],
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    complaints = [line for line in output.splitlines() if re.search(r"deprecat", line, re.IGNORECASE)]
    assert not complaints, "\n".join(complaints)
