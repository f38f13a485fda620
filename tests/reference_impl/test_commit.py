"""The commit protocol (table format: committing datasets, conflict
resolution), on real files, read back by our reader and by pylance.

* A writer that dies at any step of a commit leaves the dataset at the
  previous version, every committed version intact, and the next commit free
  to take the version number the dead writer was after.
* put-if-not-exists: a commit never replaces a manifest that exists, whoever
  wrote it; racing writers get exactly one winner per version.
* :func:`build_manifest` is a pure function with the invariants of the table
  format (Hypothesis property below).
* ``latest_version_hint.json`` is only a hint: whatever it says, the latest
  version is the one the manifests say.

Nothing is mocked: the "dying writer" is our own ``on_step`` hook raising.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
import uuid as uuid_module
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.drivers import pylance_driver, reference
from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.commit import (
    STEP_BEFORE_MANIFEST,
    STEP_FILES_WRITTEN,
    STEP_TRANSACTION_WRITTEN,
    CommitSettings,
    build_manifest,
)
from reference_impl.dataset import Dataset
from reference_impl.deletions import write_deletion_file
from reference_impl.errors import CommitAttemptsExhaustedError, CommitConflictError, IncompatibleConflictError
from reference_impl.fragment_writer import write_fragments
from reference_impl.fragments import DataFile, DeletionFile, DeletionFileType, Fragment
from reference_impl.index_metadata import IndexMetadata, encode_fragment_bitmap
from reference_impl.manifest import WriterVersion
from reference_impl.naming import LATEST_HINT, VERSIONS_DIR, NamingScheme, manifest_path
from reference_impl.operations.delete import OFFSETS_PREDICATE
from reference_impl.row_ids import decode_row_id_sequence
from reference_impl.schema import Field, Schema
from reference_impl.transactions import Append, CreateIndex, Delete, Overwrite, Transaction
from tests.writer_checks import assert_pylance_agrees

lance = pytest.importorskip("lance")

STEPS = [STEP_FILES_WRITTEN, STEP_TRANSACTION_WRITTEN, STEP_BEFORE_MANIFEST]


def rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([None if i % 4 == 0 else f"row {i}" for i in ids], pa.string()),
        }
    )


def other_rows(count: int) -> pa.Table:
    return pa.table({"other": pa.array([i / 2 for i in range(count)], pa.float64())})


# -- observing a dataset ------------------------------------------------------------


def file_digests(path: Path) -> dict[str, str]:
    """sha256 of every file under the dataset, by relative path."""
    digests = {}
    for full in sorted(path.rglob("*")):
        if full.is_file():
            digests[full.relative_to(path).as_posix()] = hashlib.sha256(full.read_bytes()).hexdigest()
    return digests


def committed_state(path: Path) -> dict:
    """What both readers say about every committed version, and which one
    each opens by default."""
    versions = reference.versions(path)
    assert pylance_driver.versions(path) == versions, "pylance lists other versions than we do"
    state = {
        "versions": versions,
        "latest_ours": Dataset.open(path).version,
        "latest_pylance": lance.dataset(path).version,
    }
    for version in versions:
        state[version] = {
            "ours": reference.describe(path, version),
            "pylance": pylance_driver.describe(path, version),
            "rows_ours": Dataset.open(path, version).to_table(with_row_id=True).to_pylist(),
            "rows_pylance": lance.dataset(path, version=version).to_table(with_row_id=True).to_pylist(),
        }
    return state


def manifest_bytes(path: Path) -> dict[str, bytes]:
    return {
        name: (path / VERSIONS_DIR / name).read_bytes()
        for name in os.listdir(path / VERSIONS_DIR)
        if name.endswith(".manifest")
    }


# -- a writer dying in the middle of a commit -------------------------------------------


class WriterDied(Exception):
    """Raised by our on_step hook: the writer process 'dies' at that step."""


def dying_at(step: str, seen: list[str]):
    def hook(name: str) -> None:
        seen.append(name)
        if name == step:
            raise WriterDied(name)

    return hook


def three_versions(path: Path, naming: str) -> Dataset:
    """v1 create, v2 append, v3 delete (so deletion files are part of history)."""
    ds = Dataset.create(path, rows(0, 12), manifest_naming=naming, stable_row_ids=True, max_rows_per_file=5)
    ds = ds.append(rows(12, 4))
    fragment = ds.fragments[1]
    deletion = write_deletion_file(ds.storage, fragment.id, ds.version, [0, 3])
    ds = ds.commit(
        Delete(
            updated_fragments=[replace(fragment, deletion_file=deletion)],
            deleted_fragment_ids=[ds.fragments[0].id],
            predicate=OFFSETS_PREDICATE,
        )
    )
    assert ds.version == 3
    return ds


def prepare(ds: Dataset, op: str):
    """Write the files of an operation on top of ``ds``; return the operation."""
    if op == "append":
        return Append(fragments=write_fragments(ds.storage, rows(100, 7), ds.schema, max_rows_per_file=4))
    if op == "overwrite":
        schema = schema_from_arrow(other_rows(1).schema)
        return Overwrite(fragments=write_fragments(ds.storage, other_rows(6), schema), schema=schema)
    if op == "delete":
        fragment = ds.fragments[-1]
        deletion = write_deletion_file(ds.storage, fragment.id, ds.version, [1])
        return Delete(updated_fragments=[replace(fragment, deletion_file=deletion)], predicate=OFFSETS_PREDICATE)
    raise AssertionError(op)


CASES = [(op, step, "v2") for op in ("append", "overwrite", "delete") for step in STEPS]
CASES += [("append", step, "v1") for step in STEPS]


@pytest.mark.requirements("commit.files-before-manifest", "commit.atomic")
@pytest.mark.parametrize("op, step, naming", CASES)
def test_a_writer_dying_mid_commit_leaves_the_previous_version(tmp_path, op, step, naming):
    path = tmp_path / "ds"
    ds = three_versions(path, naming)
    before = committed_state(path)
    files_before = file_digests(path)
    assert before["latest_ours"] == before["latest_pylance"] == 3

    operation = prepare(ds, op)
    seen: list[str] = []
    with pytest.raises(WriterDied):
        ds.commit(operation, on_step=dying_at(step, seen))
    # The hook is called in the order of the spec's commit flow.
    assert seen == STEPS[: STEPS.index(step) + 1]

    # Nothing that existed changed; what the dead writer left is unreferenced
    # data (and, from step 2 on, its transaction file), never a manifest.
    files_after = file_digests(path)
    assert {name: files_after[name] for name in files_before} == files_before
    new_files = sorted(set(files_after) - set(files_before))
    assert new_files, "the operation's files should have been written before the commit started"
    new_txns = [name for name in new_files if name.startswith("_transactions/")]
    assert len(new_txns) == (0 if step == STEP_FILES_WRITTEN else 1), new_files
    assert not [name for name in new_files if name.startswith(f"{VERSIONS_DIR}/")], new_files

    after = committed_state(path)
    assert after == before

    # The next commit takes the version the dead writer was after, and pylance
    # reads every version; pylance can then commit on top of it too.
    ds = ds.commit(prepare(ds, op))
    assert ds.version == 4
    assert assert_pylance_agrees(path) == 4
    pylance_ds = lance.write_dataset(rows(500, 3) if op != "overwrite" else other_rows(3), path, mode="append")
    assert pylance_ds.version == 5
    assert Dataset.open(path).version == 5
    assert Dataset.open(path).to_table().equals(lance.dataset(path).to_table())
    finally_state = committed_state(path)
    for version in range(1, 4):
        assert finally_state[version] == before[version]


# -- put-if-not-exists -----------------------------------------------------------------


@pytest.mark.requirements("commit.one-winner", "commit.use-conditional-create", "commit.check-intervening-commits")
def test_a_stale_writer_commits_on_top_and_never_replaces_the_winners_manifest(tmp_path):
    """Two handles read version 1; the first appends (version 2). The second,
    stale, append finds version 2, judges it compatible and commits version 3
    on top of it: version 2 keeps its bytes and both appends are visible."""
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 5))
    first, second = Dataset.open(path), Dataset.open(path)
    winner = first.append(rows(5, 2))
    assert winner.version == 2
    v2 = path / manifest_path(2, NamingScheme.V2)
    winner_bytes = v2.read_bytes()

    stale = second.append(rows(100, 3))
    assert stale.version == 3
    assert v2.read_bytes() == winner_bytes
    assert sorted(manifest_bytes(path)) == sorted([Path(manifest_path(v, NamingScheme.V2)).name for v in (1, 2, 3)])
    # No temporary file of a put is left behind.
    assert sorted(os.listdir(path / VERSIONS_DIR)) == sorted([*manifest_bytes(path), LATEST_HINT])
    expected = [*range(7), 100, 101, 102]
    assert Dataset.open(path).to_table()["id"].to_pylist() == expected
    assert lance.dataset(path).to_table()["id"].to_pylist() == expected
    # The stale append took fresh fragment ids from version 2's high-water mark.
    assert [f.id for f in stale.fragments] == [0, 1, 2]
    assert assert_pylance_agrees(path) == 3


@pytest.mark.requirements("commit.retry-after-lost-race", "commit.one-winner")
def test_a_writer_losing_the_put_race_goes_round_again(tmp_path):
    """Writer A is between building its manifest and writing it when writer B
    (same read version) commits: A's put-if-not-exists fails, A checks B's
    transaction (an Append: compatible) and commits the next version. With
    ``max_attempts=1`` the lost race is the end: CommitAttemptsExhaustedError,
    retryable, nothing committed."""
    path = tmp_path / "ds"
    a = Dataset.create(path, rows(0, 5), manifest_naming="v1")
    b = Dataset.open(path)
    operation = Append(fragments=write_fragments(a.storage, rows(100, 2), a.schema))
    v2 = path / manifest_path(2, NamingScheme.V1)
    committed_by_b = []
    attempts = []

    def b_commits_now(name: str) -> None:
        if name == STEP_BEFORE_MANIFEST:
            attempts.append(name)
            if not committed_by_b:
                committed_by_b.append((b.append(rows(5, 3)), v2.read_bytes()))

    with pytest.raises(CommitAttemptsExhaustedError) as refused:
        a.commit(operation, on_step=b_commits_now, max_attempts=1)
    assert refused.value.retryable and isinstance(refused.value, CommitConflictError)
    assert not (path / manifest_path(3, NamingScheme.V1)).exists()

    attempts.clear()
    committed = a.commit(operation, on_step=b_commits_now)
    assert committed.version == 3 and len(attempts) == 1  # version 2 existed already: no race to lose
    b_bytes = committed_by_b[0][1]
    assert v2.read_bytes() == b_bytes
    assert lance.dataset(path).to_table()["id"].to_pylist() == [*range(8), 100, 101]
    assert assert_pylance_agrees(path) == 3

    # A race lost inside the window, then won on the next attempt.
    c = Dataset.open(path)
    d = Dataset.open(path)
    operation = Append(fragments=write_fragments(c.storage, rows(200, 1), c.schema))
    inside = []

    def d_commits_once(name: str) -> None:
        if name == STEP_BEFORE_MANIFEST and not inside:
            inside.append(d.append(rows(300, 1)).version)

    won = c.commit(operation, on_step=d_commits_once)
    assert inside == [4] and won.version == 5
    assert Dataset.open(path).to_table()["id"].to_pylist() == [*range(8), 100, 101, 300, 200]


@pytest.mark.requirements("commit.use-conditional-create", "manifest.immutable")
def test_a_commit_never_replaces_a_manifest_pylance_committed_first(tmp_path):
    """pylance commits version 2 while our handle still reads version 1: our
    append honours pylance's transaction (an Append) and commits version 3."""
    path = tmp_path / "ds"
    ours = Dataset.create(path, rows(0, 5))
    lance.write_dataset(rows(5, 1), path, mode="append")
    v2 = path / manifest_path(2, NamingScheme.V2)
    pylance_bytes = v2.read_bytes()
    assert ours.append(rows(100, 2)).version == 3
    assert v2.read_bytes() == pylance_bytes
    assert lance.dataset(path).version == Dataset.open(path).version == 3
    assert Dataset.open(path).to_table()["id"].to_pylist() == [*range(6), 100, 101]
    assert lance.dataset(path).to_table()["id"].to_pylist() == [*range(6), 100, 101]


