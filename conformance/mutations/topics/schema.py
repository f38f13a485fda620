"""Mutations for the schema and primary-key rules, on the ``nested_pk`` base.

Every version records its schema, and the transaction rules compare it with
the previous version's (an Append, a CreateIndex ... keeps it) or with the
schema the transaction records (Overwrite, Merge, Project). So a schema
mutation is applied alike to every version from some version on, and to the
schema each of those transactions records, in its file and in the manifest's
embedded copy: the history stays consistent and only the rule under test
sees a defect.

``nested_pk``: ``id`` (0, key), ``meta`` (1, struct) with ``tenant`` (2) and
``note`` (3), ``tags`` (4, list) with ``item`` (5), ``embedding`` (6,
``fixed_size_list:float:2``, named ``vec`` before version 3, a Project that
renames it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pyarrow as pa

from reference_impl.dataset import Dataset
from reference_impl.file_format import LanceFileReader, write_v2_0
from reference_impl.file_format.writer_v2_1 import write_v2_1
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.schema import Field, FieldType, Schema
from reference_impl.storage import LocalStorage
from reference_impl.transactions import TRANSACTIONS_DIR, Merge, Overwrite, Project, read_transaction_file

from ..edit import edit_manifest
from ..registry import mutation

BASE = "nested_pk"
_PK = "lance-schema:unenforced-primary-key"
_RECORDS_SCHEMA = (Overwrite, Merge, Project)


def edit_schema_from(root, first_version: int, edit: Callable[[Schema], None]) -> None:
    """Apply ``edit`` to the schema of every version from ``first_version``
    on, and to the schema their transactions record."""
    storage = LocalStorage(root)
    for version, relpath in sorted(list_versions(storage).manifests().items()):
        if version < first_version:
            continue

        def apply(manifest_file):
            edit(manifest_file.manifest.schema)
            embedded = manifest_file.transaction
            if embedded is not None and isinstance(embedded.operation, _RECORDS_SCHEMA):
                edit(embedded.operation.schema)

        edit_manifest(root, apply, version)
        name = read_manifest_file(storage, relpath).manifest.transaction_file
        if name:
            transaction = read_transaction_file(storage, name)
            if isinstance(transaction.operation, _RECORDS_SCHEMA):
                edit(transaction.operation.schema)
                (root / TRANSACTIONS_DIR / name).write_bytes(transaction.to_proto().SerializeToString())


def _named(schema: Schema, name: str) -> Field:
    return next(f for f in schema.fields if f.name == name)


def add_fields(root, *new: Field, after: str | None = None) -> None:
    """Add fields to every version, at the end or right after field ``after``."""

    def edit(schema: Schema):
        at = len(schema.fields) if after is None else schema.fields.index(_named(schema, after)) + 1
        schema.fields[at:at] = [Field(**vars(f)) for f in new]

    edit_schema_from(root, 1, edit)


def _set(name: str, **changes) -> Callable[[Schema], None]:
    def edit(schema: Schema):
        for key, value in changes.items():
            setattr(_named(schema, name), key, value)

    return edit


# -- field ids and parents ----------------------------------------------------


@mutation("schema/field-ids-unique", base=BASE)
def add_a_field_reusing_an_id(root):
    add_fields(root, Field(id=3, name="extra", logical_type="string"))


@mutation("schema/field-ids-non-negative", base=BASE)
def add_a_field_with_a_negative_id(root):
    add_fields(root, Field(id=-5, name="negative", logical_type="int32"))


@mutation("schema/parent-exists", base=BASE, breaks="schema.parent-id-exists")
def add_a_field_under_a_missing_parent(root):
    add_fields(root, Field(id=7, name="orphan", logical_type="int32", parent_id=99))


@mutation("schema/parent-exists", base=BASE, breaks="schema.top-level-parent-minus-one")
def give_a_field_parent_minus_two(root):
    add_fields(root, Field(id=7, name="below_top", logical_type="int32", parent_id=-2))


@mutation("schema/parent-cycle", base=BASE)
def make_a_field_its_own_parent(root):
    add_fields(root, Field(id=7, name="loop", logical_type="struct", parent_id=7))


@mutation("schema/parent-cycle", base=BASE)
def make_two_fields_each_others_parent(root):
    add_fields(
        root,
        Field(id=7, name="ping", logical_type="struct", parent_id=8),
        Field(id=8, name="pong", logical_type="struct", parent_id=7),
    )


@mutation("schema/parent-is-nested", base=BASE)
def give_a_fixed_size_list_of_floats_a_child(root):
    add_fields(root, Field(id=7, name="item", logical_type="float", parent_id=6))


@mutation("schema/depth-first", base=BASE)
def list_a_struct_member_after_other_columns(root):
    add_fields(root, Field(id=7, name="late", logical_type="int32", parent_id=1))


@mutation("schema/initial-ids", base=BASE)
def create_the_table_with_ids_out_of_order(root):
    def edit(schema: Schema):
        key = _named(schema, "id")
        schema.fields.remove(key)
        schema.fields.append(key)

    edit_schema_from(root, 1, edit)


@mutation("schema/ids-stable", base=BASE, breaks="schema.ids-stable")
def renumber_a_struct_in_the_rename(root):
    def edit(schema: Schema):
        for f in schema.fields:
            if f.id == 1:
                f.id = 9
            if f.parent_id == 1:
                f.parent_id = 9

    edit_schema_from(root, 3, edit)


# -- logical types ------------------------------------------------------------


@mutation("schema/logical-type-known", base=BASE, breaks="schema.logical-type-known")
def add_a_field_of_an_unknown_type(root):
    add_fields(root, Field(id=7, name="odd", logical_type="complex128"))


@mutation("schema/logical-type-known", base=BASE, breaks="schema.bfloat16-in-fixed-size-list")
def use_bfloat16_outside_a_fixed_size_list(root):
    add_fields(root, Field(id=7, name="half", logical_type="lance.bfloat16"))


@mutation("schema/logical-type-format", base=BASE, breaks="schema.decimal-format")
def add_a_decimal_of_precision_zero(root):
    add_fields(root, Field(id=7, name="amount", logical_type="decimal:128:0:2"))


@mutation("schema/logical-type-format", base=BASE, breaks="schema.timestamp-format")
def add_a_timestamp_in_fortnights(root):
    add_fields(root, Field(id=7, name="when", logical_type="timestamp:fortnight:UTC"))


@mutation("schema/logical-type-format", base=BASE, breaks="schema.fixed-size-list-format")
def add_a_fixed_size_list_of_size_zero(root):
    add_fields(root, Field(id=7, name="empty_vector", logical_type="fixed_size_list:float:0"))


@mutation("schema/children-fit-type", base=BASE, breaks="schema.list-element-child")
def give_a_list_two_element_fields(root):
    add_fields(
        root,
        Field(id=7, name="pairs", logical_type="list"),
        Field(id=8, name="a", logical_type="int32", parent_id=7),
        Field(id=9, name="b", logical_type="int32", parent_id=7),
    )


@mutation("schema/children-fit-type", base=BASE, breaks="schema.list-struct-suffix")
def call_a_list_of_structs_a_plain_list(root):
    add_fields(
        root,
        Field(id=7, name="points", logical_type="list"),
        Field(id=8, name="item", logical_type="struct", parent_id=7),
        Field(id=9, name="x", logical_type="double", parent_id=8),
    )


@mutation("schema/children-fit-type", base=BASE, breaks="schema.map-children")
def give_a_map_key_and_value_without_entries(root):
    add_fields(
        root,
        Field(id=7, name="attributes", logical_type="map"),
        Field(id=8, name="key", logical_type="string", parent_id=7, nullable=False),
        Field(id=9, name="value", logical_type="int32", parent_id=7),
    )


# -- the primary key ----------------------------------------------------------


@mutation("primary-key/non-nullable", base=BASE)
def make_a_nullable_field_a_key(root):
    edit_schema_from(root, 1, _set("note", unenforced_primary_key=True))


@mutation("primary-key/non-nullable", base=BASE)
def make_the_struct_above_a_key_nullable(root):
    def edit(schema: Schema):
        _set("meta", nullable=True)(schema)
        _set("tenant", unenforced_primary_key=True)(schema)

    edit_schema_from(root, 1, edit)


@mutation("primary-key/leaf", base=BASE)
def make_a_struct_a_key(root):
    edit_schema_from(root, 1, _set("meta", unenforced_primary_key=True))


@mutation("primary-key/not-under-list-or-map", base=BASE)
def make_a_list_element_a_key(root):
    edit_schema_from(root, 1, _set("item", unenforced_primary_key=True))


@mutation("primary-key/fixed", base=BASE, also=("primary-key/metadata-agrees",))
def drop_the_primary_key_in_the_rename(root):
    edit_schema_from(root, 3, _set("id", unenforced_primary_key=False, unenforced_primary_key_position=0))


@mutation("primary-key/fixed", base=BASE, also=("primary-key/metadata-agrees",))
def move_the_primary_key_in_the_rename(root):
    def edit(schema: Schema):
        _set("id", unenforced_primary_key=False, unenforced_primary_key_position=0)(schema)
        _set("tenant", unenforced_primary_key=True, unenforced_primary_key_position=1)(schema)

    edit_schema_from(root, 3, edit)


# -- fields that are not nullable ---------------------------------------------


@mutation("schema/non-nullable-stored", base=BASE)
def add_a_required_field_no_fragment_stores(root):
    add_fields(root, Field(id=7, name="required_extra", logical_type="int32", nullable=False))


def _rewrite_with_nulls_in_score(root, version: str) -> None:
    """Rewrite fragment 0's data file with the reference writer of
    ``version`` ("2.0" or "2.1"), nulls in the non-nullable ``score``; the
    manifests get the file's new size."""
    storage = LocalStorage(root)
    versions = sorted(list_versions(storage).manifests())
    latest = read_manifest_file(storage, list_versions(storage).manifests()[versions[-1]]).manifest
    (fragment,) = [f for f in latest.fragments if f.id == 0]
    relpath = f"data/{fragment.files[0].path}"
    reader = LanceFileReader(storage, relpath)
    table = reader.read()
    score = table.column("score").to_pylist()
    score[::7] = [None] * len(score[::7])
    table = table.set_column(table.schema.get_field_index("score"), "score", pa.array(score, pa.float64()))
    fields = [dataclasses.replace(f, nullable=True) for f in reader.file_fields]
    data = (write_v2_0 if version == "2.0" else write_v2_1)(table, fields).data
    (root / relpath).write_bytes(data)

    def resize(manifest_file):
        for f in manifest_file.manifest.fragments:
            for data_file in f.files:
                if f"data/{data_file.path}" == relpath and data_file.file_size_bytes:
                    data_file.file_size_bytes = len(data)

    for version_number in versions:
        edit_manifest(root, resize, version=version_number)


