"""The reference writer's delete and update (``reference_impl/operations/delete.py``),
checked three ways: pylance reads every version exactly as we do
(``assert_pylance_agrees``), the same operations done by pylance on a copy of
the data give the same visible rows and deleted offsets, and a Hypothesis
property compares the reference dataset with a plain in-memory model.

Spec passages: the older table format page "Deletion" and the table overview
page "Deletion Files" (deletion files, their name and kinds), table.proto
``DataFragment.physical_rows`` and ``DeletionFile.num_deleted_rows``, the older
table format page "Feature: Move-Stable Row IDs" (updated rows get new row
ids), and ``transaction.proto`` (``Delete``, ``Update``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.drivers import pylance_driver, reference
from reference_impl.dataset import Dataset
from reference_impl.fragments import DeletionFileType
from reference_impl.operations.delete import OFFSETS_PREDICATE, update
from reference_impl.row_ids import fragment_created_at_versions, fragment_last_updated_at_versions
from reference_impl.transactions import Delete, Update, UpdateMode, read_transaction_file
from tests.writer_checks import assert_pylance_agrees

lance = pytest.importorskip("lance")

POINT = pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("name", pa.string()),
        pa.field("point", POINT),
        pa.field("tags", pa.list_(pa.string())),
    ]
)
ROWS_PER_FRAGMENT = 10
CONFIGS = [
    pytest.param(naming, stable, id=f"{naming}-{'stable' if stable else 'addresses'}")
    for naming in ("v1", "v2")
    for stable in (False, True)
]


def rows(start: int, count: int) -> pa.Table:
    """Rows ``start..start+count``: ``id`` is the row number, and row ``i`` of
    the initial table sits at offset ``i % 10`` of fragment ``i // 10``."""
    ids = range(start, start + count)
    return pa.table(
        {
            "id": list(ids),
            "value": [None if i % 4 == 0 else i / 2 for i in ids],
            "name": [None if i % 5 == 0 else f"row {i}" for i in ids],
            "point": [{"x": float(i), "y": None if i % 3 == 0 else -float(i)} for i in ids],
            "tags": [[f"t{j}" for j in range(i % 3)] for i in ids],
        },
        schema=SCHEMA,
    )


def create(path: Path, naming: str = "v2", stable: bool = False) -> Dataset:
    """Version 1: fragments 0-2 of ten rows (ids 0-29); version 2 appends
    fragment 3 of five rows (ids 30-34)."""
    ds = Dataset.create(
        path, rows(0, 30), manifest_naming=naming, stable_row_ids=stable, max_rows_per_file=ROWS_PER_FRAGMENT
    )
    return ds.append(rows(30, 5))


def pylance_copy(ours: Path, tmp_path: Path) -> Path:
    """A copy of the dataset for pylance to apply the same operations to."""
    theirs = tmp_path / "pylance-copy"
    shutil.copytree(ours, theirs)
    return theirs


def ids_in(*ids: int) -> tuple[pc.Expression, str]:
    """The same predicate for us (an expression) and for pylance (SQL)."""
    return pc.is_in(pc.field("id"), pa.array(ids, pa.int64())), f"id IN ({', '.join(map(str, ids))})"


def between(low: int, high: int) -> tuple[pc.Expression, str]:
    """``low <= id < high`` for us and for pylance."""
    return (pc.field("id") >= low) & (pc.field("id") < high), f"id >= {low} AND id < {high}"


def fragment_shapes(description: dict) -> list[tuple]:
    """What a delete or update decides per fragment: id, physical rows and
    deleted offsets (table.proto ``DataFragment``, ``DeletionFile``)."""
    return [
        (f["id"], f["physical_rows"], f["num_deleted_rows"], f["deleted_offsets"]) for f in description["fragments"]
    ]


def assert_same_as_pylance(ours: Path, theirs: Path, *, same_row_ids: bool = True) -> None:
    """Our dataset (read by our reader) and pylance's copy (read by pylance)
    are at the same version with the same fragments, deleted offsets and
    visible rows in the same order; the row ids too unless pylance's update
    kept ids where we assign new ones (docs/spec-discrepancies.md)."""
    mine, peer = reference.describe(ours), pylance_driver.describe(theirs)
    assert mine["version"] == peer["version"]
    assert mine["num_rows"] == peer["num_rows"]
    assert mine["max_fragment_id"] == peer["max_fragment_id"]
    assert fragment_shapes(mine) == fragment_shapes(peer)
    expected = lance.dataset(str(theirs)).to_table(with_row_id=same_row_ids)
    assert Dataset.open(ours).to_table(with_row_id=same_row_ids).to_pylist() == expected.to_pylist()


