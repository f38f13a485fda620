"""Schema evolution and metadata changes by the reference writer, checked
against pylance (schema format page "Field IDs" / "Schema Evolution"; table overview page "Data
Evolution"; transaction.proto ``Merge``, ``Project``, ``UpdateConfig``).

Each operation runs on a dataset the reference writer made (three fragments,
two deleted rows in the first). Then:

* pylance reads every version the same as we do (``assert_pylance_agrees``);
* pylance performs the same operation on a copy of the dataset taken just
  before, and both results have the same fields (ids included), the same
  Arrow schema and the same rows with the same row ids.
"""

from __future__ import annotations

import dataclasses
import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from reference_impl.dataset import Dataset
from reference_impl.errors import UnsupportedFeatureError
from reference_impl.file_format import LanceFileReader
from reference_impl.fragments import TOMBSTONE_FIELD_ID
from reference_impl.row_ids import fragment_last_updated_at_versions
from reference_impl.transactions import Merge, Project, UpdateConfig, read_transaction_file
from tests.writer_checks import assert_pylance_agrees

lance = pytest.importorskip("lance")

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int32()),
        pa.field("name", pa.string()),
        pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
        pa.field("scores", pa.list_(pa.int32())),
    ],
    metadata={"origin": "tests"},
)
ROWS = 10
DELETED = [1, 2]  # physical offsets deleted in fragment 0

VARIANTS = [
    pytest.param((naming, stable), id=f"{naming}-{'stable' if stable else 'addresses'}")
    for naming in ("v1", "v2")
    for stable in (False, True)
]


def base_table() -> pa.Table:
    ids = list(range(ROWS))
    return pa.table(
        {
            "id": ids,
            "name": [None if i % 4 == 0 else f"n{i}" for i in ids],
            "point": [{"x": float(i), "y": -float(i)} for i in ids],
            "scores": [[i, i * 10] for i in ids],
        },
        schema=SCHEMA,
    )


def delete_offsets(ds: Dataset, fragment_index: int, offsets: list[int]) -> Dataset:
    """Delete physical rows of one fragment, by offset."""
    return ds.delete({ds.fragments[fragment_index].id: offsets})


@pytest.fixture(params=VARIANTS)
def base(request, tmp_path) -> Dataset:
    naming, stable = request.param
    ds = Dataset.create(
        tmp_path / "ours", base_table(), manifest_naming=naming, stable_row_ids=stable, max_rows_per_file=4
    )
    return delete_offsets(ds, 0, DELETED)


def pylance_copy(ds: Dataset) -> str:
    """A copy of the dataset's directory for pylance to change."""
    target = ds.storage.root.parent / "theirs"
    shutil.copytree(ds.storage.root, target)
    return str(target)


def field_rows(path) -> list[tuple]:
    return [(f.id, f.parent_id, f.name, f.logical_type, f.nullable) for f in Dataset.open(path).schema.fields]


def assert_same_as_pylance(ours: Dataset, theirs: str) -> None:
    """Same fields (ids included), same Arrow schema, same rows and row ids."""
    assert field_rows(ours.uri) == field_rows(theirs)
    ours_lance, theirs_lance = lance.dataset(ours.uri), lance.dataset(theirs)
    assert ours_lance.schema == theirs_lance.schema
    expected = theirs_lance.to_table(with_row_id=True)
    assert ours_lance.to_table(with_row_id=True).to_pylist() == expected.to_pylist()


def operation_of(ds: Dataset):
    return read_transaction_file(ds.storage, ds.manifest.transaction_file).operation


def last_updated(path) -> list[list[int] | None]:
    ds = Dataset.open(path)
    return [fragment_last_updated_at_versions(ds.storage, f) for f in ds.fragments]


# -- add_columns --------------------------------------------------------------------------


