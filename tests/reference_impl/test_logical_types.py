"""Logical types, field ids and the primary key (the schema format page;
the table overview page, "Unenforced Primary Key"), checked against what
pylance 14 writes and reads.

Every pylance check writes a real dataset, parses the manifest it committed
and compares it with :mod:`reference_impl.logical_types`; nothing is mocked.
"""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lance.blob import blob_field

from conformance import strategies
from reference_impl.errors import CorruptFileError, LanceFormatError, UnsupportedFeatureError
from reference_impl.logical_types import (
    BLOB_METADATA_KEY,
    MAX_NESTING_DEPTH,
    PRIMARY_KEY_KEY,
    PRIMARY_KEY_POSITION_KEY,
    ParsedType,
    add_fields,
    arrow_type_of,
    field_role,
    is_valid_logical_type,
    logical_type_of,
    next_field_id,
    parse_logical_type,
    primary_key_fields,
    primary_key_problems,
    schema_from_arrow,
    schema_to_arrow,
)
from reference_impl.schema import Field, FieldType, Schema
from reference_impl.wire import table_pb2

# --------------------------------------------------------------------------
# Reading (and, for crafted cases, rewriting) the manifests pylance commits
# --------------------------------------------------------------------------

FOOTER = struct.Struct("<qHH4s")


def _manifests(path: Path) -> list[tuple[Path, table_pb2.Manifest]]:
    out = []
    for file in sorted(Path(path, "_versions").glob("*.manifest")):
        data = file.read_bytes()
        position, _major, _minor, magic = FOOTER.unpack(data[-FOOTER.size :])
        assert magic == b"LANC"
        (length,) = struct.unpack_from("<I", data, position)
        manifest = table_pb2.Manifest()
        manifest.ParseFromString(data[position + 4 : position + 4 + length])
        out.append((file, manifest))
    return out


def latest_manifest(path: Path) -> table_pb2.Manifest:
    return max(_manifests(path), key=lambda pair: pair[1].version)[1]


def stored_schema(path: Path) -> Schema:
    manifest = latest_manifest(path)
    return Schema.from_protos(manifest.fields, manifest.schema_metadata)


def rewrite_latest_manifest(path: Path, mutate) -> None:
    """Apply ``mutate`` to the fields of the latest manifest, in place."""
    file, manifest = max(_manifests(path), key=lambda pair: pair[1].version)
    data = file.read_bytes()
    position = FOOTER.unpack(data[-FOOTER.size :])[0]
    (length,) = struct.unpack_from("<I", data, position)
    assert position + 4 + length == len(data) - FOOTER.size, "pylance puts the manifest right before the footer"
    mutate(manifest)
    body = manifest.SerializeToString()
    file.write_bytes(data[:position] + struct.pack("<I", len(body)) + body + data[-FOOTER.size :])


def write(path: Path, schema: pa.Schema, **kwargs) -> lance.LanceDataset:
    return lance.write_dataset(pa.Table.from_batches([], schema=schema), path, **kwargs)


def canonical(schema: pa.Schema) -> pa.Schema:
    """The schema as any Arrow consumer sees it after an IPC round trip
    (registered extension types materialised, map children named
    key/value)."""
    return pa.ipc.read_schema(pa.py_buffer(schema.serialize()))


def as_pylance_records(fields: list[Field]) -> list[Field]:
    """Our fields with the one attribute pylance records differently: it
    writes ``type = PARENT`` for every field, where we write the schema format page's role."""
    return [dataclasses.replace(f, type=FieldType.PARENT) for f in fields]


def field_summary(f: Field) -> tuple:
    """What must agree with pylance; ``type`` is left out because pylance
    writes PARENT for every field and we write the schema format page's role (see
    test_field_type_is_the_seed_role_where_pylance_writes_parent)."""
    return (f.id, f.parent_id, f.name, f.logical_type, f.nullable, f.metadata)


# --------------------------------------------------------------------------
# (1) and (2): every type family, field for field against pylance
# --------------------------------------------------------------------------

PK = PRIMARY_KEY_KEY
POS = PRIMARY_KEY_POSITION_KEY
BF16_ITEM = pa.field(
    "item", pa.binary(2), metadata={"ARROW:extension:name": "lance.bfloat16", "ARROW:extension:metadata": ""}
)


def _f(name, type_, nullable=True, metadata=None):
    return pa.field(name, type_, nullable=nullable, metadata=metadata)