def transaction_of(ds: Dataset):
    return read_transaction_file(ds.storage, ds.manifest.transaction_file)


def fragment(ds: Dataset, fragment_id: int):
    return next(f for f in ds.fragments if f.id == fragment_id)


def visible_ids(ds: Dataset) -> list[int]:
    return ds.to_table()["id"].to_pylist()


# -- delete ------------------------------------------------------------------------


@pytest.mark.parametrize("naming, stable", CONFIGS)
def test_deletes_agree_with_pylance_at_every_step(tmp_path, naming, stable):
    """Deletes by expression across fragments, repeated deletes on one
    fragment (the new deleted set is the union of the old and the new),
    and deletes that empty a fragment (it leaves the manifest) give the
    fragments, deleted offsets and rows pylance gives for the same deletes."""
    ours = tmp_path / "ours"
    ds = create(ours, naming, stable)
    theirs = pylance_copy(ours, tmp_path)
    steps = [
        between(0, 3),  # fragment 0: offsets 0-2
        ids_in(5, 7, 31),  # fragment 0 again, and fragment 3
        between(10, 20),  # the whole of fragment 1
        between(0, 10),  # the rest of fragment 0, which has a deletion file
        ids_in(29, 30, 32, 33),  # all but one row of fragment 3
    ]
    for expression, sql in steps:
        ds = ds.delete(expression)
        lance.dataset(str(theirs)).delete(sql)
        assert_same_as_pylance(ours, theirs)
    assert [f.id for f in ds.fragments] == [2, 3]
    assert visible_ids(ds) == [*range(20, 29), 34]
    assert assert_pylance_agrees(ours) == 2 + len(steps)


def test_a_delete_writes_one_deletion_file_per_fragment_built_on_the_version_read(tmp_path):
    """The older table format page "Deletion": ``_deletions/{fragment_id}-{read_version}-{id}``,
    read_version being the version the delete read; the manifest records
    ``num_deleted_rows``; the ``Delete`` transaction carries the updated
    fragments, the removed ids and the predicate."""
    ds = create(tmp_path / "ds")
    read_version = ds.version
    ds = ds.delete((pc.field("id") < 2) | (pc.field("id") >= 30))
    txn = transaction_of(ds)
    assert txn.read_version == read_version
    assert isinstance(txn.operation, Delete)
    assert txn.operation.predicate == "((id < 2) or (id >= 30))"
    assert txn.operation.deleted_fragment_ids == [3]
    (updated,) = txn.operation.updated_fragments
    assert updated.id == 0 and updated.deletion_file.num_deleted_rows == 2
    assert updated.deletion_file.read_version == read_version
    relpath = updated.deletion_file.path(0)
    assert relpath.startswith(f"_deletions/0-{read_version}-") and (tmp_path / "ds" / relpath).is_file()
    assert fragment(ds, 0) == updated
    assert ds.deleted_offsets(updated) == [0, 1]


@pytest.mark.parametrize("naming, stable", CONFIGS)
def test_deletes_by_offsets_agree_with_pylance(tmp_path, naming, stable):
    """A mapping ``{fragment_id: offsets}`` deletes those physical rows;
    offsets already deleted are simply part of the union, and deleting every
    offset of a fragment removes it."""
    ours = tmp_path / "ours"
    ds = create(ours, naming, stable)
    theirs = pylance_copy(ours, tmp_path)
    steps = [
        ({0: [1, 8], 2: [0]}, ids_in(1, 8, 20)),
        ({0: [8, 9], 1: []}, ids_in(9)),
        ({3: range(5)}, between(30, 35)),
    ]
    for offsets, (_, sql) in steps:
        ds = ds.delete(offsets)
        lance.dataset(str(theirs)).delete(sql)
        assert_same_as_pylance(ours, theirs)
        assert transaction_of(ds).operation.predicate == OFFSETS_PREDICATE
    assert ds.deleted_offsets(fragment(ds, 0)) == [1, 8, 9]
    assert [f.id for f in ds.fragments] == [0, 1, 2]
    assert assert_pylance_agrees(ours) == 2 + len(steps)