@pytest.mark.parametrize("naming", ["v1", "v2"])
def test_any_file_at_the_next_manifest_name_blocks_the_commit(tmp_path, naming):
    """Put-if-not-exists does not look at what is there: arbitrary bytes at the
    next version's name are kept, and the commit fails."""
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 5), manifest_naming=naming)
    squatter = path / manifest_path(2, NamingScheme(naming))
    squatter.write_bytes(b"not a manifest")
    with pytest.raises(IncompatibleConflictError) as refused:
        ds.append(rows(5, 1))
    # Be conservative: a version whose transaction cannot be read conflicts.
    assert (refused.value.version, refused.value.operation, refused.value.retryable) == (2, None, False)
    assert squatter.read_bytes() == b"not a manifest"


@pytest.mark.requirements("commit.one-winner", "commit.atomic")
def test_threads_racing_from_one_read_version_get_one_winner_per_version(tmp_path):
    """Each round, N threads read the same version, write their data files and
    meet at the manifest write, so that their puts of the next manifest really
    race, each with a single attempt (``max_attempts=1``). Exactly one
    commits that version; the others get CommitAttemptsExhaustedError; no
    manifest is ever replaced."""
    writers, rounds = 8, 4
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 1))
    expected_ids = [0]
    seen_bytes: dict[str, bytes] = manifest_bytes(path)
    for round_number in range(rounds):
        read = Dataset.open(path)
        at_the_put = threading.Barrier(writers, timeout=60)
        results: list[object] = [None] * writers

        def write(index: int) -> None:
            ds = Dataset.open(path, read.version)
            first_id = 1000 * (round_number + 1) + index
            operation = Append(fragments=write_fragments(ds.storage, rows(first_id, 1), ds.schema))

            def meet(name: str) -> None:
                if name == STEP_BEFORE_MANIFEST:
                    at_the_put.wait()

            try:
                results[index] = (first_id, ds.commit(operation, on_step=meet, max_attempts=1))
            except Exception as exc:  # collected and judged below
                results[index] = exc

        threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)

        winners = [r for r in results if isinstance(r, tuple)]
        losers = [r for r in results if not isinstance(r, tuple)]
        assert len(winners) == 1, results
        assert all(isinstance(r, CommitAttemptsExhaustedError) for r in losers), losers
        first_id, committed = winners[0]
        assert committed.version == read.version + 1
        expected_ids.append(first_id)

        current = manifest_bytes(path)
        for name, data in seen_bytes.items():
            assert current[name] == data, f"{name} was replaced"
        assert len(current) == len(seen_bytes) + 1
        seen_bytes = current
        on_disk = Dataset.open(path)
        assert on_disk.manifest == committed.manifest
        assert on_disk.to_table()["id"].to_pylist() == expected_ids
        assert lance.dataset(path).to_table()["id"].to_pylist() == expected_ids
    assert assert_pylance_agrees(path) == rounds + 1