# name -> (arrow schema, write options, blob_v2)
FAMILIES: dict[str, tuple[pa.Schema, dict, bool]] = {
    "integers_floats_bool_null": (
        pa.schema(
            [
                _f(f"c{i}", t)
                for i, t in enumerate(
                    [
                        pa.null(),
                        pa.bool_(),
                        pa.int8(),
                        pa.uint8(),
                        pa.int16(),
                        pa.uint16(),
                        pa.int32(),
                        pa.uint32(),
                        pa.int64(),
                        pa.uint64(),
                        pa.float16(),
                        pa.float32(),
                        pa.float64(),
                    ]
                )
            ]
            + [_f("required", pa.int64(), nullable=False)]
        ),
        {},
        False,
    ),
    "strings_and_binaries": (
        pa.schema(
            [
                _f("s", pa.string()),
                _f("b", pa.binary()),
                _f("ls", pa.large_string()),
                _f("lb", pa.large_binary()),
                _f("fsb16", pa.binary(16)),
                _f("fsb32", pa.binary(32), nullable=False),
                _f("fsb0", pa.binary(0)),
                _f("sv", pa.string_view()),
                _f("bv", pa.binary_view()),
            ]
        ),
        {},
        False,
    ),
    "decimals": (
        pa.schema(
            [
                _f("d1", pa.decimal128(10, 2)),
                _f("d2", pa.decimal128(38, 38)),
                _f("d3", pa.decimal256(20, 5)),
                _f("d4", pa.decimal256(76, 0)),
                _f("negative_scale", pa.decimal128(10, -2)),
                _f("scale_above_precision", pa.decimal128(5, 7)),
            ]
        ),
        {},
        False,
    ),
    "dates_times_durations_timestamps": (
        pa.schema(
            [
                _f("d32", pa.date32()),
                _f("d64", pa.date64()),
                _f("t32s", pa.time32("s")),
                _f("t32ms", pa.time32("ms")),
                _f("t64us", pa.time64("us")),
                _f("t64ns", pa.time64("ns")),
                *[_f(f"dur_{u}", pa.duration(u)) for u in ("s", "ms", "us", "ns")],
                _f("ts_naive", pa.timestamp("ns")),
                _f("ts_utc", pa.timestamp("us", "UTC")),
                _f("ts_ny", pa.timestamp("ms", "America/New_York")),
                _f("ts_offset", pa.timestamp("s", "+01:00")),
            ]
        ),
        {},
        False,
    ),
    "structs": (
        pa.schema(
            [
                _f("a", pa.int32()),
                _f(
                    "address",
                    pa.struct(
                        [_f("street", pa.string()), _f("city", pa.string()), _f("zip", pa.int32(), nullable=False)]
                    ),
                ),
                _f("deep", pa.struct([_f("inner", pa.struct([_f("leaf", pa.float64(), False)]), False)]), False),
                _f("empty", pa.struct([])),
                _f("d", pa.bool_()),
            ]
        ),
        {},
        False,
    ),
    "lists": (
        pa.schema(
            [
                _f("tags", pa.list_(pa.string())),
                _f("named", pa.list_(_f("element", pa.int64(), nullable=False, metadata={"k": "v"}))),
                _f("of_structs", pa.list_(pa.struct([_f("x", pa.float32())]))),
                _f("large", pa.large_list(pa.int16())),
                _f("large_of_structs", pa.large_list(_f("row", pa.struct([_f("y", pa.string())]), False))),
                _f("list_of_lists", pa.list_(pa.large_list(pa.int8()))),
            ]
        ),
        {},
        False,
    ),
    "fixed_size_lists": (
        pa.schema(
            [
                _f("vector", pa.list_(pa.float32(), 128)),
                _f("ints", pa.list_(pa.int32(), 10)),
                # pylance drops the element's name, nullability and metadata.
                _f("named_element", pa.list_(_f("e", pa.int32(), False, {"k": "v"}), 3)),
                _f("nested", pa.list_(pa.list_(pa.float16(), 2), 3)),
                _f("of_structs", pa.list_(_f("point", pa.struct([_f("x", pa.int8(), False)]), False, {"k": "v"}), 2)),
                _f("of_dicts", pa.list_(pa.dictionary(pa.int8(), pa.string()), 2)),
                _f("of_timestamps", pa.list_(pa.timestamp("us", "+05:30"), 2)),
                _f("of_decimals", pa.list_(pa.decimal128(10, 2), 2)),
                _f("bfloat16", pa.list_(BF16_ITEM, 384)),
                _f("of_json", pa.list_(pa.json_(), 2)),
                _f("of_uuid", pa.list_(pa.uuid(), 2)),
            ]
        ),
        {},
        False,
    ),
    "dictionaries": (
        pa.schema(
            [
                _f("d16", pa.dictionary(pa.int16(), pa.string())),
                _f("du32", pa.dictionary(pa.uint32(), pa.large_string())),
                _f("ordered", pa.dictionary(pa.int8(), pa.string(), ordered=True)),
                _f("bools", pa.dictionary(pa.int64(), pa.bool_())),
                _f("halves", pa.dictionary(pa.uint8(), pa.float16())),
            ]
        ),
        {},
        False,
    ),
    "maps": (
        pa.schema(
            [
                _f("m", pa.map_(pa.string(), pa.int32())),
                _f("struct_values", pa.map_(pa.int64(), pa.struct([_f("a", pa.list_(pa.int8()))]))),
                _f("renamed", pa.map_(_f("kk", pa.string(), False), _f("vv", pa.int32(), False))),
                _f(
                    "with_metadata",
                    pa.map_(_f("key", pa.string(), False, {"a": "b"}), _f("value", pa.int8(), True, {"c": "d"})),
                ),
                _f("list_of_maps", pa.list_(pa.map_(pa.string(), pa.int8())), False),
            ]
        ),
        {},
        False,
    ),
    "json": (
        pa.schema(
            [
                _f("canonical", pa.json_()),
                _f("large", pa.json_(pa.large_string())),
                _f("lance_json", pa.large_binary(), metadata={"ARROW:extension:name": "lance.json"}),
                _f("arrow_json_by_metadata", pa.string(), metadata={"ARROW:extension:name": "arrow.json"}),
                _f("with_metadata", pa.json_(), nullable=False, metadata={"q": "r"}),
                _f("in_struct", pa.struct([_f("j", pa.json_())])),
                _f("in_list", pa.list_(pa.json_())),
                # Not JSON for pylance: lance.json over string, arrow.json over binary.
                _f("lance_json_string", pa.string(), metadata={"ARROW:extension:name": "lance.json"}),
                _f("lance_json_binary", pa.binary(), metadata={"ARROW:extension:name": "lance.json"}),
            ]
        ),
        {},
        False,
    ),
    "other_extension_types": (
        pa.schema(
            [
                _f("uuid", pa.uuid()),
                _f("tensor", pa.fixed_shape_tensor(pa.float32(), [2, 2])),
                _f("bool8", pa.bool8()),
                _f("custom", pa.int32(), metadata={"ARROW:extension:name": "my.ext", "ARROW:extension:metadata": "zz"}),
                _f("bf16_scalar", pa.binary(2), metadata={"ARROW:extension:name": "lance.bfloat16"}),
            ]
        ),
        {},
        False,
    ),
    "blob_legacy_file_version_2_1": (
        pa.schema(
            [
                _f("blob", pa.large_binary(), metadata={BLOB_METADATA_KEY: "true"}),
                _f("blob_string", pa.string(), metadata={BLOB_METADATA_KEY: "true"}),
            ]
        ),
        {"data_storage_version": "2.1"},
        False,
    ),
    "blob_v2_file_version_2_2": (
        pa.schema(
            [
                _f("blob", pa.large_binary(), metadata={BLOB_METADATA_KEY: "true"}),
                _f("binary_false", pa.binary(), False, {BLOB_METADATA_KEY: "false", "x": "y"}),
                _f("int", pa.int32(), metadata={BLOB_METADATA_KEY: "1"}),
                _f("struct", pa.struct([_f("x", pa.int8())]), metadata={BLOB_METADATA_KEY: "true"}),
                _f("json", pa.json_(), metadata={BLOB_METADATA_KEY: "true"}),
                _f("nested", pa.struct([_f("b", pa.large_binary(), metadata={BLOB_METADATA_KEY: "true"})])),
                _f("in_list", pa.list_(_f("item", pa.large_binary(), metadata={BLOB_METADATA_KEY: "true"}))),
                blob_field("blob_type"),
                blob_field("blob_type_required", nullable=False, inline_size_threshold=10),
            ]
        ),
        {"data_storage_version": "2.2"},
        True,
    ),
    "metadata": (
        pa.schema(
            [_f("x", pa.int32(), metadata={"a": "1", "unicode": "é", "empty": ""})],
            metadata={"k": "v", "encoded": "é"},
        ),
        {},
        False,
    ),
    "primary_key_metadata": (
        pa.schema(
            [
                _f("a", pa.int64(), False, {PK: "TRUE"}),
                _f("b", pa.string(), False, {PK: "Yes", POS: "2"}),
                _f("c", pa.int32(), False, {PK: "1", POS: "1"}),
                _f("not_no", pa.int32(), False, {PK: "no"}),
                _f("not_zero", pa.int32(), False, {PK: "0"}),
                _f("not_padded", pa.int32(), False, {PK: " true ", POS: " 3"}),
                _f("position_only", pa.int32(), False, {POS: "4"}),
                _f("position_zero_only", pa.int32(), False, {POS: "0"}),
                _f("position_plus", pa.int32(), False, {PK: "true", POS: "+5"}),
                _f("position_negative", pa.int32(), False, {PK: "true", POS: "-1"}),
                _f("position_garbage", pa.int32(), False, {PK: "true", POS: "abc"}),
                _f("position_too_big", pa.int32(), False, {PK: "true", POS: "4294967296"}),
                _f("position_u32_max", pa.int32(), False, {PK: "true", POS: "4294967295"}),
                _f("flag_false_with_position", pa.int32(), False, {PK: "false", POS: "6"}),
                _f("s", pa.struct([_f("inner", pa.int64(), False, {PK: "true"})]), False),
            ]
        ),
        {},
        False,
    ),
}


