"""Naming a dataset as pylance does: paths, file://, s3:// and s3+ddb:// URIs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reference_impl.errors import InvalidOperationError
from reference_impl.storage import (
    DatasetUri,
    LocalStorage,
    S3Storage,
    open_storage,
    parse_dataset_uri,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/data/t.lance", DatasetUri("file", None, "/data/t.lance", None)),
        ("file:///data/t%20x.lance", DatasetUri("file", None, "/data/t x.lance", None)),
        ("s3://bucket/a/t.lance", DatasetUri("s3", "bucket", "a/t.lance", None)),
        ("S3://bucket//a/./t.lance/", DatasetUri("s3", "bucket", "a/t.lance", None)),
        ("s3://bucket", DatasetUri("s3", "bucket", "", None)),
        ("s3+ddb://bucket/t.lance?ddbTableName=commits", DatasetUri("s3+ddb", "bucket", "t.lance", "commits")),
    ],
)
def test_parse(text, expected):
    assert parse_dataset_uri(text) == expected
    assert parse_dataset_uri(Path(text) if "://" not in text else text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("gs://bucket/t.lance", "unsupported scheme 'gs'"),
        ("s3://ab/t.lance", "not a valid bucket name"),
        ("s3://Bucket/t.lance", "not a valid bucket name"),
        ("s3://bucket/../t.lance", "leads outside"),
        ("s3://bucket/t.lance?ddbTableName=x", "belongs to s3+ddb"),
        ("s3+ddb://bucket/t.lance", "names its table once"),
        ("s3+ddb://bucket/t.lance?ddbTableName=a&ddbTableName=b", "names its table once"),
        ("s3://bucket/t.lance?region=x", "unknown query parameters"),
    ],
)
def test_malformed_uris_are_the_callers_mistake(text, problem):
    with pytest.raises(InvalidOperationError, match=re.escape(problem)):
        parse_dataset_uri(text)


def test_open_storage_picks_the_backend(tmp_path, s3_options):
    local = open_storage(parse_dataset_uri(tmp_path / "t.lance"), writable=False)
    assert isinstance(local, LocalStorage) and local.root == tmp_path / "t.lance" and not local.writable
    remote = open_storage(parse_dataset_uri("s3+ddb://bucket/t.lance?ddbTableName=T"), s3_options)
    assert isinstance(remote, S3Storage) and remote.root == "s3://bucket/t.lance"
    assert remote.storage_options == s3_options


def test_storage_still_builds_the_local_store(tmp_path):
    """LocalStorage(path), as every caller wrote it before object storage, is a local store."""
    storage = LocalStorage(tmp_path)
    assert isinstance(storage, LocalStorage) and storage.root == tmp_path and storage.is_local
    assert str(parse_dataset_uri("s3+ddb://bucket/t.lance?ddbTableName=T")) == "s3+ddb://bucket/t.lance?ddbTableName=T"
