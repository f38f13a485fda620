"""Acceptance of the commit loop against real races (issue 12): writer
processes appending to one table at once, deletes of disjoint rows from the
same read version committed by pylance 14 and by the reference in both
orders, and stale writers whose operation became incompatible.

The default run races 24 processes once (a few seconds); the ``races``
marker (``tox -e races``) runs heavier races.
"""

from __future__ import annotations

import multiprocessing
import queue
from collections import Counter

import pyarrow.compute as pc
import pytest

from conformance.validator import Severity, validate
from reference_impl.dataset import Dataset
from reference_impl.errors import IncompatibleConflictError
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.transactions import read_transaction_file
from tests.reference_impl.commit import race_workers
from tests.reference_impl.commit.race_workers import rows
from tests.writer_checks import assert_pylance_agrees

lance = pytest.importorskip("lance")

WORKERS = "tests.reference_impl.commit.race_workers"


def race_appends(path, writers: int, rows_each: int, read_version: int = 1, first_id: int = 1000) -> dict[int, int]:
    """Start ``writers`` processes that append from ``read_version`` at once;
    return first id -> committed version. Every process is joined (or, if
    one hangs, terminated) before returning."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([WORKERS])

    start = ctx.Barrier(writers)
    results = ctx.Queue()
    processes = [
        ctx.Process(
            target=race_workers.append_at_once,
            args=(str(path), read_version, first_id + i * rows_each, rows_each, start, results),
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
    errors = [error for _, _, error in collected if error is not None]
    assert not errors, errors
    return {first: version for first, version, _ in collected}


def assert_every_row_once(path, expected: list[int]) -> None:
    """Both readers see ``expected``, each row once, and the validator finds
    nothing above an info in any version of the raced history."""
    ours = Dataset.open(path).to_table()["id"].to_pylist()
    theirs = lance.dataset(str(path)).to_table()["id"].to_pylist()
    assert sorted(ours) == sorted(theirs) == sorted(expected)
    assert [i for i, n in Counter(ours).items() if n > 1] == []
    objections = [
        f"v{f.version} {f.rule}: {f.message}"
        for f in validate(path, all_versions=True).findings
        if f.severity is not Severity.INFO
    ]
    assert objections == []


@pytest.mark.requirements(
    "commit.retry-after-lost-race",
    "commit.one-winner",
    "conflict.append-otherwise-compatible",
    "conflict.rebase-fresh-ids",
)
def test_two_dozen_processes_appending_at_once_are_all_acknowledged(tmp_path):
    """24 processes append from version 1 at the same moment: every one is
    acknowledged with its own version, and every row is visible exactly once
    to the reference reader and to pylance."""
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 3))
    committed = race_appends(path, writers=24, rows_each=2)
    assert sorted(committed.values()) == list(range(2, 26))
    expected = [0, 1, 2, *(first + k for first in committed for k in range(2))]
    assert_every_row_once(path, expected)
    latest = Dataset.open(path)
    assert latest.version == 25
    # Every Append was built on version 1, so all but the first committed on
    # top of versions they never read: each went through conflict resolution.
    storage = latest.storage
    for version, relpath in list_versions(storage).manifests().items():
        if version > 1:
            manifest_file = read_manifest_file(storage, relpath)
            assert read_transaction_file(storage, manifest_file.manifest.transaction_file).read_version == 1
    assert sorted(f.id for f in latest.fragments) == list(range(25))
    assert assert_pylance_agrees(path, versions=[1, 13, 25]) == 3


def _base(path) -> None:
    Dataset.create(path, rows(0, 10), data_storage_version="2.0")


@pytest.mark.requirements("transaction.concurrent-deletes-merge", "conflict.delete-after-delete-or-update-rebases")
@pytest.mark.parametrize("first", ["pylance", "reference"])
def test_deletes_of_disjoint_rows_of_one_fragment_both_succeed_whoever_commits_first(tmp_path, first):
    """Both writers read version 1 (one fragment of ten rows); one deletes
    rows 1 and 2, the other rows 5 and 6. Whichever commits first, the
    second rebases over it (merging the deletion masks) and both deletes are
    visible to both readers; the validator finds nothing wrong."""
    path = tmp_path / "ds"
    _base(path)
    theirs = lance.dataset(str(path), version=1)
    ours = Dataset.open(path, version=1)
    if first == "pylance":
        theirs.delete("id IN (1, 2)")
        ours.delete((pc.field("id") == 5) | (pc.field("id") == 6))
    else:
        ours.delete((pc.field("id") == 5) | (pc.field("id") == 6))
        theirs.delete("id IN (1, 2)")
    assert Dataset.open(path).version == lance.dataset(str(path)).version == 3
    assert_every_row_once(path, [0, 3, 4, 7, 8, 9])
    assert len(Dataset.open(path).fragments) == 1
    assert assert_pylance_agrees(path) == 3


@pytest.mark.requirements(
    "transaction.delete-after-restore-incompatible",
    "conflict.delete-after-overwrite-incompatible",
    "transaction.conflict-errors",
)
@pytest.mark.parametrize("concurrent", ["overwrite", "restore"])
def test_a_stale_delete_after_a_pylance_overwrite_or_restore_is_refused_and_nothing_is_lost(tmp_path, concurrent):
    path = tmp_path / "ds"
    _base(path)
    Dataset.open(path).append(rows(10, 5))
    stale = Dataset.open(path, version=2)
    if concurrent == "overwrite":
        lance.write_dataset(rows(100, 4), str(path), mode="overwrite")
    else:
        lance.dataset(str(path), version=1).restore()
    with pytest.raises(IncompatibleConflictError) as refused:
        stale.delete(pc.field("id") == 12)
    error = refused.value
    assert (error.version, error.operation, error.retryable) == (3, concurrent, False)
    assert f"version 3 ({concurrent.capitalize()})" in str(error)
    assert sorted(list_versions(stale.storage).manifests()) == [1, 2, 3]
    for version in (1, 2, 3):
        ours = Dataset.open(path, version).to_table()["id"].to_pylist()
        assert ours == lance.dataset(str(path), version=version).to_table()["id"].to_pylist()
    assert assert_pylance_agrees(path) == 3


def test_pylance_refuses_a_stale_delete_after_a_reference_overwrite(tmp_path):
    """The other way round: pylance honours the reference's transaction file
    and refuses its stale Delete."""
    path = tmp_path / "ds"
    _base(path)
    stale = lance.dataset(str(path), version=1)
    Dataset.open(path).overwrite(rows(50, 3))
    with pytest.raises(Exception, match="(?i)incompatible.*Overwrite"):
        stale.delete("id = 3")
    assert Dataset.open(path).version == 2
    assert_every_row_once(path, [50, 51, 52])


@pytest.mark.races
@pytest.mark.parametrize("rounds", [3])
def test_heavier_races_of_appending_processes(tmp_path, rounds):
    """Several rounds of 32 writer processes, each round from a stale read
    version (version 1): every append is acknowledged and visible once."""
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 1))
    expected = [0]
    for round_number in range(rounds):
        committed = race_appends(path, writers=32, rows_each=3, first_id=100_000 * (round_number + 1))
        expected += [first + k for first in committed for k in range(3)]
    assert_every_row_once(path, expected)
    assert Dataset.open(path).version == 1 + 32 * rounds
