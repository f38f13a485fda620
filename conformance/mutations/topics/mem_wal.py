"""Mutations for the MemWAL rules: the index's details on the ``nested_pk``
base, whose latest version holds the MemWAL index pylance 14 made (bucket
sharding on ``id``, "maintain every index" set in pylance's extra field 12),
and the shard directories on the ``mem_wal_shards`` base (pylance 14's shard
writer)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa

from reference_impl.file_format import write_v2_0
from reference_impl.logical_types import schema_from_arrow
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage
from reference_impl.wire import table_pb2

from ...validator.rules.mem_wal_shards import bit_reversed_name
from ..bases import MEM_WAL_SHARD
from ..edit import edit_manifest
from ..registry import mutation

MEM_WAL_INDEX = "__lance_mem_wal"


def edit_mem_wal_details(root, edit, version: int | None = None) -> None:
    """Decode the MemWAL index's details, let ``edit`` change the message,
    and store it back (fields this proto does not know are kept)."""

    def apply(manifest_file):
        index = next(i for i in manifest_file.indices if i.name == MEM_WAL_INDEX)
        details = table_pb2.MemWalIndexDetails()
        details.ParseFromString(index.details)
        edit(details)
        index.details = details.SerializeToString()

    edit_manifest(root, apply, version)


def _region(generation: int, region: uuid.UUID | None = None) -> table_pb2.MergedGeneration:
    message = table_pb2.MergedGeneration(generation=generation)
    message.region_id.uuid = (region or uuid.uuid4()).bytes
    return message


@mutation("mem-wal/details-decode", base="nested_pk", breaks="mem-wal.shard-snapshot-layout")
def garble_the_mem_wal_details(root):
    def apply(manifest_file):
        index = next(i for i in manifest_file.indices if i.name == MEM_WAL_INDEX)
        index.details = b"\x0a\xff\xff\xff\x0f"

    edit_manifest(root, apply)


@mutation("mem-wal/inline-snapshot", base="nested_pk", breaks="mem-wal.snapshot-layout")
def inline_a_snapshot_that_is_no_lance_file(root):
    edit_mem_wal_details(root, lambda d: setattr(d, "inline_snapshots", b"region snapshots, honest"))


@mutation("mem-wal/spec-ids-unique", base="nested_pk")
def add_a_second_spec_with_the_same_id(root):
    def edit(details):
        spec = details.region_specs.add(spec_id=details.region_specs[0].spec_id)
        spec.fields.add(field_id="by_id", source_ids=[0], transform="identity", result_type="int64")

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/region-field-ids-unique", base="nested_pk")
def repeat_a_region_field_id(root):
    def edit(details):
        spec = details.region_specs[0]
        spec.fields.add(field_id=spec.fields[0].field_id, source_ids=[0], transform="identity", result_type="int64")

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/transform-or-expression", base="nested_pk")
def give_a_region_field_an_expression_too(root):
    def edit(details):
        details.region_specs[0].fields[0].expression = "id % 2"

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/source-ids-exist", base="nested_pk")
def read_a_region_value_from_a_missing_field(root):
    def edit(details):
        # Replaced, not added: the bucket transform reads one source column
        # (mem-wal/sharding-transform-arguments).
        details.region_specs[0].fields[0].source_ids[0] = 99

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/maintained-indexes-exist", base="nested_pk")
def maintain_an_index_that_does_not_exist(root):
    edit_mem_wal_details(root, lambda d: d.maintained_indexes.append("no_such_index"))


@mutation("mem-wal/catchup-names-maintained", base="nested_pk")
def track_catch_up_for_an_unknown_index(root):
    def edit(details):
        details.index_catchup.add(index_name="ghost_idx").caught_up_generations.append(_region(1))

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/region-ids", base="nested_pk", breaks="mem-wal.region-id-uuid-v4")
def merge_a_region_named_by_a_version_1_uuid(root):
    edit_mem_wal_details(root, lambda d: d.merged_generations.append(_region(3, uuid.uuid1())))


@mutation("mem-wal/region-ids", base="nested_pk", breaks="manifest.uuid-sixteen-bytes")
def merge_a_region_with_a_short_id(root):
    def edit(details):
        entry = details.merged_generations.add(generation=2)
        entry.region_id.uuid = b"\x01\x02\x03"

    edit_mem_wal_details(root, edit)


# -- region snapshots ------------------------------------------------------------------
#
# pylance keeps region manifests under _mem_wal/ and writes no inline
# snapshots; these mutations store snapshots as table.proto describes them: a
# Lance file (written here by the reference 2.0 writer) with one row per
# region and one column per RegionManifest field.

SNAPSHOT_SCHEMA = pa.schema(
    [
        pa.field("region_id", pa.binary(16)),
        pa.field("version", pa.uint64()),
        pa.field("region_spec_id", pa.uint32()),
        pa.field("writer_epoch", pa.uint64()),
        pa.field("replay_after_wal_entry_position", pa.uint64()),
        pa.field("wal_entry_position_last_seen", pa.uint64()),
        pa.field("current_generation", pa.uint64()),
        pa.field("merged_generation", pa.uint64()),
        pa.field(
            "flushed_generations",
            pa.list_(pa.struct([pa.field("generation", pa.uint64()), pa.field("path", pa.string())])),
        ),
    ]
)
REGION = uuid.UUID("6f1c2b1e-8d4a-4c3e-9b7a-2f5d8e9c0a11")


def region_row(
    *,
    spec_id: int = 1,
    current: int = 3,
    flushed=((1, "a1b2c3d4_gen_1"), (2, "e5f6a7b8_gen_2")),
    region: uuid.UUID = REGION,
) -> dict:
    return {
        "region_id": region.bytes,
        "version": 4,
        "region_spec_id": spec_id,
        "writer_epoch": 2,
        "replay_after_wal_entry_position": 7,
        "wal_entry_position_last_seen": 9,
        "current_generation": current,
        "merged_generation": 1,
        "flushed_generations": [{"generation": g, "path": p} for g, p in flushed],
    }


def snapshot_bytes(*rows: dict) -> bytes:
    table = pa.Table.from_pylist(list(rows), schema=SNAPSHOT_SCHEMA)
    return write_v2_0(table, schema_from_arrow(SNAPSHOT_SCHEMA).fields).data


def store_snapshots(root, *rows: dict, version: int | None = None) -> None:
    def edit(details):
        details.inline_snapshots = snapshot_bytes(*rows)
        details.num_regions = len(rows)

    edit_mem_wal_details(root, edit, version)


@mutation("mem-wal/inline-snapshot", base="nested_pk", breaks="mem-wal.snapshot-layout")
def inline_a_snapshot_with_a_broken_footer(root):
    # Ends like a 2.0 file (footer version 0.3 and the magic), but the 40-byte
    # footer points outside the bytes.
    edit_mem_wal_details(root, lambda d: setattr(d, "inline_snapshots", b"\xff" * 60 + b"\x00\x00\x03\x00LANC"))


@mutation("mem-wal/flushed-below-current-generation", base="nested_pk")
def flush_the_generation_still_being_written(root):
    store_snapshots(root, region_row(current=2))


@mutation("mem-wal/flushed-generation-path-relative", base="nested_pk")
def give_a_flushed_generation_an_absolute_path(root):
    store_snapshots(root, region_row(flushed=((1, "/var/lance/a1b2c3d4_gen_1"),)))


@mutation("mem-wal/flushed-generation-path-relative", base="nested_pk")
def climb_out_of_the_region_directory(root):
    store_snapshots(root, region_row(flushed=((1, "../other-region/gen_1"),)))


@mutation("mem-wal/region-spec-id-immutable", base="nested_pk", breaks="mem-wal.region-spec-id-immutable")
def move_a_region_to_another_spec(root):
    # pylance adds a version (a CreateIndex that keeps the MemWAL index); the
    # region has spec 1 in the snapshot before it and spec 2 after.
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).create_scalar_index("id", "BITMAP", name="id_bitmap")
    versions = sorted(list_versions(LocalStorage(root)).manifests())
    store_snapshots(root, region_row(spec_id=1), version=versions[-2])
    store_snapshots(root, region_row(spec_id=2), version=versions[-1])


@mutation("mem-wal/primary-key-index-listed", base="nested_pk")
def list_the_primary_key_index_as_maintained(root):
    # id_idx is the btree index on id, the primary key: maintained implicitly.
    edit_mem_wal_details(root, lambda d: d.maintained_indexes.append("id_idx"))


@mutation("mem-wal/merged-generations-atomic", base="nested_pk", breaks="mem-wal.merged-generations-atomic")
def merge_a_generation_in_an_index_commit(root):
    """pylance adds a version (a CreateIndex that keeps the MemWAL index);
    that version, no merge-insert, records a region's generation 4 as
    merged."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).create_scalar_index("id", "BITMAP", name="id_bitmap")

    def edit(details):
        entry = details.merged_generations.add(generation=4)
        entry.region_id.uuid = uuid.uuid4().bytes

    edit_mem_wal_details(root, edit)


