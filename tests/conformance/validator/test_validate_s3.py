"""``validate`` over S3 (a real moto server) reports what it reports on a
local copy of the same objects, and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from conformance.mutations.edit import edit_manifest
from conformance.validator import validate
from reference_impl.dataset import Dataset
from reference_impl.errors import CorruptFileError, PathEscapeError
from reference_impl.file_format import LanceFileReader
from tests.servers import requested_keys, s3_client


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


def upload(options: dict[str, str], bucket: str, source: Path, prefix: str) -> None:
    """Put every file under ``source`` at ``prefix/`` (with boto3)."""
    client = s3_client(options)
    for path in sorted(source.rglob("*")):
        if path.is_file():
            client.put_object(Bucket=bucket, Key=f"{prefix}/{path.relative_to(source)}", Body=path.read_bytes())


def test_a_hostile_dataset_on_s3_is_read_only_inside_its_root(s3_options, s3_bucket, moto_server, tmp_path):
    """A manifest whose data file path climbs out of the root, and a data
    file cut down to its last bytes (its footer's offsets point far before
    the object's start), validate on S3 as on the local copy; the reader
    raises typed errors; and no request names a key outside the root (the
    object placed beside it is never asked for)."""
    local = tmp_path / "t.lance"
    ds = Dataset.create(local, pa.table({"id": [1, 2, 3]}))
    ds = ds.append(pa.table({"id": [4, 5]}))
    truncated = local / "data" / ds.fragments[1].files[0].path
    truncated.write_bytes(truncated.read_bytes()[-40:])

    def climb_out(manifest_file):
        manifest_file.manifest.fragments[0].files[0].path = "../../secret/data.lance"

    edit_manifest(local, climb_out)
    upload(s3_options, s3_bucket, local, "t.lance")
    s3_client(s3_options).put_object(Bucket=s3_bucket, Key="secret/data.lance", Body=truncated.read_bytes())
    uri = f"s3://{s3_bucket}/t.lance"
    already = len(requested_keys(moto_server, s3_bucket))

    remote = validate(uri, all_versions=True, storage_options=s3_options)
    assert {"data-file/path", "data-file/readable"} <= {f.rule for f in remote.findings}
    assert _normalised(remote, uri) == _normalised(validate(local, all_versions=True), str(local))
    opened = Dataset.open(uri, storage_options=s3_options)
    with pytest.raises(PathEscapeError, match=rf"path leads outside s3://{s3_bucket}/t.lance$"):
        opened.to_table()
    location = opened.data_file_location(opened.fragments[1].files[0])
    with pytest.raises(CorruptFileError, match=rf"^s3://{s3_bucket}/t.lance/data/"):
        LanceFileReader(location.storage, location.relpath).read(arrow_schema=pa.schema([("id", pa.int64())]))

    touched = requested_keys(moto_server, s3_bucket)[already:]
    assert touched and all(key.startswith("t.lance/") for key in touched), sorted(set(touched))