def test_add_columns_matches_pylance(base):
    theirs = pylance_copy(base)
    ds = base.add_columns(
        {
            "twice": pc.field("id") * pa.scalar(2, pa.int32()),
            "tenfold": lambda rows: pc.multiply(rows["id"], pa.scalar(10, pa.int32())),
        }
    )
    lance.dataset(theirs).add_columns({"twice": "id * 2"})
    lance.dataset(theirs).add_columns(
        lambda b: pa.record_batch([pc.multiply(b["id"], pa.scalar(10, pa.int32()))], names=["tenfold"])
    )
    # pylance needs two commits for the two kinds; compare the final states.
    assert [f.id for f in ds.schema.fields][-2:] == [7, 8]
    op = operation_of(ds)
    assert isinstance(op, Merge) and op.preserves_nullability
    assert op.schema.metadata == {"origin": b"tests"}
    # pylance's Merge records no schema metadata, though its manifest keeps it.
    assert operation_of(Dataset.open(theirs)).schema.metadata == {}
    assert Dataset.open(theirs).schema.metadata == {"origin": b"tests"}
    assert all(len(f.files) == 2 and f.files[1].fields == [7, 8] for f in ds.fragments)
    assert_same_as_pylance(ds, theirs)
    if base.uses_stable_row_ids:
        assert last_updated(ds.uri) == [[ds.version] * f.physical_rows for f in ds.fragments]
    assert assert_pylance_agrees(ds.uri) == 3


def test_new_values_line_up_with_physical_rows_of_a_fragment_with_deletions(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table(), max_rows_per_file=4)
    ds = delete_offsets(ds, 0, DELETED)
    seen: list[int] = []

    def tag(rows: pa.Table) -> pa.Array:
        seen.append(rows.num_rows)
        return pc.binary_join_element_wise("id=", pc.cast(rows["id"], pa.string()), "")

    ds = ds.add_columns({"tag": tag})
    assert seen == [4, 4, 2], "the function sees every physical row, deleted ones included"
    first = ds.fragments[0]
    location = ds.data_file_location(first.files[-1])
    stored = LanceFileReader(location.storage, location.relpath).read().column(0).to_pylist()
    assert stored == ["id=0", "id=1", "id=2", "id=3"]
    assert ds.to_table().column("tag").to_pylist() == [f"id={i}" for i in range(ROWS) if i not in DELETED]
    assert_pylance_agrees(tmp_path / "ds")


def test_new_field_ids_skip_ids_still_held_by_data_files(tmp_path):
    ds = Dataset.create(tmp_path / "ours", base_table(), max_rows_per_file=4)
    ds = ds.add_columns({"extra": pc.field("id") + pa.scalar(1, pa.int32())})
    ds = ds.drop_columns(["extra"])  # its data file leaves the fragments: id 7 is free again
    ds = ds.drop_columns(["scores"])  # its data stays in the first file: ids 5, 6 stay taken
    theirs = pylance_copy(ds)
    ds = ds.add_columns({"again": pc.field("id") + pa.scalar(1, pa.int32())})
    lance.dataset(theirs).add_columns({"again": "id + 1"})
    assert ds.schema.fields[-1].id == 7  # not 5 (schema max + 1), not 8 (never reused)
    assert_same_as_pylance(ds, theirs)
    assert_pylance_agrees(tmp_path / "ours")


def test_add_columns_with_an_explicit_field(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table(), max_rows_per_file=4)
    wanted = pa.field("big", pa.int64(), nullable=False, metadata={"unit": "m"})
    ds = ds.add_columns({wanted: pc.field("id")})
    field = ds.schema.fields[-1]
    assert (field.name, field.logical_type, field.nullable, field.metadata) == ("big", "int64", False, {"unit": b"m"})
    assert not operation_of(ds).preserves_nullability
    assert lance.dataset(tmp_path / "ds").schema.field("big") == wanted
    with pytest.raises(ValueError, match="not nullable"):
        ds.add_columns({pa.field("bad", pa.string(), nullable=False): pc.field("name")})
    assert_pylance_agrees(tmp_path / "ds")


def test_add_columns_refusals(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table())
    with pytest.raises(ValueError, match="already exists"):
        ds.add_columns({"id": pc.field("id")})
    with pytest.raises(TypeError):
        ds.add_columns({"c": 5})
    with pytest.raises(ValueError, match="values"):
        ds.add_columns({"c": lambda rows: pa.array([1])})
    with pytest.raises(ValueError):
        ds.add_columns({})
    assert Dataset.open(tmp_path / "ds").version == 1


