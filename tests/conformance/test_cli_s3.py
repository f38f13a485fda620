"""``validate`` and ``describe`` on s3:// URIs with --storage-option, run as
a user would run them (a child process) against a real moto server."""

from __future__ import annotations

import json

import pyarrow as pa

from reference_impl.dataset import Dataset
from tests.conformance.test_cli import run_cli
from tests.conformance.validator.test_validate_s3 import _objects, build_damaged_dataset, copy_to_local


def _storage_arguments(options: dict[str, str]) -> list[str]:
    return [argument for key, value in options.items() for argument in ("--storage-option", f"{key}={value}")]


def test_validate_and_describe_an_s3_dataset(s3_options, s3_bucket, tmp_path):
    """The JSON report of ``validate s3://...`` equals the local copy's but for
    the root, the exit code says the findings fail the run, ``describe``
    prints the same document for both, and neither command writes."""
    uri = build_damaged_dataset(s3_options, s3_bucket)
    local = copy_to_local(s3_options, s3_bucket, "t.lance", tmp_path / "t.lance")
    before = _objects(s3_options, s3_bucket)
    remote = run_cli("validate", uri, "--all-versions", "--format", "json", *_storage_arguments(s3_options))
    here = run_cli("validate", str(local), "--all-versions", "--format", "json")
    assert remote.returncode == here.returncode == 1, remote.stderr
    remote_report, local_report = json.loads(remote.stdout), json.loads(here.stdout)
    assert remote_report.pop("dataset") == uri
    local_report.pop("dataset")
    assert json.loads(json.dumps(remote_report).replace(uri, "<root>")) == json.loads(
        json.dumps(local_report).replace(str(local), "<root>")
    )
    described = run_cli("describe", uri, "--version", "2", *_storage_arguments(s3_options))
    assert described.returncode == 0, described.stderr
    assert json.loads(described.stdout) == json.loads(run_cli("describe", str(local), "--version", "2").stdout)
    assert _objects(s3_options, s3_bucket) == before


def test_describe_a_tag_on_s3(s3_options, s3_bucket):
    uri = f"s3://{s3_bucket}/tagged.lance"
    ds = Dataset.create(uri, pa.table({"id": [1, 2]}), storage_options=s3_options)
    ds.append(pa.table({"id": [3]})).create_tag("first", 1)
    result = run_cli("describe", uri, "--tag", "first", "--format", "text", *_storage_arguments(s3_options))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("version 1 (v2 names), 2 rows")


def test_bad_storage_options_are_usage_errors(s3_options, s3_bucket):
    uri = f"s3://{s3_bucket}/t.lance"
    malformed = run_cli("validate", uri, "--storage-option", "aws_region")
    assert malformed.returncode == 2 and "expected KEY=VALUE" in malformed.stderr
    unknown = run_cli("validate", uri, "--storage-option", "aws_endpoit=http://x")
    assert unknown.returncode == 2 and "unknown storage option 'aws_endpoit'" in unknown.stderr
    absent = run_cli("describe", uri, *_storage_arguments(s3_options))
    assert absent.returncode == 2 and f"not a Lance dataset: s3://{s3_bucket}/t.lance" in absent.stderr
