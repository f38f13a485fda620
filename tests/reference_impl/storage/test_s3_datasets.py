"""Datasets on S3 (a real moto server over HTTP), written and read by the
reference and by pylance 14 with the same URIs and storage options."""

from __future__ import annotations

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from reference_impl.dataset import Dataset
from reference_impl.errors import CorruptFileError, ManifestStoreError, NotADatasetError
from tests.servers import s3_client


def _rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64()), "name": [f"n{i}" for i in range(count)]})


def _sorted(table: pa.Table) -> dict:
    return table.sort_by("id").to_pydict()


def test_reference_writes_pylance_reads_every_version(s3_options, s3_bucket):
    """A dataset the reference commits on S3 (create, append, delete, a tag)
    reads the same in pylance at every version, through the same URI and
    options."""
    uri = f"s3://{s3_bucket}/ref/t.lance"
    ds = Dataset.create(uri, _rows(0, 5), storage_options=s3_options)
    ds = ds.append(_rows(5, 3))
    ds = ds.delete(pc.field("id") == 2)
    ds.create_tag("before-append", 2)
    assert ds.uri == uri and ds.version == 3
    for version in (1, 2, 3):
        ours = Dataset.open(uri, version, storage_options=s3_options).to_table()
        theirs = lance.dataset(uri, version=version, storage_options=s3_options).to_table()
        assert _sorted(theirs) == _sorted(ours)
    assert lance.dataset(uri, storage_options=s3_options).tags.list()["before-append"]["version"] == 2
    keys = [o["Key"] for o in s3_client(s3_options).list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert all(key.startswith("ref/t.lance/") for key in keys)


def test_pylance_writes_reference_reads_and_appends(s3_options, s3_bucket):
    """pylance writes s3:// (its default 2.2 data files, which the reference
    writer writes too), the reference reads it and appends, and pylance reads
    the result."""
    uri = f"s3://{s3_bucket}/py/t.lance"
    lance.write_dataset(_rows(0, 4), uri, storage_options=s3_options)
    lance.dataset(uri, storage_options=s3_options).delete("id = 1")
    ours = Dataset.open(uri, storage_options=s3_options)
    assert ours.version == 2 and _sorted(ours.to_table()) == _sorted(_rows(0, 4).filter(pc.field("id") != 1))
    ours = ours.append(_rows(10, 2))
    assert ours.version == 3
    theirs = lance.dataset(uri, storage_options=s3_options)
    assert theirs.version == 3
    assert _sorted(theirs.to_table()) == _sorted(ours.to_table())
    assert theirs.count_rows() == 5


def test_s3_base_paths_resolve_with_the_same_options(s3_options, s3_bucket):
    """A shallow clone on S3 records its source as an s3:// base path; the
    reference reads the clone's rows through it with the clone's options,
    and pylance reads the clone too."""
    source = Dataset.create(f"s3://{s3_bucket}/src.lance", _rows(0, 3), storage_options=s3_options)
    clone = source.shallow_clone(f"s3://{s3_bucket}/clone.lance")
    assert [b.path for b in clone.manifest.base_paths] == [f"s3://{s3_bucket}/src.lance"]
    reopened = Dataset.open(f"s3://{s3_bucket}/clone.lance", storage_options=s3_options)
    assert _sorted(reopened.to_table()) == _sorted(_rows(0, 3))
    location = reopened.data_file_location(reopened.fragments[0].files[0])
    assert str(location).startswith(f"s3://{s3_bucket}/src.lance/data/") and not location.storage.writable
    theirs = lance.dataset(f"s3://{s3_bucket}/clone.lance", storage_options=s3_options)
    assert _sorted(theirs.to_table()) == _sorted(_rows(0, 3))


def test_damaged_manifest_on_s3_is_a_typed_error(s3_options, s3_bucket):
    """A truncated manifest object is a CorruptFileError naming s3://bucket/key."""
    uri = f"s3://{s3_bucket}/bad.lance"
    ds = Dataset.create(uri, _rows(0, 2), storage_options=s3_options)
    key = f"bad.lance/{ds.manifest_file.path.split('/bad.lance/', 1)[1]}"
    client = s3_client(s3_options)
    data = client.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
    client.put_object(Bucket=s3_bucket, Key=key, Body=data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match=rf"s3://{s3_bucket}/{key}"):
        Dataset.open(uri, storage_options=s3_options)


def test_open_names_the_problem(s3_options, s3_bucket):
    with pytest.raises(NotADatasetError, match=rf"s3://{s3_bucket}/nothing"):
        Dataset.open(f"s3://{s3_bucket}/nothing", storage_options=s3_options)
    # An s3+ddb URI brings its DynamoDB manifest store, which must exist.
    with pytest.raises(ManifestStoreError, match="dynamodb table T"):
        Dataset.open(f"s3+ddb://{s3_bucket}/t.lance?ddbTableName=T", storage_options=s3_options)