# -- drop_columns ---------------------------------------------------------------------------


def test_drop_columns_matches_pylance(base):
    ds = base.add_columns({"twice": pc.field("id") * pa.scalar(2, pa.int32())})
    theirs = pylance_copy(ds)
    ds = ds.drop_columns(["point.y", "twice"])
    lance.dataset(theirs).drop_columns(["point.y", "twice"])
    assert isinstance(operation_of(ds), Project)
    assert [f.name for f in ds.schema.fields] == ["id", "name", "point", "x", "scores", "item"]
    # The added column's file held nothing else and is gone; the first file
    # keeps listing the dropped id 4, as pylance's does.
    assert all(len(f.files) == 1 and 4 in f.files[0].fields for f in ds.fragments)
    assert ds.schema.metadata == {"origin": b"tests"}, "a Project keeps the schema metadata"
    assert_same_as_pylance(ds, theirs)

    theirs_again = str(ds.storage.root.parent / "theirs-2")
    shutil.copytree(ds.storage.root, theirs_again)
    ds = ds.drop_columns("point.x")  # the struct's last child: the struct goes too
    lance.dataset(theirs_again).drop_columns(["point.x"])
    assert [f.name for f in ds.schema.fields] == ["id", "name", "scores", "item"]
    assert_same_as_pylance(ds, theirs_again)
    assert assert_pylance_agrees(ds.uri) == 5


def test_drop_columns_refusals(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table())
    with pytest.raises(KeyError):
        ds.drop_columns(["nope"])
    with pytest.raises(ValueError, match="every column"):
        ds.drop_columns(["id", "name", "point", "scores"])
    with pytest.raises(ValueError, match="inside"):
        ds.drop_columns(["scores.item"])
    assert Dataset.open(tmp_path / "ds").version == 1


# -- alter_columns --------------------------------------------------------------------------


def test_rename_and_nullability_match_pylance(base):
    theirs = pylance_copy(base)
    alterations = (
        {"path": "point.x", "name": "px"},
        {"path": "name", "name": "title"},
        {"path": "id", "nullable": False},
    )
    ds = base.alter_columns(*alterations)
    lance.dataset(theirs).alter_columns(*alterations)
    op = operation_of(ds)
    assert isinstance(op, Project) and not op.preserves_nullability
    assert field_rows(ds.uri)[:4] == [
        (0, -1, "id", "int32", False),
        (1, -1, "title", "string", True),
        (2, -1, "point", "struct", True),
        (3, 2, "px", "double", True),
    ]
    assert_same_as_pylance(ds, theirs)
    assert last_updated(ds.uri) == last_updated(theirs), "a Project updates no row"

    ds = ds.alter_columns({"path": "id", "nullable": True})
    assert operation_of(ds).preserves_nullability
    assert assert_pylance_agrees(ds.uri) == 4


def test_nulls_block_making_a_field_non_nullable(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table(), max_rows_per_file=4)
    theirs = pylance_copy(ds)
    with pytest.raises(ValueError, match="3 nulls"):
        ds.alter_columns({"path": "name", "nullable": False})
    with pytest.raises(Exception, match="NULL"):
        lance.dataset(theirs).alter_columns({"path": "name", "nullable": False})
    # Once the rows holding nulls are deleted, the column can be made non-nullable.
    ds = delete_offsets(ds, 0, [0])
    ds = delete_offsets(ds, 1, [0])
    ds = delete_offsets(ds, 2, [0])
    ds = ds.alter_columns({"path": "name", "nullable": False}, {"path": "point.y", "nullable": False})
    assert [f.nullable for f in ds.schema.fields] == [True, False, True, True, False, True, True]
    assert_pylance_agrees(tmp_path / "ds")


