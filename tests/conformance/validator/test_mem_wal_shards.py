"""The MemWAL rules under the newest page's shard model (mem_wal.md read
2026-11-29): shard snapshots are read like region snapshots, and the
sharding rules accept what pylance 14 writes. The broken cases are the
mutations of conformance/mutations/topics/mem_wal.py."""

from __future__ import annotations

import pytest

from conformance.mutations import copy_dataset
from conformance.mutations.bases import MEM_WAL_SHARD
from conformance.mutations.topics.mem_wal import REGION, edit_mem_wal_details, store_shard_snapshots
from conformance.validator import Severity, validate
from conformance.validator.rules.mem_wal_sharding import TRANSFORM_SOURCES, _bucket_count_problem
from conformance.validator.rules.mem_wal_shards import bit_reversed_name, from_bit_reversed


def _mem_wal_objections(root) -> list[str]:
    return [
        f"{f.rule}: {f.message}"
        for f in validate(root, all_versions=True).findings
        if f.rule.startswith("mem-wal/") and f.severity is not Severity.INFO
    ]


@pytest.mark.requirements("mem-wal.shard-snapshot-layout", "mem-wal.shard-spec-id-immutable")
def test_shard_snapshots_that_keep_their_spec_are_clean(base_datasets, tmp_path):
    """Shard snapshots laid out as the page says, stored in the latest
    version, decode and give no finding; the sharding spec pylance 14 wrote
    (bucket on id, 2 buckets, spec 1) passes the sharding rules."""
    root = copy_dataset(base_datasets["nested_pk"], tmp_path / "ds")
    rows = [{"shard_id": str(REGION), "shard_spec_id": 1, "shard_field_bucket": b} for b in (0,)]
    store_shard_snapshots(root, *rows)
    assert _mem_wal_objections(root) == []


@pytest.mark.requirements("mem-wal.sharding-transforms-supported", "mem-wal.sharding-transform-arguments")
def test_an_unsharded_field_reads_no_column(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["nested_pk"], tmp_path / "ds")

    def unsharded(details):
        field = details.region_specs[0].fields[0]
        field.transform, field.result_type = "unsharded", "int32"
        del field.source_ids[:]
        field.parameters.clear()

    edit_mem_wal_details(root, unsharded)
    assert _mem_wal_objections(root) == []

    edit_mem_wal_details(root, lambda d: d.region_specs[0].fields[0].source_ids.append(0))
    assert [m for m in _mem_wal_objections(root) if "reads 1 source column(s)" in m]


def test_bucket_counts_from_1_to_1024():
    assert set(TRANSFORM_SOURCES) == {"unsharded", "bucket", "identity"}
    assert _bucket_count_problem({"num_buckets": "1"}) is None
    assert _bucket_count_problem({"num_buckets": "1024"}) is None
    for bad in ({}, {"num_buckets": "0"}, {"num_buckets": "1025"}, {"num_buckets": "two"}):
        assert _bucket_count_problem(bad), bad


@pytest.mark.requirements(
    "mem-wal.wal-entry-names-bit-reversed", "mem-wal.shard-manifest-version-in-name", "mem-wal.sstable-generations"
)
def test_pylance_names_its_shard_files_as_the_page_says(base_datasets):
    """pylance 14's shard writer (five rows, two to a MemTable) leaves WAL
    entries 1 to 5 and manifest versions 1 to 4 under bit-reversed names, and
    SSTable generations 1 to 3; the layout rule finds nothing in them."""
    assert bit_reversed_name(5) == "101" + "0" * 61
    assert from_bit_reversed(bit_reversed_name(12345)) == 12345
    shard = base_datasets["mem_wal_shards"] / "_mem_wal" / str(MEM_WAL_SHARD)
    wal = sorted(from_bit_reversed(p.name[:64]) for p in (shard / "wal").iterdir())
    manifests = sorted(from_bit_reversed(p.name[:64]) for p in (shard / "manifest").glob("*.binpb"))
    generations = sorted(int(p.name.rsplit("_gen_", 1)[1]) for p in shard.glob("*_gen_*"))
    assert (wal, manifests, generations) == ([1, 2, 3, 4, 5], [1, 2, 3, 4], [1, 2, 3])
    assert _mem_wal_objections(base_datasets["mem_wal_shards"]) == []
