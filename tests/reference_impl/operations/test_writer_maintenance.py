"""Compaction, restore, indices, tags, branches and shallow clones written by
the reference implementation, checked against pylance 14.

Every dataset written here is read back by pylance at every version
(:func:`assert_pylance_agrees`), and each operation is compared with pylance
doing the same operation on a copy of the same dataset (or, for clones, on
the same source): the same rows, the same row ids under stable row ids, and
the history invariants of the table format: fragment ids are never reused,
and ``max_fragment_id`` and ``next_row_id`` never go down, restores included.
"""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from conformance.describe import differences
from conformance.drivers import pylance_driver, reference
from reference_impl.dataset import Dataset
from reference_impl.errors import (
    CommitConflictError,
    LanceFormatError,
    RetryableConflictError,
    UnsupportedFeatureError,
    VersionNotFoundError,
)
from reference_impl.fragment_writer import dataset_data_version, write_fragments
from reference_impl.index_metadata import IndexMetadata, encode_fragment_bitmap
from reference_impl.naming import NamingScheme
from reference_impl.operations.compaction import plan_compaction
from reference_impl.operations.indices import INDEX_TYPE_URLS, IndexOperationError
from reference_impl.refs import InvalidRefNameError, read_branch
from reference_impl.row_ids import encode_row_id_sequence, encode_version_sequence
from reference_impl.transactions import (
    Clone,
    CreateIndex,
    ReserveFragments,
    Restore,
    Rewrite,
    RewriteGroup,
    read_transaction_file,
)
from tests.writer_checks import assert_pylance_agrees

lance = pytest.importorskip("lance")

MODES = [
    pytest.param(naming, stable, id=f"{naming}-{'stable' if stable else 'addresses'}")
    for naming in ("v1", "v2")
    for stable in (False, True)
]
VERSION_COLUMNS = ["_row_created_at_version", "_row_last_updated_at_version"]


# -- helpers ---------------------------------------------------------------------


def rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [None if i % 4 == 0 else f"row {i}" for i in ids],
            "tags": [[f"t{i % 3}"] for i in ids],
        }
    )


def history(path, *, naming: str, stable: bool) -> Dataset:
    """Five versions: three fragments, two small appends, then deletions in
    two fragments (one of them the smallest)."""
    ds = Dataset.create(path, rows(0, 25), manifest_naming=naming, stable_row_ids=stable, max_rows_per_file=10)
    ds = ds.append(rows(25, 3))
    ds = ds.append(rows(28, 4))
    return ds.delete(pc.field("id").isin([3, 14, 15, 26]))


def pylance_copy(path, tmp_path, name: str = "peer"):
    """A byte-for-byte copy of the dataset for pylance to change."""
    copy = tmp_path / name
    shutil.copytree(path, copy)
    return copy


def rows_by_id(table: pa.Table) -> list[dict]:
    return table.sort_by("id").to_pylist()


def pylance_rows(path, version=None, *, stable: bool) -> list[dict]:
    """Rows as pylance reads them, with row ids and row versions under
    stable row ids."""
    dataset = lance.dataset(str(path), version=version)
    columns = ["id", "name", "tags"] + (VERSION_COLUMNS if stable else [])
    return rows_by_id(dataset.to_table(columns=columns, with_row_id=stable))


def assert_history_invariants(path) -> None:
    """Along the versions of the main branch: max_fragment_id and next_row_id
    never go down, and a fragment id that comes back (restore) names the same
    fragment as before (table.proto: ids unique within a dataset; older table format page: row
    ids assigned from a monotonically increasing next_row_id)."""
    first_file_of: dict[int, str] = {}
    previous = None
    for version in Dataset.open(path).versions():
        manifest = Dataset.open(path, version).manifest
        if previous is not None:
            assert (manifest.max_fragment_id or 0) >= (previous.max_fragment_id or 0), f"v{version}"
            assert manifest.next_row_id >= previous.next_row_id, f"v{version} lowers next_row_id"
        for fragment in manifest.fragments:
            assert fragment.id <= manifest.max_fragment_id
            first = first_file_of.setdefault(fragment.id, fragment.files[0].path)
            assert first == fragment.files[0].path, f"v{version} reuses fragment id {fragment.id}"
        previous = manifest


