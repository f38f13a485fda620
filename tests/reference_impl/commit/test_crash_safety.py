"""Crash safety of both commit protocols (table format: "Committing
Datasets", "External Manifest Store"): a real writer process, killed with
SIGKILL right after each step of its commit, leaves a dataset that the
reference reader, pylance 14 and the validator all open at the version
before or the version it committed, never a broken one; a staged manifest
left behind is finalised by the next reader that uses the store; no
committed version is ever lost or replaced, and the next writers carry on.

And several writer processes racing through one SQLite manifest store on
one local dataset lose nothing.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
from collections import Counter
from pathlib import Path

import pytest

from conformance.validator import Severity, validate
from reference_impl.commit import (
    STEP_BEFORE_MANIFEST,
    STEP_FILES_WRITTEN,
    STEP_MANIFEST_WRITTEN,
    STEP_TRANSACTION_WRITTEN,
)
from reference_impl.commit.external_store import (
    STEP_MANIFEST_COPIED,
    STEP_MANIFEST_STAGED,
    STEP_STORE_COMMITTED,
    STEP_STORE_REPOINTED,
    SqliteManifestStore,
    store_base_uri,
)
from reference_impl.dataset import Dataset
from reference_impl.naming import list_versions
from tests.reference_impl.commit import crash_workers
from tests.reference_impl.commit.crash_workers import rows

lance = pytest.importorskip("lance")

WORKERS = "tests.reference_impl.commit.crash_workers"
#: The killed writer appends these rows.
DOOMED = list(range(100, 102))

#: Step of the put-if-not-exists protocol -> the version every reader sees
#: after a writer committing version 3 dies right after it.
PUT_IF_NOT_EXISTS = {
    STEP_FILES_WRITTEN: 2,
    STEP_TRANSACTION_WRITTEN: 2,
    STEP_BEFORE_MANIFEST: 2,
    STEP_MANIFEST_WRITTEN: 3,
}
#: Step of the external-store protocol -> (the version a reader using the
#: store sees, the version a reader unaware of it sees before anyone
#: finalises): the commit point is the store's put.
EXTERNAL_STORE = {
    STEP_FILES_WRITTEN: (2, 2),
    STEP_TRANSACTION_WRITTEN: (2, 2),
    STEP_BEFORE_MANIFEST: (2, 2),
    STEP_MANIFEST_STAGED: (2, 2),
    STEP_STORE_COMMITTED: (3, 2),
    STEP_MANIFEST_COPIED: (3, 3),
    STEP_STORE_REPOINTED: (3, 3),
}


def kill_writer_at(path: Path, store_path: Path | None, step: str) -> None:
    """Run a writer process that appends DOOMED and dies at ``step``."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([WORKERS])
    process = ctx.Process(
        target=crash_workers.append_and_die_at,
        args=(str(path), str(store_path) if store_path else None, step, DOOMED[0], len(DOOMED)),
    )
    process.start()
    process.join(timeout=120)
    if process.is_alive():
        process.terminate()
        process.join()
        pytest.fail(f"the writer did not reach step {step}")
    assert process.exitcode == -signal.SIGKILL, f"the writer was not killed at {step} (exit {process.exitcode})"


def manifests(path: Path) -> dict[int, bytes]:
    """Every committed manifest's bytes, by version."""
    listing = list_versions(Dataset.open(path, synchronize=False).storage)
    return {version: (path / relpath).read_bytes() for version, relpath in listing.manifests().items()}


def expected_ids(version: int, *later: int) -> list[int]:
    return sorted([*range(6), *(DOOMED if version == 3 else []), *later])


def reference_ids(path: Path, store=None) -> list[int]:
    return sorted(Dataset.open(path, manifest_store=store).to_table()["id"].to_pylist())


def pylance_sees(path: Path) -> tuple[int, list[int]]:
    dataset = lance.dataset(str(path))
    return dataset.version, sorted(dataset.to_table()["id"].to_pylist())


def serious(report) -> list[str]:
    return [f"v{f.version} {f.rule}: {f.message}" for f in report.findings if f.severity is not Severity.INFO]


def errors(report) -> list[str]:
    return [f"v{f.version} {f.rule}: {f.message}" for f in report.findings if f.severity is Severity.ERROR]


@pytest.mark.requirements("commit.atomic", "commit.one-winner", "commit.files-before-manifest")
@pytest.mark.parametrize("step", list(PUT_IF_NOT_EXISTS))
def test_a_writer_killed_after_each_step_of_put_if_not_exists_loses_nothing(tmp_path, step):
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 3)).append(rows(3, 3))
    before = manifests(path)
    kill_writer_at(path, None, step)
    version = PUT_IF_NOT_EXISTS[step]

    assert Dataset.open(path).version == version
    assert reference_ids(path) == expected_ids(version)
    assert pylance_sees(path) == (version, expected_ids(version))
    report = validate(path, all_versions=True)
    assert report.versions[-1] == version and errors(report) == []
    after = manifests(path)
    assert {v: after[v] for v in before} == before and sorted(after) == list(range(1, version + 1))

    # The next writers, the reference and pylance, carry on from there.
    assert Dataset.open(path).append(rows(200, 1)).version == version + 1
    lance.write_dataset(rows(300, 1), str(path), mode="append")
    assert pylance_sees(path) == (version + 2, expected_ids(version, 200, 300))
    assert reference_ids(path) == expected_ids(version, 200, 300)
    final = manifests(path)
    assert {v: final[v] for v in after} == after
    assert errors(validate(path, all_versions=True)) == []


