"""The schema, primary-key, writer-version and MemWAL rules beyond their
mutations: warnings and infos, pylance datasets they must accept, and hostile
field lists they must survive."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from conformance.mutations.edit import copy_dataset, edit_manifest
from conformance.mutations.topics.mem_wal import edit_mem_wal_details, merge_a_generation_in_an_index_commit
from conformance.mutations.topics.schema import _set, edit_schema_from
from conformance.validator import Severity, validate
from conformance.validator.engine import INTERNAL_ERROR_RULE
from reference_impl.schema import Field

lance = pytest.importorskip("lance")

OURS = ["schema", "primary-key", "writer-version", "mem-wal"]
PK = "lance-schema:unenforced-primary-key"


def _findings(root, rules=OURS, **options) -> dict[str, set[str]]:
    """Rule id -> severities found, for every version."""
    report = validate(root, all_versions=True, rules=rules, **options)
    found: dict[str, set[str]] = {}
    for f in report.findings:
        found.setdefault(f.rule, set()).add(f.severity.value)
    return found


def _messages(root, rule_id: str) -> list[str]:
    return [f.message for f in validate(root, all_versions=True, rules=[rule_id]).findings if f.rule == rule_id]


def _problems(found: dict[str, set[str]]) -> dict[str, set[str]]:
    return {r: s for r, s in found.items() if s & {"error", "warning"}}


@pytest.fixture
def plain(base_datasets, tmp_path):
    return copy_dataset(base_datasets["plain"], tmp_path / "plain")


@pytest.fixture
def nested(base_datasets, tmp_path):
    return copy_dataset(base_datasets["nested_pk"], tmp_path / "nested")


def _edit_latest(root, edit):
    edit_manifest(root, edit)


# -- writer version -------------------------------------------------------------------


def test_a_clean_prerelease_in_its_own_field_passes(plain):
    def edit(manifest_file):
        manifest_file.manifest.writer_version.prerelease = "rc.1"
        manifest_file.manifest.writer_version.build_metadata = "build.123"

    _edit_latest(plain, edit)
    assert not _findings(plain, rules=["writer-version"])


def test_a_version_that_is_not_semantic_is_left_alone(plain):
    def edit(manifest_file):
        manifest_file.manifest.writer_version.version = "nightly-2024-05-01"
        manifest_file.manifest.writer_version.prerelease = "not semver at all"

    _edit_latest(plain, edit)
    assert not _findings(plain, rules=["writer-version"])


# -- field metadata -------------------------------------------------------------------


@pytest.mark.parametrize(
    "metadata, expected",
    [
        ({"lance-encoding:compression": b"zstd", "lance-encoding:compression-level": b"99"}, "from 1 to 22"),
        ({"lance-encoding:compression-level": b"high"}, "not an integer"),
        ({"lance-encoding:compression": b"brotli"}, "not a documented compression scheme"),
        ({"lance-encoding:structural-encoding": b"whatever"}, "not miniblock, fullzip or sparse"),
        ({"lance-encoding:packed": b"banana"}, "neither true nor false"),
        ({"lance-encoding:blob": b"yes"}, "neither true nor false"),
        ({"lance-encoding:bss": b"sometimes"}, "not off, on or auto"),
        ({"lance-encoding:dict-divisor": b"1"}, "greater than 1"),
        ({"lance-encoding:rle-threshold": b"1.5"}, "outside 0.0..1.0"),
        ({"lance-encoding:compression": b"\xff\xfe"}, "not UTF-8"),
    ],
)
def test_encoding_metadata_values(plain, metadata, expected):
    def edit(manifest_file):
        manifest_file.manifest.schema.fields[1].metadata.update(metadata)

    _edit_latest(plain, edit)
    messages = _messages(plain, "schema/encoding-metadata")
    assert any(expected in m for m in messages), messages


def test_documented_encoding_values_pass(plain):
    def edit(manifest_file):
        manifest_file.manifest.schema.fields[1].metadata.update(
            {
                "lance-encoding:compression": b"zstd",
                "lance-encoding:compression-level": b"3",
                "lance-encoding:structural-encoding": b"fullzip",
                "lance-encoding:bss": b"auto",
                "lance-encoding:rle-threshold": b"0.25",
                "lance-encoding:future-knob": b"anything",
            }
        )

    _edit_latest(plain, edit)
    assert not _messages(plain, "schema/encoding-metadata")


def test_the_sparse_structural_encoding_of_2_3_passes(plain):
    """The encoding page documents ``sparse`` (file version 2.3) beside the
    table format page's miniblock and fullzip."""

    def edit(manifest_file):
        manifest_file.manifest.schema.fields[1].metadata.update({"lance-encoding:structural-encoding": b"sparse"})

    _edit_latest(plain, edit)
    assert not _messages(plain, "schema/encoding-metadata")