def operation_of(dataset: Dataset):
    return read_transaction_file(dataset.storage, dataset.manifest.transaction_file)


def describe_differences(ours_path, theirs_path, version, *, ignore=()) -> list[str]:
    """Differences between our reader on one dataset and pylance on another."""
    ours = reference.describe(ours_path, version)
    theirs = pylance_driver.describe(theirs_path, version)
    return differences(ours, theirs, ignore=set(pylance_driver.UNREPORTED) | set(ignore))


# -- compaction ------------------------------------------------------------------


@pytest.mark.parametrize("naming, stable", MODES)
def test_compaction_matches_pylance(tmp_path, naming, stable):
    path = tmp_path / "ds"
    before = history(path, naming=naming, stable=stable)
    peer = pylance_copy(path, tmp_path)
    expected = pylance_rows(path, stable=stable)

    after = before.compact(target_rows_per_fragment=20)
    lance.dataset(str(peer)).optimize.compact_files(target_rows_per_fragment=20, materialize_deletions_threshold=0.0)

    # Two commits: the reservation, then the rewrite into the reserved ids.
    assert after.version == before.version + 2
    reserved = Dataset.open(path, before.version + 1)
    assert operation_of(reserved).operation == ReserveFragments(num_fragments=2)
    assert reserved.fragments == before.fragments
    assert reserved.manifest.max_fragment_id == before.manifest.max_fragment_id + 2
    rewrite = operation_of(after).operation
    assert isinstance(rewrite, Rewrite) and len(rewrite.groups) == 1
    new_ids = [f.id for f in rewrite.groups[0].new_fragments]
    assert new_ids == [reserved.manifest.max_fragment_id - 1, reserved.manifest.max_fragment_id]
    # Every fragment was a candidate (all are small): 28 visible rows in 20 + 8.
    assert [(f.id, f.physical_rows, f.deletion_file) for f in after.fragments] == [
        (new_ids[0], 20, None),
        (new_ids[1], 8, None),
    ]
    # Moved rows keep their ids and their versions (older table format page).
    assert pylance_rows(path, stable=stable) == expected == pylance_rows(peer, stable=stable)
    if stable:
        assert after.manifest.next_row_id == before.manifest.next_row_id
    assert_history_invariants(path)
    assert_history_invariants(peer)
    assert assert_pylance_agrees(path) == after.version
    assert Dataset.open(path).compact(target_rows_per_fragment=20).version == after.version, "nothing left to do"


def test_compaction_plan_follows_the_documented_rule(tmp_path):
    ds = Dataset.create(tmp_path / "ds", rows(0, 10), max_rows_per_file=10)  # fragment 0: full
    for start, count in ((10, 3), (13, 3), (16, 10), (26, 4), (30, 10), (40, 10)):
        ds = ds.append(rows(start, count))  # 1, 2 small; 3 full; 4 small; 5, 6 full
    ds = ds.delete(pc.field("id").isin([45]))  # fragment 6 gets a deletion

    def plan(dataset, **options):
        return [[f.id for f in run] for run in plan_compaction(dataset, target_rows_per_fragment=10, **options)]

    # 1 and 2 are adjacent small fragments; 4 is alone and has nothing to
    # materialize; 6 is full but has a deletion.
    assert plan(ds) == [[1, 2], [6]]
    assert plan(ds, materialize_deletions=False) == [[1, 2]]
    assert plan(ds, materialize_deletions_threshold=0.5) == [[1, 2]]
    # Index coverage does not change the plan: the commit drops rewritten
    # fragments from every index, covered or not.
    indexed = ds.commit(CreateIndex(new_indices=[_metadata_index(ds, [2])]))
    assert plan(indexed) == [[1, 2], [6]]


