"""The DynamoDB external manifest store against a real server (a local moto
server over HTTP, ``tests/servers.py``), interoperating with pylance 14's
own ``s3+ddb://`` commits in both directions (table format: "External
Manifest Store"): each reads and appends to what the other committed, a
staged manifest left by either is finalised by the other's reader, and a
writer process killed after each step of either commit protocol on S3 (the
external store's, or put-if-not-exists with If-None-Match) loses nothing."""

from __future__ import annotations

import multiprocessing
import signal
import uuid

import boto3
import pyarrow as pa
import pytest

from conformance.validator import Severity, validate
from reference_impl.commit import STEP_BEFORE_MANIFEST, STEP_MANIFEST_WRITTEN, STEP_TRANSACTION_WRITTEN
from reference_impl.commit.external_store import (
    STEP_MANIFEST_COPIED,
    STEP_MANIFEST_STAGED,
    STEP_STORE_COMMITTED,
    STEP_STORE_REPOINTED,
    DynamoDBManifestStore,
    StoreEntry,
)
from reference_impl.dataset import Dataset
from reference_impl.fragment_writer import write_fragments
from reference_impl.transactions import Append
from tests.reference_impl.commit import crash_workers
from tests.servers import s3_client

lance = pytest.importorskip("lance")

WORKERS = "tests.reference_impl.commit.crash_workers"


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


@pytest.fixture
def ddb_table(s3_options) -> str:
    """A fresh DynamoDB table laid out as pylance expects."""
    return make_ddb_table(s3_options)


