"""The pylance driver against real datasets from pylance 14 and pylance 0.20.

Every version of every dataset is described once (module fixture); the tests
then check the documents against the JSON Schema, against invariants of the
table format, and against what each scenario is known to contain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from conformance.drivers import pylance_driver
from conformance.drivers.pylance_driver import DebugStruct, DebugTuple, DebugUnit, parse_rust_debug
from tests.conftest import OLD_PYLANCE_VERSION
from tests.pylance_scenarios import SCENARIOS, deletion_file_extensions

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "conformance" / "schemas" / "describe.schema.json"
PYLANCE_14 = "pylance-14"
PYLANCE_OLD = "pylance-0.20"
U64_MAX = (1 << 64) - 1
OLD_RELEASE_SCENARIOS = (
    "appends_deletes",
    "schema_evolution",
    "overwrite",
    "scalar_index",
    "update_compaction",
    "tags",
    "default_format_nested",
    "v2_0_history",
    "legacy_history",
    "vector_index_delta",
    "update_rebased_over_project",
    "scalar_indices",
    "vector_indices",
    "hnsw_indices",
)

#: ``{scenario: {version: document}}`` of one writer.
Documents = dict[str, dict[int, dict]]


def describe_every_version(datasets: dict[str, Path]) -> Documents:
    return {
        name: {version: pylance_driver.describe(str(path), version) for version in pylance_driver.versions(str(path))}
        for name, path in datasets.items()
    }


@pytest.fixture(scope="module")
def describe_schema() -> dict:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@pytest.fixture(scope="module")
def documents_14(pylance_datasets) -> Documents:
    return describe_every_version(pylance_datasets)


@pytest.fixture(scope="module")
def documents_old(old_pylance_datasets) -> Documents:
    return describe_every_version(old_pylance_datasets)


@dataclass
class Origin:
    """The datasets of one writer and their documents."""

    name: str
    datasets: dict[str, Path]
    documents: Documents

    def each_document(self):
        for scenario, by_version in self.documents.items():
            for version, document in by_version.items():
                yield f"{self.name}/{scenario}@{version}", document


@pytest.fixture(scope="module", params=[PYLANCE_14, pytest.param(PYLANCE_OLD, marks=pytest.mark.old_pylance)])
def origin(request) -> Origin:
    # Resolved lazily so that the pylance 14 half runs even when the old
    # release cannot be installed (its half then fails in the fixture).
    if request.param == PYLANCE_14:
        return Origin(PYLANCE_14, request.getfixturevalue("pylance_datasets"), request.getfixturevalue("documents_14"))
    return Origin(
        PYLANCE_OLD, request.getfixturevalue("old_pylance_datasets"), request.getfixturevalue("documents_old")
    )


def latest(documents: Documents, name: str) -> dict:
    by_version = documents[name]
    return by_version[max(by_version)]


def fields_by_name(document: dict) -> dict[str, dict]:
    return {field["name"]: field for field in document["schema"]}


# ---------------------------------------------------------------------------
# Schema validity and format invariants, for every version of every dataset
# ---------------------------------------------------------------------------


def test_every_scenario_was_built(origin):
    expected = set(SCENARIOS) if origin.name == PYLANCE_14 else set(OLD_RELEASE_SCENARIOS)
    assert set(origin.datasets) == expected


def test_documents_validate_against_describe_schema(origin, describe_schema):
    validator = jsonschema.Draft202012Validator(describe_schema)
    failures = {
        label: [error.message for error in validator.iter_errors(document)][:3]
        for label, document in origin.each_document()
        if not validator.is_valid(document)
    }
    assert failures == {}


def test_document_version_matches_the_requested_version(origin):
    for name, by_version in origin.documents.items():
        assert sorted(by_version) == list(range(1, max(by_version) + 1)), name
        for version, document in by_version.items():
            assert document["version"] == version


def test_num_rows_is_physical_rows_less_deleted_rows(origin):
    for label, document in origin.each_document():
        counted = sum(f["physical_rows"] - f["num_deleted_rows"] for f in document["fragments"])
        assert document["num_rows"] == counted, label


def test_deleted_offsets_agree_with_the_deletion_count(origin):
    for label, document in origin.each_document():
        for fragment in document["fragments"]:
            offsets = fragment["deleted_offsets"]
            assert len(offsets) == fragment["num_deleted_rows"], f"{label} fragment {fragment['id']}"
            assert offsets == sorted(set(offsets)), f"{label}: offsets not strictly ascending"
            assert all(0 <= offset < fragment["physical_rows"] for offset in offsets), label


def test_row_ids_present_exactly_with_the_stable_row_id_flag(origin):
    for label, document in origin.each_document():
        stable = bool(document["reader_feature_flags"] & 2)
        for fragment in document["fragments"]:
            if stable:
                visible = fragment["physical_rows"] - fragment["num_deleted_rows"]
                assert fragment["row_ids"] is not None and len(fragment["row_ids"]) == visible, label
            else:
                assert fragment["row_ids"] is None, label
        if stable:
            every_id = [row_id for fragment in document["fragments"] for row_id in fragment["row_ids"]]
            assert len(every_id) == len(set(every_id)), f"{label}: duplicate stable row ids"
            assert all(row_id < document["next_row_id"] for row_id in every_id), label


def test_deletion_flag_set_whenever_rows_are_deleted(origin):
    for label, document in origin.each_document():
        if any(fragment["num_deleted_rows"] for fragment in document["fragments"]):
            assert document["reader_feature_flags"] & 1, label
            assert document["writer_feature_flags"] & 1, label


def test_fragment_ids_unique_and_within_max_fragment_id(origin):
    for label, document in origin.each_document():
        ids = [fragment["id"] for fragment in document["fragments"]]
        assert len(ids) == len(set(ids)), label
        # pylance 0.20 leaves max_fragment_id out when it is 0 (see
        # docs/spec-discrepancies.md), so an absent value allows fragment 0.
        ceiling = document["max_fragment_id"] if document["max_fragment_id"] is not None else 0
        assert all(fragment_id <= ceiling for fragment_id in ids), label


def test_schema_field_ids_unique_and_parents_listed_first(origin):
    for label, document in origin.each_document():
        seen: set[int] = set()
        for field in document["schema"]:
            assert field["id"] not in seen, f"{label}: duplicate field id {field['id']}"
            assert field["parent_id"] == -1 or field["parent_id"] in seen, f"{label}: {field}"
            seen.add(field["id"])


def test_data_files_match_the_dataset_data_format(origin):
    """table.proto: every file of a version has the dataset's file format version."""
    for label, document in origin.each_document():
        expected = document["data_format"]["version"]
        for fragment in document["fragments"]:
            for data_file in fragment["files"]:
                version = (data_file["file_major_version"], data_file["file_minor_version"])
                if expected == "0.1":
                    # Legacy files are recorded as 0.2 (docs/spec-discrepancies.md).
                    assert version == (0, 2), label
                    assert data_file["column_indices"] == [], label
                else:
                    assert f"{version[0]}.{version[1]}" == expected, label
                    assert len(data_file["column_indices"]) == len(data_file["fields"]), label