@pytest.mark.requirements("commit.retry-after-lost-race", "commit.one-winner", "conflict.append-otherwise-compatible")
def test_threads_appending_at_once_all_commit_one_version_each(tmp_path):
    """N threads read the same version and meet at their first manifest
    write; with the commit loop every one of them commits, each at its own
    version, and every row is visible exactly once."""
    writers = 8
    path = tmp_path / "ds"
    Dataset.create(path, rows(0, 1))
    at_the_put = threading.Barrier(writers, timeout=60)
    results: list[object] = [None] * writers

    def write(index: int) -> None:
        ds = Dataset.open(path, 1)
        operation = Append(fragments=write_fragments(ds.storage, rows(1000 + index, 1), ds.schema))
        met = []

        def meet(name: str) -> None:
            if name == STEP_BEFORE_MANIFEST and not met:
                met.append(name)
                at_the_put.wait()

        try:
            results[index] = ds.commit(operation, on_step=meet)
        except Exception as exc:  # judged below
            results[index] = exc

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert all(isinstance(r, Dataset) for r in results), results
    assert sorted(r.version for r in results) == list(range(2, writers + 2))
    expected = sorted([0, *(1000 + i for i in range(writers))])
    assert sorted(Dataset.open(path).to_table()["id"].to_pylist()) == expected
    assert sorted(lance.dataset(path).to_table()["id"].to_pylist()) == expected
    fragment_ids = [f.id for f in Dataset.open(path).fragments]
    assert len(set(fragment_ids)) == len(fragment_ids)