def test_offsets_that_are_already_deleted_change_nothing(tmp_path):
    """Deleting offsets already deleted leaves the fragment (and its deletion
    file) as it was; the version is still committed, with an empty Delete."""
    ds = create(tmp_path / "ds").delete({0: [4]})
    before = fragment(ds, 0)
    ds = ds.delete({0: [4]})
    assert fragment(ds, 0) == before
    assert transaction_of(ds).operation == Delete(predicate=OFFSETS_PREDICATE)
    assert_pylance_agrees(tmp_path / "ds")


@pytest.mark.parametrize("stable", [False, True])
def test_dense_deletions_go_to_bitmaps_and_sparse_ones_to_arrow_files(tmp_path, stable):
    """The older table format page: Roaring bitmaps (``.bin``) for dense sets, Arrow files for
    small ones; the kind is chosen from the union, so a fragment can move
    from ``.arrow`` to ``.bin`` as deletions accumulate. pylance reads both."""
    path = tmp_path / "ds"
    ds = create(path, stable=stable)
    ds = ds.delete({0: range(6), 2: [9]})
    assert fragment(ds, 0).deletion_file.file_type is DeletionFileType.BITMAP
    assert fragment(ds, 2).deletion_file.file_type is DeletionFileType.ARROW_ARRAY
    ds = ds.delete({2: [1]})
    assert fragment(ds, 2).deletion_file.file_type is DeletionFileType.ARROW_ARRAY
    ds = ds.delete({2: [3, 5, 7]})
    assert fragment(ds, 2).deletion_file.file_type is DeletionFileType.BITMAP
    assert ds.deleted_offsets(fragment(ds, 2)) == [1, 3, 5, 7, 9]
    kinds = {p.suffix for p in (path / "_deletions").iterdir()}
    assert kinds == {".arrow", ".bin"}
    assert visible_ids(ds) == [6, 7, 8, 9, *range(10, 20), 20, 22, 24, 26, 28, *range(30, 35)]
    assert assert_pylance_agrees(path) == 5


def test_a_delete_that_matches_nothing_still_commits_like_pylance(tmp_path):
    """Upstream Lance commits a Delete even when no row matches; so do we, so
    the two stay at the same version number."""
    ours = tmp_path / "ours"
    ds = create(ours)
    theirs = pylance_copy(ours, tmp_path)
    ds = ds.delete(pc.field("id") > 1000)
    lance.dataset(str(theirs)).delete("id > 1000")
    assert ds.version == 3 and ds.fragments == Dataset.open(ours, 2).fragments
    assert transaction_of(ds).operation == Delete(predicate="(id > 1000)")
    assert_same_as_pylance(ours, theirs)
    assert_pylance_agrees(ours)


def test_a_null_predicate_deletes_nothing(tmp_path):
    """SQL semantics: rows where the predicate is null are not selected
    (``value`` is null on every fourth row)."""
    ours = tmp_path / "ours"
    ds = create(ours)
    theirs = pylance_copy(ours, tmp_path)
    ds = ds.delete(pc.field("value") < 3)
    lance.dataset(str(theirs)).delete("value < 3")
    assert visible_ids(ds)[:4] == [0, 4, 6, 7]
    assert_same_as_pylance(ours, theirs)


def test_delete_refuses_what_it_cannot_apply(tmp_path):
    ds = create(tmp_path / "ds")
    with pytest.raises(ValueError, match="fragment 9"):
        ds.delete({9: [0]})
    with pytest.raises(ValueError, match="offset"):
        ds.delete({3: [5]})
    with pytest.raises(ValueError, match="offset"):
        ds.delete({0: [-1]})
    with pytest.raises(TypeError, match="Expression"):
        ds.delete("id < 3")
    with pytest.raises(TypeError, match="boolean"):
        ds.delete(pc.field("id") + 1)
    assert ds.versions() == [1, 2]


# -- update ------------------------------------------------------------------------