def test_a_stale_compaction_conflicts_with_a_delete_of_the_fragments_it_rewrites(tmp_path):
    """A compaction planned on version v rewrites the rows it read at v: when
    a delete of one of those rows was committed since v, the Rewrite must
    conflict (retryable) rather than bring the deleted row back, although
    its own ReserveFragments commit is compatible with the delete. (The
    Rewrite is built on v, so the commit loop resolves it against every
    version since v, the delete included; built on the ReserveFragments
    version, it saw no delete and undid it: a lost update.)"""
    ds = Dataset.create(tmp_path / "ds", rows(0, 8), max_rows_per_file=4)
    ds = ds.delete(pc.field("id").isin([3]))  # fragment 0 has a deletion to materialize
    stale = Dataset.open(tmp_path / "ds", version=ds.version)
    ds.delete(pc.field("id").isin([0]))
    with pytest.raises(RetryableConflictError) as raised:
        stale.compact(target_rows_per_fragment=4)
    assert raised.value.operation == "delete"
    latest = Dataset.open(tmp_path / "ds")
    assert sorted(latest.to_table()["id"].to_pylist()) == [1, 2, 4, 5, 6, 7]


def test_a_stale_compaction_after_a_new_column_conflicts_instead_of_failing(tmp_path):
    """A column added since the compaction's read version makes its Rewrite
    a retryable conflict (the page's Rewrite section: Merge, always), not a
    failure to write the moved rows under the newer schema."""
    ds = Dataset.create(tmp_path / "ds", rows(0, 8), max_rows_per_file=4)
    ds = ds.delete(pc.field("id").isin([3]))
    stale = Dataset.open(tmp_path / "ds", version=ds.version)
    ds.add_columns({"doubled": pc.multiply(pc.field("id"), 2)})
    with pytest.raises(RetryableConflictError):
        stale.compact(target_rows_per_fragment=4)


def _metadata_index(ds: Dataset, fragment_ids) -> IndexMetadata:
    """An index record covering exactly ``fragment_ids``."""
    return IndexMetadata(
        uuid="00000000-0000-4000-8000-000000000001",
        name="partial",
        fields=[0],
        dataset_version=ds.version,
        fragment_bitmap=encode_fragment_bitmap(fragment_ids),
    )


def test_compaction_refuses_data_files_it_cannot_write(tmp_path):
    """The new fragments would hold files of another version than the
    dataset's legacy files, which the reference does not write
    (requirement data-file.same-format-version: every file has the dataset's version)."""
    path = str(tmp_path / "ds")
    lance.write_dataset(rows(0, 4), path, max_rows_per_file=2, data_storage_version="legacy")
    with pytest.raises(UnsupportedFeatureError, match="0.1"):
        Dataset.open(path).compact(target_rows_per_fragment=10)
    assert Dataset.open(path).version == 1


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable"])
def test_compaction_keeps_pylance_index_queries_right(tmp_path, stable):
    """pylance builds a real BTree index; our compaction must leave every
    query pylance answers through it right."""
    path = str(tmp_path / "ds")
    # pylance's default data files (2.2): the reference's compaction rewrites them in that version.
    lance.write_dataset(rows(0, 30), path, max_rows_per_file=10, enable_stable_row_ids=stable)
    lance.dataset(path).delete("id in (3, 14)")
    lance.dataset(path).create_scalar_index("id", "BTREE")
    before = Dataset.open(path)
    after = before.compact(target_rows_per_fragment=20)
    (index,) = after.indices
    assert after.version == before.version + 2
    assert index.fragment_ids() == [], "rewritten fragments leave the index, stable row ids or not"
    dataset = lance.dataset(path)
    for query in ("id = 5", "id = 20", "id > 25", "id = 3"):
        assert dataset.to_table(filter=query) == dataset.to_table(filter=query, use_scalar_index=False)
    assert_pylance_agrees(path)


def test_a_hand_made_rewrite_also_leaves_pylance_index_queries_right(tmp_path):
    """pylance's scalar indices hold row addresses even under stable row ids
    (docs/spec-discrepancies.md), so a Rewrite must drop the moved fragments
    from index coverage: then pylance answers from a scan, correctly."""
    path = str(tmp_path / "ds")
    lance.write_dataset(rows(0, 20), path, max_rows_per_file=10, enable_stable_row_ids=True)
    lance.dataset(path).create_scalar_index("id", "BTREE")
    ds = Dataset.open(path)
    table = ds.to_table(with_row_id=True)
    ds = ds.commit(ReserveFragments(num_fragments=1))
    (new,) = write_fragments(
        ds.storage, table.drop_columns(["_rowid"]), ds.schema, version=dataset_data_version(ds.manifest)
    )
    new.id = ds.manifest.max_fragment_id
    new.row_id_sequence = encode_row_id_sequence(table["_rowid"].to_pylist())
    new.created_at_version_sequence = new.last_updated_at_version_sequence = encode_version_sequence([1] * 20)
    ds = ds.commit(Rewrite(groups=[RewriteGroup(old_fragments=list(ds.fragments), new_fragments=[new])]))
    assert ds.indices[0].fragment_ids() == []
    dataset = lance.dataset(path)
    assert dataset.to_table(filter="id = 5").num_rows == 1
    assert dataset.to_table(filter="id = 5") == dataset.to_table(filter="id = 5", use_scalar_index=False)


