"""``validate`` over S3 (a real moto server) reports what it reports on a
local copy of the same objects, and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from conformance.validator import validate
from reference_impl.dataset import Dataset
from tests.servers import s3_client


def _objects(options: dict[str, str], bucket: str) -> dict[str, str]:
    """Every object of the bucket: key -> ETag."""
    client = s3_client(options)
    found: dict[str, str] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        found.update({o["Key"]: o["ETag"] for o in page.get("Contents", [])})
    return found


def copy_to_local(options: dict[str, str], bucket: str, prefix: str, target: Path) -> Path:
    """Download every object under ``prefix/`` into ``target`` (with boto3, not
    through the code under test)."""
    client = s3_client(options)
    for key in _objects(options, bucket):
        if key.startswith(prefix + "/"):
            path = target / key[len(prefix) + 1 :]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(client.get_object(Bucket=bucket, Key=key)["Body"].read())
    return target


def _normalised(report, root: str) -> dict:
    """The report's JSON with the dataset root replaced by a placeholder."""
    document = report.to_json()
    document.pop("dataset")
    return json.loads(json.dumps(document).replace(root, "<root>"))


def build_damaged_dataset(options: dict[str, str], bucket: str) -> str:
    """A reference-written dataset on S3 with three versions, then one data
    file removed and a stray file under _versions/, so that the reports have
    findings to compare."""
    uri = f"s3://{bucket}/t.lance"
    ds = Dataset.create(uri, pa.table({"id": [1, 2, 3]}), storage_options=options)
    ds = ds.append(pa.table({"id": [4, 5]}))
    ds = ds.delete(pc.field("id") == 1)
    client = s3_client(options)
    client.delete_object(Bucket=bucket, Key=f"t.lance/data/{ds.fragments[-1].files[0].path}")
    client.put_object(Bucket=bucket, Key="t.lance/_versions/notes.txt", Body=b"not a manifest")
    return uri


def test_validate_s3_equals_validate_of_a_local_copy(s3_options, s3_bucket, tmp_path):
    """Findings, rule ids, versions and summary agree; paths differ only by the
    root. Validation issues no write: every object keeps its ETag."""
    uri = build_damaged_dataset(s3_options, s3_bucket)
    local = copy_to_local(s3_options, s3_bucket, "t.lance", tmp_path / "t.lance")
    before = _objects(s3_options, s3_bucket)
    remote = validate(uri, all_versions=True, storage_options=s3_options)
    assert _objects(s3_options, s3_bucket) == before
    assert remote.dataset == uri
    here = validate(local, all_versions=True)
    assert remote.versions == [1, 2, 3]
    assert {f.rule for f in remote.findings} >= {"data-file/exists"}
    assert _normalised(remote, uri) == _normalised(here, str(local))