def test_base_ids_refer_to_declared_base_paths(origin):
    for label, document in origin.each_document():
        declared = {base["id"] for base in document["base_paths"]}
        for fragment in document["fragments"]:
            for data_file in fragment["files"]:
                assert data_file["base_id"] is None or data_file["base_id"] in declared, label


def test_index_coverage_refers_to_fragments_of_the_indexed_version(origin):
    """An index covers fragments its dataset_version had, or fragments of the
    described version a compaction remapped it onto without moving its
    dataset_version (docs/spec-discrepancies.md, "Deletion, row id, index and
    refs rules", item 2)."""
    for label, document in origin.each_document():
        by_version = origin.documents[label.split("/", 1)[1].split("@")[0]]
        present = {fragment["id"] for fragment in document["fragments"]}
        for index in document["indices"]:
            indexed = {fragment["id"] for fragment in by_version[index["dataset_version"]]["fragments"]}
            assert set(index["fragment_ids"]) <= indexed | present, label
            assert set(index["fields"]) <= {field["id"] for field in document["schema"]}, label


def test_num_rows_matches_a_pylance_scan(origin):
    for name, path in origin.datasets.items():
        for version in (1, max(origin.documents[name])):
            table = pylance_driver.read_table(str(path), version)
            assert table.num_rows == origin.documents[name][version]["num_rows"], f"{name}@{version}"