def _store_state(path: Path, store_path: Path) -> tuple[list[str], list]:
    """What is on disk under _versions/ and in the store, to show a reader wrote nothing."""
    store = SqliteManifestStore(store_path, read_only=True)
    base = store_base_uri(Dataset.open(path, synchronize=False).storage)
    names = sorted(p.name for p in (path / "_versions").iterdir())
    rows_ = [store.get(base, version) for version in range(1, 5)]
    store.close()
    return names, rows_


STORE_CASES = [(step, "v2") for step in EXTERNAL_STORE] + [
    (STEP_STORE_COMMITTED, "v1"),
    (STEP_MANIFEST_COPIED, "v1"),
]


@pytest.mark.requirements(
    "external-store.commit-point",
    "external-store.reader-synchronises",
    "external-store.finalize",
    "external-store.synchronisation-idempotent",
    "external-store.unaware-reader-lag",
    "external-store.staged-not-visible",
)
@pytest.mark.parametrize(("step", "naming"), STORE_CASES, ids=[f"{s}-{n}" for s, n in STORE_CASES])
def test_a_writer_killed_after_each_step_of_the_external_store_commit_loses_nothing(tmp_path, step, naming):
    path, store_path = tmp_path / "ds", tmp_path / "store.sqlite"
    store = SqliteManifestStore(store_path)
    Dataset.create(path, rows(0, 3), manifest_naming=naming, manifest_store=store).append(rows(3, 3))
    before = manifests(path)
    kill_writer_at(path, store_path, step)
    aware, unaware = EXTERNAL_STORE[step]

    # Readers that never write: the reference reader and pylance without the
    # store, the validator with and without it.
    untouched = _store_state(path, store_path)
    assert Dataset.open(path).version == unaware
    assert pylance_sees(path) == (unaware, expected_ids(unaware))
    with_store = validate(path, all_versions=True, manifest_store=SqliteManifestStore(store_path, read_only=True))
    assert with_store.versions[-1] == aware and errors(with_store) == []
    pending = [f.rule for f in with_store.findings if f.rule == "external-store/pending-finalization"]
    assert bool(pending) == (aware != unaware)
    without_store = validate(path, all_versions=True)
    assert without_store.versions[-1] == unaware and errors(without_store) == []
    assert _store_state(path, store_path) == untouched, "a read-only reader wrote"

    # The next reader using the store finalises a staged manifest it commits.
    opened = Dataset.open(path, manifest_store=store)
    assert opened.version == aware and reference_ids(path, store) == expected_ids(aware)
    listing = list_versions(opened.storage)
    assert sorted(listing.manifests()) == list(range(1, aware + 1))
    row = store.get(store_base_uri(opened.storage), aware)
    assert row is not None and row.path.endswith(listing.manifests()[aware]), "the store still points at a staged copy"
    # A staged manifest is left only where no row names it: the writer died
    # before its put (never committed) or after repointing (garbage).
    left = {STEP_MANIFEST_STAGED, STEP_STORE_REPOINTED}
    assert bool(listing.staged) == (step in left)
    assert pylance_sees(path) == (aware, expected_ids(aware))
    after = manifests(path)
    assert {v: after[v] for v in before} == before

    # The next writer through the store carries on; everything is in sync.
    assert opened.append(rows(200, 1)).version == aware + 1
    latest = store.latest(store_base_uri(opened.storage))
    assert latest is not None and latest.version == aware + 1 and not latest.path.rsplit("/", 1)[-1].count("-")
    assert reference_ids(path, store) == expected_ids(aware, 200)
    assert pylance_sees(path) == (aware + 1, expected_ids(aware, 200))
    final = manifests(path)
    assert {v: final[v] for v in after} == after
    assert serious(validate(path, all_versions=True, manifest_store=store)) == []


@pytest.mark.requirements("external-store.conditional-put", "commit.retry-after-lost-race")
@pytest.mark.parametrize("writers", [8, pytest.param(32, marks=pytest.mark.races)])
def test_writer_processes_racing_through_one_sqlite_store_lose_nothing(tmp_path, writers):
    """Processes append from version 1 at once through one SQLite store (8 by
    default, 32 in ``tox -e races``): every one is acknowledged with its own
    version, the store records every version at its final manifest, and
    every row is there once."""
    path, store_path = tmp_path / "ds", tmp_path / "store.sqlite"
    store = SqliteManifestStore(store_path)
    Dataset.create(path, rows(0, 3), manifest_store=store)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([WORKERS])
    start, results = ctx.Barrier(writers), ctx.Queue()
    processes = [
        ctx.Process(
            target=crash_workers.append_through_store,
            args=(str(path), str(store_path), 1000 + 10 * i, 2, start, results),
        )
        for i in range(writers)
    ]
    for process in processes:
        process.start()
    collected = []
    try:
        for _ in processes:
            collected.append(results.get(timeout=300))
    except queue.Empty:
        pytest.fail(f"only {len(collected)} of {writers} writers reported")
    finally:
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.terminate()
                process.join()
    assert [error for _, _, error in collected if error] == []
    assert sorted(version for _, version, _ in collected) == list(range(2, writers + 2))
    expected = sorted([0, 1, 2, *(first + k for first, _, _ in collected for k in range(2))])
    ours = Dataset.open(path, manifest_store=store).to_table()["id"].to_pylist()
    assert sorted(ours) == expected and not [i for i, n in Counter(ours).items() if n > 1]
    assert sorted(lance.dataset(str(path)).to_table()["id"].to_pylist()) == expected
    base = store_base_uri(Dataset.open(path, manifest_store=store).storage)
    listing = list_versions(Dataset.open(path).storage)
    assert not listing.staged
    for version, relpath in listing.manifests().items():
        assert store.get(base, version).path == f"{base}/{relpath}"
    assert serious(validate(path, all_versions=True, manifest_store=store)) == []