# -- build_manifest is a pure function ----------------------------------------------------

SCHEMA = Schema([Field(id=0, name="a", logical_type="int64")])


def synthetic_fragment(draw, garbage_id: bool = True) -> Fragment:
    """A fragment as a writer hands it to the commit: no files behind it, and
    an id the commit must replace."""
    return Fragment(
        id=draw(st.integers(0, 50)) if garbage_id else 0,
        files=[DataFile(path=f"{draw(st.uuids())}.lance", fields=[0], column_indices=[0], file_size_bytes=64)],
        physical_rows=draw(st.integers(1, 40)),
    )


def draw_operation(draw, read, indices, step: int):
    """The next operation of a history; the first one creates the table."""
    kinds = ["overwrite"] if read is None else ["append", "append", "overwrite", "delete", "create_index"]
    kind = draw(st.sampled_from(kinds))
    if kind == "append":
        return Append(fragments=[synthetic_fragment(draw) for _ in range(draw(st.integers(0, 4)))])
    if kind == "overwrite":
        return Overwrite(fragments=[synthetic_fragment(draw) for _ in range(draw(st.integers(0, 4)))], schema=SCHEMA)
    live = [f.id for f in read.fragments]
    if kind == "delete":
        removed = draw(st.lists(st.sampled_from(live), unique=True)) if live else []
        candidates = [f for f in read.fragments if f.id not in removed]
        updated = draw(st.lists(st.sampled_from(candidates), unique_by=lambda f: f.id)) if candidates else []
        updated = [
            replace(
                f,
                deletion_file=DeletionFile(
                    DeletionFileType.ARROW_ARRAY,
                    read.version,
                    draw(st.integers(0, 2**64 - 1)),
                    draw(st.integers(1, f.physical_rows)),
                ),
            )
            for f in updated
        ]
        return Delete(updated_fragments=updated, deleted_fragment_ids=removed)
    index = IndexMetadata(
        uuid=str(uuid_module.UUID(int=step)),
        name=draw(st.sampled_from(["a_idx", "b_idx"])),
        fields=[0],
        dataset_version=read.version,
        fragment_bitmap=encode_fragment_bitmap(live),
    )
    replaced = [i for i in indices if i.name == index.name]
    return CreateIndex(new_indices=[index], removed_indices=replaced)