# -- the shard model (MemWAL page read 2026-11-29) ----------------------------------------


@mutation("mem-wal/inline-snapshot", base="nested_pk", breaks="mem-wal.shard-snapshot-layout")
def inline_shard_snapshots_that_are_no_lance_file(root):
    edit_mem_wal_details(root, lambda d: setattr(d, "inline_snapshots", b'{"shard_id": "not a Lance file"}'))


@mutation("mem-wal/region-ids", base="nested_pk", breaks="mem-wal.shard-id-uuid-v4")
def record_catch_up_of_a_shard_named_by_a_version_1_uuid(root):
    def edit(details):
        entry = details.index_catchup.add(index_name="id_idx").caught_up_generations.add(generation=1)
        entry.region_id.uuid = uuid.uuid1().bytes

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/merged-generations-atomic", base="nested_pk", breaks="mem-wal.compacted-sstables-atomic")
def compact_an_sstable_in_a_config_commit(root):
    """pylance adds a version (an UpdateConfig, no data commit) that records
    a shard's SSTable generation 2 as compacted."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).update_config({"owner": "conformance"})

    def edit(details):
        entry = details.merged_generations.add(generation=2)
        entry.region_id.uuid = uuid.uuid4().bytes

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/sharding-spec-ids-positive", base="nested_pk")
def give_the_sharding_spec_id_0(root):
    def edit(details):
        details.region_specs[0].spec_id = 0

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/sharding-transforms", base="nested_pk")
def shard_by_year(root):
    def edit(details):
        details.region_specs[0].fields[0].transform = "year"

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/sharding-transform-arguments", base="nested_pk")
def ask_for_more_buckets_than_allowed(root):
    def edit(details):
        details.region_specs[0].fields[0].parameters["num_buckets"] = "2048"

    edit_mem_wal_details(root, edit)


#: Shard snapshots as the newest MemWAL page lays them out (section "MemWAL
#: Index Details"): shard_id as a UUID string, shard_spec_id, one column per
#: sharding field (here the pylance index's "bucket").
SHARD_SNAPSHOT_SCHEMA = pa.schema(
    [
        pa.field("shard_id", pa.string(), nullable=False),
        pa.field("shard_spec_id", pa.uint32(), nullable=False),
        pa.field("shard_field_bucket", pa.int32(), nullable=False),
    ]
)


def store_shard_snapshots(root, *rows: dict, version: int | None = None) -> None:
    table = pa.Table.from_pylist(list(rows), schema=SHARD_SNAPSHOT_SCHEMA)
    data = write_v2_0(table, schema_from_arrow(SHARD_SNAPSHOT_SCHEMA).fields).data

    def edit(details):
        details.inline_snapshots = data
        details.num_regions = len(rows)

    edit_mem_wal_details(root, edit, version)


@mutation("mem-wal/region-spec-id-immutable", base="nested_pk", breaks="mem-wal.shard-spec-id-immutable")
def move_a_shard_to_another_spec(root):
    """Two versions' shard snapshots: the shard has spec 1 before, 2 after."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).create_scalar_index("id", "BITMAP", name="id_bitmap")
    versions = sorted(list_versions(LocalStorage(root)).manifests())
    for version, spec_id in ((versions[-2], 1), (versions[-1], 2)):
        row = {"shard_id": str(REGION), "shard_spec_id": spec_id, "shard_field_bucket": 1}
        store_shard_snapshots(root, row, version=version)