def test_cast_tombstones_the_old_ids_and_pylance_reads_it(base):
    theirs = pylance_copy(base)
    alterations = (
        {"path": "id", "data_type": pa.int64()},
        {"path": "scores", "name": "marks", "data_type": pa.list_(pa.int64())},
    )
    ds = base.alter_columns(*alterations)
    lance.dataset(theirs).alter_columns(*alterations)
    assert isinstance(operation_of(ds), Merge)
    assert field_rows(ds.uri)[0] == (7, -1, "id", "int64", True)
    assert field_rows(ds.uri)[-2:] == [(8, -1, "marks", "list", True), (9, 8, "item", "int64", True)]
    theirs_files = [[d.fields for d in f.files] for f in Dataset.open(theirs).fragments]
    for fragment, their_files in zip(ds.fragments, theirs_files, strict=True):
        # The table overview page: the old file lists -2 where pylance leaves the old ids.
        assert fragment.files[0].fields == [TOMBSTONE_FIELD_ID, 1, 2, 3, 4, TOMBSTONE_FIELD_ID, TOMBSTONE_FIELD_ID]
        assert their_files[0] == [0, 1, 2, 3, 4, 5, 6]
        assert fragment.files[1].fields == their_files[1] == [7, 8, 9]
    assert_same_as_pylance(ds, theirs)
    if base.uses_stable_row_ids:
        assert last_updated(ds.uri) == last_updated(theirs)
    assert assert_pylance_agrees(ds.uri) == 3


def test_cast_of_an_added_column_drops_its_emptied_file(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table(), max_rows_per_file=4)
    ds = ds.update_metadata(field_metadata={"id": {"unit": "count"}})
    ds = ds.add_columns({"small": pc.field("id")})
    theirs = pylance_copy(ds)
    alterations = ({"path": "small", "data_type": pa.int16()}, {"path": "id", "data_type": pa.int64()})
    ds = ds.alter_columns(*alterations)
    lance.dataset(theirs).alter_columns(*alterations)
    assert Dataset.open(theirs).schema.fields[0].metadata == {}, "pylance drops the metadata"
    assert field_rows(ds.uri) == field_rows(theirs)
    assert all([d.fields for d in f.files] == [[-2, 1, 2, 3, 4, 5, 6], [8, 9]] for f in ds.fragments)
    assert ds.schema.fields[0].metadata == {"unit": b"count"}, "metadata survives a cast"
    assert ds.to_table().column("small").type == pa.int16()
    assert assert_pylance_agrees(tmp_path / "ds") == 4


def test_pylance_nested_cast_tombstones_the_struct_and_cannot_read_it(tmp_path):
    """Why the reference refuses nested casts: pylance 14 gives the child a
    new id, writes a file listing the struct's id and the new child's,
    tombstones the *struct's* id in the old file (the child's old id stays),
    and then cannot read the struct (docs/spec-discrepancies.md)."""
    path = str(tmp_path / "pylance")
    table = pa.table({"id": pa.array([1, 2], pa.int32()), "s": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]})
    # 2.0 on purpose: at its default 2.2, pylance 14 lays the cast out
    # otherwise and reads the struct back; the refusal is about 2.0 tables.
    lance.write_dataset(table, path, data_storage_version="2.0")
    lance.dataset(path).alter_columns({"path": "s.a", "data_type": pa.int32()})
    (fragment,) = Dataset.open(path).fragments
    assert [d.fields for d in fragment.files] == [[0, TOMBSTONE_FIELD_ID, 2, 3], [1, 4]]
    with pytest.raises(pa.ArrowInvalid, match="column indices"):
        lance.dataset(path).to_table()


