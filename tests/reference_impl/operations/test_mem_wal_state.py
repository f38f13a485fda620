"""The reference writer commits ``UpdateMemWalState`` (upstream mem_wal.md,
"MemWAL Index Details" and "MemTable Merger"; transaction.proto).

On a table whose MemWAL index pylance 14 made (``initialize_mem_wal``), the
reference writer records merged generations; then

* pylance opens every version, reads the same rows and describes the same
  dataset (apart from the MemWAL index's absent fragment bitmap, which it
  reports as empty: docs/spec-discrepancies.md, "Golden fixtures", item 4);
* pylance sees the merge progress: its index statistics count the regions
  recorded, and a merge-insert it commits on top carries our entries over
  (pylance 14's public dicts show no generation, so its own commit is how we
  see that it decoded them);
* the validator reports no error and no warning on any version;
* ``build_manifest`` stays pure, and what the spec forbids is refused.
"""

from __future__ import annotations

import copy
import uuid as uuid_module
from dataclasses import replace

import pyarrow as pa
import pytest

from conformance.describe import differences
from conformance.drivers import pylance_driver, reference
from conformance.validator import Severity, validate
from reference_impl.commit import MEM_WAL_INDEX_NAME, CommitSettings, build_manifest
from reference_impl.dataset import Dataset
from reference_impl.errors import InvalidOperationError, LanceFormatError
from reference_impl.manifest import WriterVersion
from reference_impl.transactions import MergedGeneration, Transaction, UpdateMemWalState
from reference_impl.wire import table_pb2

lance = pytest.importorskip("lance")

PK = "lance-schema:unenforced-primary-key"
REGION_A = "0a8e4a4e-9c1f-4d5b-8f3e-2a6c1b7d9e01"
REGION_B = "5b2f7c10-3d4e-4a6b-9c8d-7e1f0a2b3c4d"


@pytest.fixture
def mem_wal_table(tmp_path):
    """A pylance 14 table (its default 2.2 files) with a primary key and a
    MemWAL index (version 2)."""
    path = tmp_path / "mem_wal"
    schema = pa.schema([pa.field("id", pa.int64(), False, {PK: "true"}), pa.field("v", pa.string())])
    lance.write_dataset(pa.table({"id": list(range(6)), "v": list("abcdef")}, schema=schema), path)
    lance.dataset(path).initialize_mem_wal(bucket_column="id", num_buckets=2)
    return path


def merged_generations(dataset: Dataset) -> dict[str, int]:
    entry = next(i for i in dataset.indices if i.name == MEM_WAL_INDEX_NAME)
    details = table_pb2.MemWalIndexDetails.FromString(entry.details)
    return {str(uuid_module.UUID(bytes=m.region_id.uuid)): m.generation for m in details.merged_generations}


def mem_wal_entry(dataset: Dataset):
    return next(i for i in dataset.indices if i.name == MEM_WAL_INDEX_NAME)


def settings_for(transaction: Transaction) -> CommitSettings:
    return CommitSettings(
        timestamp=(1_800_000_000, 123_456_789),
        transaction_file=f"{transaction.read_version}-{transaction.uuid}.txn",
        writer_version=WriterVersion("lance-conformance", "0.0.0"),
    )


def transaction_of(dataset: Dataset, *merged: MergedGeneration) -> Transaction:
    return Transaction(
        read_version=dataset.version,
        uuid="7d3c2b1a-0f9e-4d8c-b7a6-958473625140",
        operation=UpdateMemWalState(list(merged)),
    )


# -- committed, read by pylance, validated ---------------------------------------------