@pytest.fixture(scope="module")
def family_datasets(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("logical-type-families")
    paths = {}
    for name, (schema, options, _blob_v2) in FAMILIES.items():
        paths[name] = root / name
        write(paths[name], schema, **options)
    return paths


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_stored_fields_equal_schema_from_arrow(family, family_datasets):
    schema, _options, blob_v2 = FAMILIES[family]
    stored = stored_schema(family_datasets[family])
    mine = schema_from_arrow(schema, blob_v2=blob_v2)
    assert [field_summary(f) for f in mine.fields] == [field_summary(f) for f in stored.fields]
    # And the remaining attributes: primary key, legacy encoding, extension name.
    assert as_pylance_records(mine.fields) == stored.fields
    assert mine.metadata == stored.metadata
    for f in stored.fields:
        assert is_valid_logical_type(f.logical_type), f.logical_type


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_schema_to_arrow_of_stored_schema_is_dataset_schema(family, family_datasets):
    path = family_datasets[family]
    expected = lance.dataset(path).schema
    assert schema_to_arrow(stored_schema(path)).equals(expected, check_metadata=True)


def test_default_write_matches_blob_v2_conversion(tmp_path):
    """pylance 14's default file version rewrites blob columns (blob_v2=True)."""
    schema = pa.schema([_f("b", pa.large_binary(), metadata={BLOB_METADATA_KEY: "true"})])
    write(tmp_path / "ds", schema)
    assert stored_schema(tmp_path / "ds").fields == as_pylance_records(schema_from_arrow(schema, blob_v2=True).fields)


def test_seed_field_id_example(tmp_path):
    """The schema format page "Field ID Assignment": a, b, c.x, c.y, c.z, d get 0..6."""
    schema = pa.schema(
        [
            _f("a", pa.int32()),
            _f("b", pa.int32()),
            _f("c", pa.struct([_f("x", pa.int32()), _f("y", pa.int32()), _f("z", pa.int32())])),
            _f("d", pa.int32()),
        ]
    )
    expected = [(0, -1, "a"), (1, -1, "b"), (2, -1, "c"), (3, 2, "x"), (4, 2, "y"), (5, 2, "z"), (6, -1, "d")]
    assert [(f.id, f.parent_id, f.name) for f in schema_from_arrow(schema).fields] == expected
    write(tmp_path / "ds", schema)
    assert [(f.id, f.parent_id, f.name) for f in stored_schema(tmp_path / "ds").fields] == expected


def test_seed_nested_structure_example():
    """The schema format page "Nested Structure" example, field for field."""
    schema = pa.schema(
        [
            _f("id", pa.int64(), False),
            _f("user", pa.struct([_f("name", pa.string()), _f("email", pa.string())])),
            _f("tags", pa.list_(pa.string())),
        ]
    )
    got = [(f.id, f.name, f.logical_type, f.nullable, f.parent_id) for f in schema_from_arrow(schema).fields]
    assert got == [
        (0, "id", "int64", False, -1),
        (1, "user", "struct", True, -1),
        (2, "name", "string", True, 1),
        (3, "email", "string", True, 1),
        (4, "tags", "list", True, -1),
        (5, "item", "string", True, 4),
    ]


def test_field_type_is_the_seed_role_where_pylance_writes_parent(family_datasets):
    """pylance stores ``type = PARENT`` even for leaves; the reference gives
    every field the role the schema format page describes (field_role)."""
    stored = stored_schema(family_datasets["lists"])
    assert {f.type for f in stored.fields} == {FieldType.PARENT}
    ours = schema_from_arrow(lance.dataset(family_datasets["lists"]).schema)
    assert [f.type for f in ours.fields] == [field_role(f.logical_type) for f in ours.fields]
    assert FieldType.LEAF in {f.type for f in ours.fields}
    roles = {f.logical_type: field_role(f.logical_type) for f in stored.fields}
    assert roles["list"] == FieldType.REPEATED
    assert roles["list.struct"] == FieldType.REPEATED
    assert roles["struct"] == FieldType.PARENT
    assert roles["int64"] == FieldType.LEAF
    assert field_role("map") == FieldType.REPEATED
    assert field_role("fixed_size_list:struct:2") == FieldType.REPEATED
    assert field_role("fixed_size_list:float:2") == FieldType.LEAF


@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.month_day_nano_interval(),
        pa.dense_union([pa.field("a", pa.int8())]),
        pa.list_view(pa.int8()),
        pa.run_end_encoded(pa.int32(), pa.int8()),
        pa.decimal32(5, 2),
        pa.decimal64(5, 2),
        pa.map_(pa.string(), pa.int32(), keys_sorted=True),
        pa.list_(pa.list_(pa.int8()), 2),
        pa.list_(pa.map_(pa.int8(), pa.int8()), 2),
        pa.list_(pa.list_(pa.struct([pa.field("a", pa.int8())]), 2), 3),
        pa.dictionary(pa.int8(), pa.list_(pa.int8())),
        pa.dictionary(pa.int8(), pa.decimal128(5, 2)),
        pa.dictionary(pa.int8(), pa.timestamp("us")),
        pa.dictionary(pa.int8(), pa.binary(4)),
        pa.list_(pa.float64(), 0),
    ],
    ids=str,
)
def test_types_pylance_refuses_are_unsupported(arrow_type, tmp_path):
    schema = pa.schema([pa.field("c", arrow_type)])
    with pytest.raises(UnsupportedFeatureError):
        schema_from_arrow(schema)
    with pytest.raises(OSError):
        write(tmp_path / "ds", schema)


