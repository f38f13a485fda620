"""Mutations for the MemWAL index rules, on the ``nested_pk`` base, whose
latest version holds the MemWAL index pylance 14 made (bucket sharding on
``id``, "maintain every index" set in pylance's extra field 12)."""

from __future__ import annotations

import uuid

from reference_impl.wire import table_pb2

from .mutate import edit_manifest, mutation

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


@mutation("mem-wal/details-decode", base="nested_pk")
def garble_the_mem_wal_details(root):
    def apply(manifest_file):
        index = next(i for i in manifest_file.indices if i.name == MEM_WAL_INDEX)
        index.details = b"\x0a\xff\xff\xff\x0f"

    edit_manifest(root, apply)


@mutation("mem-wal/inline-snapshot", base="nested_pk")
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
        details.region_specs[0].fields[0].source_ids.append(99)

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/maintained-indexes-exist", base="nested_pk")
def maintain_an_index_that_does_not_exist(root):
    edit_mem_wal_details(root, lambda d: d.maintained_indexes.append("no_such_index"))


@mutation("mem-wal/catchup-names-maintained", base="nested_pk")
def track_catch_up_for_an_unknown_index(root):
    def edit(details):
        details.index_catchup.add(index_name="ghost_idx").caught_up_generations.append(_region(1))

    edit_mem_wal_details(root, edit)


@mutation("mem-wal/region-ids", base="nested_pk")
def merge_a_region_named_by_a_version_1_uuid(root):
    edit_mem_wal_details(root, lambda d: d.merged_generations.append(_region(3, uuid.uuid1())))


@mutation("mem-wal/region-ids", base="nested_pk")
def merge_a_region_with_a_short_id(root):
    def edit(details):
        entry = details.merged_generations.add(generation=2)
        entry.region_id.uuid = b"\x01\x02\x03"

    edit_mem_wal_details(root, edit)