def test_alter_refusals(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table().set_column(0, "id", pa.array([1000] * ROWS, pa.int32())))
    theirs = pylance_copy(ds)
    with pytest.raises(ValueError, match="cannot cast"):
        ds.alter_columns({"path": "id", "data_type": pa.string()})
    with pytest.raises(Exception, match="Cannot cast"):
        lance.dataset(theirs).alter_columns({"path": "id", "data_type": pa.string()})
    with pytest.raises(ValueError):  # 1000 does not fit an int8
        ds.alter_columns({"path": "id", "data_type": pa.int8()})
    with pytest.raises(UnsupportedFeatureError):
        ds.alter_columns({"path": "point.x", "data_type": pa.float32()})
    with pytest.raises(ValueError, match="share a parent"):
        ds.alter_columns({"path": "point.x", "name": "y"})
    with pytest.raises(ValueError, match="twice"):
        ds.alter_columns({"path": "id", "name": "a"}, {"path": "id", "nullable": False})
    with pytest.raises(ValueError, match="unknown"):
        ds.alter_columns({"path": "id", "rename": "a"})
    with pytest.raises(KeyError):
        ds.alter_columns({"path": "missing", "name": "a"})
    assert Dataset.open(tmp_path / "ds").version == 1


# -- update_metadata -------------------------------------------------------------------------


def test_metadata_round_trip_visible_in_pylance(base):
    theirs = pylance_copy(base)
    ds = base.update_metadata(
        config={"team": "search", "lance.conformance.note": "reserved prefix, stored as given"},
        table_metadata={"owner": "h7"},
        schema_metadata={"stage": "raw"},
        field_metadata={"point.x": {"unit": "m"}, "id": {"key": "yes"}},
    )
    op = operation_of(ds)
    assert isinstance(op, UpdateConfig)
    assert not (op.upsert_values or op.delete_keys or op.schema_metadata or op.field_metadata)
    assert sorted(op.field_metadata_updates) == [0, 3]
    ds = ds.update_metadata(
        config={"team": None}, schema_metadata={"origin": None}, field_metadata={"id": {"key": None}}
    )
    ds = ds.update_metadata(table_metadata={"owner": "lead"}, replace=True)

    pl = lance.dataset(theirs)
    pl.update_config({"team": "search", "lance.conformance.note": "reserved prefix, stored as given"})
    pl.update_metadata({"owner": "h7"})
    pl.update_schema_metadata({"stage": "raw"})
    pl.update_field_metadata({"point.x": {"unit": "m"}, "id": {"key": "yes"}})
    pl.update_config({"team": None})
    pl.update_schema_metadata({"origin": None})
    pl.update_field_metadata({"id": {"key": None}})
    pl.update_metadata({"owner": "lead"}, replace=True)

    ours = lance.dataset(ds.uri)
    assert ours.config() == {"lance.conformance.note": "reserved prefix, stored as given"}
    assert ours.metadata == {"owner": "lead"}
    assert ours.schema.metadata == {b"stage": b"raw"}
    assert ours.schema.field("point").type.field("x").metadata == {b"unit": b"m"}
    assert ours.schema.field("id").metadata is None
    mine, pylances = Dataset.open(ds.uri).manifest, Dataset.open(theirs).manifest
    assert (mine.config, mine.table_metadata) == (pylances.config, pylances.table_metadata)
    # Equal but for the field roles, which pylance writes as PARENT throughout.
    assert mine.schema.metadata == pylances.schema.metadata
    assert [dataclasses.replace(f, type=0) for f in mine.schema.fields] == [
        dataclasses.replace(f, type=0) for f in pylances.schema.fields
    ]
    assert (mine.reader_feature_flags, mine.writer_feature_flags) == (
        pylances.reader_feature_flags,
        pylances.writer_feature_flags,
    )
    assert assert_pylance_agrees(ds.uri) == 5


def test_replace_with_an_empty_map_clears_it(tmp_path):
    ds = Dataset.create(tmp_path / "ds", base_table())
    ds = ds.update_metadata(config={"a": "1", "b": "2"})
    ds = ds.update_metadata(config={}, schema_metadata={}, replace=True)
    assert ds.manifest.config == {} and ds.schema.metadata == {}
    assert lance.dataset(tmp_path / "ds").config() == {}
    with pytest.raises(ValueError, match="nothing"):
        ds.update_metadata()
    with pytest.raises(TypeError):
        ds.update_metadata(config={"a": 1})
    with pytest.raises(KeyError):
        ds.update_metadata(field_metadata={"nope": {"a": "b"}})
    assert_pylance_agrees(tmp_path / "ds")