@pytest.mark.parametrize("naming, stable", CONFIGS)
def test_updates_agree_with_pylance(tmp_path, naming, stable):
    """REWRITE_ROWS: the selected rows are deleted from their fragments (a
    fragment whose rows all move is removed) and written with their new
    values as a new fragment after the others. With stable row ids the
    moved rows get new ids (older table format page), so row ids are compared with pylance
    only without them."""
    ours = tmp_path / "ours"
    ds = create(ours, naming, stable)
    theirs = pylance_copy(ours, tmp_path)
    steps = [
        (
            {"name": "changed", "value": pc.field("value") * 10},
            {"name": "'changed'", "value": "value * 10"},
            ids_in(2, 3, 12, 31),
        ),
        ({"value": pc.field("id") + 0.5}, {"value": "CAST(id AS DOUBLE) + 0.5"}, between(30, 35)),
        ({"name": pc.field("name")}, {"name": "name"}, ids_in(2, 12)),
    ]
    for values, sql_values, (expression, sql) in steps:
        ds = ds.update(values, expression)
        lance.dataset(str(theirs)).update(sql_values, where=sql)
        assert_same_as_pylance(ours, theirs, same_row_ids=not stable)
    # Fragment 3 moved whole in the second step; id 31 moved twice.
    assert [(f.id, f.physical_rows, f.num_deleted_rows) for f in ds.fragments] == [
        (0, 10, 2),
        (1, 10, 1),
        (2, 10, 0),
        (4, 4, 3),
        (5, 5, 0),
        (6, 2, 0),
    ]
    table = ds.to_table().to_pylist()
    assert [r["id"] for r in table[-8:]] == [3, 30, 32, 33, 34, 31, 2, 12]
    assert table[-8]["name"] == "changed" and table[-3]["value"] == 31.5
    assert assert_pylance_agrees(ours) == 2 + len(steps)


def test_an_update_records_rewrite_rows_and_the_modified_fields(tmp_path):
    """``transaction.proto`` ``Update``: removed fragment ids, the fragments
    given deletion files, the new fragments, ``fields_modified`` (here
    ``value`` and ``point.x`` with its parent ``point``) and the mode."""
    ds = create(tmp_path / "ds")
    ds = ds.update({"value": 1.0, "point.x": 0.0}, between(5, 20)[0])
    txn = transaction_of(ds)
    assert isinstance(txn.operation, Update)
    op = txn.operation
    assert op.update_mode is UpdateMode.REWRITE_ROWS
    assert op.removed_fragment_ids == [1]
    assert [(f.id, f.deletion_file.num_deleted_rows) for f in op.updated_fragments] == [(0, 5)]
    assert [f.physical_rows for f in op.new_fragments] == [15]
    names = {f.id: f.name for f in ds.schema.fields}
    assert sorted(names[i] for i in op.fields_modified) == ["point", "value", "x"]
    assert [f.id for f in ds.fragments] == [0, 2, 3, 4]


def test_updated_rows_get_new_row_ids_and_versions(tmp_path):
    """The older table format page (move-stable row ids): an updated row "is typically assigned
    a new row id rather than reusing the old one"; the new ids come from
    ``next_row_id`` and the rows' created and last-updated versions are the
    update's version. Rows left in place keep their ids and versions.
    pylance 14 keeps the old id (docs/spec-discrepancies.md)."""
    path = tmp_path / "ds"
    ds = create(path, stable=True)
    assert ds.manifest.next_row_id == 35
    ds = ds.update({"name": "moved"}, ids_in(1, 2, 33)[0])
    assert ds.manifest.next_row_id == 38
    new = fragment(ds, 4)
    assert ds.row_ids(new) == [35, 36, 37]
    assert fragment_created_at_versions(ds.storage, new) == [3, 3, 3]
    assert fragment_last_updated_at_versions(ds.storage, new) == [3, 3, 3]
    kept = fragment(ds, 0)
    assert ds.row_ids(kept) == list(range(10))
    assert fragment_created_at_versions(ds.storage, kept) == [1] * 10
    by_id = {r["id"]: r["_rowid"] for r in ds.to_table(with_row_id=True).to_pylist()}
    assert [by_id[i] for i in (0, 1, 2, 3, 33)] == [0, 35, 36, 3, 37]
    assert_pylance_agrees(path)


@pytest.mark.parametrize("stable", [False, True])
def test_an_update_without_where_rewrites_every_row(tmp_path, stable):
    """No ``where``: every visible row moves, every fragment is removed, and
    rows deleted earlier stay deleted."""
    ours = tmp_path / "ours"
    ds = create(ours, stable=stable).delete(between(0, 5)[0])
    theirs = pylance_copy(ours, tmp_path)
    ds = ds.update({"tags": ["all"]})
    lance.dataset(str(theirs)).update({"tags": "make_array('all')"})
    assert transaction_of(ds).operation.removed_fragment_ids == [0, 1, 2, 3]
    assert [(f.id, f.physical_rows) for f in ds.fragments] == [(4, 30)]
    assert visible_ids(ds) == list(range(5, 35))
    assert_same_as_pylance(ours, theirs, same_row_ids=not stable)
    assert assert_pylance_agrees(ours) == 4