def test_debug_rendered_schema_matches_the_typed_lance_schema(origin):
    """The ids and names parsed from ``lance.debug`` agree with ``ds.lance_schema``."""
    import lance

    def typed(fields, parent_id):
        for field in fields:
            yield (field.id(), parent_id, field.name())
            yield from typed(field.children(), field.id())

    for name, path in origin.datasets.items():
        from_debug = [(f["id"], f["parent_id"], f["name"]) for f in latest(origin.documents, name)["schema"]]
        from_typed = list(typed(lance.dataset(str(path)).lance_schema.fields(), -1))
        assert from_debug == from_typed, name


def test_writer_version_names_the_writing_release(origin):
    import lance

    expected = lance.__version__ if origin.name == PYLANCE_14 else OLD_PYLANCE_VERSION
    for label, document in origin.each_document():
        assert document["writer_version"] == {"library": "lance", "version": expected}, label


def test_naming_schemes(origin):
    """pylance 14 names manifests V2 unless told otherwise; 0.20 only knows V1."""
    for label, document in origin.each_document():
        if origin.name == PYLANCE_OLD or "/naming_v1@" in label:
            assert document["naming_scheme"] == "v1", label
        else:
            assert document["naming_scheme"] == "v2", label


# ---------------------------------------------------------------------------
# What each pylance 14 scenario is known to contain
# ---------------------------------------------------------------------------


def test_versions_lists_every_manifest(pylance_datasets):
    for name in ("naming_v1", "naming_v2"):
        assert pylance_driver.versions(str(pylance_datasets[name])) == [1, 2, 3]
    v1_names = sorted(p.name for p in (pylance_datasets["naming_v1"] / "_versions").glob("*.manifest"))
    assert v1_names == ["1.manifest", "2.manifest", "3.manifest"]
    v2_names = {p.name for p in (pylance_datasets["naming_v2"] / "_versions").glob("*.manifest")}
    assert v2_names == {f"{U64_MAX - v:020d}.manifest" for v in (1, 2, 3)}


def test_sparse_deletes_report_exact_offsets(documents_14, pylance_datasets):
    document = latest(documents_14, "deletes_sparse")
    assert [(f["id"], f["deleted_offsets"]) for f in document["fragments"]] == [(0, [3, 17, 42]), (1, [50, 99])]
    assert set(deletion_file_extensions(pylance_datasets["deletes_sparse"]).values()) == {"arrow"}


def test_dense_delete_is_stored_as_a_bitmap(documents_14, pylance_datasets):
    path = pylance_datasets["deletes_dense"]
    assert deletion_file_extensions(path) == {0: "bin", 1: "arrow"}
    # The version before the dense delete still has an Arrow file for fragment 0.
    assert deletion_file_extensions(path, version=2) == {0: "arrow", 1: "arrow"}
    fragment_0 = latest(documents_14, "deletes_dense")["fragments"][0]
    expected = sorted(set(range(6000)) | {i for i in range(10_000) if i % 1000 == 1})
    assert fragment_0["deleted_offsets"] == expected
    assert fragment_0["num_deleted_rows"] == len(expected) == 6004


def test_deleting_a_whole_fragment_removes_it(documents_14):
    by_version = documents_14["delete_entire_fragment"]
    assert [f["id"] for f in by_version[2]["fragments"]] == [1, 2]
    assert by_version[2]["max_fragment_id"] == 2
    assert [f["id"] for f in by_version[4]["fragments"]] == [1, 2, 3]


def test_added_columns_get_new_field_ids(documents_14):
    before = max(field["id"] for field in documents_14["add_columns"][1]["schema"])
    fields = fields_by_name(latest(documents_14, "add_columns"))
    assert before < fields["double_id"]["id"] < fields["note"]["id"] < fields["score"]["id"]
    files = latest(documents_14, "add_columns")["fragments"][0]["files"]
    # "note" was added without data: no data file holds its field id.
    assert all(fields["note"]["id"] not in data_file["fields"] for data_file in files)


def test_drop_columns_removes_fields_not_ids_of_others(documents_14):
    first = fields_by_name(documents_14["drop_columns"][1])
    last = fields_by_name(latest(documents_14, "drop_columns"))
    assert "label" not in last and "y" not in last
    for name in ("id", "value", "point", "x", "tags", "vector"):
        assert last[name]["id"] == first[name]["id"], name


