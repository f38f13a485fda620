"""The MemWAL rules under the newest page's shard model (mem_wal.md read
2026-11-29): shard snapshots are read like region snapshots, and the
sharding rules accept what pylance 14 writes. The broken cases are the
mutations of conformance/mutations/topics/mem_wal.py."""

from __future__ import annotations

import pytest

from conformance.mutations import copy_dataset
from conformance.mutations.topics.mem_wal import REGION, edit_mem_wal_details, store_shard_snapshots
from conformance.validator import Severity, validate
from conformance.validator.rules.mem_wal_sharding import TRANSFORM_SOURCES, _bucket_count_problem


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