# -- restore ---------------------------------------------------------------------


@pytest.mark.parametrize("naming, stable", MODES)
def test_restore_matches_pylance(tmp_path, naming, stable):
    path = tmp_path / "ds"
    ds = history(path, naming=naming, stable=stable).create_index("id")  # v5
    ds = ds.compact(target_rows_per_fragment=100)  # v6, v7
    peer = pylance_copy(path, tmp_path)

    restored = ds.restore(3)
    lance.dataset(str(peer), version=3).restore()

    assert restored.version == 8 == lance.dataset(str(peer)).version
    assert operation_of(restored).operation == Restore(version=3)
    old = Dataset.open(path, 3)
    assert restored.fragments == old.fragments and restored.schema == old.schema
    assert restored.indices == old.indices == []
    restored_rows = pylance_rows(path, stable=stable)
    assert restored_rows == pylance_rows(path, 3, stable=stable) == pylance_rows(peer, stable=stable)
    # The high-water marks stay where the latest version had them, as pylance keeps them.
    peer_manifest = Dataset.open(peer).manifest
    assert restored.manifest.max_fragment_id == ds.manifest.max_fragment_id == peer_manifest.max_fragment_id
    assert restored.manifest.next_row_id == ds.manifest.next_row_id == peer_manifest.next_row_id
    # Restoring the version with the index brings the index back.
    again = restored.restore(5)
    assert [i.uuid for i in again.indices] == [i.uuid for i in Dataset.open(path, 5).indices]
    # New fragments and row ids continue above everything handed out so far.
    appended = again.append(rows(100, 2))
    assert appended.fragments[-1].id == ds.manifest.max_fragment_id + 1
    if stable:
        assert appended.row_ids(appended.fragments[-1]) == [ds.manifest.next_row_id, ds.manifest.next_row_id + 1]
    assert_history_invariants(path)
    assert assert_pylance_agrees(path) == appended.version


def test_restore_refuses_missing_versions_and_stale_reads(tmp_path):
    ds = Dataset.create(tmp_path / "ds", rows(0, 3)).append(rows(3, 3))
    with pytest.raises(VersionNotFoundError):
        ds.restore(7)
    with pytest.raises(ValueError):
        ds.restore(0)
    ds.restore(1)
    # ds is stale (version 3 exists): a Restore commits on top of another
    # Restore (conflict.restore-otherwise-compatible).
    again = ds.restore(1)
    assert again.version == 4 and again.to_table()["id"].to_pylist() == [0, 1, 2]


# -- indices ---------------------------------------------------------------------


def test_create_index_records_what_pylance_records(tmp_path):
    path = tmp_path / "ds"
    ds = history(path, naming="v2", stable=False)
    peer = pylance_copy(path, tmp_path)
    ours = ds.create_index("id")
    lance.dataset(str(peer)).create_scalar_index("id", "BTREE")
    (mine,), (theirs,) = ours.indices, Dataset.open(peer).indices
    assert (mine.name, mine.fields, mine.dataset_version, mine.fragment_ids(), mine.type_url, mine.details) == (
        theirs.name,
        theirs.fields,
        theirs.dataset_version,
        theirs.fragment_ids(),
        theirs.type_url,
        theirs.details,
    )
    # the reference writes BTREE files too (reference_impl/indices/btree.py), as pylance does
    assert mine.uuid != theirs.uuid and mine.index_version == theirs.index_version
    assert sorted(f.path for f in mine.files) == sorted(f.path for f in theirs.files)
    assert isinstance(operation_of(ours).operation, CreateIndex)
    assert describe_differences(path, peer, ours.version, ignore={"indices[].uuid", "writer_version"}) == []


@pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated")
def test_pylance_lists_our_indices_and_queries_through_them(tmp_path):
    path = tmp_path / "ds"
    ds = history(path, naming="v2", stable=True)
    peer = pylance_copy(path, tmp_path)
    for index_type in INDEX_TYPE_URLS:
        column = "tags" if index_type == "LABEL_LIST" else "name" if index_type in ("INVERTED", "NGRAM") else "id"
        name = f"{column}_{index_type.lower()}"
        ds = ds.create_index(column, name=name, index_type=index_type)
        lance.dataset(str(peer)).create_scalar_index(column, index_type, name=name)
    ours = {i.name: i.type_url for i in Dataset.open(path).indices}
    assert ours == {i.name: i.type_url for i in Dataset.open(peer).indices}
    dataset = lance.dataset(str(path))
    assert sorted(i["name"] for i in dataset.list_indices()) == sorted(ours)
    assert {d.name: d.type_url for d in dataset.describe_indices()} == ours
    assert dataset.to_table(filter="id = 5", use_scalar_index=False).num_rows == 1
    # id_btree has its files (the types still recorded without files fail a
    # query planned through them: docs/spec-discrepancies.md)
    assert dataset.to_table(filter="id = 5").num_rows == 1
    assert_pylance_agrees(path)


@pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated")
def test_replace_and_drop_index(tmp_path):
    ds = Dataset.create(tmp_path / "ds", rows(0, 5))
    first = ds.create_index("id")
    second = first.create_index("id", index_type="bitmap")
    (old,), (new,) = first.indices, second.indices
    assert new.name == old.name and new.uuid != old.uuid and new.type_url == INDEX_TYPE_URLS["BITMAP"]
    assert operation_of(second).operation.removed_indices == [old]
    with pytest.raises(IndexOperationError, match="already exists"):
        second.create_index("id", replace=False)
    with pytest.raises(IndexOperationError, match="no such column"):
        second.create_index("missing")
    with_two = second.create_index(["name"], name="by_name")
    dropped = with_two.drop_index("id_idx")
    assert [i.name for i in dropped.indices] == ["by_name"]
    assert operation_of(dropped).operation == CreateIndex(new_indices=[], removed_indices=[new])
    with pytest.raises(IndexOperationError, match="no index"):
        dropped.drop_index("id_idx")
    assert [i["name"] for i in lance.dataset(str(tmp_path / "ds")).list_indices()] == ["by_name"]
    assert_pylance_agrees(tmp_path / "ds")


# -- tags ------------------------------------------------------------------------


def test_tags_match_pylance(tmp_path):
    path = tmp_path / "ds"
    ds = history(path, naming="v1", stable=False)
    peer = pylance_copy(path, tmp_path)
    ds.create_tag("first", 1)
    ds.create_tag("latest")
    peer_ds = lance.dataset(str(peer))
    peer_ds.tags.create("first", 1)
    peer_ds.tags.create("latest", ds.version)
    for name in ("first", "latest"):
        ours = json.loads((path / "_refs" / "tags" / f"{name}.json").read_text())
        theirs = json.loads((peer / "_refs" / "tags" / f"{name}.json").read_text())
        assert set(ours) == set(theirs)
        assert {k: ours[k] for k in ("branch", "version", "manifestSize")} == {
            k: theirs[k] for k in ("branch", "version", "manifestSize")
        }
    assert lance.dataset(str(path)).tags.list().keys() == {"first", "latest"}
    assert lance.dataset(str(path), version="first").version == 1
    with pytest.raises(VersionNotFoundError):
        ds.create_tag("future", 99)
    with pytest.raises(CommitConflictError):
        ds.create_tag("first", 2)
    with pytest.raises(InvalidRefNameError):
        ds.create_tag("bad/name")
    ds.delete_tag("first")
    with pytest.raises(LanceFormatError):
        ds.delete_tag("first")
    assert list(lance.dataset(str(path)).tags.list()) == ["latest"]
    assert_pylance_agrees(path)


# -- branches ----------------------------------------------------------------------