# -- shard directories (mem_wal_shards base: pylance 14's shard writer) -----------------


def _shard_dir(root) -> Path:
    return Path(root) / "_mem_wal" / str(MEM_WAL_SHARD)


@mutation("mem-wal/shard-layout", base="mem_wal_shards", breaks="mem-wal.wal-entry-names-bit-reversed")
def name_a_wal_entry_by_its_plain_position(root):
    wal = _shard_dir(root) / "wal"
    first = wal / (bit_reversed_name(1) + ".arrow")
    first.rename(wal / "1.arrow")


@mutation("mem-wal/shard-layout", base="mem_wal_shards", breaks="mem-wal.shard-manifest-version-in-name")
def store_a_manifest_under_the_next_version(root):
    """The newest manifest (version 4) is moved to version 5's name."""
    manifests = _shard_dir(root) / "manifest"
    (manifests / (bit_reversed_name(4) + ".binpb")).rename(manifests / (bit_reversed_name(5) + ".binpb"))


@mutation("mem-wal/shard-layout", base="mem_wal_shards", breaks="mem-wal.sstable-generations")
def number_an_sstable_generation_from_0(root):
    shard = _shard_dir(root)
    generation = next(p for p in sorted(shard.iterdir()) if p.name.endswith("_gen_1"))
    generation.rename(shard / generation.name.replace("_gen_1", "_gen_0"))


@mutation("mem-wal/shard-layout", base="mem_wal_shards", breaks="mem-wal.shard-id-uuid-v4")
def name_a_shard_directory_by_a_version_1_uuid(root):
    _shard_dir(root).rename(Path(root) / "_mem_wal" / str(uuid.uuid1()))