def test_updates_with_nulls(tmp_path):
    """Setting nulls (a Python None, an expression over nulls, a null struct
    child, a null list), and a where that is null on some rows. Without
    stable row ids, so that pylance's row ids (addresses) are compared too."""
    stable = False
    ours = tmp_path / "ours"
    ds = create(ours, stable=stable)
    theirs = pylance_copy(ours, tmp_path)
    steps = [
        ({"name": None, "value": pc.field("value") + 1}, {"name": "NULL", "value": "value + 1"}, ids_in(0, 1, 11)),
        ({"tags": None}, {"tags": "arrow_cast(NULL, 'List(Utf8)')"}, (pc.field("value") > 14, "value > 14")),
        ({"point.y": None}, {"point": "named_struct('x', point.x, 'y', CAST(NULL AS DOUBLE))"}, ids_in(4, 5)),
    ]
    for values, sql_values, (expression, sql) in steps:
        ds = ds.update(values, expression)
        lance.dataset(str(theirs)).update(sql_values, where=sql)
        assert_same_as_pylance(ours, theirs, same_row_ids=not stable)
    row = {r["id"]: r for r in ds.to_table().to_pylist()}
    assert row[1]["name"] is None and row[1]["value"] == 1.5 and row[0]["value"] is None
    assert row[30]["tags"] is None and row[32]["tags"] == ["t0", "t1"]
    assert row[5]["point"] == {"x": 5.0, "y": None}
    assert assert_pylance_agrees(ours) == 5


def test_updates_on_nested_columns(tmp_path):
    """A whole struct from a Python value, a struct child by dotted path from
    an expression over the old row, and a list column; with stable row ids."""
    stable = True
    ours = tmp_path / "ours"
    ds = create(ours, stable=stable)
    theirs = pylance_copy(ours, tmp_path)
    steps = [
        (
            {"point": {"x": 1.5, "y": None}},
            {"point": "named_struct('x', 1.5, 'y', CAST(NULL AS DOUBLE))"},
            ids_in(3, 13),
        ),
        (
            {"point.x": pc.field("point", "x") * 2},
            {"point": "named_struct('x', point.x * 2, 'y', point.y)"},
            between(8, 14),
        ),
        ({"tags": ["a", None]}, {"tags": "make_array('a', NULL)"}, ids_in(22)),
    ]
    for values, sql_values, (expression, sql) in steps:
        ds = ds.update(values, expression)
        lance.dataset(str(theirs)).update(sql_values, where=sql)
        assert_same_as_pylance(ours, theirs, same_row_ids=not stable)
    row = {r["id"]: r for r in ds.to_table().to_pylist()}
    assert row[3]["point"] == {"x": 1.5, "y": None} and row[13]["point"] == {"x": 3.0, "y": None}
    assert row[9]["point"] == {"x": 18.0, "y": None} and row[10]["point"] == {"x": 20.0, "y": -10.0}
    assert row[22]["tags"] == ["a", None]
    assert assert_pylance_agrees(ours) == 5


def test_an_update_can_spread_over_several_new_fragments(tmp_path):
    """The new rows are cut like any write (``max_rows_per_file``); the
    fragments get consecutive ids after the highest one ever used."""
    ds = update(create(tmp_path / "ds"), {"name": "x"}, between(0, 25)[0], max_rows_per_file=10)
    assert [(f.id, f.physical_rows) for f in ds.fragments] == [(2, 10), (3, 5), (4, 10), (5, 10), (6, 5)]
    assert visible_ids(ds) == [*range(25, 35), *range(25)]
    assert assert_pylance_agrees(tmp_path / "ds") == 3


def test_an_update_that_matches_nothing_still_commits_like_pylance(tmp_path):
    ours = tmp_path / "ours"
    ds = create(ours)
    theirs = pylance_copy(ours, tmp_path)
    ds = ds.update({"name": "x"}, pc.field("id") < 0)
    lance.dataset(str(theirs)).update({"name": "'x'"}, where="id < 0")
    op = transaction_of(ds).operation
    assert (op.removed_fragment_ids, op.updated_fragments, op.new_fragments) == ([], [], [])
    assert_same_as_pylance(ours, theirs)


def test_update_refuses_what_it_cannot_apply(tmp_path):
    ds = create(tmp_path / "ds")
    with pytest.raises(ValueError, match="at least one"):
        ds.update({})
    with pytest.raises(ValueError, match="no column 'missing'"):
        ds.update({"missing": 1})
    with pytest.raises(ValueError, match="not a struct"):
        ds.update({"name.x": 1})
    with pytest.raises(ValueError, match="not nullable"):
        ds.update({"id": None}, pc.field("id") == 3)
    with pytest.raises(ValueError, match="both"):
        ds.update({"point": None, "point.x": 1.0})
    with pytest.raises(ValueError, match="not a value"):
        ds.update({"point": "text"})
    assert ds.versions() == [1, 2]