@pytest.mark.parametrize("naming, stable", MODES)
def test_create_branch_matches_pylance(tmp_path, naming, stable):
    path = tmp_path / "ds"
    ds = history(path, naming=naming, stable=stable)
    peer = pylance_copy(path, tmp_path)
    branch = ds.create_branch("dev/one", 4)
    lance.dataset(str(peer)).create_branch("dev/one", 4)
    peer_branch = Dataset.open(peer / "tree" / "dev" / "one")

    assert branch.storage.root == path / "tree" / "dev" / "one"
    assert branch.version == 4 == peer_branch.version
    assert branch.naming_scheme is NamingScheme.V2 is peer_branch.naming_scheme
    assert branch.manifest.branch == "dev/one" == peer_branch.manifest.branch
    for clone, source in ((branch, path), (peer_branch, peer)):
        (base,) = clone.manifest.base_paths
        assert (base.id, base.path, base.is_dataset_root, base.name) == (0, str(source), True, None)
        assert all(d.base_id == 0 for f in clone.fragments for d in f.files)
        assert all(f.deletion_file.base_id == 0 for f in clone.fragments if f.deletion_file)
        assert operation_of(clone).operation == Clone(
            is_shallow=True, ref_name=None, ref_version=4, ref_path=str(source), branch_name="dev/one"
        )
        assert operation_of(clone).read_version == 4
    assert (branch.manifest.reader_feature_flags, branch.manifest.writer_feature_flags) == (
        peer_branch.manifest.reader_feature_flags,
        peer_branch.manifest.writer_feature_flags,
    )
    meta = read_branch(ds.storage, "dev/one")
    assert (meta.parent_branch, meta.parent_version) == (None, 4)
    assert meta.manifest_size == read_branch(Dataset.open(peer).storage, "dev/one").manifest_size

    on_branch = lance.dataset(str(path)).checkout_version(("dev/one", 4))
    assert rows_by_id(on_branch.to_table(with_row_id=stable)) == rows_by_id(
        lance.dataset(str(path), version=4).to_table(with_row_id=stable)
    )
    assert lance.dataset(str(path)).branches.list().keys() == {"dev/one"}
    # Writing to the branch leaves main alone; pylance reads both.
    grown = branch.append(rows(200, 3)).compact(target_rows_per_fragment=100)
    assert lance.dataset(str(path)).checkout_version(("dev/one", None)).count_rows() == grown.count_rows() == 31
    assert Dataset.open(path).version == ds.version
    assert_history_invariants(path)
    assert_pylance_agrees(path)
    for version in branch.versions():
        # Tags live at the dataset root; a branch version sees the same ones.
        assert describe_differences(branch.storage.root, branch.storage.root, version) == []


def test_branch_of_a_branch_and_refusals(tmp_path):
    path = tmp_path / "ds"
    ds = Dataset.create(path, rows(0, 5)).append(rows(5, 5))
    dev = ds.create_branch("dev", 1)
    dev = dev.append(rows(10, 2))
    dev.create_tag("on-dev")
    deeper = dev.create_branch("dev2")
    assert deeper.version == dev.version and deeper.count_rows() == 7
    bases = [(b.id, b.path) for b in deeper.manifest.base_paths]
    assert bases == [(0, str(path)), (1, str(path / "tree" / "dev"))]
    meta = read_branch(ds.storage, "dev2")
    assert (meta.parent_branch, meta.parent_version) == ("dev", dev.version)
    assert lance.dataset(str(path)).tags.list()["on-dev"]["branch"] == "dev"
    on_dev2 = lance.dataset(str(path)).checkout_version(("dev2", None))
    assert sorted(on_dev2.to_table()["id"].to_pylist()) == [0, 1, 2, 3, 4, 10, 11]
    with pytest.raises(CommitConflictError):
        ds.create_branch("dev")
    with pytest.raises(InvalidRefNameError):
        ds.create_branch("main")
    with pytest.raises(VersionNotFoundError):
        ds.create_branch("later", 9)
    assert not (path / "tree" / "later").exists() or not list((path / "tree" / "later").rglob("*.manifest"))


# -- shallow clones ----------------------------------------------------------------


