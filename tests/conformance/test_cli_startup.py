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
def test_rules_and_validate_load_no_test_spark_or_cloud_package(args):
    """Neither the test tools, Spark, LanceDB, pylance, the browser driver nor
    boto3 (for a local dataset). pyarrow is still loaded: the reference file
    format package imports its Arrow reader with its footer parser."""
    assert not _loaded(*args) & {"hypothesis", "pyspark", "boto3", "lancedb", "lance", "selenium"}
