"""Datasets written by pylance 14, one per table-format feature.

Every builder takes the path of a directory that does not exist yet, writes one
dataset there with pylance's public API and then checks that the dataset really
shows the feature it is named after (the kind of deletion file, the manifest
naming scheme, the data file version, ...). A builder that cannot produce what
it claims raises :class:`ScenarioError`, so a pylance upgrade that changes
behaviour breaks the build instead of silently weakening the suite.

All data comes from :func:`make_rows` / :func:`make_rich_rows`: the values are a
pure function of the row id, so two builds of a scenario hold the same rows
(file names, UUIDs and timestamps still differ between builds).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

U64_MAX = (1 << 64) - 1


class ScenarioError(AssertionError):
    """A scenario did not produce the dataset feature it is named after."""


def _require(condition: bool, message: str) -> None:
    # Not ``assert``: these checks must also run under ``python -O``.
    if not condition:
        raise ScenarioError(message)


# ---------------------------------------------------------------------------
# Deterministic data
# ---------------------------------------------------------------------------

POINT_TYPE = pa.struct([("x", pa.int32()), ("y", pa.string())])
VECTOR_TYPE = pa.list_(pa.float32(), 3)


def make_rows(start: int, count: int, *, nested: bool = False, struct_nulls: bool = True) -> pa.Table:
    """Rows ``start .. start + count - 1``; every value derives from the row id.

    ``id`` is non-nullable and unique. ``value`` is null on every 7th row and
    ``label`` on every 5th. With ``nested`` the rows also carry a struct, a
    list and a fixed-size list, each null on its own period;
    ``struct_nulls=False`` keeps the struct itself valid (only its children
    are null) because the 2.0 file format refuses null structs.
    """
    ids = list(range(start, start + count))
    columns: dict[str, pa.Array] = {
        "id": pa.array(ids, pa.int64()),
        "value": pa.array([None if i % 7 == 0 else i * 0.5 for i in ids], pa.float64()),
        "label": pa.array([None if i % 5 == 0 else f"row-{i}" for i in ids], pa.string()),
    }
    fields = [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("label", pa.string()),
    ]
    if nested:
        points = []
        for i in ids:
            if i % 11 == 0:
                points.append(None if struct_nulls else {"x": None, "y": None})
            else:
                points.append({"x": i % 100, "y": None if i % 3 == 0 else f"p{i}"})
        columns["point"] = pa.array(points, POINT_TYPE)
        columns["tags"] = pa.array(
            [None if i % 13 == 0 else [i + k for k in range(i % 4)] for i in ids], pa.list_(pa.int32())
        )
        columns["vector"] = pa.array(
            [None if i % 17 == 0 else [float(i), i / 2.0, -float(i)] for i in ids], VECTOR_TYPE
        )
        fields += [
            pa.field("point", POINT_TYPE),
            pa.field("tags", pa.list_(pa.int32())),
            pa.field("vector", VECTOR_TYPE),
        ]
    return pa.Table.from_arrays([columns[f.name] for f in fields], schema=pa.schema(fields))


ITEM_TYPE = pa.struct([("a", pa.int32()), ("b", pa.string())])
RICH_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("flag", pa.bool_()),
        pa.field("day", pa.date32()),
        pa.field("moment", pa.timestamp("us", tz="UTC")),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("big_text", pa.large_string()),
        pa.field("blob", pa.large_binary()),
        pa.field("digest", pa.binary(4)),
        pa.field("items", pa.list_(ITEM_TYPE)),
        pa.field("outer", pa.struct([("inner", pa.struct([("z", pa.int16())])), ("w", pa.float32())])),
        pa.field("long_list", pa.large_list(pa.int16())),
        pa.field("category", pa.dictionary(pa.int32(), pa.string())),
        pa.field("attributes", pa.map_(pa.string(), pa.int32())),
        pa.field("embedding", pa.list_(pa.float32(), 4)),
    ]
)


def make_rich_rows(start: int, count: int) -> pa.Table:
    """Rows of :data:`RICH_SCHEMA`: many logical types, nulls at every level."""
    ids = list(range(start, start + count))
    epoch = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)

    def every(period: int, i: int, value):
        return None if i % period == 0 else value

    columns = [
        pa.array(ids, pa.int64()),
        pa.array([every(3, i, i % 2 == 0) for i in ids], pa.bool_()),
        pa.array([every(4, i, datetime.date(2020, 1, 1) + datetime.timedelta(days=i)) for i in ids], pa.date32()),
        pa.array([every(5, i, epoch + datetime.timedelta(seconds=i)) for i in ids], pa.timestamp("us", tz="UTC")),
        pa.array([every(6, i, decimal.Decimal(i) / 4) for i in ids], pa.decimal128(10, 2)),
        pa.array([every(7, i, "text-" * (i % 3) + str(i)) for i in ids], pa.large_string()),
        pa.array([every(8, i, bytes([i % 256]) * (i % 5)) for i in ids], pa.large_binary()),
        pa.array([every(9, i, (i * 2654435761 % (1 << 32)).to_bytes(4, "little")) for i in ids], pa.binary(4)),
        pa.array(
            [
                every(10, i, [None if k == 1 else {"a": i + k, "b": every(2, k, f"b{k}")} for k in range(i % 3)])
                for i in ids
            ],
            pa.list_(ITEM_TYPE),
        ),
        pa.array(
            [
                every(11, i, {"inner": every(2, i, {"z": every(3, i, i % 1000)}), "w": every(5, i, i / 8.0)})
                for i in ids
            ],
            RICH_SCHEMA.field("outer").type,
        ),
        pa.array([every(12, i, [i % 100] * (i % 4)) for i in ids], pa.large_list(pa.int16())),
        pa.array([every(13, i, ["red", "green", "blue"][i % 3]) for i in ids]).dictionary_encode(),
        pa.array(
            [every(14, i, [(f"k{k}", every(2, k, i * k)) for k in range(i % 3)]) for i in ids],
            pa.map_(pa.string(), pa.int32()),
        ),
        pa.array([every(15, i, [float(i + k) for k in range(4)]) for i in ids], pa.list_(pa.float32(), 4)),
    ]
    # dictionary_encode picks int32 indices; cast so the schema is exact.
    columns[11] = columns[11].cast(pa.dictionary(pa.int32(), pa.string()))
    return pa.Table.from_arrays(columns, schema=RICH_SCHEMA)


# ---------------------------------------------------------------------------
# Checks on what pylance wrote
# ---------------------------------------------------------------------------


def _open(path: Path):
    import lance

    return lance.dataset(str(path))


def _write(data: pa.Table, path: Path, **options):
    import lance

    return lance.write_dataset(data, str(path), **options)


def deletion_file_extensions(path: Path, version: int | None = None) -> dict[int, str]:
    """``{fragment_id: "arrow" | "bin"}`` for fragments with a deletion file.

    Also requires that each deletion file pylance references exists on disk.
    """
    import lance

    dataset = lance.dataset(str(path), version=version)
    extensions = {}
    for fragment in dataset.get_fragments():
        deletion_file = fragment.metadata.deletion_file
        if deletion_file is None:
            continue
        relative = deletion_file.path(fragment.fragment_id)
        _require((path / relative).is_file(), f"{relative} is referenced by the manifest but missing")
        extensions[fragment.fragment_id] = relative.rsplit(".", 1)[-1]
    return extensions


def _manifest_names(path: Path) -> list[str]:
    return sorted(p.name for p in (path / "_versions").glob("*.manifest"))


def _file_versions(path: Path) -> set[tuple[int, int]]:
    return {
        (data_file.file_major_version, data_file.file_minor_version)
        for fragment in _open(path).get_fragments()
        for data_file in fragment.metadata.files
    }


def _fragment_ids(path: Path) -> list[int]:
    return [fragment.fragment_id for fragment in _open(path).get_fragments()]


def _require_rows(path: Path, expected_ids: list[int]) -> None:
    got = sorted(_open(path).to_table(columns=["id"]).column("id").to_pylist())
    _require(got == sorted(expected_ids), f"{path.name}: visible ids differ from the expected {len(expected_ids)} ids")


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


def build_appends_multi_fragment(path: Path) -> None:
    """Three writes, split into fragments of at most 10 rows."""
    _write(make_rows(0, 25), path, max_rows_per_file=10)
    _write(make_rows(25, 15), path, mode="append", max_rows_per_file=10)
    _write(make_rows(40, 5), path, mode="append")
    _require(_fragment_ids(path) == [0, 1, 2, 3, 4, 5], f"fragments {_fragment_ids(path)}")
    _require_rows(path, list(range(45)))


def build_deletes_sparse(path: Path) -> None:
    """A handful of deleted rows per fragment, stored as Arrow deletion files."""
    _write(make_rows(0, 200), path, max_rows_per_file=100)
    dataset = _open(path)
    dataset.delete("id IN (3, 17, 42)")
    dataset.delete("id = 150 OR id = 199")
    extensions = deletion_file_extensions(path)
    _require(extensions == {0: "arrow", 1: "arrow"}, f"expected .arrow deletion files, got {extensions}")
    _require_rows(path, [i for i in range(200) if i not in (3, 17, 42, 150, 199)])


def build_deletes_dense(path: Path) -> None:
    """A fragment losing over 6,000 of 10,000 rows: its deletion file becomes a bitmap.

    The first delete is sparse (.arrow in both fragments); the second one makes
    fragment 0 dense, so its deletion file is replaced by a .bin one while
    fragment 1 keeps its .arrow file.
    """
    _write(make_rows(0, 10_100), path, max_rows_per_file=10_000)
    dataset = _open(path)
    dataset.delete("id % 1000 = 1")
    after_sparse = deletion_file_extensions(path)
    _require(after_sparse == {0: "arrow", 1: "arrow"}, f"sparse delete wrote {after_sparse}")
    dataset.delete("id < 6000")
    after_dense = deletion_file_extensions(path)
    _require(after_dense == {0: "bin", 1: "arrow"}, f"dense delete wrote {after_dense}")
    _require_rows(path, [i for i in range(6000, 10_100) if i % 1000 != 1])


def build_delete_entire_fragment(path: Path) -> None:
    """Deleting every row of a fragment drops the fragment from the manifest."""
    _write(make_rows(0, 30), path, max_rows_per_file=10)
    dataset = _open(path)
    dataset.delete("id < 10")
    _require(_fragment_ids(path) == [1, 2], f"fragments after deleting fragment 0: {_fragment_ids(path)}")
    dataset.delete("id = 12")
    _write(make_rows(30, 5), path, mode="append")
    # The new fragment takes id 3: ids are never reused.
    _require(_fragment_ids(path) == [1, 2, 3], f"fragments after the append: {_fragment_ids(path)}")


def build_add_columns(path: Path) -> None:
    """New columns from a SQL expression, an all-null field and a merge."""
    _write(make_rows(0, 20, nested=True), path, max_rows_per_file=10)
    dataset = _open(path)
    dataset.add_columns({"double_id": "id * 2"})
    dataset.add_columns(pa.field("note", pa.string()))
    extra = pa.table({"id": pa.array(range(20), pa.int64()), "score": pa.array([i * 3 for i in range(20)], pa.int32())})
    dataset.merge(extra, left_on="id")
    dataset = _open(path)
    names = dataset.schema.names
    _require(names[-3:] == ["double_id", "note", "score"], f"schema after adding columns: {names}")
    files_per_fragment = [len(fragment.metadata.files) for fragment in dataset.get_fragments()]
    # The all-null column has no data file: readers must produce nulls for it.
    _require(files_per_fragment == [3, 3], f"data files per fragment: {files_per_fragment}")
    _require(dataset.to_table(columns=["note"]).column("note").null_count == 20, "note should be all null")


def build_drop_columns(path: Path) -> None:
    """Drop a top-level column and a struct child, then append."""
    _write(make_rows(0, 20, nested=True), path, max_rows_per_file=10)
    dataset = _open(path)
    dataset.drop_columns(["label"])
    dataset.drop_columns(["point.y"])
    reduced = make_rows(20, 5, nested=True).drop_columns(["label"])
    reduced = reduced.set_column(
        reduced.schema.get_field_index("point"),
        "point",
        pa.array(
            [None if p is None else {"x": p["x"]} for p in reduced.column("point").to_pylist()],
            pa.struct([("x", pa.int32())]),
        ),
    )
    _write(reduced, path, mode="append")
    dataset = _open(path)
    _require("label" not in dataset.schema.names, "label was not dropped")
    _require(dataset.schema.field("point").type == pa.struct([("x", pa.int32())]), "point.y was not dropped")


def build_alter_columns(path: Path) -> None:
    """Rename a column and a struct child, make a column nullable, cast a type.

    pylance rewrites a cast column into a new data file under a new field id.
    """
    _write(make_rows(0, 20, nested=True), path, max_rows_per_file=10)
    dataset = _open(path)
    dataset.alter_columns({"path": "label", "name": "title"}, {"path": "point.x", "name": "px"})
    dataset.alter_columns({"path": "id", "nullable": True})
    dataset.alter_columns({"path": "tags", "data_type": pa.list_(pa.int64())})
    dataset = _open(path)
    _require(dataset.schema.field("title").type == pa.string(), "label was not renamed")
    _require(dataset.schema.field("id").nullable, "id did not become nullable")
    _require(dataset.schema.field("tags").type == pa.list_(pa.int64()), "tags was not cast")
    files_per_fragment = [len(fragment.metadata.files) for fragment in dataset.get_fragments()]
    _require(files_per_fragment == [2, 2], f"the cast should add one data file per fragment: {files_per_fragment}")


def build_update(path: Path) -> None:
    """``UPDATE ... WHERE``: old rows deleted, rewritten rows in a new fragment."""
    _write(make_rows(0, 30), path, max_rows_per_file=10)
    dataset = _open(path)
    dataset.update({"value": "value + 1000"}, where="id % 4 = 0")
    dataset.update({"label": "'changed'"}, where="id = 7")
    dataset = _open(path)
    _require(dataset.count_rows() == 30, "update changed the row count")
    _require(len(dataset.get_fragments()) > 3, "update did not add a fragment")
    _require(set(deletion_file_extensions(path).values()) == {"arrow"}, "update should leave .arrow deletion files")


def build_compaction(path: Path) -> None:
    """Six small fragments with deletions compacted into one."""
    for start in range(0, 60, 10):
        _write(make_rows(start, 10), path, mode="append" if start else "create")
    dataset = _open(path)
    dataset.delete("id % 9 = 0")
    metrics = dataset.optimize.compact_files(target_rows_per_fragment=1000)
    _require(metrics.fragments_removed == 6 and metrics.fragments_added == 1, f"compaction metrics {metrics}")
    _require(deletion_file_extensions(path) == {}, "compaction should materialize the deletions")
    _require_rows(path, [i for i in range(60) if i % 9 != 0])


def build_scalar_index(path: Path) -> None:
    """A BTREE index on ``id``, then appends the index does not cover."""
    _write(make_rows(0, 40), path, max_rows_per_file=20)
    dataset = _open(path)
    dataset.create_scalar_index("id", "BTREE", name="id_btree")
    _write(make_rows(40, 10), path, mode="append")
    _write(make_rows(50, 10), path, mode="append")
    dataset = _open(path)
    (index,) = dataset.describe_indices()
    covered = sorted(index.segments[0].fragment_ids)
    _require(covered == [0, 1], f"the index should cover the two original fragments, covers {covered}")
    _require(_fragment_ids(path) == [0, 1, 2, 3], f"fragments {_fragment_ids(path)}")


def build_tags(path: Path) -> None:
    """Tags on two versions, one of them moved to a later version."""
    _write(make_rows(0, 10), path)
    _write(make_rows(10, 10), path, mode="append")
    _write(make_rows(20, 10), path, mode="append")
    dataset = _open(path)
    dataset.tags.create("first", 1)
    dataset.tags.create("moving", 1)
    dataset.tags.update("moving", 3)
    tags = {name: tag["version"] for name, tag in _open(path).tags.list().items()}
    _require(tags == {"first": 1, "moving": 3}, f"tags {tags}")
    _require((path / "_refs" / "tags" / "first.json").is_file(), "tag file missing")


def build_restore(path: Path) -> None:
    """Restore version 1 after an append and a delete: version 4 equals version 1."""
    import lance

    _write(make_rows(0, 10), path)
    _write(make_rows(10, 10), path, mode="append")
    _open(path).delete("id < 5")
    lance.dataset(str(path), version=1).restore()
    dataset = _open(path)
    _require(dataset.version == 4, f"restore made version {dataset.version}")
    _require_rows(path, list(range(10)))


def build_overwrite(path: Path) -> None:
    """An overwrite with a different schema, then an append to the new table."""
    _write(make_rows(0, 20, nested=True), path, max_rows_per_file=10)
    replacement = pa.table({"key": pa.array(["a", "b", "c"]), "amount": pa.array([1.5, None, 3.5])})
    _write(replacement, path, mode="overwrite")
    _write(replacement, path, mode="append")
    dataset = _open(path)
    _require(dataset.schema.names == ["key", "amount"], f"schema after overwrite {dataset.schema.names}")
    _require(dataset.count_rows() == 6, "overwrite plus append should leave 6 rows")


def build_empty_table(path: Path) -> None:
    """Created with no rows, filled, then emptied again by deleting every row."""
    _write(make_rows(0, 0, nested=True), path)
    _require(_fragment_ids(path) == [], "an empty write should create no fragment")
    _write(make_rows(0, 10, nested=True), path, mode="append")
    _open(path).delete("true")
    _require(_fragment_ids(path) == [], "deleting every row should leave no fragment")


def build_stable_row_ids(path: Path) -> None:
    """Stable row ids through appends, deletes, an update and compaction."""
    _write(make_rows(0, 20), path, max_rows_per_file=10, enable_stable_row_ids=True)
    _write(make_rows(20, 10), path, mode="append")
    dataset = _open(path)
    dataset.delete("id IN (2, 11, 25)")
    dataset.update({"value": "-1.0"}, where="id = 5")
    dataset.optimize.compact_files(target_rows_per_fragment=1000)
    dataset = _open(path)
    _require(dataset.has_stable_row_ids, "stable row ids are off")
    row_ids = dataset.to_table(columns=["id"], with_row_id=True)
    by_id = dict(zip(row_ids.column("id").to_pylist(), row_ids.column("_rowid").to_pylist(), strict=True))
    # Compaction moves rows without changing their ids. pylance 14 also keeps
    # the id of an updated row (older table format page expects a new one; see
    # docs/spec-discrepancies.md), so row 5 now sits in a later fragment as 5.
    _require(by_id[0] == 0 and by_id[29] == 29, "row ids moved by compaction")
    _require(by_id[5] == 5, f"the updated row now has row id {by_id[5]}")
    _require(len(dataset.get_fragments()) == 1, "compaction should leave one fragment")


def build_naming_v1(path: Path) -> None:
    """Manifests named ``{version}.manifest``."""
    _write(make_rows(0, 10), path, enable_v2_manifest_paths=False)
    _write(make_rows(10, 10), path, mode="append")
    _open(path).delete("id = 3")
    names = _manifest_names(path)
    _require(names == ["1.manifest", "2.manifest", "3.manifest"], f"manifests {names}")


def build_naming_v2(path: Path) -> None:
    """Manifests named ``{u64::MAX - version:020}.manifest``."""
    _write(make_rows(0, 10), path, enable_v2_manifest_paths=True)
    _write(make_rows(10, 10), path, mode="append")
    _open(path).delete("id = 3")
    names = _manifest_names(path)
    expected = sorted(f"{U64_MAX - version:020d}.manifest" for version in (1, 2, 3))
    _require(names == expected, f"manifests {names}")


def _build_storage_version(path: Path, storage_version: str | None, expected_files: set[tuple[int, int]]) -> None:
    options = {} if storage_version is None else {"data_storage_version": storage_version}
    # 2.0 refuses null structs; later versions and legacy accept them.
    struct_nulls = storage_version != "2.0"
    _write(make_rows(0, 30, nested=True, struct_nulls=struct_nulls), path, max_rows_per_file=15, **options)
    _write(make_rows(30, 10, nested=True, struct_nulls=struct_nulls), path, mode="append")
    dataset = _open(path)
    dataset.delete("id IN (4, 33)")
    dataset.add_columns({"id_plus_one": "id + 1"})
    got = _file_versions(path)
    _require(got == expected_files, f"data file versions {got}, expected {expected_files}")


def build_storage_legacy(path: Path) -> None:
    """Legacy (v0.x) data files."""
    _build_storage_version(path, "legacy", {(0, 2)})


def build_storage_2_0(path: Path) -> None:
    _build_storage_version(path, "2.0", {(2, 0)})


def build_storage_2_1(path: Path) -> None:
    _build_storage_version(path, "2.1", {(2, 1)})


def build_storage_default(path: Path) -> None:
    """Whatever pylance 14 writes by default (2.2 data files)."""
    _build_storage_version(path, None, {(2, 2)})


def build_nested_and_rich_types(path: Path) -> None:
    """Many logical types (dictionary, map, decimal, nested structs ...) with nulls."""
    _write(make_rich_rows(0, 40), path, max_rows_per_file=25)
    _write(make_rich_rows(40, 10), path, mode="append")
    table = _open(path).to_table()
    expected = pa.concat_tables([make_rich_rows(0, 40), make_rich_rows(40, 10)])
    _require(table.schema.equals(RICH_SCHEMA), f"schema changed on the way through pylance: {table.schema}")
    _require(table.sort_by("id").equals(expected), "pylance did not return the rows it was given")


def build_config_and_metadata(path: Path) -> None:
    """Table config, table metadata and schema metadata, each set and changed."""
    _write(make_rows(0, 10).replace_schema_metadata({"origin": "conformance", "purpose": "test"}), path)
    dataset = _open(path)
    dataset.update_config({"user.alpha": "1", "user.beta": "two"})
    dataset.delete_config_keys(["user.alpha"])
    dataset.update_metadata({"owner": "conformance", "stage": "draft"})
    dataset.update_metadata({"stage": None})
    dataset.update_schema_metadata({"purpose": "changed"})
    dataset = _open(path)
    _require(dataset.config() == {"user.beta": "two"}, f"config {dataset.config()}")
    _require(dataset.metadata == {"owner": "conformance"}, f"table metadata {dataset.metadata}")
    _require(dataset.schema.metadata.get(b"purpose") == b"changed", f"schema metadata {dataset.schema.metadata}")


def build_shallow_clone(path: Path) -> None:
    """A shallow clone: its first fragment lives under another base path.

    The source dataset is a sibling directory (``<name>-source``) and must stay
    next to the clone; it is opened by absolute path so the base path recorded
    in the clone is absolute too.
    """
    source = path.parent / f"{path.name}-source"
    source_dataset = _write(make_rows(0, 10), source.absolute())
    source_dataset.tags.create("published", 1)
    source_dataset.shallow_clone(str(path.absolute()), "published")
    _write(make_rows(10, 10), path, mode="append")
    dataset = _open(path)
    bases = dataset.base_paths()
    _require(len(bases) == 1, f"base paths {bases}")
    (base,) = bases.values()
    _require(Path(base.path) == source.absolute(), f"base path {base.path!r}")
    base_ids = [[f.base_id for f in fragment.metadata.files] for fragment in dataset.get_fragments()]
    _require(base_ids == [[base.id], [None]], f"data file base ids {base_ids}")
    _require_rows(path, list(range(20)))


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "appends_multi_fragment": build_appends_multi_fragment,
    "deletes_sparse": build_deletes_sparse,
    "deletes_dense": build_deletes_dense,
    "delete_entire_fragment": build_delete_entire_fragment,
    "add_columns": build_add_columns,
    "drop_columns": build_drop_columns,
    "alter_columns": build_alter_columns,
    "update": build_update,
    "compaction": build_compaction,
    "scalar_index": build_scalar_index,
    "tags": build_tags,
    "restore": build_restore,
    "overwrite": build_overwrite,
    "empty_table": build_empty_table,
    "stable_row_ids": build_stable_row_ids,
    "naming_v1": build_naming_v1,
    "naming_v2": build_naming_v2,
    "storage_legacy": build_storage_legacy,
    "storage_2_0": build_storage_2_0,
    "storage_2_1": build_storage_2_1,
    "storage_default": build_storage_default,
    "nested_and_rich_types": build_nested_and_rich_types,
    "config_and_metadata": build_config_and_metadata,
    "shallow_clone": build_shallow_clone,
}


def build_all(root: Path) -> dict[str, Path]:
    """Build every scenario under ``root``; ``{name: dataset path}``."""
    built = {}
    for name, build in SCENARIOS.items():
        target = root / name
        build(target)
        built[name] = target
    return built