@pytest.mark.requirements("transaction.append-ids-assigned-at-commit")
@given(stable_row_ids=st.booleans(), data=st.data())
def test_build_manifest_is_pure_and_keeps_the_history_invariants(stable_row_ids, data):
    """Property: along any generated history of append / overwrite / delete /
    create-index transactions on synthetic fragments, build_manifest(read,
    indices, transaction, settings)

    * returns equal results when called twice, also on deep copies of its
      inputs, and leaves its inputs equal to deep copies taken before;
    * gives version = read.version + 1 (1 when creating);
    * gives fragments with unique ids, sorted, of which the ones not in the
      manifest read were never used before in the history;
    * never lowers max_fragment_id, which covers every fragment id;
    * with stable row ids, never lowers next_row_id, gives every row of every
      fragment a row id, unique in the version, below next_row_id, and new
      rows ids never used before; without, records no row ids;
    * leaves indices covering only fragments that are still there.
    """
    read, indices = None, []
    used_fragment_ids: set[int] = set()
    used_row_ids: set[int] = set()
    for step in range(data.draw(st.integers(1, 12), label="length")):
        operation = draw_operation(data.draw, read, indices, step)
        transaction = Transaction(
            read_version=read.version if read else 0, uuid=str(uuid_module.UUID(int=step)), operation=operation
        )
        settings = CommitSettings(
            timestamp=(1_700_000_000 + step, step),
            transaction_file=f"{transaction.read_version}-{transaction.uuid}.txn",
            stable_row_ids=stable_row_ids,
            writer_version=WriterVersion("lance-conformance", "0.0.0"),
        )
        inputs = (read, indices, transaction, settings)
        inputs_before = copy.deepcopy(inputs)

        manifest, new_indices = build_manifest(*inputs)
        assert build_manifest(*inputs) == (manifest, new_indices)
        assert build_manifest(*copy.deepcopy(inputs)) == (manifest, new_indices)
        assert inputs == inputs_before, "build_manifest changed its inputs"

        assert manifest.version == (read.version + 1 if read else 1)
        ids = [f.id for f in manifest.fragments]
        assert ids == sorted(set(ids))
        read_ids = {f.id for f in read.fragments} if read else set()
        new_ids = set(ids) - read_ids
        assert not new_ids & used_fragment_ids, f"fragment ids {new_ids & used_fragment_ids} reused"
        used_fragment_ids |= new_ids
        if read is not None and read.max_fragment_id is not None:
            assert manifest.max_fragment_id >= read.max_fragment_id
        if ids:
            assert manifest.max_fragment_id >= max(ids)

        if stable_row_ids:
            assert manifest.next_row_id >= (read.next_row_id if read else 0)
            version_row_ids: list[int] = []
            for fragment in manifest.fragments:
                row_ids = decode_row_id_sequence(fragment.row_id_sequence)
                assert len(row_ids) == fragment.physical_rows
                version_row_ids.extend(row_ids)
                if fragment.id in new_ids:
                    assert not set(row_ids) & used_row_ids, "row ids reused"
            assert len(set(version_row_ids)) == len(version_row_ids)
            assert all(row_id < manifest.next_row_id for row_id in version_row_ids)
            used_row_ids |= set(version_row_ids)
        else:
            assert manifest.next_row_id == 0
            assert all(f.row_id_sequence is None for f in manifest.fragments)

        for index in new_indices:
            assert set(index.fragment_ids() or []) <= set(ids)

        read, indices = manifest, new_indices