def make_ddb_table(s3_options) -> str:
    """Create a fresh DynamoDB table laid out as pylance expects; its name."""
    name = f"lc-{uuid.uuid4().hex[:12]}"
    client = boto3.client(
        "dynamodb",
        endpoint_url=s3_options["dynamodb_endpoint"],
        region_name=s3_options["aws_region"],
        aws_access_key_id=s3_options["aws_access_key_id"],
        aws_secret_access_key=s3_options["aws_secret_access_key"],
    )
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "base_uri", "KeyType": "HASH"}, {"AttributeName": "version", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "base_uri", "AttributeType": "S"},
            {"AttributeName": "version", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


def ids_of_reference(uri, options) -> list[int]:
    return sorted(Dataset.open(uri, storage_options=options).to_table()["id"].to_pylist())


def pylance_sees(uri, options) -> tuple[int, list[int]]:
    dataset = lance.dataset(uri, storage_options=options)
    return dataset.version, sorted(dataset.to_table()["id"].to_pylist())


def keys(options, bucket, prefix) -> list[str]:
    listed = s3_client(options).list_objects_v2(Bucket=bucket, Prefix=prefix)
    return sorted(item["Key"] for item in listed.get("Contents", []))


def test_the_dynamodb_store_has_put_if_not_exists_and_strongly_consistent_reads(s3_options, ddb_table):
    store = DynamoDBManifestStore(ddb_table, s3_options)
    assert store.latest("a") is None and store.get("a", 1) is None
    assert store.put_if_not_exists("a", 1, "a/_versions/1.manifest-x", 10)
    assert not store.put_if_not_exists("a", 1, "a/_versions/1.manifest-y", 11)
    store.put("a", 1, "a/_versions/1.manifest", 10)
    assert store.put_if_not_exists("a", 2, "a/_versions/2.manifest-z", 12)
    assert store.get("a", 1) == StoreEntry(1, "a/_versions/1.manifest", 10)
    assert store.latest("a") == StoreEntry(2, "a/_versions/2.manifest-z", 12)


def ddb_items(options, table: str) -> list[dict]:
    client = boto3.client(
        "dynamodb",
        endpoint_url=options["dynamodb_endpoint"],
        region_name=options["aws_region"],
        aws_access_key_id=options["aws_access_key_id"],
        aws_secret_access_key=options["aws_secret_access_key"],
    )
    items = client.scan(TableName=table, ConsistentRead=True)["Items"]
    return sorted(
        (
            {
                "base_uri": i["base_uri"]["S"],
                "version": int(i["version"]["N"]),
                "path": i["path"]["S"],
                "size": int(i["size"]["N"]),
                "committer": i["committer"]["S"],
            }
            for i in items
        ),
        key=lambda item: (item["base_uri"], item["version"]),
    )


def assert_in_sync(options, bucket: str, prefix: str, table: str, latest: int) -> None:
    """Every version 1..latest has its final manifest, of the recorded size,
    and a row pointing at it; no staged manifest is left."""
    objects = keys(options, bucket, f"{prefix}/_versions/")
    assert [k for k in objects if ".manifest-" in k] == []
    items = [item for item in ddb_items(options, table) if item["base_uri"] == prefix]
    assert [item["version"] for item in items] == list(range(1, latest + 1))
    sizes = {
        item["Key"]: item["Size"]
        for item in s3_client(options).list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/_versions/")["Contents"]
    }
    for item in items:
        assert item["path"].startswith(f"{prefix}/_versions/") and item["path"].endswith(".manifest")
        assert sizes[item["path"]] == item["size"], item


@pytest.mark.requirements("external-store.conditional-put", "external-store.finalize")
def test_pylance_commits_through_s3_ddb_and_the_reference_reads_and_appends(s3_options, s3_bucket, ddb_table):
    """pylance's default data storage version (2.2): the reference's append
    writes 2.2 data files too (requirement data-file.same-format-version)."""
    uri = f"s3+ddb://{s3_bucket}/pl/ds.lance?ddbTableName={ddb_table}"
    lance.write_dataset(rows(0, 3), uri, storage_options=s3_options)
    lance.write_dataset(rows(3, 2), uri, mode="append", storage_options=s3_options)

    ds = Dataset.open(uri, storage_options=s3_options)
    assert ds.version == 2 and ids_of_reference(uri, s3_options) == list(range(5))
    appended = ds.append(rows(5, 1))
    assert appended.version == 3
    assert {(f.file_major_version, f.file_minor_version) for g in appended.fragments for f in g.files} == {(2, 2)}
    assert_in_sync(s3_options, s3_bucket, "pl/ds.lance", ddb_table, 3)
    committers = [item["committer"] for item in ddb_items(s3_options, ddb_table)]
    assert committers == ["lancedb", "lancedb", "lance-conformance"]

    assert pylance_sees(uri, s3_options) == (3, list(range(6)))
    report = validate(uri, all_versions=True, storage_options=s3_options)
    assert report.versions[-1] == 3
    assert [f.message for f in report.findings if f.severity in (Severity.ERROR, Severity.WARNING)] == []
    lance.write_dataset(rows(6, 1), uri, mode="append", storage_options=s3_options)
    assert ids_of_reference(uri, s3_options) == list(range(7))
    assert Dataset.open(uri, storage_options=s3_options).version == 4
    assert_in_sync(s3_options, s3_bucket, "pl/ds.lance", ddb_table, 4)


@pytest.mark.requirements("external-store.conditional-put", "external-store.finalize")
@pytest.mark.parametrize("naming", ["v1", "v2"])
def test_the_reference_commits_through_dynamodb_and_pylance_reads_and_appends(s3_options, s3_bucket, ddb_table, naming):
    uri = f"s3+ddb://{s3_bucket}/ref/ds.lance?ddbTableName={ddb_table}"
    Dataset.create(uri, rows(0, 3), manifest_naming=naming, storage_options=s3_options).append(rows(3, 2))
    assert_in_sync(s3_options, s3_bucket, "ref/ds.lance", ddb_table, 2)

    assert pylance_sees(uri, s3_options) == (2, list(range(5)))
    lance.write_dataset(rows(5, 1), uri, mode="append", storage_options=s3_options)
    assert ids_of_reference(uri, s3_options) == list(range(6))
    assert Dataset.open(uri, storage_options=s3_options).append(rows(6, 1)).version == 4
    assert pylance_sees(uri, s3_options) == (4, list(range(7)))
    assert_in_sync(s3_options, s3_bucket, "ref/ds.lance", ddb_table, 4)


class Stop(Exception):
    pass


@pytest.mark.requirements("external-store.reader-synchronises", "external-store.commit-point")
def test_a_staged_manifest_left_by_the_reference_is_finalised_by_pylance(s3_options, s3_bucket, ddb_table):
    uri = f"s3+ddb://{s3_bucket}/ds.lance?ddbTableName={ddb_table}"
    ds = Dataset.create(uri, rows(0, 3), storage_options=s3_options)

    def stop(step: str) -> None:
        if step == STEP_STORE_COMMITTED:
            raise Stop(step)

    with pytest.raises(Stop):
        ds.commit(Append(fragments=write_fragments(ds.storage, rows(3, 2), ds.schema)), on_step=stop)
    assert [k for k in keys(s3_options, s3_bucket, "ds.lance/_versions/") if ".manifest-" in k]
    # Readers unaware of the store see version 1; pylance's store reader finalises version 2.
    assert Dataset.open(f"s3://{s3_bucket}/ds.lance", storage_options=s3_options).version == 1
    assert pylance_sees(uri, s3_options) == (2, list(range(5)))
    assert_in_sync(s3_options, s3_bucket, "ds.lance", ddb_table, 2)
    assert Dataset.open(f"s3://{s3_bucket}/ds.lance", storage_options=s3_options).version == 2


@pytest.mark.requirements("external-store.reader-synchronises", "external-store.synchronisation-idempotent")
def test_a_staged_manifest_left_by_pylance_is_finalised_by_the_reference(s3_options, s3_bucket, ddb_table):
    """pylance commits versions 1 and 2; version 2 is then put back in the
    state pylance leaves when it dies right after the store's put: its own
    manifest bytes under the staged name, the row naming them, no final
    object."""
    uri = f"s3+ddb://{s3_bucket}/ds.lance?ddbTableName={ddb_table}"
    lance.write_dataset(rows(0, 3), uri, storage_options=s3_options)
    lance.write_dataset(rows(3, 2), uri, mode="append", storage_options=s3_options)
    store = DynamoDBManifestStore(ddb_table, s3_options)
    row = store.get("ds.lance", 2)
    assert row is not None
    client = s3_client(s3_options)
    written = client.get_object(Bucket=s3_bucket, Key=row.path)["Body"].read()
    staged = f"{row.path}-{uuid.uuid4()}"
    client.put_object(Bucket=s3_bucket, Key=staged, Body=written)
    client.delete_object(Bucket=s3_bucket, Key=row.path)
    store.put("ds.lance", 2, staged, len(written))
    assert Dataset.open(f"s3://{s3_bucket}/ds.lance", storage_options=s3_options).version == 1

    ds = Dataset.open(uri, storage_options=s3_options)
    assert ds.version == 2 and ids_of_reference(uri, s3_options) == list(range(5))
    assert client.get_object(Bucket=s3_bucket, Key=row.path)["Body"].read() == written
    assert_in_sync(s3_options, s3_bucket, "ds.lance", ddb_table, 2)
    lance.write_dataset(rows(5, 1), uri, mode="append", storage_options=s3_options)
    assert ids_of_reference(uri, s3_options) == list(range(6))


#: Step -> (the version readers using the store see, the version readers
#: unaware of it see before anyone finalises).
S3_STEPS = {
    STEP_MANIFEST_STAGED: (1, 1),
    STEP_STORE_COMMITTED: (2, 1),
    STEP_MANIFEST_COPIED: (2, 2),
    STEP_STORE_REPOINTED: (2, 2),
}


@pytest.mark.requirements("external-store.commit-point", "external-store.reader-synchronises")
@pytest.mark.parametrize("step", list(S3_STEPS))
def test_a_writer_killed_after_each_external_store_step_on_s3_loses_nothing(s3_options, s3_bucket, ddb_table, step):
    """A reference writer process committing version 2 through DynamoDB is
    killed (SIGKILL) right after ``step``: pylance 14 and the reference,
    through the store, open the same version, the validator finds no error,
    plain s3:// readers lag by at most that version, and pylance commits the
    next version on top."""
    uri = f"s3+ddb://{s3_bucket}/ds.lance?ddbTableName={ddb_table}"
    plain = f"s3://{s3_bucket}/ds.lance"
    Dataset.create(uri, rows(0, 3), storage_options=s3_options)
    store = DynamoDBManifestStore(ddb_table, s3_options)
    client = s3_client(s3_options)
    first = client.get_object(Bucket=s3_bucket, Key=store.get("ds.lance", 1).path)["Body"].read()
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([WORKERS])
    process = ctx.Process(target=crash_workers.append_to_uri_and_die_at, args=(uri, s3_options, step, 100, 2))
    process.start()
    process.join(timeout=120)
    assert process.exitcode == -signal.SIGKILL
    aware, unaware = S3_STEPS[step]
    expected = list(range(3)) + ([100, 101] if aware == 2 else [])

    assert Dataset.open(plain, storage_options=s3_options).version == unaware
    report = validate(uri, all_versions=True, storage_options=s3_options)
    assert report.versions[-1] == aware
    assert [f.message for f in report.findings if f.severity is Severity.ERROR] == []
    assert Dataset.open(plain, storage_options=s3_options).version == unaware, "the validator wrote"
    assert pylance_sees(uri, s3_options) == (aware, expected)
    assert ids_of_reference(uri, s3_options) == expected
    lance.write_dataset(rows(200, 1), uri, mode="append", storage_options=s3_options)
    assert ids_of_reference(uri, s3_options) == sorted([*expected, 200])
    assert Dataset.open(plain, storage_options=s3_options).version == aware + 1
    # Version 1 is still the manifest it was committed as.
    assert client.get_object(Bucket=s3_bucket, Key=store.get("ds.lance", 1).path)["Body"].read() == first


#: Step of the put-if-not-exists protocol (If-None-Match on S3) -> the version every reader sees.
S3_PUT_IF_NOT_EXISTS_STEPS = {
    STEP_TRANSACTION_WRITTEN: 1,
    STEP_BEFORE_MANIFEST: 1,
    STEP_MANIFEST_WRITTEN: 2,
}


@pytest.mark.requirements("commit.atomic", "commit.one-winner")
@pytest.mark.parametrize("step", list(S3_PUT_IF_NOT_EXISTS_STEPS))
def test_a_writer_killed_after_each_put_if_not_exists_step_on_s3_loses_nothing(s3_options, s3_bucket, step):
    """The other protocol on S3 (no external store): a reference writer
    process killed right after ``step`` leaves version 1 or 2 for pylance,
    the reference and the validator; pylance commits the next version."""
    uri = f"s3://{s3_bucket}/ds.lance"
    Dataset.create(uri, rows(0, 3), storage_options=s3_options)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([WORKERS])
    process = ctx.Process(target=crash_workers.append_to_uri_and_die_at, args=(uri, s3_options, step, 100, 2))
    process.start()
    process.join(timeout=120)
    assert process.exitcode == -signal.SIGKILL
    version = S3_PUT_IF_NOT_EXISTS_STEPS[step]
    expected = list(range(3)) + ([100, 101] if version == 2 else [])

    report = validate(uri, all_versions=True, storage_options=s3_options)
    assert report.versions[-1] == version
    assert [f.message for f in report.findings if f.severity is Severity.ERROR] == []
    assert pylance_sees(uri, s3_options) == (version, expected)
    assert ids_of_reference(uri, s3_options) == expected
    lance.write_dataset(rows(200, 1), uri, mode="append", storage_options=s3_options)
    assert Dataset.open(uri, storage_options=s3_options).version == version + 1
    assert ids_of_reference(uri, s3_options) == sorted([*expected, 200])