# -- the property ------------------------------------------------------------------

#: The property's table: twelve rows in three fragments of four.
MODEL_ROWS = 12

ids_subset = st.lists(st.integers(0, MODEL_ROWS - 1), unique=True, max_size=6)
operations = st.one_of(
    st.tuples(st.just("delete_ids"), ids_subset),
    st.tuples(st.just("delete_value_above"), st.integers(-2, 14)),
    st.tuples(st.just("add_to_value"), st.one_of(st.none(), ids_subset), st.integers(-3, 3)),
    st.tuples(st.just("set_name"), st.one_of(st.none(), ids_subset), st.sampled_from([None, "a", "b"])),
)


def model_table() -> list[dict]:
    """The starting rows; ``value`` is null on every third row."""
    return [{"id": i, "value": None if i % 3 == 0 else i, "name": f"n{i}"} for i in range(MODEL_ROWS)]


def selects(where, row: dict) -> bool:
    """The model's reading of a ``where``: None selects every row."""
    return where is None or row["id"] in where


def apply_to_model(model: list[dict], op: tuple, next_row_id: int) -> tuple[list[dict], int]:
    """One operation on the in-memory model: deletes drop rows; updates move
    the selected rows, changed and with new row ids, after all others."""
    kind = op[0]
    if kind == "delete_ids":
        return [r for r in model if r["id"] not in op[1]], next_row_id
    if kind == "delete_value_above":
        return [r for r in model if not (r["value"] is not None and r["value"] > op[1])], next_row_id
    kept = [r for r in model if not selects(op[1], r)]
    moved = []
    for r in (r for r in model if selects(op[1], r)):
        if kind == "add_to_value":
            r = dict(r, value=None if r["value"] is None else r["value"] + op[2])
        else:
            r = dict(r, name=op[2])
        moved.append(dict(r, _rowid=next_row_id))
        next_row_id += 1
    return kept + moved, next_row_id


def apply_to_dataset(ds: Dataset, op: tuple) -> Dataset:
    """The same operation through the reference writer."""
    kind = op[0]
    if kind == "delete_ids":
        return ds.delete(pc.is_in(pc.field("id"), pa.array(op[1], pa.int64())))
    if kind == "delete_value_above":
        return ds.delete(pc.field("value") > op[1])
    where = None if op[1] is None else pc.is_in(pc.field("id"), pa.array(op[1], pa.int64()))
    if kind == "add_to_value":
        return ds.update({"value": pc.field("value") + op[2]}, where)
    return ds.update({"name": op[2]}, where)


#: A quarter of the profile's examples (12 under ``ci``): each one writes a dataset.
@settings(max_examples=max(1, settings.default.max_examples // 4))
@given(ops=st.lists(operations, min_size=1, max_size=5), stable=st.booleans())
def test_random_deletes_and_updates_match_an_in_memory_model(tmp_path_factory, ops, stable):
    """Property: for any sequence of deletes and updates on a small table,
    the reference dataset's visible rows, in scan order, equal those of a
    plain list-of-dicts model in which deletes drop rows and updates move
    the changed rows after all others; with stable row ids, the model's row
    ids too (moved rows take the next ids). pylance reads the final version
    exactly as we do."""
    path = tmp_path_factory.mktemp("h6-model") / "ds"
    table = pa.table(
        {k: [r[k] for r in model_table()] for k in ("id", "value", "name")},
        schema=pa.schema([("id", pa.int64()), ("value", pa.int64()), ("name", pa.string())]),
    )
    ds = Dataset.create(path, table, stable_row_ids=stable, max_rows_per_file=4)
    model = [dict(r, _rowid=r["id"]) for r in model_table()]
    next_row_id = MODEL_ROWS
    for op in ops:
        ds = apply_to_dataset(ds, op)
        model, next_row_id = apply_to_model(model, op, next_row_id)
    expected = model if stable else [{k: v for k, v in r.items() if k != "_rowid"} for r in model]
    assert ds.to_table(with_row_id=stable).to_pylist() == expected
    assert lance.dataset(str(path)).to_table(with_row_id=stable).to_pylist() == expected
    assert_pylance_agrees(path, versions=[ds.version])
