"""The external manifest store (table format: "External Manifest Store"):
the SQLite store's operations, the commit steps through a store and the
reader steps, with the reference writer on real files and a real SQLite
database. Killed writers are in ``test_crash_safety.py``; the DynamoDB store
against a real server in ``test_external_store_interop.py``."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from reference_impl.commit.external_store import (
    STEP_STORE_COMMITTED,
    ExternalManifestStore,
    SqliteManifestStore,
    StoreEntry,
    store_base_uri,
)
from reference_impl.dataset import Dataset
from reference_impl.errors import ManifestStoreError, ManifestStoreOutOfSyncError
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage

lance = pytest.importorskip("lance")


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def ids(ds: Dataset) -> list[int]:
    return sorted(ds.to_table()["id"].to_pylist())


class Stop(Exception):
    """Raised from a step hook: the writer stops there (in this process)."""


def stop_at(name: str):
    def hook(step: str) -> None:
        if step == name:
            raise Stop(step)

    return hook


@pytest.fixture
def store(tmp_path) -> SqliteManifestStore:
    return SqliteManifestStore(tmp_path / "store.sqlite")


def test_the_sqlite_store_is_an_external_manifest_store_with_put_if_not_exists(store):
    assert isinstance(store, ExternalManifestStore)
    assert store.latest("a") is None and store.get("a", 1) is None
    assert store.put_if_not_exists("a", 1, "a/_versions/1.manifest-x", 10)
    assert not store.put_if_not_exists("a", 1, "a/_versions/1.manifest-y", 11)
    assert store.get("a", 1) == StoreEntry(1, "a/_versions/1.manifest-x", 10)
    store.put("a", 1, "a/_versions/1.manifest", 10)
    assert store.put_if_not_exists("a", 2, "a/_versions/2.manifest-z", 12)
    assert store.put_if_not_exists("b", 7, "b/_versions/7.manifest-z", 3)
    assert store.latest("a") == StoreEntry(2, "a/_versions/2.manifest-z", 12)
    assert store.get("a", 1) == StoreEntry(1, "a/_versions/1.manifest", 10)
    assert store.latest("b") == StoreEntry(7, "b/_versions/7.manifest-z", 3)


def test_the_sqlite_store_runs_in_wal_mode(store):
    import sqlite3

    store.latest("a")
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_store_that_cannot_be_opened_is_a_typed_error(tmp_path):
    with pytest.raises(ManifestStoreError, match="cannot open"):
        SqliteManifestStore(tmp_path / "no" / "such" / "dir" / "store.sqlite").latest("a")


@pytest.mark.requirements("external-store.finalize", "external-store.stage-unique-name")
@pytest.mark.parametrize("naming", ["v1", "v2"])
def test_commits_through_the_store_leave_final_manifests_and_rows(tmp_path, store, naming):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 3), manifest_naming=naming, manifest_store=store)
    ds = ds.append(rows(3, 2)).delete({0: [0]})
    assert ds.version == 3
    listing = list_versions(ds.storage)
    assert sorted(listing.manifests()) == [1, 2, 3] and not listing.staged
    base = store_base_uri(ds.storage)
    for version, relpath in listing.manifests().items():
        entry = store.get(base, version)
        assert entry == StoreEntry(version, f"{base}/{relpath}", os.path.getsize(path / relpath))
    # A copy of the directory is the whole table: pylance reads it without the store.
    assert lance.dataset(str(path)).version == 3
    assert sorted(lance.dataset(str(path)).to_table()["id"].to_pylist()) == [1, 2, 3, 4]


@pytest.mark.requirements("external-store.reader-synchronises", "external-store.staged-not-visible")
@pytest.mark.parametrize("naming", ["v1", "v2"])
def test_a_reader_finalizes_a_staged_manifest_the_store_committed(tmp_path, store, naming):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 3), manifest_naming=naming, manifest_store=store)
    with pytest.raises(Stop):
        ds.commit(_append(ds, rows(3, 2)), on_step=stop_at(STEP_STORE_COMMITTED))
    listing = list_versions(ds.storage)
    assert sorted(listing.manifests()) == [1] and list(listing.staged) == [2]
    staged = listing.staged[2][0]
    final_name = staged.rsplit("-", 5)[0]
    assert staged.startswith(final_name + "-")
    # A reader unaware of the store sees the version before (one behind).
    assert Dataset.open(path).version == 1 and lance.dataset(str(path)).version == 1
    # The store's reader finalises: copy, repoint, staged copy removed.
    opened = Dataset.open(path, manifest_store=store)
    assert opened.version == 2 and ids(opened) == [0, 1, 2, 3, 4]
    listing = list_versions(ds.storage)
    assert sorted(listing.manifests()) == [1, 2] and not listing.staged
    base = store_base_uri(ds.storage)
    assert store.get(base, 2).path == f"{base}/{listing.manifests()[2]}"
    assert lance.dataset(str(path)).version == 2


def _append(ds: Dataset, table: pa.Table):
    from reference_impl.fragment_writer import write_fragments
    from reference_impl.transactions import Append

    return Append(fragments=write_fragments(ds.storage, table, ds.schema))


@pytest.mark.requirements("external-store.commit-point", "external-store.conditional-put")
def test_a_writer_that_loses_the_store_race_commits_the_next_version(tmp_path, store):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 2), manifest_store=store)
    first = Dataset.open(path, manifest_store=store)
    second = Dataset.open(path, manifest_store=store)
    # ``first`` committed version 2 through the store and stopped before the copy.
    with pytest.raises(Stop):
        first.commit(_append(first, rows(2, 2)), on_step=stop_at(STEP_STORE_COMMITTED))
    # ``second`` was built on version 1: it finds version 2 taken in the store,
    # finalises it while catching up, and commits version 3 on top.
    committed = second.append(rows(4, 2))
    assert committed.version == 3
    assert ids(Dataset.open(path, manifest_store=store)) == list(range(6))
    listing = list_versions(committed.storage)
    assert sorted(listing.manifests()) == [1, 2, 3] and not listing.staged


@pytest.mark.requirements("external-store.reader-synchronises")
def test_a_store_row_for_a_missing_manifest_refuses_to_load(tmp_path, store):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 2), manifest_store=store)
    base = store_base_uri(ds.storage)
    missing = f"{base}/_versions/{'1' * 20}.manifest-{'a' * 8}-{'b' * 4}-{'c' * 4}-{'d' * 4}-{'e' * 12}"
    version = 2**64 - 1 - int("1" * 20)
    store.put_if_not_exists(base, version, missing, 100)
    with pytest.raises(ManifestStoreOutOfSyncError) as refused:
        Dataset.open(path, manifest_store=store)
    assert refused.value.version == version
    assert f"version {version}" in str(refused.value) and "neither it nor the final manifest exists" in str(
        refused.value
    )


def test_a_store_row_pointing_outside_the_dataset_is_refused(tmp_path, store):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 2), manifest_store=store)
    store.put(store_base_uri(ds.storage), 1, str(tmp_path / "elsewhere" / "_versions" / "1.manifest"), 10)
    with pytest.raises(ManifestStoreError, match="outside the dataset"):
        Dataset.open(path, manifest_store=store)


@pytest.mark.requirements("external-store.reader-synchronises")
def test_a_staged_manifest_differing_from_the_final_one_refuses_to_load(tmp_path, store):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 2), manifest_store=store)
    with pytest.raises(Stop):
        ds.commit(_append(ds, rows(2, 2)), on_step=stop_at(STEP_STORE_COMMITTED))
    listing = list_versions(ds.storage)
    final = listing.staged[2][0].rsplit("-", 5)[0]
    # Someone wrote another version 2 at the final name without the store.
    (path / final).write_bytes((path / listing.manifests()[1]).read_bytes())
    with pytest.raises(ManifestStoreOutOfSyncError, match="another manifest is already at the final name") as refused:
        Dataset.open(path, manifest_store=store)
    assert refused.value.version == 2 and final in str(refused.value)


def test_a_dataset_the_store_does_not_know_is_read_from_the_object_store(tmp_path, store):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 2)).append(rows(2, 1))
    ds = Dataset.open(path, manifest_store=store)
    assert ds.version == 2 and ids(ds) == [0, 1, 2]
    assert Dataset.open(path, 1, manifest_store=store).version == 1


def test_creating_where_the_store_records_a_dataset_conflicts(tmp_path, store):
    from reference_impl.errors import IncompatibleConflictError

    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 2), manifest_store=store)
    with pytest.raises(Stop):
        ds.commit(_append(ds, rows(2, 2)), on_step=stop_at(STEP_STORE_COMMITTED))
    for name in os.listdir(path / "_versions"):
        os.remove(path / "_versions" / name)
    with pytest.raises(IncompatibleConflictError) as refused:
        Dataset.create(path, rows(0, 1), manifest_store=store)
    assert refused.value.version == 2


@pytest.mark.requirements("external-store.reader-synchronises")
def test_a_reader_that_cannot_copy_the_staged_manifest_refuses_to_load(tmp_path, store):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 2), manifest_store=store)
    with pytest.raises(Stop):
        ds.commit(_append(ds, rows(2, 2)), on_step=stop_at(STEP_STORE_COMMITTED))
    staged = list_versions(ds.storage).staged[2][0]
    # A read-only storage stands for an object store this reader may not write to.
    read_only = LocalStorage(path, writable=False)
    with pytest.raises(ManifestStoreOutOfSyncError, match="cannot be copied") as refused:
        Dataset.open(read_only, manifest_store=store)
    assert refused.value.version == 2 and staged.rsplit("-", 5)[0] in str(refused.value)
    assert list_versions(ds.storage).staged[2] == [staged]
