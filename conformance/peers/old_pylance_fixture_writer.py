"""Write the golden-fixture datasets of an old pylance release (run inside its venv).

Usage: ``python old_pylance_fixture_writer.py OUT_DIR NAME [NAME ...]``

Standalone like ``old_pylance_writer.py``: only the standard library,
``pyarrow`` and that venv's ``lance``. Each dataset is a handful of rows, as
golden fixtures should be (``conformance/fixtures/old_pylance_cases.py`` says
what each one is for). The last line of stdout is the same JSON report as the
scenario writer's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import lance
import pyarrow as pa


def rows(start, count):
    """Same columns and values as the reference cases' rows (restated here so
    this script stays standalone)."""
    ids = list(range(start, start + count))
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("value", pa.float64()), ("label", pa.string())])
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "value": pa.array([None if i % 4 == 3 else i * 1.5 for i in ids], pa.float64()),
            "label": pa.array(["row-%d" % i for i in ids], pa.string()),
        }
    ).cast(schema)


def write(table, path, **options):
    options.setdefault("data_storage_version", "stable")
    return lance.write_dataset(table, str(path), **options)


def appends_deletes(path):
    write(rows(0, 6), path, max_rows_per_file=3)
    write(rows(6, 2), path, mode="append")
    lance.dataset(str(path)).delete("id IN (1, 7)")


def legacy_format(path):
    write(rows(0, 4), path, data_storage_version="legacy")
    write(rows(4, 2), path, mode="append")
    lance.dataset(str(path)).delete("id = 1")


def schema_evolution(path):
    write(rows(0, 4), path, max_rows_per_file=2)
    dataset = lance.dataset(str(path))
    dataset.add_columns({"double_id": "id * 2"})
    dataset.alter_columns({"path": "label", "name": "title"})
    dataset.drop_columns(["value"])


def index_tags(path):
    write(rows(0, 6), path, max_rows_per_file=3)
    dataset = lance.dataset(str(path))
    dataset.create_scalar_index("id", "BTREE", name="id_btree")
    dataset.tags.create("indexed", 2)
    write(rows(6, 2), path, mode="append")


def update_compaction(path):
    write(rows(0, 6), path, max_rows_per_file=2)
    dataset = lance.dataset(str(path))
    dataset.update({"value": "value + 1000"}, where="id % 2 = 0")
    dataset.delete("id = 3")
    lance.dataset(str(path)).optimize.compact_files(target_rows_per_fragment=100)


def overwrite_restarts_ids(path):
    write(rows(0, 4), path, max_rows_per_file=2)
    write(pa.table({"key": ["a", "b"]}), path, mode="overwrite")
    write(pa.table({"key": ["c"]}), path, mode="append")


def nested_types(path):
    point = pa.struct([("x", pa.int32()), ("y", pa.string())])
    table = pa.table(
        {
            "id": pa.array([0, 1, 2], pa.int64()),
            "point": pa.array([{"x": 1, "y": "a"}, {"x": None, "y": None}, {"x": 3, "y": "c"}], point),
            "tags": pa.array([[1], None, [2, 3]], pa.list_(pa.int32())),
            "vector": pa.array([[1.0, 2.0], None, [0.5, -1.0]], pa.list_(pa.float32(), 2)),
            "when": pa.array([0, None, 86400], pa.timestamp("s")),
        }
    )
    write(table, path)


WRITERS = {
    "old-appends-deletes": appends_deletes,
    "old-legacy-format": legacy_format,
    "old-schema-evolution": schema_evolution,
    "old-index-tags": index_tags,
    "old-update-compaction": update_compaction,
    "old-overwrite": overwrite_restarts_ids,
    "old-nested-types": nested_types,
}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = Path(argv[1])
    written = {}
    for name in argv[2:]:
        target = out_dir / name
        if target.exists():
            raise SystemExit("refusing to overwrite %s" % target)
        WRITERS[name](target)
        written[name] = name
    print(json.dumps({"lance_version": lance.__version__, "datasets": written, "skipped": {}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
