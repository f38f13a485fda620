"""What the commit loop decodes (table format: "Conflict Resolution Flow";
transaction page: "Commit Algorithm"): checking the versions committed since
the read version needs their transactions, not their fragments, so the work
of a commit that rebases over n newer versions grows with n, not with n times
the table's size. Counted in fragment decodes, never timed.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from reference_impl.dataset import Dataset
from reference_impl.fragment_writer import write_fragments
from reference_impl.fragments import Fragment
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.transactions import Append


def rows(start: int, count: int = 3) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


class FragmentDecodes:
    """Counts the fragments turned into ``Fragment`` objects from protobuf
    (the decode the loop must not repeat for every newer version)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.count = 0
        original = Fragment.from_proto

        def counting(msg):
            self.count += 1
            return original(msg)

        monkeypatch.setattr(Fragment, "from_proto", staticmethod(counting))


def stale_append_decodes(tmp_path, monkeypatch, newer: int) -> tuple[int, int]:
    """A writer that read version 1 commits an Append after ``newer`` appends
    by others (version k holds k fragments). Returns the fragments decoded by
    its commit and the fragments of the version it built on."""
    path = tmp_path / f"ds{newer}"
    Dataset.create(path, rows(0))
    for n in range(newer):
        Dataset.open(path).append(rows(100 * (n + 1)))
    stale = Dataset.open(path, 1)
    fragments = write_fragments(stale.storage, rows(-10), stale.schema)
    decodes = FragmentDecodes(monkeypatch)
    committed = stale.commit(Append(fragments=fragments))
    assert committed.version == newer + 2
    assert len(committed.fragments) == newer + 2
    return decodes.count, newer + 1


@pytest.mark.requirements("commit.check-intervening-commits")
def test_rebasing_over_newer_versions_decodes_only_the_latest_manifest(tmp_path, monkeypatch):
    """Property: a stale commit decodes the fragments of the latest version
    (the one it builds on) and those the newer transactions list, nothing
    more; decoding each newer manifest in full would be their sum, quadratic
    in this history (version k holds k fragments: 375 decodes over 24
    versions, where this allows 51)."""
    for newer in (1, 8, 24):
        decoded, latest_fragments = stale_append_decodes(tmp_path, monkeypatch, newer)
        # The latest manifest, plus the one fragment each newer Append's
        # transaction lists, plus a little: linear in the number of versions.
        assert decoded <= latest_fragments + newer + 2, f"{decoded} fragments decoded rebasing over {newer} versions"


@pytest.mark.requirements("commit.check-intervening-commits")
def test_the_committed_manifest_returned_is_the_one_a_reader_decodes(tmp_path):
    """The loop returns the manifest file it encoded instead of decoding it
    again: it must equal what reading the committed file gives, for a new
    table, an append, a stale append rebased, a delete and an index."""
    path = tmp_path / "ds"
    created = Dataset.create(path, rows(0, 5))
    stale = Dataset.open(path, 1)
    appended = created.append(rows(10))
    rebased = stale.commit(Append(fragments=write_fragments(stale.storage, rows(20), stale.schema)))
    deleted = Dataset.open(path).delete({0: [1, 2]})
    indexed = Dataset.open(path).create_index(["id"], name="by_id")
    manifests = list_versions(indexed.storage).manifests()
    for dataset in (created, appended, rebased, deleted, indexed):
        decoded = read_manifest_file(dataset.storage, manifests[dataset.version])
        assert dataset.manifest_file == decoded
        assert dataset.manifest_file.transaction_bytes == decoded.transaction_bytes


@pytest.mark.requirements("commit.check-intervening-commits")
def test_a_transaction_file_emptied_by_a_power_failure_is_read_from_the_manifest(tmp_path):
    """Transaction files are not fsynced (the manifest that commits one embeds
    the same message and is): when a power failure leaves one empty, both the
    reference and pylance resolve a stale commit against that version with
    the embedded copy, and every acknowledged row is there once."""
    lance = pytest.importorskip("lance")
    path = tmp_path / "ds"
    Dataset.create(path, rows(0))
    Dataset.open(path).append(rows(10))
    storage = Dataset.open(path).storage
    transaction_file = Dataset.open(path).manifest.transaction_file
    (path / "_transactions" / transaction_file).write_bytes(b"")

    stale = Dataset.open(path, 1)
    stale.commit(Append(fragments=write_fragments(storage, rows(20), stale.schema)))
    # The dataset's own version (the reference's 2.0): a 2.2 file committed into
    # it makes pylance set a reader feature flag (0x100) the reference refuses.
    written = lance.fragment.LanceFragment.create(str(path), rows(30), data_storage_version="2.0")
    lance.LanceDataset.commit(str(path), lance.LanceOperation.Append([written]), read_version=1)
    ids = sorted(Dataset.open(path).to_table()["id"].to_pylist())
    assert ids == sorted([*range(0, 3), *range(10, 13), *range(20, 23), *range(30, 33)])
