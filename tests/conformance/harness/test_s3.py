"""A harness run on S3 (a real moto server on loopback): writer processes
race on an ``s3://`` dataset through the storage options, and the checker
reads every version back from the bucket."""

from __future__ import annotations

import pytest

from conformance.harness.executors import ProcessExecutor
from conformance.harness.runner import run
from conformance.harness.spec import RunSpec
from conformance.harness.workloads import parse_workload, workload_to_json


@pytest.mark.parametrize("writer", ["reference", pytest.param("pylance", marks=pytest.mark.slow)])
def test_a_run_on_s3_shows_no_anomaly(writer, s3_options, s3_bucket, tmp_path):
    spec = RunSpec(
        uri=f"s3://{s3_bucket}/t.lance",
        storage_options=s3_options,
        writer=writer,
        writers=3,
        operations=3,
        workloads=workload_to_json(parse_workload("rows")),
        seed=5,
        stable_row_ids=False,
        naming="v2",
    )
    result = run(spec, ProcessExecutor(), tmp_path / "out", validate=False)
    assert result.report.anomalies == []
    assert result.report.versions > 1