@pytest.mark.parametrize(
    "metadata, legacy, expected",
    [
        ({"ARROW:extension:name": b""}, "", "is empty"),
        ({"ARROW:extension:name": b"\xff"}, "", "not UTF-8"),
        ({"ARROW:extension:name": b"arrow.uuid"}, "lance.json", "readers disagree"),
    ],
)
def test_extension_metadata(plain, metadata, legacy, expected):
    def edit(manifest_file):
        field = manifest_file.manifest.schema.fields[1]
        field.metadata.update(metadata)
        field.extension_name = legacy

    _edit_latest(plain, edit)
    messages = _messages(plain, "schema/extension-metadata")
    assert any(expected in m for m in messages), messages


# -- primary key warnings and infos ---------------------------------------------------------


def test_a_position_without_the_flag_is_a_warning(nested):
    def edit(manifest_file):
        manifest_file.manifest.schema.fields[0].unenforced_primary_key = False

    _edit_latest(nested, edit)
    found = _findings(nested)
    assert found.get("primary-key/position-without-flag") == {"warning"}
    assert "primary-key/fixed" not in found  # pylance counts it as a key column still


def test_repeated_or_gapped_positions_are_infos(nested):
    def edit(manifest_file):
        tenant = manifest_file.manifest.schema.fields[2]
        tenant.unenforced_primary_key = True
        tenant.unenforced_primary_key_position = 3

    _edit_latest(nested, edit)
    found = _findings(nested)
    assert found.get("primary-key/positions") == {"info"}
    assert "do not run 1, 2, 3" in " ".join(_messages(nested, "primary-key/positions"))


def test_pylance_key_departures_are_infos(tmp_path):
    """Keys pylance writes against the overview page's letter: a key inside a
    fixed-size list of structs, membership through the position alone, equal
    positions, and a key changed by an overwrite."""
    struct = pa.struct([pa.field("k", pa.int32(), False, {PK: "true"})])
    fsl = pa.schema([pa.field("l", pa.list_(pa.field("item", struct, False), 2), False)])
    lance.write_dataset(pa.Table.from_pylist([{"l": [{"k": 1}, {"k": 2}]}], schema=fsl), tmp_path / "fsl")
    assert _findings(tmp_path / "fsl").get("primary-key/under-fixed-size-list") == {"info"}

    schema = pa.schema(
        [
            pa.field("a", pa.int64(), False, {PK + ":position": "1"}),
            pa.field("b", pa.int64(), False, {PK: "yes", PK + ":position": "1"}),
        ]
    )
    table = pa.Table.from_pylist([{"a": 1, "b": 2}], schema=schema)
    lance.write_dataset(table, tmp_path / "positions")
    found = _findings(tmp_path / "positions")
    assert found.get("primary-key/metadata-agrees") == {"info"}
    assert found.get("primary-key/positions") == {"info"}

    other = pa.schema([pa.field("a", pa.int64(), False), pa.field("b", pa.int64(), False, {PK: "true"})])
    overwriting = pa.Table.from_pylist([{"a": 1, "b": 2}], schema=other)
    lance.write_dataset(overwriting, tmp_path / "positions", mode="overwrite")
    found = _findings(tmp_path / "positions")
    assert found.get("primary-key/fixed") == {"info"}
    assert not _problems(found), found


# -- logical type infos and pylance schemas ------------------------------------------------


def test_pylance_schemas_with_departures_give_infos_only(tmp_path):
    schema = pa.schema(
        [
            pa.field("offset_time", pa.timestamp("us", "+01:00")),
            pa.field("zoned_time", pa.timestamp("ms", "Europe/Paris")),
            pa.field("odd_decimal", pa.decimal128(5, 7)),
            pa.field("negative_scale", pa.decimal128(10, -2)),
            pa.field("m", pa.map_(pa.string(), pa.int32())),
            pa.field("u", pa.uuid()),
            pa.field("j", pa.json_()),
            pa.field("nested", pa.list_(pa.struct([pa.field("x", pa.list_(pa.float32(), 3))]))),
            pa.field("d", pa.dictionary(pa.int16(), pa.string())),
        ]
    )
    lance.write_dataset(pa.Table.from_pylist([{}], schema=schema), tmp_path / "types")
    found = _findings(tmp_path / "types")
    assert not _problems(found), found
    assert found.get("schema/timestamp-zone") == {"info"}
    assert found.get("schema/decimal-scale") == {"info"}
    assert found.get("schema/field-kind") == {"info"}
    zones = _messages(tmp_path / "types", "schema/timestamp-zone")
    assert len(zones) == 1 and "+01:00" in zones[0]


@pytest.mark.requirements("schema.type-may-change")
def test_a_field_may_change_type_keeping_its_id(nested):
    """From the rename (version 3) on, ``note`` (id 3) is a large_string: a
    type change that keeps the id is allowed, and nothing reports it."""
    edit_schema_from(nested, 3, _set("note", logical_type="large_string"))
    found = _findings(nested, rules=None)
    assert not _problems(found), found
    assert "schema/ids-stable" not in found