# -- latest_version_hint.json is only a hint ------------------------------------------------

HINTS = {
    "stale": b'{"version": 1}',
    "ahead": b'{"version": 99}',
    "huge": json.dumps({"version": 2**70}).encode(),
    "negative": b'{"version": -3}',
    "not an int": b'{"version": "3"}',
    "garbage": b"\x00\xffgarbage",
    "empty": b"",
    "missing": None,
}


@pytest.mark.requirements("history.latest-is-highest")
@pytest.mark.parametrize("naming", ["v1", "v2"])
@pytest.mark.parametrize("hint", sorted(HINTS))
def test_the_version_hint_never_decides_the_latest_version(tmp_path, naming, hint):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 3), manifest_naming=naming)
    ds = ds.append(rows(3, 2))
    ds = ds.append(rows(5, 1))
    hint_path = path / VERSIONS_DIR / LATEST_HINT
    assert json.loads(hint_path.read_bytes()) == {"version": 3}
    latest = {"ours": reference.describe(path), "pylance": pylance_driver.describe(path)}

    hint_path.unlink()
    if HINTS[hint] is not None:
        hint_path.write_bytes(HINTS[hint])
    assert Dataset.open(path).version == lance.dataset(path).version == 3
    assert reference.describe(path) == latest["ours"]
    assert pylance_driver.describe(path) == latest["pylance"]
    assert Dataset.open(path, 1).to_table()["id"].to_pylist() == [0, 1, 2]

    # Writers ignore it too: ours commits version 4, pylance version 5.
    assert ds.append(rows(6, 1)).version == 4
    assert lance.write_dataset(rows(7, 1), path, mode="append").version == 5
    assert Dataset.open(path).to_table()["id"].to_pylist() == list(range(8))
    assert assert_pylance_agrees(path) == 5


def test_a_hint_that_cannot_be_written_does_not_fail_the_commit(tmp_path):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 3))
    hint_path = path / VERSIONS_DIR / LATEST_HINT
    hint_path.unlink()
    hint_path.mkdir()
    ds = ds.append(rows(3, 1))
    assert ds.version == 2
    assert Dataset.open(path).version == lance.dataset(path).version == 2
    assert assert_pylance_agrees(path) == 2


def test_a_failed_hint_write_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 3))
    hint_path = path / VERSIONS_DIR / LATEST_HINT
    hint_path.unlink()
    hint_path.mkdir()
    ds.append(rows(3, 1))
    assert [name for name in os.listdir(path / VERSIONS_DIR) if name.endswith(".tmp")] == []
