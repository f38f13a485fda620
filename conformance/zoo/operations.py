"""Zoo features about write operations: merge_insert, update, deletions of
both kinds, adding, dropping and altering columns, restore, many appends,
distributed writes, overwrite, config and metadata, empty and truncated
tables, primary and clustering keys, MemWAL and stable row ids."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from . import data
from .model import Feature, FeatureUnavailable, require
from .writing import append, deletion_kinds, open_dataset, visible_ids, write
from .writing import lance as lance_module


def build_merge_insert(path: Path) -> None:
    """An upsert (update matched, insert the rest), then a merge that deletes
    rows the source no longer holds."""
    write(data.rows(0, 40), path, max_rows_per_file=20)
    source = data.rows(30, 20)
    source = source.set_column(1, "value", pa.array([float(-i) for i in range(30, 50)], pa.float64()))
    open_dataset(path).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)
    keep = data.rows(0, 45)
    (
        open_dataset(path)
        .merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .when_not_matched_by_source_delete()
        .execute(keep)
    )
    require(visible_ids(path) == list(range(45)), f"ids after the merges {visible_ids(path)[:5]}...")


def build_update(path: Path) -> None:
    """``UPDATE ... WHERE`` twice: rows rewritten into new fragments."""
    write(data.rows(0, 30), path, max_rows_per_file=10)
    dataset = open_dataset(path)
    dataset.update({"value": "value + 1000"}, where="id % 4 = 0")
    dataset.update({"label": "'changed'"}, where="id = 7")
    require(open_dataset(path).count_rows() == 30, "update changed the row count")


def build_deletions_arrow(path: Path) -> None:
    """A few deleted rows per fragment: Arrow IPC deletion files."""
    write(data.rows(0, 200), path, max_rows_per_file=100)
    dataset = open_dataset(path)
    dataset.delete("id IN (3, 17, 42)")
    dataset.delete("id = 150 OR id = 199")
    require(deletion_kinds(path) == {"arrow"}, f"deletion files {deletion_kinds(path)}")


def build_deletions_bitmap(path: Path) -> None:
    """A fragment losing most of its rows: a Roaring bitmap (``.bin``)
    deletion file beside an Arrow one, then a whole fragment deleted."""
    write(pa.table({"id": pa.array(range(10_000), pa.int64())}), path)
    for start in (10_000, 10_100):
        append(pa.table({"id": pa.array(range(start, start + 100), pa.int64())}), path)
    dataset = open_dataset(path)
    dataset.delete("id % 1000 = 1")
    # pylance stores a fragment's deletions as a bitmap from 5,000 deleted rows on.
    dataset.delete("id < 6000")
    open_dataset(path).delete("id >= 10100")
    require(len(open_dataset(path).get_fragments()) == 2, "the last fragment should be gone")
    require(deletion_kinds(path) == {"arrow", "bin"}, f"deletion files {deletion_kinds(path)}")


def build_add_columns(path: Path) -> None:
    """Columns added from an SQL expression, as an all-null field, by a merge
    and by a Python UDF; then an append carrying every column."""
    write(data.rows(0, 20), path, max_rows_per_file=10)
    dataset = open_dataset(path)
    dataset.add_columns({"double_id": "id * 2"})
    dataset.add_columns(pa.field("note", pa.string()))
    extra = pa.table({"id": pa.array(range(20), pa.int64()), "score": pa.array([i * 3 for i in range(20)], pa.int32())})
    open_dataset(path).merge(extra, left_on="id")
    open_dataset(path).add_columns(_tenfold_id())
    # An append of rows with every column: the first five again under new ids.
    more = open_dataset(path).to_table().slice(0, 5)
    append(more.set_column(0, more.schema.field(0), pa.array(range(100, 105), pa.int64())), path)
    names = open_dataset(path).schema.names
    require(names[-4:] == ["double_id", "note", "score", "tenfold"], f"columns {names}")


def _tenfold_id():
    """A batch UDF for ``add_columns``: ``tenfold = id * 10``, one new data
    file per fragment written by pylance from Python."""
    lance = lance_module()

    @lance.batch_udf()
    def tenfold(batch: pa.RecordBatch) -> pa.RecordBatch:
        values = pa.array([None if v is None else v * 10 for v in batch.column("id").to_pylist()], pa.int64())
        return pa.record_batch([values], names=["tenfold"])

    return tenfold


def build_distributed_writes(path: Path) -> None:
    """The distributed pattern: fragments written apart (``write_fragments``)
    and committed as an Append, then as an Overwrite, by ``LanceDataset.commit``."""
    lance = lance_module()
    try:
        from lance.fragment import write_fragments  # lazy: pylance is optional (the test extra)
    except ImportError as exc:
        raise FeatureUnavailable(f"distributed writes: lance.fragment.write_fragments: {exc}") from exc
    write(data.rows(0, 10), path)
    appended = write_fragments(data.rows(10, 20), str(path), max_rows_per_file=10)
    lance.LanceDataset.commit(str(path), lance.LanceOperation.Append(appended), read_version=1)
    replacement = write_fragments(data.rows(100, 15), str(path), max_rows_per_file=10)
    overwrite = lance.LanceOperation.Overwrite(data.BASE_SCHEMA, replacement)
    lance.LanceDataset.commit(str(path), overwrite, read_version=2)
    require(visible_ids(path) == list(range(100, 115)), f"ids {visible_ids(path)[:3]}...")


def build_drop_columns(path: Path) -> None:
    """A top-level column dropped, then a struct child, then an append."""
    table = data.odd_rows(0, 20).select(["id", "point", "big_text"])
    write(table, path, max_rows_per_file=10)
    dataset = open_dataset(path)
    dataset.drop_columns(["big_text"])
    open_dataset(path).drop_columns(["point.y"])
    kept = data.odd_rows(20, 5).select(["id", "point"])
    points = [None if p is None else {"x": p["x"]} for p in kept.column("point").to_pylist()]
    append(kept.set_column(1, "point", pa.array(points, pa.struct([("x", pa.int32())]))), path)
    require(open_dataset(path).schema.names == ["id", "point"], f"columns {open_dataset(path).schema.names}")


def build_alter_columns(path: Path) -> None:
    """A rename (top level and inside a struct), a column made nullable, a cast."""
    table = data.odd_rows(0, 20).select(["id", "point", "tiny", "big_text"])
    write(table, path, max_rows_per_file=10)
    dataset = open_dataset(path)
    dataset.alter_columns({"path": "big_text", "name": "title"}, {"path": "point.x", "name": "px"})
    open_dataset(path).alter_columns({"path": "id", "nullable": True})
    open_dataset(path).alter_columns({"path": "tiny", "data_type": pa.int32()})
    schema = open_dataset(path).schema
    require(schema.field("tiny").type == pa.int32() and "title" in schema.names, f"schema {schema}")


def build_restore(path: Path) -> None:
    """Version 1 restored after an append and a delete."""
    write(data.rows(0, 10), path)
    append(data.rows(10, 10), path)
    open_dataset(path).delete("id < 5")
    open_dataset(path, version=1).restore()
    require(visible_ids(path) == list(range(10)), "restore did not bring version 1 back")


#: Appends of the many-appends feature (one fragment each, one manifest each).
MANY_APPENDS = 61


def build_many_appends(path: Path) -> None:
    """61 appends of two rows each after the first write: 62 versions."""
    write(data.rows(0, 2), path)
    for k in range(1, MANY_APPENDS + 1):
        append(data.rows(2 * k, 2), path)
    require(open_dataset(path).version == MANY_APPENDS + 1, f"version {open_dataset(path).version}")


#: Field metadata making a column part of the unenforced primary key.
PRIMARY_KEY = {"lance-schema:unenforced-primary-key": "true"}


def build_primary_key(path: Path) -> None:
    """``id`` declared the unenforced primary key after the table was created
    (an UpdateConfig of field metadata), then upserts by it."""
    write(data.rows(0, 30), path)
    open_dataset(path).update_field_metadata({"id": {"lance-schema:unenforced-primary-key:position": "1"}})
    keyed = open_dataset(path).schema
    dataset = open_dataset(path)
    dataset.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        data.rows(25, 10).cast(keyed)
    )
    metadata = open_dataset(path).schema.field("id").metadata or {}
    require(b"lance-schema:unenforced-primary-key:position" in metadata, f"id metadata {metadata}")


def build_overwrite(path: Path) -> None:
    """An overwrite with another schema, then an append to the new table."""
    write(data.odd_rows(0, 20).select(["id", "point", "items"]), path, max_rows_per_file=10)
    replacement = pa.table({"key": pa.array(["a", "b", "c"]), "amount": pa.array([1.5, None, 3.5])})
    write(replacement, path, mode="overwrite")
    append(replacement, path)
    require(open_dataset(path).schema.names == ["key", "amount"], f"columns {open_dataset(path).schema.names}")


def build_config_and_metadata(path: Path) -> None:
    """Table config, table metadata, schema and field metadata set, changed and removed."""
    write(data.rows(0, 10).replace_schema_metadata({"origin": "zoo", "purpose": "test"}), path)
    dataset = open_dataset(path)
    dataset.update_config({"user.alpha": "1", "user.beta": "two"})
    dataset.delete_config_keys(["user.alpha"])
    dataset.update_metadata({"owner": "zoo", "stage": "draft"})
    dataset.update_metadata({"stage": None})
    dataset.update_schema_metadata({"purpose": "changed"})
    dataset.update_field_metadata({"label": {"unit": "none"}})
    require(open_dataset(path).config() == {"user.beta": "two"}, f"config {open_dataset(path).config()}")


#: The MemWAL shard the zoo writes through (shard ids are UUIDs; a fixed one
#: keeps builds alike).
SHARD_ID = "6d0f4a52-9c1e-5b7a-8e3d-2f4c6b8a0e1d"


def build_mem_wal(path: Path) -> None:
    """A MemWAL index (``initialize_mem_wal``) on a table with a primary key,
    rows put through a shard writer and flushed, then an append."""
    table = data.rows(0, 20)
    fields = [table.schema.field(0).with_metadata(PRIMARY_KEY), *list(table.schema)[1:]]
    write(table.cast(pa.schema(fields)), path)
    dataset = open_dataset(path)
    if not hasattr(dataset, "initialize_mem_wal"):
        raise FeatureUnavailable("MemWAL: LanceDataset.initialize_mem_wal is missing")
    dataset.initialize_mem_wal()
    writer = open_dataset(path).mem_wal_writer(SHARD_ID)
    writer.put(data.rows(15, 10).cast(pa.schema(fields)))
    writer.close()
    append(data.rows(30, 10).cast(pa.schema(fields)), path)
    names = [index.name for index in open_dataset(path).describe_indices()]
    require("__lance_mem_wal" in names, f"indices {names}")


def build_stable_row_ids(path: Path) -> None:
    """Stable row ids through appends, deletes, an update and a compaction."""
    write(data.rows(0, 20), path, max_rows_per_file=10, enable_stable_row_ids=True)
    append(data.rows(20, 10), path)
    dataset = open_dataset(path)
    dataset.delete("id IN (2, 11, 25)")
    dataset.update({"value": "-1.0"}, where="id = 5")
    open_dataset(path).optimize.compact_files(target_rows_per_fragment=1000)
    require(open_dataset(path).has_stable_row_ids, "stable row ids are off")


def build_empty_table(path: Path) -> None:
    """Created with no rows, filled, emptied by deleting every row, then
    truncated (``truncate_table``) and filled again."""
    write(data.rows(0, 0), path)
    append(data.rows(0, 10), path)
    open_dataset(path).delete("true")
    require(open_dataset(path).get_fragments() == [], "deleting every row should leave no fragment")
    append(data.rows(10, 5), path)
    dataset = open_dataset(path)
    if not hasattr(dataset, "truncate_table"):
        raise FeatureUnavailable("truncation: LanceDataset.truncate_table is missing")
    dataset.truncate_table()
    append(data.rows(20, 5), path)
    require(visible_ids(path) == list(range(20, 25)), f"ids {visible_ids(path)}")


#: Field metadata making a column part of the unenforced clustering key.
CLUSTERING_KEY = {"lance-schema:unenforced-clustering-key:position": "1"}


def build_clustering_key(path: Path) -> None:
    """``category`` declared the unenforced clustering key (pylance 14 keeps
    it in field metadata and in fields of its own), then an append."""
    table = data.rows(0, 20)
    fields = [*list(table.schema)[:3], table.schema.field("category").with_metadata(CLUSTERING_KEY)]
    write(table.cast(pa.schema(fields)), path)
    append(data.rows(20, 5).cast(pa.schema(fields)), path)
    metadata = open_dataset(path).schema.field("category").metadata or {}
    require(b"lance-schema:unenforced-clustering-key:position" in metadata, f"category metadata {metadata}")


FEATURES: tuple[Feature, ...] = (
    Feature("merge_insert", "an upsert and a merge deleting rows not in the source", build_merge_insert, cheap=True),
    Feature("update", "two UPDATE ... WHERE", build_update),
    Feature("deletions_arrow", "sparse deletes: Arrow deletion files", build_deletions_arrow, cheap=True),
    Feature("deletions_bitmap", "a dense delete (Roaring .bin) and a whole fragment deleted", build_deletions_bitmap),
    Feature("add_columns", "columns from SQL, all-null, by merge, by a UDF; then an append", build_add_columns),
    Feature("drop_columns", "a column and a struct child dropped, then an append", build_drop_columns),
    Feature("alter_columns", "renames, nullability and a cast", build_alter_columns),
    Feature("restore", "version 1 restored", build_restore, cheap=True),
    Feature("many_appends", f"{MANY_APPENDS} appends", build_many_appends),
    Feature("primary_key", "an unenforced primary key declared by field metadata, upserts by it", build_primary_key),
    Feature(
        "distributed_writes", "fragments written apart, committed as Append and Overwrite", build_distributed_writes
    ),
    Feature("empty_table", "empty, filled, emptied by delete, truncated, filled", build_empty_table),
    Feature("clustering_key", "an unenforced clustering key", build_clustering_key),
    Feature("overwrite", "an overwrite with another schema, then an append", build_overwrite),
    Feature("config_and_metadata", "config, table, schema and field metadata changed", build_config_and_metadata),
    Feature("mem_wal", "a MemWAL index, then appends", build_mem_wal),
    Feature("stable_row_ids", "stable row ids through deletes, update and compaction", build_stable_row_ids),
)