@pytest.mark.requirements("mem-wal.region-id-uuid-v4", "index.uuid-unique", "index.dataset-version-not-later")
def test_merged_generations_are_recorded_and_pylance_reads_every_version(mem_wal_table):
    created = Dataset.open(mem_wal_table)
    before = mem_wal_entry(created)
    first = created.update_mem_wal_state({REGION_A: 2, REGION_B: 1})
    second = first.update_mem_wal_state({REGION_A: 5})

    assert merged_generations(first) == {REGION_A: 2, REGION_B: 1}
    assert merged_generations(second) == {REGION_A: 5, REGION_B: 1}
    entries = [before, mem_wal_entry(first), mem_wal_entry(second)]
    assert len({e.uuid for e in entries}) == 3, "each change writes the entry anew"
    assert [e.dataset_version for e in entries[1:]] == [first.version, second.version]
    for entry in entries[1:]:
        assert (entry.type_url, entry.fields, entry.fragment_bitmap, entry.files) == (before.type_url, [], None, [])
        # Region specs and pylance's fields 11 and 12 are carried over.
        old = table_pb2.MemWalIndexDetails.FromString(before.details)
        new = table_pb2.MemWalIndexDetails.FromString(entry.details)
        new.ClearField("merged_generations")
        assert new.SerializeToString(deterministic=True) == old.SerializeToString(deterministic=True)

    for version in reference.versions(mem_wal_table):
        ours, theirs = reference.describe(mem_wal_table, version), pylance_driver.describe(mem_wal_table, version)
        # pylance reports the MemWAL index's absent bitmap as empty (a known deviation).
        assert not differences(ours, theirs, ignore=["indices[].fragment_ids"]), version
        expected = Dataset.open(mem_wal_table, version).to_table(with_row_id=True)
        actual = lance.dataset(mem_wal_table, version=version).to_table(with_row_id=True)
        assert actual.to_pylist() == expected.to_pylist(), version

    latest = lance.dataset(mem_wal_table)
    assert [d.name for d in latest.describe_indices()] == [MEM_WAL_INDEX_NAME]
    assert latest.stats.index_stats(MEM_WAL_INDEX_NAME)["num_compacted_sstables"] == 2
    assert latest.mem_wal_index_details()["num_shards"] == 2

    problems = [
        f"v{f.version} {f.rule}: {f.message}"
        for f in validate(mem_wal_table, all_versions=True).findings
        if f.severity is not Severity.INFO
    ]
    assert not problems, problems


def test_a_pylance_merge_insert_carries_our_generations_over(mem_wal_table):
    Dataset.open(mem_wal_table).update_mem_wal_state({REGION_A: 2, REGION_B: 4})
    table = lance.dataset(mem_wal_table).to_table()
    builder = lance.dataset(mem_wal_table).merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    builder.mark_sstables_as_compacted([lance.CompactedSsTable(REGION_A, 3)])
    builder.execute(table.slice(0, 2))

    after = Dataset.open(mem_wal_table)
    assert after.manifest.writer_version.library == "lance"
    assert merged_generations(after) == {REGION_A: 3, REGION_B: 4}


# -- build_manifest stays pure -----------------------------------------------------------


def test_build_manifest_is_pure(mem_wal_table):
    read = Dataset.open(mem_wal_table).manifest_file
    transaction = transaction_of(Dataset.open(mem_wal_table), MergedGeneration(REGION_A, 3))
    inputs = (read.manifest, read.indices, transaction, settings_for(transaction))
    inputs_before = copy.deepcopy(inputs)

    built = build_manifest(*inputs)
    assert build_manifest(*inputs) == built
    assert build_manifest(*copy.deepcopy(inputs)) == built
    assert inputs == inputs_before, "build_manifest changed its inputs"
    manifest, indices = built
    assert manifest.version == read.manifest.version + 1
    assert manifest.fragments == read.manifest.fragments and manifest.schema == read.manifest.schema
    assert indices[0].created_at == 1_800_000_000_123, "the commit time, in milliseconds"


def test_an_empty_update_changes_no_index(mem_wal_table):
    dataset = Dataset.open(mem_wal_table)
    committed = dataset.update_mem_wal_state({})
    assert committed.version == dataset.version + 1
    assert committed.indices == dataset.indices


# -- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "merged, message",
    [
        ({REGION_A: 2}, "generation 2 is not above the merged generation 2"),
        ({REGION_A: 1}, "generation 1 is not above the merged generation 2"),
        ({REGION_B: 0}, "generation 0 is not above the merged generation 0"),
        ({"a8e4a4e0-9c1f-1d5b-8f3e-2a6c1b7d9e01": 1}, "is not a version-4 UUID"),
    ],
)
@pytest.mark.requirements("mem-wal.region-id-uuid-v4")
def test_what_the_spec_forbids_is_refused(mem_wal_table, merged, message):
    dataset = Dataset.open(mem_wal_table).update_mem_wal_state({REGION_A: 2})
    # A caller's mistake: InvalidOperationError since issue 11 (it was LanceFormatError, which means a broken dataset).
    with pytest.raises(InvalidOperationError, match=message):
        dataset.update_mem_wal_state(merged)
    assert Dataset.open(mem_wal_table).version == dataset.version, "nothing was committed"