@mutation("schema/non-nullable-values", base="v2_0")
def write_nulls_into_a_required_column(root):
    _rewrite_with_nulls_in_score(root, "2.0")


@mutation("schema/non-nullable-values", base="v2_1")
def write_nulls_into_a_required_column_of_a_2_1_file(root):
    """The same nulls in a 2.1 file: the rule reads them from the page's
    definition levels."""
    _rewrite_with_nulls_in_score(root, "2.1")


@mutation("schema/logical-type-format", base=BASE, breaks="schema.date-time-units")
def add_a_time32_in_microseconds(root):
    add_fields(root, Field(id=7, name="clock", logical_type="time32:us"))


@mutation("schema/logical-type-format", base=BASE, breaks="schema.fixed-size-binary-format")
def add_a_fixed_size_binary_without_a_width(root):
    add_fields(root, Field(id=7, name="digest", logical_type="fixed_size_binary:x"))


@mutation("schema/logical-type-format", base=BASE, breaks="schema.dictionary-format")
def add_a_dictionary_keyed_by_floats(root):
    add_fields(root, Field(id=7, name="label", logical_type="dict:string:float:false"))


# -- warnings and infos on types and metadata -----------------------------------


@mutation("schema/decimal-scale", base=BASE)
def add_a_decimal_scaled_beyond_its_precision(root):
    add_fields(root, Field(id=7, name="ratio", logical_type="decimal:128:5:7"))


