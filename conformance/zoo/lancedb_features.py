"""Zoo features written through LanceDB for Python: a table's whole life
(writes, schema changes, indices, ``optimize``) and its MemWAL write path
(``LsmWriteSpec``). LanceDB keeps a table ``t`` at ``<db>/t.lance``; each
builder uses the feature's directory as the database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from . import data
from .model import Feature, FeatureUnavailable, Writer, require

#: The table's name inside the feature's database directory.
TABLE = "t"


def _connect(path: Path) -> Any:
    try:
        # lazy: LanceDB is optional (the test extra); only its builders need it
        import lancedb
    except ImportError as exc:
        raise FeatureUnavailable(f"LanceDB is not installed: {exc}") from exc
    return lancedb.connect(str(path))


def build_lancedb_writes(path: Path) -> None:
    """create, add, delete, update, merge_insert, add/alter/drop columns,
    a tag, then ``optimize`` (compaction; cleanup keeps the last week, so
    every version stays)."""
    table = _connect(path).create_table(TABLE, data.rows(0, 40))
    table.add(data.rows(40, 20))
    table.delete("id % 6 = 0")
    table.update(where="id < 10", values={"label": "updated"})
    upsert = data.rows(50, 20)
    table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(upsert)
    table.add_columns({"twice": "id * 2"})
    table.alter_columns({"path": "label", "rename": "title"})
    table.drop_columns(["category"])
    table.tags.create("before-optimize", table.version)
    table.optimize()
    names = table.schema.names
    require(names == ["id", "value", "title", "twice"], f"columns {names}")


def build_lancedb_indices(path: Path) -> None:
    """BTREE, BITMAP, LABEL_LIST, full text, IVF_PQ and IVF_HNSW_SQ indices
    through LanceDB's ``create_index(column, config=...)``, an append, then
    ``optimize`` folding the new rows into every index."""
    try:
        # lazy: LanceDB is optional (the test extra); only its builders need it
        from lancedb.index import FTS, Bitmap, BTree, IvfHnswSq, IvfPq, LabelList
    except ImportError as exc:
        raise FeatureUnavailable(f"LanceDB index configs: {exc}") from exc

    def rows(start: int, count: int) -> pa.Table:
        table = data.vector_rows(start, count)
        text = data.text_rows(start, count)
        table = table.append_column("text", text.column("text")).append_column("labels", text.column("labels"))
        return table.append_column("category", data.rows(start, count).column("category"))

    table = _connect(path).create_table(TABLE, rows(0, 520))
    table.create_index("id", config=BTree())
    table.create_index("category", config=Bitmap())
    table.create_index("labels", config=LabelList())
    table.create_index("text", config=FTS())
    table.create_index("vector", config=IvfPq(num_partitions=2, num_sub_vectors=2), name="vector_ivf_pq")
    table.create_index("vector", config=IvfHnswSq(num_partitions=2), name="vector_hnsw_sq")
    table.add(rows(520, 30))
    table.optimize()
    require(len(table.list_indices()) == 6, f"indices {table.list_indices()}")


def build_lancedb_mem_wal(path: Path) -> None:
    """A primary key and an unsharded ``LsmWriteSpec``: merge_insert goes
    through the MemWAL, then is flushed to the table."""
    try:
        from lancedb import LsmWriteSpec  # lazy: LanceDB is optional (the test extra)
    except ImportError as exc:
        raise FeatureUnavailable(f"LanceDB MemWAL: lancedb.LsmWriteSpec is missing: {exc}") from exc
    table = _connect(path).create_table(TABLE, data.rows(0, 20))
    table.set_unenforced_primary_key("id")
    table.set_lsm_write_spec(LsmWriteSpec.unsharded())
    table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data.rows(15, 10))
    table.close_lsm_writers()
    require((path / f"{TABLE}.lance" / "_mem_wal").is_dir(), "the MemWAL wrote no _mem_wal directory")


FEATURES: tuple[Feature, ...] = (
    Feature(
        "lancedb_writes", "LanceDB: every write, schema changes, a tag, optimize", build_lancedb_writes, Writer.LANCEDB
    ),
    Feature(
        "lancedb_indices",
        "LanceDB: scalar, FTS and vector indices, appends, optimize",
        build_lancedb_indices,
        Writer.LANCEDB,
    ),
    Feature(
        "lancedb_mem_wal",
        "LanceDB: merge_insert through the MemWAL (LsmWriteSpec)",
        build_lancedb_mem_wal,
        Writer.LANCEDB,
    ),
)