@pytest.mark.parametrize("naming, stable", MODES)
def test_shallow_clone_matches_pylance(tmp_path, naming, stable):
    source = tmp_path / "source"
    ds = history(source, naming=naming, stable=stable).create_index("id")  # v5
    ds.create_tag("published", 5)
    ours = ds.shallow_clone(tmp_path / "ours", tag="published")
    lance.dataset(str(source)).shallow_clone(str(tmp_path / "theirs"), "published")
    theirs = Dataset.open(tmp_path / "theirs")

    assert ours.version == 5 == theirs.version
    assert ours.naming_scheme is NamingScheme.V2 is theirs.naming_scheme
    assert ours.versions() == [5]
    (base,) = ours.manifest.base_paths
    (their_base,) = theirs.manifest.base_paths
    assert (base.id, base.path, base.is_dataset_root) == (0, str(source), True)
    assert (their_base.id, their_base.path, their_base.is_dataset_root) == (0, str(source), True)
    # table.proto names the base after the tag; pylance 14 leaves it unnamed.
    assert (base.name, their_base.name) == ("published", None)
    for clone in (ours, theirs):
        assert [(f.id, [d.path for d in f.files]) for f in clone.fragments] == [
            (f.id, [d.path for d in f.files]) for f in ds.fragments
        ]
        assert all(d.base_id == 0 for f in clone.fragments for d in f.files)
        assert all(f.deletion_file.base_id == 0 for f in clone.fragments if f.deletion_file)
        assert [(i.uuid, i.base_id) for i in clone.indices] == [(i.uuid, 0) for i in ds.indices]
        assert (clone.manifest.max_fragment_id, clone.manifest.next_row_id) == (
            ds.manifest.max_fragment_id,
            ds.manifest.next_row_id,
        )
    assert (ours.manifest.reader_feature_flags, ours.manifest.writer_feature_flags) == (
        theirs.manifest.reader_feature_flags,
        theirs.manifest.writer_feature_flags,
    )
    assert operation_of(ours).operation == Clone(
        is_shallow=True, ref_name="published", ref_version=5, ref_path=str(source), branch_name=None
    )
    assert pylance_rows(tmp_path / "ours", stable=stable) == pylance_rows(source, stable=stable)
    assert (
        describe_differences(tmp_path / "ours", tmp_path / "theirs", 5, ignore={"base_paths[].name", "writer_version"})
        == []
    )

    # The clone lives on by itself: new files under its own root, the source untouched.
    grown = ours.append(rows(300, 2)).delete(pc.field("id") == 300).compact(target_rows_per_fragment=100)
    assert all(d.base_id is None for f in grown.fragments for d in f.files)
    assert sorted(lance.dataset(str(tmp_path / "ours")).to_table()["id"].to_pylist()) == sorted(
        ds.to_table()["id"].to_pylist() + [301]
    )
    assert Dataset.open(source).version == 5
    assert_history_invariants(tmp_path / "ours")
    assert assert_pylance_agrees(tmp_path / "ours") == grown.version - 4
    assert_pylance_agrees(source)


def test_shallow_clone_by_version_and_refusals(tmp_path):
    source = tmp_path / "source"
    ds = Dataset.create(source, rows(0, 4), manifest_naming="v1").append(rows(4, 4))
    clone = ds.shallow_clone(tmp_path / "at1", version=1)
    assert clone.version == 1 and clone.count_rows() == 4
    assert clone.manifest.base_paths[0].name is None
    assert operation_of(clone).operation.ref_name is None
    with pytest.raises(CommitConflictError):
        ds.shallow_clone(tmp_path / "at1")
    with pytest.raises(VersionNotFoundError):
        ds.shallow_clone(tmp_path / "at9", version=9)
    ds.create_tag("t", 2)
    with pytest.raises(ValueError):
        ds.shallow_clone(tmp_path / "bad", version=1, tag="t")
    # A clone of a clone keeps the first base and adds the second.
    twice = clone.shallow_clone(tmp_path / "twice")
    bases = [(b.id, b.path) for b in twice.manifest.base_paths]
    assert bases == [(0, str(source)), (1, str(tmp_path / "at1"))]
    assert all(d.base_id == 0 for f in twice.fragments for d in f.files)
    assert_pylance_agrees(tmp_path / "twice")