# -- MemWAL ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        dict(maintained_indexes=["v_idx"], bucket_column="id", num_buckets=4),
        dict(identity_column="id"),
        dict(unsharded=True, durable_write=True),
        dict(),
        dict(maintained_indexes=[]),
    ],
    ids=["bucket", "identity", "unsharded", "default", "none-maintained"],
)
def test_pylance_mem_wal_indexes_pass(tmp_path, options):
    path = tmp_path / "mem_wal"
    schema = pa.schema([pa.field("id", pa.int64(), False, {PK: "true"}), pa.field("v", pa.float64())])
    lance.write_dataset(pa.Table.from_pylist([{"id": i, "v": i / 2} for i in range(10)], schema=schema), path)
    lance.dataset(path).create_scalar_index("v", "BTREE", name="v_idx")
    lance.dataset(path).initialize_mem_wal(**options)
    found = _findings(path)
    assert not _problems(found), found


def test_merged_generations_advancing_outside_a_merge_name_the_operation(nested):
    merge_a_generation_in_an_index_commit(nested)  # the new version, a CreateIndex
    messages = _messages(nested, "mem-wal/merged-generations-atomic")
    assert messages and "create_index" in messages[0], messages


def test_type_url_is_matched_without_case(nested):
    def apply(manifest_file):
        index = next(i for i in manifest_file.indices if i.name == "__lance_mem_wal")
        index.type_url = "type.googleapis.com/LANCE.TABLE.MEMWALINDEXDETAILS"
        index.details = b"\xff"

    edit_manifest(nested, apply)
    assert _findings(nested).get("mem-wal/details-decode") == {"error"}


# -- hostile field lists ----------------------------------------------------------------


def _hostile_fields() -> list[Field]:
    chain = [Field(id=0, name="root", logical_type="struct")]
    chain += [Field(id=i, name=f"c{i}", logical_type="struct", parent_id=i - 1) for i in range(1, 3000)]
    loop = [
        Field(id=5000 + i, name=f"loop{i}", logical_type="struct", parent_id=5000 + (i + 1) % 2000) for i in range(2000)
    ]
    for f in loop[::7]:
        f.unenforced_primary_key = True
        f.nullable = False
    odd = [
        Field(id=2**31 - 1, name="max", logical_type="fixed_size_list:" * 900 + "float" + ":1" * 900),
        Field(id=-(2**31), name="min", logical_type="x" * 100_000, parent_id=-(2**31)),
        Field(id=7, name="dup", logical_type="dict:dict:int8:int8:true", parent_id=123456),
        Field(id=7, name="dup2", logical_type="map", parent_id=7, unenforced_primary_key=True),
        Field(
            id=9000,
            name="pk",
            logical_type="int32",
            parent_id=2999,
            unenforced_primary_key=True,
            unenforced_primary_key_position=2**32 - 1,
            metadata={PK: b"\xff", PK + ":position": b"+99999999999"},
        ),
        Field(id=9001, name="t", logical_type="timestamp:ns:" + "+" * 5000, metadata={"ARROW:extension:name": b"\x00"}),
    ]
    return odd[:2] + chain + loop + odd[2:]


def test_hostile_field_lists_do_not_crash_or_stall(plain):
    def edit(manifest_file):
        manifest_file.manifest.schema.fields = _hostile_fields()
        manifest_file.manifest.writer_version.version = "v" + "9" * 10_000

    _edit_latest(plain, edit)
    started = time.monotonic()
    report = validate(plain, rules=OURS)
    elapsed = time.monotonic() - started
    crashed = [f.message for f in report.findings if f.rule == INTERNAL_ERROR_RULE]
    assert not crashed, crashed
    fired = {f.rule for f in report.findings if f.severity is Severity.ERROR}
    assert {
        "schema/field-ids-unique",
        "schema/field-ids-non-negative",
        "schema/parent-exists",
        "schema/parent-cycle",
        "schema/logical-type-known",
        "schema/logical-type-format",
    } <= fired, fired
    assert elapsed < 20, f"{elapsed:.1f}s"


def test_a_hostile_mem_wal_index_does_not_crash(nested):
    def edit(details):
        spec = details.region_specs.add(spec_id=1)
        for _ in range(500):
            spec.fields.add(field_id="same", source_ids=[-1, 2**31 - 1], transform="t", expression="e")
        details.maintained_indexes.extend(["x"] * 1000)
        details.index_catchup.add(index_name="").caught_up_generations.add(generation=2**63)

    edit_mem_wal_details(nested, edit)
    report = validate(nested, rules=["mem-wal"])
    assert INTERNAL_ERROR_RULE not in {f.rule for f in report.findings}
    assert {f.rule for f in report.findings} >= {
        "mem-wal/spec-ids-unique",
        "mem-wal/region-field-ids-unique",
        "mem-wal/transform-or-expression",
        "mem-wal/source-ids-exist",
        "mem-wal/maintained-indexes-exist",
        "mem-wal/catchup-names-maintained",
        "mem-wal/region-ids",
    }