@mutation("schema/timestamp-zone", base=BASE)
def add_a_timestamp_at_a_fixed_offset(root):
    add_fields(root, Field(id=7, name="local_time", logical_type="timestamp:us:+01:00"))


@mutation("schema/field-kind", base=BASE)
def call_a_struct_repeated(root):
    # pylance writes PARENT for every field, which the rule already reports
    # as one finding per version; a struct marked REPEATED changes it.
    edit_schema_from(root, 1, _set("meta", type=FieldType.REPEATED))


@mutation("schema/encoding-metadata", base=BASE)
def ask_for_an_undocumented_compression(root):
    def edit(schema: Schema):
        _named(schema, "note").metadata["lance-encoding:compression"] = b"brotli"

    edit_schema_from(root, 1, edit)


@mutation("schema/extension-metadata", base=BASE)
def give_a_field_an_empty_extension_name(root):
    def edit(schema: Schema):
        _named(schema, "note").metadata["ARROW:extension:name"] = b""

    edit_schema_from(root, 1, edit)


@mutation(
    "schema/new-field-ids", base="plain", breaks=("schema.new-ids-incremental", "schema.dropped-id-may-be-reused")
)
def reuse_the_id_of_a_dropped_column(root):
    """pylance hands out again the id of a column added without data and
    dropped (docs/spec-discrepancies.md); the "plain" base uses ids 0..4."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).add_columns(pa.schema([pa.field("b", pa.int32())]))
    lance.dataset(root).drop_columns(["b"])
    lance.dataset(root).add_columns(pa.schema([pa.field("c", pa.int32())]))

    assert [f.id for f in Dataset.open(root).manifest.schema.fields][-1] == 5


# -- primary key warnings and infos ----------------------------------------------


@mutation("primary-key/position-without-flag", base=BASE)
def keep_the_key_position_without_the_flag(root):
    # pylance counts ``id`` as a key column through its position alone.
    edit_schema_from(root, 1, _set("id", unenforced_primary_key=False))


@mutation("primary-key/metadata-agrees", base=BASE, breaks="primary-key.arrow-metadata-flag")
def mark_a_plain_column_a_key_in_its_metadata(root):
    def edit(schema: Schema):
        _named(schema, "tenant").metadata[_PK] = b"TRUE"

    edit_schema_from(root, 1, edit)


@mutation("primary-key/metadata-agrees", base=BASE, breaks="primary-key.arrow-metadata-position")
def give_the_key_another_position_in_its_metadata(root):
    def edit(schema: Schema):
        _named(schema, "id").metadata[_PK + ":position"] = b"2"

    edit_schema_from(root, 1, edit)


@mutation("primary-key/positions", base=BASE)
def add_a_second_key_column_at_position_3(root):
    edit_schema_from(root, 1, _set("tenant", unenforced_primary_key=True, unenforced_primary_key_position=3))


@mutation("primary-key/under-fixed-size-list", base="plain")
def overwrite_with_a_key_inside_a_fixed_size_list(root):
    """pylance accepts a key inside a fixed-size list of structs; the
    "plain" base has no key, so the Overwrite sets the first one."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    struct = pa.struct([pa.field("k", pa.int32(), False, {_PK: "true"})])
    schema = pa.schema([pa.field("l", pa.list_(pa.field("item", struct, False), 2), False)])
    rows = [{"l": [{"k": 1}, {"k": 2}]}]
    lance.write_dataset(pa.Table.from_pylist(rows, schema=schema), root, mode="overwrite")