def test_a_region_named_twice_or_not_by_a_uuid_is_refused(mem_wal_table):
    dataset = Dataset.open(mem_wal_table)
    twice = transaction_of(dataset, MergedGeneration(REGION_A, 1), MergedGeneration(REGION_A, 2))
    # A caller's mistake: InvalidOperationError since issue 11 (it was LanceFormatError, which means a broken dataset).
    with pytest.raises(InvalidOperationError, match=f"region {REGION_A} is named twice"):
        build_manifest(dataset.manifest, dataset.indices, twice, settings_for(twice))
    nameless = transaction_of(dataset, MergedGeneration(None, 1))
    with pytest.raises(InvalidOperationError, match="names no region"):
        build_manifest(dataset.manifest, dataset.indices, nameless, settings_for(nameless))
    # Only in memory: a transaction file cannot even hold such an id.
    garbled = transaction_of(dataset, MergedGeneration("region-a", 1))
    with pytest.raises(InvalidOperationError, match="'region-a' is not a UUID"):
        build_manifest(dataset.manifest, dataset.indices, garbled, settings_for(garbled))


def test_a_table_without_exactly_one_mem_wal_index_is_refused(mem_wal_table, tmp_path):
    plain = Dataset.create(tmp_path / "plain", pa.table({"id": [1, 2]}))
    # A caller's mistake: InvalidOperationError since issue 11 (it was LanceFormatError, which means a broken dataset).
    with pytest.raises(InvalidOperationError, match="the table has no MemWAL index"):
        plain.update_mem_wal_state({REGION_A: 1})

    dataset = Dataset.open(mem_wal_table)
    transaction = transaction_of(dataset, MergedGeneration(REGION_A, 1))
    entry = mem_wal_entry(dataset)
    doubled = [entry, replace(entry, uuid=str(uuid_module.uuid4()))]
    # A table holding two MemWAL indices, or a broken one, is a broken dataset: still LanceFormatError.
    with pytest.raises(LanceFormatError, match="2 MemWAL indices; it may have at most one"):
        build_manifest(dataset.manifest, doubled, transaction, settings_for(transaction))
    mistyped = [replace(entry, type_url="/lance.table.BTreeIndexDetails")]
    with pytest.raises(LanceFormatError, match="not lance.table.MemWalIndexDetails"):
        build_manifest(dataset.manifest, mistyped, transaction, settings_for(transaction))
    garbled = [replace(entry, details=b"\xff\xff")]
    with pytest.raises(LanceFormatError, match="do not decode"):
        build_manifest(dataset.manifest, garbled, transaction, settings_for(transaction))


@pytest.mark.requirements("mem-wal.merged-generations-atomic")
def test_an_update_records_the_generations_it_merged(mem_wal_table):
    """A merge-insert's Update carries the generations it merged; the version
    it makes records them in the MemWAL index exactly as an
    UpdateMemWalState would (an Update that changes no row, here), and the
    validator accepts the advance because an Update made it."""
    from reference_impl.transactions import Update

    dataset = Dataset.open(mem_wal_table)
    after = dataset.commit(Update(merged_generations=[MergedGeneration(REGION_B, 4)]))
    assert merged_generations(after) == {REGION_B: 4}
    assert mem_wal_entry(after).dataset_version == after.version
    problems = [
        f"{f.rule}: {f.message}"
        for f in validate(mem_wal_table, all_versions=True).findings
        if f.severity is not Severity.INFO
    ]
    assert problems == []
    # A caller's mistake: InvalidOperationError since issue 11 (it was LanceFormatError).
    with pytest.raises(InvalidOperationError, match="not above"):
        after.commit(Update(merged_generations=[MergedGeneration(REGION_B, 4)]))
