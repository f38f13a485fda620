"""Conflict resolution decisions (transaction page: each operation's
"Compatibility" section; table format: "be conservative"), table-driven.

The first table is every ordered pair of the operation types in
``protos/transaction.proto`` (plus an unknown operation) in one situation:
a table of fragments 0, 1 and 2, where every operation that touches existing
fragments touches fragment 0, the index covers every fragment and field 1,
and the DataReplacement replaces field 1. The tests after it vary one
sub-case at a time (overlapping fragments, same rows, same config key, same
index name, singleton indices, stable row ids, Update mode, DataReplacement
fields, UpdateBases id/name/path).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.requirements import load_requirements
from reference_impl import feature_flags
from reference_impl.commit import MEM_WAL_INDEX_NAME, Decision, Outcome, RowChanges, decide
from reference_impl.commit.conflicts import (
    FRAGMENT_REUSE_INDEX_NAME,
    with_index_bitmaps_on,
    with_merged_deletions,
    with_singleton_indices_merged,
)
from reference_impl.fragments import DataFile, DeletionFile, DeletionFileType, Fragment
from reference_impl.index_metadata import IndexMetadata, encode_fragment_bitmap
from reference_impl.manifest import BasePath, Manifest
from reference_impl.newer_operations import DataOverlay, DataOverlayFile, DataOverlayGroup, ReserveRowIds
from reference_impl.schema import Field, Schema
from reference_impl.transactions import (
    OPERATIONS,
    Append,
    Clone,
    CreateIndex,
    DataReplacement,
    DataReplacementGroup,
    Delete,
    Merge,
    MergedGeneration,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    RewriteGroup,
    Transaction,
    UnknownOperation,
    Update,
    UpdateBases,
    UpdateConfig,
    UpdateMap,
    UpdateMapEntry,
    UpdateMemWalState,
    UpdateMode,
)
from reference_impl.wire import table_pb2

REGION = "0b7c6a8e-3f5d-4c1e-9a2b-1d4e5f6a7b8c"
OTHER_REGION = "5e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
SCHEMA = Schema([Field(0, "a", "int64"), Field(1, "b", "int64")])


def data_file(name: str, fields=(0, 1)) -> DataFile:
    return DataFile(f"{name}.lance", list(fields), list(range(len(fields))))


def fragment(fragment_id: int, *, deleted: int = 0, files=None) -> Fragment:
    deletion = DeletionFile(DeletionFileType.ARROW_ARRAY, 1, 100 + fragment_id, deleted) if deleted else None
    return Fragment(fragment_id, files or [data_file(f"f{fragment_id}")], 10, deletion)


READ = Manifest(version=1, schema=SCHEMA, fragments=[fragment(0), fragment(1), fragment(2)], max_fragment_id=2)


def index(name: str = "idx", fields=(1,), covered=(0, 1, 2), uuid: str = "11111111-1111-4111-8111-111111111111"):
    return IndexMetadata(uuid, name, list(fields), 1, encode_fragment_bitmap(set(covered)))


SAMPLES = {
    "append": Append([Fragment(0, [data_file("new")], 5)]),
    "delete": Delete(updated_fragments=[fragment(0, deleted=2)], predicate="a < 2"),
    "overwrite": Overwrite([Fragment(0, [data_file("ow")], 3)], SCHEMA),
    "create_index": CreateIndex([index()]),
    "rewrite": Rewrite(groups=[RewriteGroup([fragment(0), fragment(1)], [Fragment(5, [data_file("rw")], 20)])]),
    "merge": Merge(
        [replace(fragment(i), files=[data_file(f"f{i}"), data_file(f"m{i}", [2])]) for i in range(3)], SCHEMA
    ),
    "restore": Restore(version=1),
    "reserve_fragments": ReserveFragments(num_fragments=2),
    "update": Update(updated_fragments=[fragment(0, deleted=1)], new_fragments=[Fragment(0, [data_file("up")], 1)]),
    "project": Project(Schema([Field(0, "a", "int64")])),
    "update_config": UpdateConfig(config_updates=UpdateMap([UpdateMapEntry("k", "v")])),
    "data_replacement": DataReplacement([DataReplacementGroup(0, data_file("dr", [1]))]),
    "update_mem_wal_state": UpdateMemWalState([MergedGeneration(REGION, 3)]),
    "clone": Clone(is_shallow=True, ref_path="/elsewhere", ref_version=1),
    "update_bases": UpdateBases([BasePath(1, "/extra", False, "extra")]),
    "data_overlay": DataOverlay([DataOverlayGroup(0, [DataOverlayFile(data_file("ov", [1]), b"\x00")])]),
    "reserve_row_ids": ReserveRowIds(num_row_ids=64),
    "unknown": UnknownOperation((99,)),
}
NAMES = list(SAMPLES)

# mine (row) after theirs (column), in NAMES order:
# C compatible, R rebase, T retryable, I incompatible.
EXPECTED = {
    "append":               "CCICCCICCCCCICCCCI",
    "delete":               "CRICTTICRCCTICCCCI",
    "overwrite":            "CCTCCCCCCCCCTCCCCI",
    "create_index":         "CCICTCICCCCTICCCCI",
    "rewrite":              "CTITTTICTCCTCCCCCI",
    "merge":                "TTICTTICTICTICCCCI",
    "restore":              "CCCCCCCCCCCCICCCCI",
    "reserve_fragments":    "CCICCCICCCCCCCCCCI",
    "update":               "CRICTTICRCCTCCCCCI",
    "project":              "CCICCTICCTCCICCCCI",
    "update_config":        "CCICCCCCCCICCCCCCI",
    "data_replacement":     "CCITTTICTCCTICCCCI",
    "update_mem_wal_state": "IIICCIICIICIICCICI",
    "clone":                "IIIIIIIIIIIIIIIIII",
    "update_bases":         "CCCCCCCCCCCCCCICCI",
    "data_overlay":         "CCICTTICTCCCICCCCI",
    "reserve_row_ids":      "CCICCCICCCCCCCCCCI",
}  # fmt: skip
CODES = {"C": Outcome.COMPATIBLE, "R": Outcome.REBASE, "T": Outcome.RETRYABLE, "I": Outcome.INCOMPATIBLE}


def txn(operation, read_version: int = 1) -> Transaction:
    return Transaction(read_version, f"uuid-{type(operation).__name__}", operation)


def outcome(mine, theirs, **kwargs) -> Outcome:
    return decide(txn(mine), txn(theirs), read=READ, **kwargs).outcome


def test_the_table_covers_every_operation_of_the_proto():
    assert set(OPERATIONS) | {"unknown"} == set(NAMES)
    assert set(EXPECTED) == set(OPERATIONS)


@pytest.mark.requirements("commit.retry-only-if-compatible", "transaction.conflict-errors")
@pytest.mark.parametrize("mine", list(EXPECTED))
def test_every_ordered_pair(mine):
    """Each row of the table: the outcome for committing ``mine`` after each
    operation, and a decision that names its rule and a reason."""
    got = ""
    catalog = load_requirements()
    for theirs in NAMES:
        decision = decide(txn(SAMPLES[mine]), txn(SAMPLES[theirs]), read=READ)
        assert isinstance(decision, Decision)
        assert decision.requirement_ids and all(rid in catalog for rid in decision.requirement_ids), decision
        assert decision.reason and "\n" not in decision.reason
        got += next(code for code, value in CODES.items() if value is decision.outcome)
    assert got == EXPECTED[mine], f"{mine}: expected {EXPECTED[mine]}, got {got}"


@pytest.mark.requirements("commit.missing-transaction-conflicts", "commit.unknown-operation-conflicts")
@pytest.mark.parametrize("mine", list(EXPECTED))
def test_a_missing_or_unknown_transaction_conflicts_with_everything(mine):
    missing = decide(txn(SAMPLES[mine]), None)
    assert missing.outcome is Outcome.INCOMPATIBLE
    assert missing.requirement_ids == ("commit.missing-transaction-conflicts",)
    unknown = decide(txn(SAMPLES[mine]), txn(UnknownOperation()))
    assert unknown.outcome is Outcome.INCOMPATIBLE
    assert decide(txn(UnknownOperation()), txn(SAMPLES[mine])).outcome is Outcome.INCOMPATIBLE


# -- overlapping fragments -------------------------------------------------------------

FAR = Delete(updated_fragments=[fragment(2, deleted=1)])


@pytest.mark.requirements(
    "conflict.delete-after-rewrite-overlapping-retryable", "conflict.delete-after-merge-overlapping-retryable"
)
@pytest.mark.parametrize(
    "theirs, near",
    [
        ("rewrite", Outcome.RETRYABLE),
        ("data_replacement", Outcome.RETRYABLE),
        ("delete", Outcome.REBASE),
        ("update", Outcome.REBASE),
    ],
)
def test_fragment_changes_conflict_only_when_they_overlap(theirs, near):
    assert outcome(SAMPLES["delete"], SAMPLES[theirs]) is near
    assert outcome(FAR, SAMPLES[theirs]) is Outcome.COMPATIBLE
    assert outcome(SAMPLES["rewrite"], FAR) is Outcome.COMPATIBLE
    assert outcome(SAMPLES["rewrite"], SAMPLES["delete"]) is Outcome.RETRYABLE


def test_a_merge_listing_none_of_the_fragments_lets_a_delete_through():
    only_one = Merge([fragment(1)], SCHEMA)
    assert outcome(SAMPLES["delete"], only_one) is Outcome.COMPATIBLE
    assert outcome(SAMPLES["update"], only_one) is Outcome.RETRYABLE  # Update after Merge: always


# -- same rows ---------------------------------------------------------------------------


@pytest.mark.requirements("conflict.delete-same-rows-retryable", "transaction.overlapping-rows-conflict")
def test_same_rows_turn_a_rebase_into_a_retryable_conflict():
    disjoint = RowChanges(mine={0: frozenset({1, 2})}, theirs={0: frozenset({5, 6})})
    same = RowChanges(mine={0: frozenset({1, 2})}, theirs={0: frozenset({2, 7})})
    assert outcome(SAMPLES["delete"], SAMPLES["delete"], rows=disjoint) is Outcome.REBASE
    decision = decide(txn(SAMPLES["delete"]), txn(SAMPLES["update"]), read=READ, rows=same)
    assert decision.outcome is Outcome.RETRYABLE and "same rows" in decision.reason
    assert outcome(SAMPLES["update"], SAMPLES["delete"], rows=same) is Outcome.RETRYABLE


def test_a_shared_fragment_removed_whole_or_rewritten_cannot_be_rebased():
    removed = Delete(deleted_fragment_ids=[0])
    assert outcome(SAMPLES["delete"], removed) is Outcome.RETRYABLE
    assert outcome(removed, SAMPLES["delete"]) is Outcome.RETRYABLE
    in_place = Update(
        updated_fragments=[replace(fragment(0), files=[data_file("f0", [0]), data_file("new-b", [1])])],
        fields_modified=[1],
        update_mode=UpdateMode.REWRITE_COLUMNS,
    )
    assert outcome(SAMPLES["delete"], in_place) is Outcome.RETRYABLE
    # The column rewrite changes every row of fragment 0, the deleted one
    # too: the same rows, in this order as well.
    assert outcome(in_place, SAMPLES["delete"]) is Outcome.RETRYABLE
    assert outcome(in_place, SAMPLES["update"]) is Outcome.RETRYABLE
    # Without the read manifest the data files cannot be compared: rebase
    # (and the rebase itself finds same rows).
    assert decide(txn(SAMPLES["delete"]), txn(in_place)).outcome is Outcome.REBASE


# -- config keys, index names, singletons -------------------------------------------------


@pytest.mark.requirements(
    "conflict.update-config-same-key-incompatible", "conflict.overwrite-after-update-config-same-key-retryable"
)
def test_config_changes_conflict_on_the_same_key_of_the_same_map():
    def config(**entries):
        return UpdateConfig(config_updates=UpdateMap([UpdateMapEntry(k, v) for k, v in entries.items()]))

    assert outcome(config(k="1"), config(k="2")) is Outcome.INCOMPATIBLE
    assert outcome(config(k="1"), config(j="2")) is Outcome.COMPATIBLE
    assert outcome(config(k="1"), UpdateConfig(config_updates=UpdateMap([], replace=True))) is Outcome.INCOMPATIBLE
    assert outcome(config(k="1"), UpdateConfig(delete_keys=["k"])) is Outcome.INCOMPATIBLE
    table_meta = UpdateConfig(table_metadata_updates=UpdateMap([UpdateMapEntry("k", "x")]))
    assert outcome(config(k="1"), table_meta) is Outcome.COMPATIBLE  # another map
    assert outcome(table_meta, table_meta) is Outcome.INCOMPATIBLE
    field_1 = UpdateConfig(field_metadata_updates={1: UpdateMap([UpdateMapEntry("m", "x")])})
    field_0 = UpdateConfig(field_metadata_updates={0: UpdateMap([UpdateMapEntry("m", "x")])})
    assert outcome(field_1, field_1) is Outcome.INCOMPATIBLE
    assert outcome(field_1, field_0) is Outcome.COMPATIBLE
    overwrite_k = Overwrite([], SCHEMA, config_upsert_values={"k": "0"})
    assert outcome(overwrite_k, config(k="1")) is Outcome.RETRYABLE
    assert outcome(overwrite_k, config(j="1")) is Outcome.COMPATIBLE


@pytest.mark.requirements("conflict.create-index-same-name-later-wins", "conflict.create-index-singleton-rebases")
def test_index_names_and_singleton_indices():
    other_name = CreateIndex([index("other", uuid="22222222-2222-4222-8222-222222222222")])
    assert outcome(SAMPLES["create_index"], other_name) is Outcome.COMPATIBLE
    assert outcome(SAMPLES["create_index"], SAMPLES["create_index"]) is Outcome.COMPATIBLE
    for singleton in (MEM_WAL_INDEX_NAME, FRAGMENT_REUSE_INDEX_NAME):
        mine = CreateIndex([index(singleton, fields=())])
        theirs = CreateIndex([index(singleton, fields=(), uuid="33333333-3333-4333-8333-333333333333")])
        decision = decide(txn(mine), txn(theirs))
        assert decision.outcome is Outcome.REBASE and singleton in decision.reason
        assert outcome(mine, other_name) is Outcome.COMPATIBLE


@pytest.mark.requirements("conflict.create-index-singleton-rebases")
def test_rebasing_merges_singleton_index_details():
    def mem_wal(uuid, *generations):
        details = table_pb2.MemWalIndexDetails()
        for region, generation in generations:
            entry = details.merged_generations.add(generation=generation)
            entry.region_id.uuid = bytes.fromhex(region.replace("-", ""))
        return IndexMetadata(uuid, MEM_WAL_INDEX_NAME, [], 1, None, details=details.SerializeToString())

    mine = txn(CreateIndex([mem_wal("44444444-4444-4444-8444-444444444444", (REGION, 2))]))
    latest = [mem_wal("55555555-5555-4555-8555-555555555555", (REGION, 5), (OTHER_REGION, 1))]
    merged = with_singleton_indices_merged(mine, latest).operation.new_indices[0]
    details = table_pb2.MemWalIndexDetails.FromString(merged.details)
    assert sorted((bytes(g.region_id.uuid).hex(), g.generation) for g in details.merged_generations) == sorted(
        [(REGION.replace("-", ""), 5), (OTHER_REGION.replace("-", ""), 1)]
    )


# -- stable row ids, Update mode, DataReplacement fields, UpdateBases -----------------------


@pytest.mark.requirements(
    "conflict.create-index-after-rewrite-overlapping-retryable",
    "conflict.rewrite-after-create-index-overlapping-retryable",
)
def test_stable_row_ids_make_rewrite_and_create_index_compatible():
    stable = replace(READ, reader_feature_flags=feature_flags.STABLE_ROW_IDS)
    for mine, theirs in (("create_index", "rewrite"), ("rewrite", "create_index")):
        assert outcome(SAMPLES[mine], SAMPLES[theirs]) is Outcome.RETRYABLE
        assert decide(txn(SAMPLES[mine]), txn(SAMPLES[theirs]), read=stable).outcome is Outcome.COMPATIBLE
    elsewhere = CreateIndex([index(covered=(2,))])
    assert outcome(elsewhere, SAMPLES["rewrite"]) is Outcome.COMPATIBLE
    assert outcome(SAMPLES["rewrite"], elsewhere) is Outcome.COMPATIBLE


@pytest.mark.requirements(
    "conflict.data-replacement-after-moving-update-retryable", "conflict.data-replacement-keeps-deletions"
)
def test_data_replacement_against_update_modes_and_fields():
    mine = SAMPLES["data_replacement"]
    moving = SAMPLES["update"]
    assert outcome(mine, moving) is Outcome.RETRYABLE

    def in_place(field_id):
        return Update(
            updated_fragments=[fragment(0)], fields_modified=[field_id], update_mode=UpdateMode.REWRITE_COLUMNS
        )

    assert outcome(mine, in_place(1)) is Outcome.RETRYABLE
    assert outcome(mine, in_place(0)) is Outcome.COMPATIBLE
    deletes_only = Update(updated_fragments=[fragment(0, deleted=1)])
    assert outcome(mine, deletes_only) is Outcome.COMPATIBLE
    assert outcome(mine, Delete(deleted_fragment_ids=[0])) is Outcome.INCOMPATIBLE
    assert outcome(mine, Update(removed_fragment_ids=[0])) is Outcome.INCOMPATIBLE
    other_field = DataReplacement([DataReplacementGroup(0, data_file("dr0", [0]))])
    other_fragment = DataReplacement([DataReplacementGroup(1, data_file("dr1", [1]))])
    assert outcome(mine, other_field) is Outcome.COMPATIBLE
    assert outcome(mine, other_fragment) is Outcome.COMPATIBLE
    assert outcome(mine, CreateIndex([index(fields=(0,))])) is Outcome.COMPATIBLE


@pytest.mark.requirements("conflict.update-bases-same-base-incompatible")
@pytest.mark.parametrize(
    "other, clashes",
    [
        (BasePath(1, "/else", False, "else"), True),  # same id
        (BasePath(2, "/else", False, "extra"), True),  # same name
        (BasePath(2, "/extra", False, None), True),  # same path
        (BasePath(2, "/else", False, "else"), False),
        (BasePath(0, "/else", False, None), False),  # id 0: not assigned yet
    ],
)
def test_update_bases_clash_on_id_name_or_path(other, clashes):
    expected = Outcome.INCOMPATIBLE if clashes else Outcome.COMPATIBLE
    assert outcome(SAMPLES["update_bases"], UpdateBases([other])) is expected


@pytest.mark.requirements("conflict.mem-wal-state-same-region-incompatible")
def test_mem_wal_progress_of_different_regions_is_compatible():
    mine = SAMPLES["update_mem_wal_state"]
    assert outcome(mine, UpdateMemWalState([MergedGeneration(OTHER_REGION, 1)])) is Outcome.COMPATIBLE
    assert outcome(mine, UpdateMemWalState([])) is Outcome.COMPATIBLE
    merging_update = Update(merged_generations=[MergedGeneration(REGION, 4)])
    assert outcome(mine, merging_update) is Outcome.INCOMPATIBLE
    assert outcome(merging_update, mine) is Outcome.INCOMPATIBLE
    assert outcome(Update(merged_generations=[MergedGeneration(OTHER_REGION, 4)]), mine) is Outcome.COMPATIBLE


# -- the pure rebase helpers ------------------------------------------------------------------


@pytest.mark.requirements("transaction.concurrent-deletes-merge")
def test_merged_deletion_files_replace_mine_and_emptied_fragments_are_removed():
    mine = txn(Delete(updated_fragments=[fragment(0, deleted=2), fragment(1, deleted=1)]))
    new_file = DeletionFile(DeletionFileType.BITMAP, 3, 7, 5)
    rebased = with_merged_deletions(mine, {0: new_file, 1: None}, rebased_on=3)
    assert rebased.read_version == 3 and rebased.uuid == mine.uuid
    assert [f.deletion_file for f in rebased.operation.updated_fragments] == [new_file]
    assert rebased.operation.deleted_fragment_ids == [1]


def test_index_bitmaps_keep_only_fragments_that_still_exist():
    latest = replace(READ, fragments=[fragment(1), fragment(2), fragment(3)])
    rebased = with_index_bitmaps_on(txn(SAMPLES["create_index"]), latest)
    assert rebased.operation.new_indices[0].fragment_ids() == [1, 2]