def test_alter_columns_keeps_ids_on_rename_and_reassigns_on_cast(documents_14):
    first = fields_by_name(documents_14["alter_columns"][1])
    last = fields_by_name(latest(documents_14, "alter_columns"))
    assert last["title"]["id"] == first["label"]["id"]
    assert last["px"]["id"] == first["x"]["id"]
    assert first["id"]["nullable"] is False and last["id"]["nullable"] is True
    assert last["tags"]["id"] > max(field["id"] for field in first.values())
    assert last["tags"]["logical_type"] == "list"


def test_scalar_index_covers_only_the_fragments_it_was_built_on(documents_14):
    (index,) = latest(documents_14, "scalar_index")["indices"]
    assert index["name"] == "id_btree"
    # The version the index was built from, not the one its commit created.
    assert index["dataset_version"] == 1
    assert index["fragment_ids"] == [0, 1]
    assert index["fields"] == [fields_by_name(latest(documents_14, "scalar_index"))["id"]["id"]]
    assert index["type_url"] == "/lance.table.BTreeIndexDetails"
    assert documents_14["scalar_index"][1]["indices"] == []


def test_tags(documents_14):
    assert latest(documents_14, "tags")["tags"] == [
        {"name": "first", "version": 1, "branch": None},
        {"name": "moving", "version": 3, "branch": None},
    ]


def test_restore_brings_back_the_first_version(documents_14):
    by_version = documents_14["restore"]
    for key in ("schema", "fragments", "num_rows"):
        assert by_version[4][key] == by_version[1][key], key
    assert by_version[3]["num_rows"] == 15


def test_overwrite_replaces_schema_and_fragments(documents_14):
    by_version = documents_14["overwrite"]
    assert [f["name"] for f in by_version[2]["schema"]] == ["key", "amount"]
    assert len(by_version[2]["fragments"]) == 1
    assert len(by_version[3]["fragments"]) == 2


def test_empty_table(documents_14):
    by_version = documents_14["empty_table"]
    assert by_version[1]["fragments"] == [] and by_version[1]["num_rows"] == 0
    assert by_version[1]["max_fragment_id"] is None
    assert by_version[2]["num_rows"] == 10
    assert by_version[3]["fragments"] == [] and by_version[3]["num_rows"] == 0


def test_stable_row_ids_survive_update_and_compaction(documents_14):
    assert documents_14["stable_row_ids"][1]["fragments"][0]["row_ids"] == list(range(10))
    final = latest(documents_14, "stable_row_ids")
    (fragment,) = final["fragments"]
    # Row 5 was updated: pylance 14 keeps its id and compaction moves it last.
    assert fragment["row_ids"] == [i for i in range(30) if i not in (2, 5, 11, 25)] + [5]
    assert final["next_row_id"] == 30
    assert final["reader_feature_flags"] & 2 and final["writer_feature_flags"] & 2


def test_storage_versions(documents_14):
    expected = {"storage_legacy": "0.1", "storage_2_0": "2.0", "storage_2_1": "2.1", "storage_default": "2.2"}
    for name, version in expected.items():
        assert latest(documents_14, name)["data_format"] == {"file_format": "lance", "version": version}, name


def test_rich_types_logical_types(documents_14):
    logical = {f["name"]: f["logical_type"] for f in latest(documents_14, "nested_and_rich_types")["schema"]}
    assert logical["flag"] == "bool"
    assert logical["day"] == "date32:day"
    assert logical["moment"] == "timestamp:us:UTC"
    assert logical["amount"] == "decimal:128:10:2"
    assert logical["big_text"] == "large_string"
    assert logical["digest"] == "fixed_size_binary:4"
    assert logical["items"] == "list.struct"
    assert logical["long_list"] == "large_list"
    assert logical["category"] == "dict:string:int32:false"
    assert logical["embedding"] == "fixed_size_list:float:4"


def test_config_and_metadata(documents_14):
    document = latest(documents_14, "config_and_metadata")
    assert document["config"] == {"user.beta": "two"}
    assert document["table_metadata"] == {"owner": "conformance"}
    assert document["schema_metadata"] == {"origin": "conformance", "purpose": "changed"}
    assert document["writer_feature_flags"] & 8


