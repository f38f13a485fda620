"""What the command line imports before it reads the first byte (issue 17,
start-up): each command runs in a fresh interpreter, which then reports
which heavy third-party packages ended up in ``sys.modules``. Behaviour, not
timing: a command that does not need a package does not load it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.fixtures import default_corpus

#: Packages only some commands need: the test tools, Spark, LanceDB, the
#: browser driver, boto3 (an object store), and pyarrow with numpy.
HEAVY = ("pyarrow", "numpy", "hypothesis", "pyspark", "boto3", "lancedb", "lance", "selenium")

_PROBE = """
import json, sys
from conformance.cli import main
heavy_names = sys.argv.pop(1)
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(heavy_names.split(",")))
print("\\n" + json.dumps(heavy))
"""

#: A golden case without Arrow deletion files (its deletion file is a Roaring bitmap).
PLAIN_CASE = Path(default_corpus()) / "cases" / "pylance-deletion-bitmap" / "dataset"


def _loaded(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, ",".join(HEAVY), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_help_loads_no_heavy_package():
    assert _loaded("--help") == set()


def test_validate_help_loads_no_heavy_package():
    assert _loaded("validate", "--help") == set()


@pytest.mark.parametrize(
    "args",
    [("rules",), ("validate", str(PLAIN_CASE)), ("validate", "--all-versions", str(PLAIN_CASE))],
    ids=["rules", "validate", "validate-all-versions"],
)
def test_rules_and_validate_load_no_heavy_package(args):
    """Neither the test tools, Spark, LanceDB, pylance, the browser driver,
    boto3 (for a local dataset) nor pyarrow and numpy: the rule catalog needs
    none of them, and a dataset whose deletion files are Roaring bitmaps and
    whose fields are all nullable is checked from footers and manifests
    without decoding a value."""
    assert _loaded(*args) == set()


def _validate_json(case: Path, *, preload: str) -> tuple[dict, set[str]]:
    """The JSON report of ``validate`` in a fresh process that imported
    ``preload`` first (nothing when empty), and the heavy packages loaded."""
    code = f"import {preload}\n{_PROBE}" if preload else _PROBE
    done = subprocess.run(
        [sys.executable, "-c", code, ",".join(HEAVY), "validate", "--format", "json", str(case)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report, heavy = done.stdout.rsplit("\n\n", 1)
    return json.loads(report), set(json.loads(heavy))


def test_arrow_deletion_files_load_pyarrow_on_demand_with_the_same_report():
    """The other side of the lazy imports: an ``.arrow`` deletion file is
    still decoded, pyarrow being loaded when it is first needed, and the
    report is the one a process that imported pyarrow up front gives."""
    case = Path(default_corpus()) / "cases" / "ref-deletion-arrow" / "dataset"
    lazy, loaded = _validate_json(case, preload="")
    eager, _ = _validate_json(case, preload="pyarrow")
    assert "pyarrow" in loaded
    assert lazy == eager
    assert not [f for f in lazy["findings"] if f["rule"].startswith("validator.")]
