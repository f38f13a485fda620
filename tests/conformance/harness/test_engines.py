"""Real distributed engines raced by the harness, as a user runs them: the
``harness run`` command in a process of its own, every effect checked.

- pylance's own distributed pattern (fragments written by worker processes,
  one commit on the coordinator) is clean (default run);
- lance-ray's distributed column additions racing each other and pylance's
  deletes show what lance-ray 0.5 gets wrong (docs/spec-discrepancies.md,
  "Distributed engines as writers"): its retry re-commits the Merge it built
  before, so the harness names blind rebases, with the columns they lost
  and the deletes they undid under them, each operation with its role
  (``engines``: tox -e engines);
- daft's writes, column merges and compactions are clean (``engines``).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.harness.anomalies import AnomalyKind, Role

ROOT = Path(__file__).resolve().parents[3]
#: A guard against a hung engine, never a measurement.
RUN_TIMEOUT_SECONDS = 900


def _harness(out: Path, *arguments: str) -> tuple[int, dict]:
    """``lance-conformance harness run ... --format json`` as a user runs it."""
    command = [sys.executable, "-m", "conformance.cli", "harness", "run", *arguments]
    command += ["--master", "local-processes", "--out", str(out), "--format", "json"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS, cwd=ROOT)
    assert ran.returncode in (0, 1), ran.stderr[-3000:]
    return ran.returncode, json.loads(ran.stdout)


def _every(documents: list[dict]):
    for document in documents:
        yield document
        yield from _every(document["consequences"])


def test_pylance_distributed_pattern_is_clean(tmp_path):
    code, report = _harness(tmp_path / "run", "--writer", "pylance-distributed", "--writers", "2", "--operations", "3")
    assert code == 0 and report["anomalies"] == [], report["anomalies"]
    assert report["acknowledged"] > 0
    assert set(report["skipped_workloads"]) >= {"update", "upsert"}  # no distributed API for them


@pytest.mark.engines
@pytest.mark.skipif(importlib.util.find_spec("lance_ray") is None, reason="lance-ray is not installed (engines extra)")
def test_lance_ray_column_additions_lose_columns_and_undo_deletes(tmp_path):
    """Two lance-ray writers add columns, a pylance writer deletes (paced so
    that its deletes land while lance-ray's jobs run): each blind retry of
    lance-ray's is one root anomaly, the lost columns and resurrected deletes
    under it, with who lost, who deleted and who committed."""
    writers = ["--writer", "lance-ray", "--writer", "lance-ray", "--writer", "pylance"]
    workloads = ["--workload", "add-columns", "--workload", "add-columns", "--workload", "delete"]
    code, report = _harness(
        tmp_path / "run", *writers, *workloads, "--writers", "3", "--operations", "5", "--pace", "1.5"
    )
    assert code == 1
    roots = report["anomalies"]
    assert {root["name"] for root in roots} == {AnomalyKind.BLIND_REBASE.value}
    assert all(Role.REBASED.value in root["witness"]["roles"].values() for root in roots)
    found = {document["name"]: document for document in _every(roots)}
    assert AnomalyKind.LOST_COLUMN.value in found and AnomalyKind.RESURRECTED_DELETE.value in found
    assert Role.LOST.value in found[AnomalyKind.LOST_COLUMN.value]["witness"]["roles"].values()
    assert Role.DELETED.value in found[AnomalyKind.RESURRECTED_DELETE.value]["witness"]["roles"].values()


@pytest.mark.engines
@pytest.mark.skipif(importlib.util.find_spec("daft") is None, reason="daft is not installed (engines extra)")
def test_daft_writes_merges_and_compactions_are_clean(tmp_path):
    code, report = _harness(
        tmp_path / "run", "--writer", "daft", "--writers", "2", "--operations", "3",
        "--workload", "append:2,add-columns:1,compact:1",
    )  # fmt: skip
    assert code == 0 and report["anomalies"] == [], report["anomalies"]
    assert report["acknowledged"] > 0