# --------------------------------------------------------------------------
# Reading logical types pylance never writes (crafted manifests)
# --------------------------------------------------------------------------

CRAFTED = [
    "blob",
    "json",
    "timestamp:us:+01:00",
    "timestamp:ns:-",
    "fixed_size_list:lance.bfloat16:4",
    "fixed_size_list:fixed_size_list:float:2:3",
    "fixed_size_list:dict:string:int8:false:2",
    "fixed_size_list:timestamp:us:UTC:2",
    "dict:large_string:uint32:false",
    "dict:int32:uint64:false",
    "decimal:128:10:-2",
    "decimal:128:10:20",
    "fixed_size_binary:0",
    "struct",
]


@pytest.fixture(scope="module")
def crafted_datasets(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("crafted-logical-types")
    paths = {}
    for i, logical_type in enumerate(CRAFTED + ["dict:string:int8:true"]):
        path = root / f"ds{i}"
        write(path, pa.schema([pa.field("c", pa.int32())]))

        def retype(manifest, logical_type=logical_type):
            manifest.fields[0].logical_type = logical_type

        rewrite_latest_manifest(path, retype)
        paths[logical_type] = path
    return paths


@pytest.mark.parametrize("logical_type", CRAFTED)
def test_pylance_reads_crafted_logical_types_like_schema_to_arrow(logical_type, crafted_datasets):
    path = crafted_datasets[logical_type]
    assert schema_to_arrow(stored_schema(path)).equals(lance.dataset(path).schema, check_metadata=True)


def test_ordered_dictionary_departure(crafted_datasets):
    """pylance ignores ``:true`` on read; this implementation honours it."""
    path = crafted_datasets["dict:string:int8:true"]
    assert lance.dataset(path).schema.field("c").type.ordered is False
    assert schema_to_arrow(stored_schema(path)).field("c").type.ordered is True


def test_legacy_extension_name_wins_over_metadata(tmp_path):
    path = tmp_path / "ds"
    write(path, pa.schema([pa.field("a", pa.int32(), metadata={"ARROW:extension:name": "aaa"})]))

    def mutate(manifest):
        manifest.fields[0].extension_name = "bbb"

    rewrite_latest_manifest(path, mutate)
    expected = lance.dataset(path).schema
    assert expected.field("a").metadata == {b"ARROW:extension:name": b"bbb"}
    assert schema_to_arrow(stored_schema(path)).equals(expected, check_metadata=True)


# --------------------------------------------------------------------------
# Logical type strings
# --------------------------------------------------------------------------

VALID = [
    "null",
    "bool",
    "int8",
    "uint64",
    "halffloat",
    "float",
    "double",
    "string",
    "large_binary",
    "json",
    "blob",
    "date32:day",
    "date64:ms",
    "time32:s",
    "time32:ms",
    "time64:us",
    "time64:ns",
    "duration:ns",
    "timestamp:us:UTC",
    "timestamp:ms:America/New_York",
    "timestamp:ns:-",
    "timestamp:s:+01:00",
    "decimal:128:10:2",
    "decimal:256:20:5",
    "decimal:128:38:0",
    "decimal:256:76:76",
    "fixed_size_list:float:128",
    "fixed_size_list:int32:10",
    "fixed_size_list:lance.bfloat16:256",
    "fixed_size_list:struct:2",
    "fixed_size_list:fixed_size_list:float:2:3",
    "fixed_size_binary:16",
    "fixed_size_binary:32",
    "dict:string:int16:false",
    "dict:string:int8:true",
    "struct",
    "list",
    "list.struct",
    "large_list",
    "large_list.struct",
    "map",
]

INVALID = [
    "",
    "INT32",
    "int32 ",
    "int128",
    "list.int32",
    "time32:us",
    "time64:s",
    "date32:ms",
    "date64:day",
    "duration:m",
    "timestamp:us",
    "timestamp:us:",
    "timestamp:xs:UTC",
    "decimal:64:5:2",
    "decimal:128:0:0",
    "decimal:128:39:2",
    "decimal:256:77:0",
    "decimal:128:10",
    "decimal:128:x:2",
    "decimal:128:010:2",
    "fixed_size_list:float",
    "fixed_size_list:float:0",
    "fixed_size_list:float:-1",
    "fixed_size_list:float:+3",
    "fixed_size_list:float:x",
    "fixed_size_list:list:2",
    "fixed_size_list:map:2",
    "fixed_size_list:fixed_size_list:struct:2:3",
    "fixed_size_list:json:2",
    "fixed_size_list::2",
    "fixed_size_binary:-3",
    "fixed_size_binary: 3",
    "fixed_size_binary:2147483648",
    "dict:string:int8",
    "dict:string:float:false",
    "dict:string:int8:banana",
    "dict:decimal:128:5:2:int8:false",
    "dict:struct:int8:false",
    "lance.bfloat16",
    "fixed_size_list:float:3:",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_logical_types_parse(text):
    parsed = parse_logical_type(text)
    assert isinstance(parsed, ParsedType)
    assert parsed.text == text
    assert is_valid_logical_type(text)


@pytest.mark.parametrize("text", INVALID)
def test_invalid_logical_types_are_rejected(text):
    with pytest.raises(ValueError):
        parse_logical_type(text)
    assert not is_valid_logical_type(text)


def test_parsed_parameters():
    p = parse_logical_type("timestamp:s:+01:00")
    assert (p.kind, p.unit, p.timezone) == ("timestamp", "s", "+01:00")
    assert parse_logical_type("timestamp:ns:-").timezone is None
    p = parse_logical_type("decimal:256:20:5")
    assert (p.kind, p.bit_width, p.precision, p.scale) == ("decimal", 256, 20, 5)
    p = parse_logical_type("fixed_size_list:fixed_size_list:float:2:3")
    assert (p.size, p.element.kind, p.element.size, p.element.element.kind) == (3, "fixed_size_list", 2, "float")
    p = parse_logical_type("dict:string:int16:false")
    assert (p.value.kind, p.key.kind, p.ordered) == ("string", "int16", False)
    assert parse_logical_type("fixed_size_list:struct:2").expected_children == 1
    assert parse_logical_type("fixed_size_list:float:2").expected_children == 0
    assert parse_logical_type("struct").expected_children is None
    assert parse_logical_type("map").child_must_be_struct


def test_strict_mode_applies_the_seed_decimal_scale_rule():
    assert is_valid_logical_type("decimal:128:10:-2")
    assert is_valid_logical_type("decimal:128:5:7")
    assert not is_valid_logical_type("decimal:128:10:-2", strict=True)
    assert not is_valid_logical_type("decimal:128:5:7", strict=True)
    assert is_valid_logical_type("decimal:128:5:5", strict=True)


TOKENS = [
    "fixed_size_list",
    "dict",
    "decimal",
    "timestamp",
    "time32",
    "duration",
    "128",
    "256",
    "10",
    "2",
    "0",
    "-1",
    "us",
    "ms",
    "-",
    "UTC",
    "int8",
    "int16",
    "string",
    "float",
    "struct",
    "list",
    "map",
    "json",
    "lance.bfloat16",
    "true",
    "false",
    "x",
    "",
]


@given(st.one_of(st.text(max_size=20), st.lists(st.sampled_from(TOKENS), min_size=1, max_size=7).map(":".join)))
def test_parser_accepts_or_raises_value_error_and_leaf_types_round_trip(text):
    """For any string, ``parse_logical_type`` either returns a ParsedType
    for exactly that text or raises ValueError; and every valid logical type
    that needs no child fields converts to Arrow and back to the same text
    (except ``blob``, read as large binary, and ordered dictionaries, which
    are always written ``false``)."""
    try:
        parsed = parse_logical_type(text)
    except ValueError:
        assert not is_valid_logical_type(text)
        with pytest.raises(LanceFormatError):
            arrow_type_of(text, [])
        return
    assert parsed.text == text
    if parsed.expected_children == 0 and parsed.kind != "blob" and not parsed.ordered:
        assert logical_type_of(arrow_type_of(text, [])) == text


def test_arrow_type_of_examples():
    assert arrow_type_of("timestamp:ns:-", []) == pa.timestamp("ns")
    assert arrow_type_of("dict:string:int16:false", []) == pa.dictionary(pa.int16(), pa.string())
    assert arrow_type_of("json", []) == pa.json_()
    assert arrow_type_of("blob", []) == pa.large_binary()
    bf16 = arrow_type_of("fixed_size_list:lance.bfloat16:4", [])
    assert bf16.list_size == 4
    assert bf16.value_field.type == pa.binary(2)
    assert bf16.value_field.metadata[b"ARROW:extension:name"] == b"lance.bfloat16"
    assert logical_type_of(bf16) == "fixed_size_list:lance.bfloat16:4"
    assert arrow_type_of("list", [pa.field("item", pa.int8())]) == pa.list_(pa.int8())
    child = pa.field("s", pa.struct([pa.field("a", pa.int8())]), nullable=False)
    assert arrow_type_of("fixed_size_list:struct:2", [child]) == pa.list_(child, 2)
    assert logical_type_of(pa.json_()) == "json"
    assert logical_type_of(pa.uuid()) == "fixed_size_binary:16"
    assert logical_type_of(pa.string_view()) == "string"


# --------------------------------------------------------------------------
# (3) Property: nested Arrow schemas round-trip, ids are depth-first
# --------------------------------------------------------------------------

# The generators live in the public conformance.strategies module.
arrow_schemas = strategies.arrow_schemas()


def _preorder(schema: Schema) -> list[int]:
    order: list[int] = []
    stack = [f for f in reversed(schema.fields) if f.parent_id == -1]
    while stack:
        f = stack.pop()
        order.append(f.id)
        stack.extend(reversed(schema.children(f)))
    return order


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(arrow_schemas, st.integers(0, 1000))
def test_arrow_round_trip_and_depth_first_ids(arrow_schema, first_id):
    """For nested Arrow schemas in canonical form (as an IPC round trip
    leaves them, with only the shapes Lance stores losslessly: fixed-size
    list elements named ``item``, unordered dictionaries, maps with unsorted
    keys named key/value): ``schema_to_arrow(schema_from_arrow(s)) == s``;
    ids are unique, consecutive from ``first_id`` in list order, and that
    order is the depth-first pre-order of the tree; every parent id is -1 or
    the id of an earlier field."""
    lance_schema = schema_from_arrow(arrow_schema, first_id=first_id)
    assert schema_to_arrow(lance_schema).equals(arrow_schema, check_metadata=True)

    ids = [f.id for f in lance_schema.fields]
    assert ids == list(range(first_id, first_id + len(ids)))
    seen: set[int] = set()
    for f in lance_schema.fields:
        assert f.parent_id == -1 or f.parent_id in seen
        seen.add(f.id)
    assert _preorder(lance_schema) == ids


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(arrow_schema=arrow_schemas)
def test_random_schemas_agree_with_pylance(arrow_schema, tmp_path_factory):
    """For the same generated schemas, what pylance stores equals
    ``schema_from_arrow`` and what it reads back equals ``schema_to_arrow``."""
    path = tmp_path_factory.mktemp("random-schema") / "ds"
    write(path, arrow_schema)
    stored = stored_schema(path)
    assert stored.fields == as_pylance_records(schema_from_arrow(arrow_schema).fields)
    assert stored.metadata == schema_from_arrow(arrow_schema).metadata
    assert schema_to_arrow(stored).equals(lance.dataset(path).schema, check_metadata=True)


# --------------------------------------------------------------------------
# New fields of an existing schema
# --------------------------------------------------------------------------


def _data_file_field_ids(path: Path) -> list[int]:
    manifest = latest_manifest(path)
    return [i for frag in manifest.fragments for data_file in frag.files for i in data_file.fields]


def test_new_field_ids_follow_pylance_add_columns(tmp_path):
    path = tmp_path / "ds"
    lance.write_dataset(pa.table({"a": [1], "s": [{"x": 1, "y": 2}], "c": [3]}), path)
    lance.dataset(path).drop_columns(["c"])
    before = stored_schema(path)
    assert next_field_id(before) == 4
    # c's data is still on disk, so pylance does not hand its id out again.
    assert next_field_id(before, _data_file_field_ids(path)) == 5

    new = [
        pa.field("d", pa.struct([pa.field("u", pa.int8()), pa.field("v", pa.list_(pa.int8()))])),
        pa.field("e", pa.string()),
    ]
    mine = add_fields(before, new, used_field_ids=_data_file_field_ids(path))
    lance.dataset(path).add_columns(pa.schema(new))
    after = stored_schema(path)
    assert [field_summary(f) for f in mine.fields] == [field_summary(f) for f in after.fields]
    assert [(f.id, f.parent_id) for f in after.fields[-5:]] == [(5, -1), (6, 5), (7, 5), (8, 7), (9, -1)]

    lance.dataset(path).drop_columns(["d", "e"])
    before = stored_schema(path)
    mine = add_fields(before, [pa.field("f", pa.int64())], used_field_ids=_data_file_field_ids(path))
    lance.dataset(path).add_columns({"f": "a + 1"})
    assert [field_summary(f) for f in mine.fields] == [field_summary(f) for f in stored_schema(path).fields]


def test_add_fields_into_a_struct_keeps_depth_first_order():
    base = schema_from_arrow(
        pa.schema(
            [
                pa.field(
                    "s", pa.struct([pa.field("x", pa.int8()), pa.field("t", pa.struct([pa.field("y", pa.int8())]))])
                ),
                pa.field("z", pa.int8()),
            ]
        )
    )
    grown = add_fields(base, [pa.field("w", pa.list_(pa.int8()))], parent_id=0)
    assert [(f.name, f.id, f.parent_id) for f in grown.fields] == [
        ("s", 0, -1),
        ("x", 1, 0),
        ("t", 2, 0),
        ("y", 3, 2),
        ("w", 5, 0),
        ("item", 6, 5),
        ("z", 4, -1),
    ]
    assert schema_to_arrow(grown).field("s").type.field("w").type == pa.list_(pa.int8())
    with pytest.raises(ValueError):
        add_fields(base, [pa.field("x", pa.int8())], parent_id=0)
    with pytest.raises(ValueError):
        add_fields(base, [pa.field("q", pa.int8())], parent_id=4)
    with pytest.raises(ValueError):
        add_fields(base, [pa.field("q", pa.int8())], parent_id=99)


# --------------------------------------------------------------------------
# (4) Garbage: never a RecursionError or KeyError
# --------------------------------------------------------------------------


def _schema(*fields: tuple) -> Schema:
    return Schema([Field(id=i, name=n, logical_type=t, parent_id=p) for i, n, t, p in fields])


GARBAGE = {
    "self_parent": (_schema((0, "a", "struct", 0)), CorruptFileError),
    "two_cycle": (_schema((0, "top", "int8", -1), (1, "a", "struct", 2), (2, "b", "struct", 1)), CorruptFileError),
    "long_cycle": (_schema(*[(i, f"f{i}", "struct", (i + 1) % 50) for i in range(50)]), CorruptFileError),
    "dangling_parent": (_schema((0, "a", "struct", -1), (1, "b", "int8", 7)), CorruptFileError),
    "parent_below_minus_one": (_schema((0, "a", "int8", -5)), CorruptFileError),
    "duplicate_ids": (_schema((0, "a", "int8", -1), (0, "b", "int8", -1)), CorruptFileError),
    "unknown_type": (_schema((0, "a", "int128", -1)), UnsupportedFeatureError),
    "empty_type": (_schema((0, "a", "", -1)), UnsupportedFeatureError),
    "malformed_decimal": (_schema((0, "a", "decimal:128:x:2", -1)), CorruptFileError),
    "malformed_timestamp": (_schema((0, "a", "timestamp:us", -1)), CorruptFileError),
    "list_without_child": (_schema((0, "a", "list", -1)), CorruptFileError),
    "list_with_two_children": (
        _schema((0, "a", "list", -1), (1, "x", "int8", 0), (2, "y", "int8", 0)),
        CorruptFileError,
    ),
    "leaf_with_child": (_schema((0, "a", "int32", -1), (1, "x", "int8", 0)), CorruptFileError),
    "json_with_child": (_schema((0, "a", "json", -1), (1, "x", "int8", 0)), CorruptFileError),
    "list_struct_with_leaf_child": (_schema((0, "a", "list.struct", -1), (1, "x", "int8", 0)), CorruptFileError),
    "map_with_leaf_child": (_schema((0, "a", "map", -1), (1, "x", "int8", 0)), CorruptFileError),
    "map_entries_with_one_child": (
        _schema((0, "a", "map", -1), (1, "e", "struct", 0), (2, "k", "int8", 1)),
        CorruptFileError,
    ),
    "fixed_size_list_struct_without_child": (_schema((0, "a", "fixed_size_list:struct:2", -1)), CorruptFileError),
    "non_nullable_null": (Schema([Field(0, "a", "null", -1, nullable=False)]), CorruptFileError),
    "too_deep": (
        _schema(*[(i, f"f{i}", "struct", i - 1) for i in range(10_000)]),
        CorruptFileError,
    ),
}


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_garbage_schemas_raise_documented_errors(case):
    schema, error = GARBAGE[case]
    with pytest.raises(error) as info:
        schema_to_arrow(schema)
    assert info.value.path == "schema"


def test_nullable_map_key_is_corrupt():
    schema = Schema(
        [
            Field(0, "m", "map", -1),
            Field(1, "entries", "struct", 0, nullable=False),
            Field(2, "key", "string", 1, nullable=True),
            Field(3, "value", "int8", 1),
        ]
    )
    with pytest.raises(CorruptFileError):
        schema_to_arrow(schema)


def test_deep_arrow_schema_is_unsupported_not_recursion_error():
    t = pa.int8()
    for _ in range(MAX_NESTING_DEPTH + 5):
        t = pa.struct([pa.field("s", t)])
    with pytest.raises(UnsupportedFeatureError):
        schema_from_arrow(pa.schema([pa.field("deep", t)]))


LOGICAL_TYPE_POOL = [
    "null",
    "int8",
    "string",
    "struct",
    "list",
    "list.struct",
    "map",
    "large_list",
    "json",
    "blob",
    "fixed_size_list:struct:2",
    "fixed_size_list:float:2",
    "dict:string:int8:false",
    "bogus",
    "",
]


@given(
    st.lists(
        st.tuples(
            st.integers(-3, 8),
            st.integers(-3, 8),
            st.sampled_from(["key", "value", "a", "b"]),
            st.one_of(st.sampled_from(LOGICAL_TYPE_POOL), st.text(max_size=8)),
            st.booleans(),
        ),
        max_size=10,
    )
)
def test_arbitrary_field_lists_convert_or_raise_format_errors(rows):
    """Any list of fields either converts to an Arrow schema or raises a
    LanceFormatError; no other exception escapes."""
    schema = Schema([Field(id=i, name=n, logical_type=t, parent_id=p, nullable=nl) for i, p, n, t, nl in rows])
    try:
        result = schema_to_arrow(schema)
    except LanceFormatError:
        return
    assert isinstance(result, pa.Schema)
    assert len(result) == len([r for r in rows if r[1] == -1])


# --------------------------------------------------------------------------
# (5) The unenforced primary key (table overview page)
# --------------------------------------------------------------------------


def test_seed_vector_embeddings_example(tmp_path):
    """The schema format page "With Vector Embeddings": id is the primary key at position
    1, embedding a bfloat16 fixed-size list."""
    schema = pa.schema(
        [
            _f("id", pa.int64(), False, {PK: "true", POS: "1"}),
            _f("text", pa.string()),
            _f("embedding", pa.list_(BF16_ITEM, 384)),
        ]
    )
    write(tmp_path / "ds", schema)
    stored = stored_schema(tmp_path / "ds")
    assert stored.fields == as_pylance_records(schema_from_arrow(schema).fields)
    got = [
        (
            f.id,
            f.name,
            f.logical_type,
            f.nullable,
            f.parent_id,
            f.unenforced_primary_key,
            f.unenforced_primary_key_position,
        )
        for f in stored.fields
    ]
    assert got == [
        (0, "id", "int64", False, -1, True, 1),
        (1, "text", "string", True, -1, False, 0),
        (2, "embedding", "fixed_size_list:lance.bfloat16:384", True, -1, False, 0),
    ]
    assert [f.name for f in primary_key_fields(stored)] == ["id"]
    assert primary_key_problems(stored) == []


def _pylance_accepts(schema: pa.Schema, path: Path) -> bool:
    """Whether pylance writes a dataset with this schema (its own file
    version default, so blob columns become blob v2 structs)."""
    try:
        write(path, schema)
    except OSError:
        return False
    return True


KEY = {PK: "true"}
PK_RULES = {
    # name: (schema, overview page rule broken?)
    "non_nullable_leaf": (pa.schema([_f("a", pa.int64(), False, KEY)]), False),
    "in_non_nullable_struct": (pa.schema([_f("s", pa.struct([_f("a", pa.int64(), False, KEY)]), False)]), False),
    "nullable_field": (pa.schema([_f("a", pa.int64(), True, KEY)]), True),
    "nullable_ancestor": (pa.schema([_f("s", pa.struct([_f("a", pa.int64(), False, KEY)]), True)]), True),
    "position_only_nullable": (pa.schema([_f("a", pa.int64(), True, {POS: "1"})]), True),
    "struct_is_not_a_leaf": (pa.schema([_f("s", pa.struct([_f("a", pa.int64(), False)]), False, KEY)]), True),
    "list_is_not_a_leaf": (pa.schema([_f("l", pa.list_(pa.int64()), False, KEY)]), True),
    "within_list": (pa.schema([_f("l", pa.list_(_f("a", pa.int64(), False, KEY)), False)]), True),
    "within_large_list": (pa.schema([_f("l", pa.large_list(_f("a", pa.int64(), False, KEY)), False)]), True),
    "within_map": (pa.schema([_f("m", pa.map_(_f("k", pa.string(), False, KEY), pa.int32()), False)]), True),
    "blob_v2_is_not_a_leaf": (pa.schema([_f("b", pa.large_binary(), False, {**KEY, BLOB_METADATA_KEY: "true"})]), True),
}


@pytest.mark.parametrize("case", sorted(PK_RULES))
def test_primary_key_rules_agree_with_pylance(case, tmp_path):
    schema, broken = PK_RULES[case]
    problems = primary_key_problems(schema_from_arrow(schema, blob_v2=True))
    assert bool(problems) == broken, problems
    assert _pylance_accepts(schema, tmp_path / "ds") == (not broken)
    if not broken:
        assert primary_key_problems(stored_schema(tmp_path / "ds")) == []


def test_primary_key_within_fixed_size_list_departure(tmp_path):
    """The table overview page forbids key columns within a list; pylance 14 accepts one
    inside a fixed-size list of structs. This implementation follows the
    overview page."""
    schema = pa.schema(
        [
            _f("f", pa.list_(_f("item", pa.struct([_f("x", pa.int64(), False, KEY)]), False), 2), False),
        ]
    )
    assert _pylance_accepts(schema, tmp_path / "ds")
    problems = primary_key_problems(schema_from_arrow(schema))
    assert len(problems) == 1 and "fixed_size_list:struct:2" in problems[0]


def test_primary_key_problems_on_broken_parent_links():
    schema = Schema(
        [
            Field(0, "a", "int64", 5, nullable=False, unenforced_primary_key=True),
            Field(1, "b", "int64", 2, nullable=False, unenforced_primary_key=True),
            Field(2, "c", "struct", 1, nullable=False),
        ]
    )
    problems = primary_key_problems(schema)
    assert any("names no field" in p for p in problems)
    assert any("cycle" in p for p in problems)


def _pk_schema(*specs) -> pa.Schema:
    fields = []
    for name, metadata in specs:
        fields.append(_f(name, pa.int64(), False, metadata))
    return pa.schema(fields)


PK_ORDERS = {
    "positions": _pk_schema(("a", {PK: "true", POS: "2"}), ("b", {PK: "true", POS: "1"})),
    "by_field_id": _pk_schema(("a", {PK: "true"}), ("x", {}), ("b", {PK: "yes"})),
    "positioned_before_unpositioned": _pk_schema(
        ("a", {PK: "true"}), ("b", {PK: "true", POS: "2"}), ("c", {PK: "1"}), ("d", {PK: "true", POS: "1"})
    ),
    "gaps_and_ties": _pk_schema(
        ("a", {PK: "true", POS: "5"}), ("b", {PK: "true", POS: "5"}), ("c", {POS: "3"}), ("d", {PK: "true"})
    ),
    "nested": pa.schema(
        [
            _f("a", pa.int64(), False, {PK: "true"}),
            _f(
                "s",
                pa.struct(
                    [_f("c", pa.int64(), False, {PK: "true"}), _f("d", pa.int64(), False, {PK: "true", POS: "1"})]
                ),
                False,
            ),
            _f("e", pa.int64(), False, {PK: "true", POS: "2"}),
        ]
    ),
}


@pytest.mark.parametrize("case", sorted(PK_ORDERS))
def test_primary_key_order_agrees_with_pylance(case, tmp_path):
    schema = PK_ORDERS[case]
    write(tmp_path / "ds", schema)
    pylance_order = [f.id() for f in lance.dataset(tmp_path / "ds").lance_schema.unenforced_primary_key()]
    stored = stored_schema(tmp_path / "ds")
    assert [f.id for f in primary_key_fields(stored)] == pylance_order
    assert [f.id for f in primary_key_fields(schema_from_arrow(schema))] == pylance_order
    assert primary_key_problems(stored) == []


def test_primary_key_order_of_a_crafted_manifest(tmp_path):
    """Membership and order come from the stored flags: a positive position
    counts even with the flag off; equal positions go by id, not list order."""
    path = tmp_path / "ds"
    write(path, _pk_schema(("a", {}), ("b", {}), ("c", {}), ("d", {})))

    def mutate(manifest):
        for f, new_id in zip(manifest.fields, [3, 1, 2, 0], strict=True):
            f.id = new_id
        manifest.fields[0].unenforced_primary_key = True
        manifest.fields[0].unenforced_primary_key_position = 1
        manifest.fields[1].unenforced_primary_key_position = 1  # flag left false
        manifest.fields[3].unenforced_primary_key = True

    rewrite_latest_manifest(path, mutate)
    pylance_order = [f.name() for f in lance.dataset(path).lance_schema.unenforced_primary_key()]
    assert [f.name for f in primary_key_fields(stored_schema(path))] == pylance_order == ["b", "a", "d"]
    # pylance does not turn the stored flags back into metadata.
    assert schema_to_arrow(stored_schema(path)).equals(lance.dataset(path).schema, check_metadata=True)


def test_primary_key_flags_from_metadata_match_pylance(family_datasets):
    stored = {
        f.name: (f.unenforced_primary_key, f.unenforced_primary_key_position)
        for f in stored_schema(family_datasets["primary_key_metadata"]).fields
    }
    assert stored == {
        "a": (True, 0),
        "b": (True, 2),
        "c": (True, 1),
        "not_no": (False, 0),
        "not_zero": (False, 0),
        "not_padded": (False, 0),
        "position_only": (True, 4),
        "position_zero_only": (True, 0),
        "position_plus": (True, 5),
        "position_negative": (True, 0),
        "position_garbage": (True, 0),
        "position_too_big": (True, 0),
        "position_u32_max": (True, 4294967295),
        "flag_false_with_position": (True, 6),
        "s": (False, 0),
        "inner": (True, 0),
    }


def test_schema_from_arrow_leaves_input_metadata_alone():
    metadata = {"k": "v"}
    schema = pa.schema([pa.field("a", pa.int8(), metadata=metadata)])
    converted = schema_from_arrow(schema)
    converted.fields[0].metadata["new"] = b"x"
    assert schema.field("a").metadata == {b"k": b"v"}
