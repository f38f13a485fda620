"""The Python driver template (``examples/driver-python/my_lance_driver.py``),
run as its README tells an implementer to: ``fixtures verify --driver
worker:my_lance_driver`` with the template's directory on ``PYTHONPATH``, in a
worker process of its own. It declares a SQL engine's limits (read-latest
only; no decimal256, duration, date64 or fixed-size binary; zones read as
UTC; microseconds), so the cases pass with those columns reported as
not-applicable observations and the zone and precision limits as observations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_DIR = ROOT / "examples" / "driver-python"
CASES = ("ref-types-strings-binary-decimal", "ref-types-temporal", "pylance-types", "ref-tags")


def test_the_template_passes_a_few_cases_as_a_worker_with_declared_not_applicable_columns(tmp_path):
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYTHONPATH=str(TEMPLATE_DIR) + (os.pathsep + path if path else ""))
    command = [sys.executable, "-m", "conformance.cli", "fixtures", "verify", "--driver", "worker:my_lance_driver"]
    done = subprocess.run(
        [*command, "--case", *CASES, "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # a guard against a hang, not a measurement
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["driver"]["implementation"] == "my-lance-driver"
    assert report["driver"]["types"]["unsupported"] == ["date64", "decimal256", "duration", "fixed_size_binary"]
    results = {result["case"]: result for result in report["results"]}
    assert set(results) == set(CASES)
    assert {result["status"] for result in results.values()} == {"pass"}
    # The capabilities it does not declare are named, never failed.
    assert all(set(result["missing_capabilities"]) == {"list-versions", "describe"} for result in results.values())

    def observed(case: str, kind: str) -> set[str]:
        return {o["column"] for o in results[case]["observations"] if o["kind"] == kind}

    assert observed("ref-types-strings-binary-decimal", "not-applicable") == {"d256", "fsb"}
    assert observed("ref-types-temporal", "not-applicable") == {"d64", "dur_s", "dur_ms", "dur_us", "dur_ns"}
    assert observed("ref-types-temporal", "time-zone") == {"ts_ms_ny"}
    assert observed("ref-types-temporal", "precision") == {"ts_ns", "t64ns"}
    # Everything else of those cases was compared: strings, binaries, decimal128, dates, times.
    assert not observed("ref-types-strings-binary-decimal", "not-applicable") & {"s", "ls", "bin", "lbin", "d128"}
