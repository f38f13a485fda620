"""The commit loop (table format: "Conflict Resolution Flow"; transaction
page: "Rebase Mechanism", "Conflict Scenarios"), on real files with the
reference writer alone: stale handles commit after other versions were
committed since they read, and each outcome is what conflict resolution
decided (rebased and committed, or a typed error naming the version).
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from reference_impl import entropy
from reference_impl.commit.loop import BACKOFF_CAP_SECONDS, backoff_delay
from reference_impl.dataset import Dataset
from reference_impl.errors import CommitConflictError, IncompatibleConflictError, RetryableConflictError
from reference_impl.manifest_file import encode_manifest_file, read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.transactions import Delete, Update, read_transaction_file


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64()), "v": pa.array([0] * count, pa.int64())})


def ids(ds: Dataset) -> list[int]:
    return sorted(Dataset.open(ds.uri).to_table()["id"].to_pylist())


def recorded(path, version: int):
    manifest_file = read_manifest_file(
        Dataset.open(path).storage, list_versions(Dataset.open(path).storage).manifests()[version]
    )
    return read_transaction_file(Dataset.open(path).storage, manifest_file.manifest.transaction_file)


@pytest.mark.requirements(
    "transaction.concurrent-deletes-merge",
    "conflict.delete-after-delete-or-update-rebases",
    "commit.check-intervening-commits",
)
def test_deletes_of_disjoint_rows_of_one_fragment_both_commit(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 10))
    a, b = Dataset.open(path, 1), Dataset.open(path, 1)
    assert a.delete({0: [1, 2]}).version == 2
    merged = b.delete({0: [5, 6]})
    assert merged.version == 3
    assert ids(merged) == [0, 3, 4, 7, 8, 9]
    assert merged.deleted_offsets(merged.fragments[0]) == [1, 2, 5, 6]
    # The rebased transaction is based on the version it merged with.
    transaction = recorded(path, 3)
    assert isinstance(transaction.operation, Delete) and transaction.read_version == 2


def test_an_update_rebases_over_a_concurrent_delete_and_back(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 6))
    a, b = Dataset.open(path, 1), Dataset.open(path, 1)
    a.delete(pc.field("id") == 0)
    updated = b.update({"v": 7}, pc.field("id") >= 4)
    assert updated.version == 3 and isinstance(recorded(path, 3).operation, Update)
    table = Dataset.open(path).to_table().sort_by("id")
    assert table["id"].to_pylist() == [1, 2, 3, 4, 5]
    assert table["v"].to_pylist() == [0, 0, 0, 7, 7]
    c = Dataset.open(path, 3)
    Dataset.open(path, 3).update({"v": 1}, pc.field("id") == 1)
    assert ids(c.delete(pc.field("id") == 2)) == [1, 3, 4, 5]


@pytest.mark.requirements("conflict.delete-same-rows-retryable", "transaction.overlapping-rows-conflict")
def test_deleting_the_same_rows_is_a_retryable_conflict(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 10))
    a, b = Dataset.open(path, 1), Dataset.open(path, 1)
    a.delete({0: [1, 2]})
    with pytest.raises(RetryableConflictError) as refused:
        b.delete({0: [2, 3]})
    error = refused.value
    assert (error.version, error.operation, error.retryable) == (2, "delete", True)
    assert "version 2" in str(error) and "same rows" in str(error)
    assert Dataset.open(path).version == 2
    # Running it again on the latest version succeeds, as the error says.
    assert ids(Dataset.open(path).delete({0: [2, 3]})) == [0, *range(4, 10)]


@pytest.mark.requirements(
    "transaction.delete-after-restore-incompatible",
    "conflict.delete-after-overwrite-incompatible",
    "transaction.conflict-errors",
)
@pytest.mark.parametrize("concurrent", ["overwrite", "restore"])
def test_a_stale_delete_after_an_overwrite_or_restore_is_incompatible(tmp_path, concurrent):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 4)).append(rows(4, 4))
    stale = Dataset.open(path, 2)
    if concurrent == "overwrite":
        Dataset.open(path).overwrite(rows(100, 2))
    else:
        Dataset.open(path).restore(1)
    before = {
        v: read_manifest_file(stale.storage, p).manifest for v, p in list_versions(stale.storage).manifests().items()
    }
    with pytest.raises(IncompatibleConflictError) as refused:
        stale.delete(pc.field("id") == 5)
    error = refused.value
    assert (error.version, error.operation, error.retryable) == (3, concurrent, False)
    assert isinstance(error, CommitConflictError)
    after = {
        v: read_manifest_file(stale.storage, p).manifest for v, p in list_versions(stale.storage).manifests().items()
    }
    assert after == before
    for version in before:
        Dataset.open(path, version).to_table()


@pytest.mark.requirements("commit.missing-transaction-conflicts", "commit.conservative-conflicts")
def test_a_version_without_a_transaction_conflicts(tmp_path):
    path = tmp_path / "ds"
    stale = Dataset.create(path, rows(0, 4))
    v2 = Dataset.open(path).append(rows(4, 1))
    # Strip version 2 of its transaction: no file, no embedded copy.
    (path / "_transactions" / v2.manifest.transaction_file).unlink()
    manifest = replace(v2.manifest, transaction_file="")
    data = encode_manifest_file(manifest, v2.manifest_file.indices, None)
    (path / list_versions(v2.storage).manifests()[2]).write_bytes(data)
    with pytest.raises(IncompatibleConflictError) as refused:
        stale.append(rows(10, 1))
    assert (refused.value.version, refused.value.operation) == (2, None)


@pytest.mark.requirements("conflict.rebase-fresh-ids")
def test_stale_appends_take_fresh_fragment_and_row_ids_from_the_latest_version(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 3), stable_row_ids=True)
    a, b = Dataset.open(path, 1), Dataset.open(path, 1)
    a.append(rows(3, 2))
    latest = b.append(rows(5, 4))
    fragments = latest.fragments
    assert [f.id for f in fragments] == [0, 1, 2]
    row_ids = [i for f in fragments for i in latest.row_ids(f)]
    assert row_ids == list(range(9))
    assert latest.manifest.next_row_id == 9 and latest.manifest.max_fragment_id == 2


def test_config_changes_of_other_keys_both_commit_and_the_same_key_does_not(tmp_path):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 1))
    a, b, c = (Dataset.open(path, 1) for _ in range(3))
    a.update_metadata(config={"x": "1"})
    assert b.update_metadata(config={"y": "2"}).manifest.config == {"x": "1", "y": "2"}
    with pytest.raises(IncompatibleConflictError) as refused:
        c.update_metadata(config={"x": "3"})
    assert refused.value.operation == "update_config"


def test_backoff_is_random_bounded_and_reproducible_when_seeded():
    with entropy.deterministic("backoff"):
        first = [backoff_delay(attempt) for attempt in range(1, 30)]
    with entropy.deterministic("backoff"):
        second = [backoff_delay(attempt) for attempt in range(1, 30)]
    assert first == second
    assert all(0 <= d <= BACKOFF_CAP_SECONDS for d in first)
    assert len(set(first)) > 20


def test_max_attempts_must_be_positive(tmp_path):
    ds = Dataset.create(tmp_path / "ds", rows(0, 1))
    with pytest.raises(ValueError):
        ds.commit(Delete(), max_attempts=0)


@pytest.mark.requirements("conflict.clone-only-first")
def test_creating_or_cloning_onto_an_existing_table_is_incompatible(tmp_path):
    source = Dataset.create(tmp_path / "source", rows(0, 2))
    target = tmp_path / "target"
    Dataset.create(target, rows(10, 1)).append(rows(11, 1))
    with pytest.raises(IncompatibleConflictError) as refused:
        source.shallow_clone(target)
    assert (refused.value.version, refused.value.retryable) == (2, False)
    with pytest.raises(IncompatibleConflictError) as refused:
        Dataset.create(target, rows(20, 1))
    assert refused.value.version == 2
    assert ids(Dataset.open(target)) == [10, 11]