def test_shallow_clone_base_paths(documents_14, pylance_datasets):
    document = latest(documents_14, "shallow_clone")
    (base,) = document["base_paths"]
    source = pylance_datasets["shallow_clone"].parent / "shallow_clone-source"
    assert Path(base["path"]) == source.absolute() and base["is_dataset_root"] is True
    assert [[f["base_id"] for f in fragment["files"]] for fragment in document["fragments"]] == [[base["id"]], [None]]
    assert document["reader_feature_flags"] & 16


# ---------------------------------------------------------------------------
# Old-release datasets
# ---------------------------------------------------------------------------


@pytest.mark.old_pylance
def test_old_release_writes_legacy_files_except_by_default(documents_old):
    for name, by_version in documents_old.items():
        by_default = (
            "default_format_nested",
            "v2_0_history",
            "vector_index_delta",
            "update_rebased_over_project",
            "scalar_indices",
            "vector_indices",
            "hnsw_indices",
        )
        expected = "2.0" if name in by_default else "0.1"
        for version, document in by_version.items():
            assert document["data_format"]["version"] == expected, f"{name}@{version}"


@pytest.mark.old_pylance
def test_old_release_deletion_files(documents_old, old_pylance_datasets):
    assert deletion_file_extensions(old_pylance_datasets["appends_deletes"]) == {0: "bin", 1: "arrow", 2: "arrow"}
    fragments = latest(documents_old, "appends_deletes")["fragments"]
    assert fragments[0]["num_deleted_rows"] == 6001
    assert fragments[1]["deleted_offsets"] == [1]
    assert fragments[2]["deleted_offsets"] == [10]


@pytest.mark.old_pylance
def test_old_release_tags(documents_old):
    assert latest(documents_old, "tags")["tags"] == [
        {"name": "first", "version": 1, "branch": None},
        {"name": "second", "version": 2, "branch": None},
    ]


@pytest.mark.old_pylance
def test_old_release_omits_max_fragment_id_zero(documents_old):
    """Recorded in docs/spec-discrepancies.md: one fragment, no max_fragment_id."""
    first = documents_old["appends_deletes"][1]
    assert [fragment["id"] for fragment in first["fragments"]] == [0]
    assert first["max_fragment_id"] is None


# ---------------------------------------------------------------------------
# Driver internals
# ---------------------------------------------------------------------------


def test_declared_key_paths_exist_in_the_describe_schema(describe_schema):
    def resolve(schema: dict, path: str) -> None:
        node = schema
        for part in path.split("."):
            is_list = part.endswith("[]")
            node = node["properties"][part.removesuffix("[]")]
            if "$ref" in node:
                node = describe_schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
            if is_list:
                node = node["items"]
                if "$ref" in node:
                    node = describe_schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]

    for path in pylance_driver.UNREPORTED | pylance_driver.FROM_DEBUG_RENDERING:
        resolve(describe_schema, path)


def test_parse_rust_debug_values():
    rendered = """Manifest {
        name: "a \\"quoted\\" \\u{e9}\\n",
        raw: b"\\n\\x05A",
        count: Some(
            -3,
        ),
        missing: None,
        flag: true,
        kind: Bitmap,
        ratio: 0.5,
        wrapped: LogicalType("int64"),
        items: [1, 2,],
        map: {"k": [], 0: Inline([10])},
    }"""
    value = parse_rust_debug(rendered)
    assert isinstance(value, DebugStruct) and value.name == "Manifest"
    assert value["name"] == 'a "quoted" \u00e9\n'
    assert value["raw"] == b"\n\x05A"
    assert value["count"] == -3
    assert value["missing"] is None and value["flag"] is True
    assert value["kind"] == DebugUnit("Bitmap")
    assert value["ratio"] == 0.5
    assert value["wrapped"] == DebugTuple("LogicalType", ["int64"])
    assert value["items"] == [1, 2]
    assert value["map"] == {"k": [], 0: DebugTuple("Inline", [[10]])}


@pytest.mark.parametrize("broken", ["Manifest { a: 1", "Manifest { a 1 }", "[1, 2] trailing", 'Field { name: "x }'])
def test_parse_rust_debug_rejects_broken_text(broken):
    with pytest.raises((ValueError, IndexError)):
        parse_rust_debug(broken)
