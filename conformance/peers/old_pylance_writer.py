"""Write datasets with an old pylance release (run inside that release's venv).

Usage: ``python old_pylance_writer.py OUT_DIR``

A standalone script: it imports only the standard library, ``pyarrow`` and the
``lance`` of the virtual environment it runs in, never ``conformance``. Every
operation is one that release offers in its public API; a scenario needing an
operation or a parameter the release lacks is skipped (feature detection) and
the report says why, so the script serves every release from 0.11.1 on. Each
dataset is checked for the feature it is named after before the script
reports it.

On success the last line of stdout is a JSON object::

    {"lance_version": "0.20.0", "datasets": {"name": "relative/path", ...},
     "skipped": {"name": "reason", ...}}
"""

from __future__ import annotations

import inspect
import json
import shutil
import sys
from pathlib import Path

import lance
import pyarrow as pa


class WriterCheckFailed(AssertionError):
    """A dataset does not show the feature its name promises."""


class ScenarioUnsupported(Exception):
    """This release lacks an operation or parameter the scenario needs."""


def _parameters(function):
    try:
        return inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return {}


def require(condition, message):
    if not condition:
        raise WriterCheckFailed(message)


def make_rows(start, count, nested=False):
    """Rows whose values derive only from the row id (same generator idea as
    tests/pylance_scenarios.py, restated so this script stays standalone)."""
    ids = list(range(start, start + count))
    fields = [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("label", pa.string()),
    ]
    arrays = [
        pa.array(ids, pa.int64()),
        pa.array([None if i % 7 == 0 else i * 0.5 for i in ids], pa.float64()),
        pa.array([None if i % 5 == 0 else "row-%d" % i for i in ids], pa.string()),
    ]
    if nested:
        point_type = pa.struct([("x", pa.int32()), ("y", pa.string())])
        vector_type = pa.list_(pa.float32(), 3)
        fields += [
            pa.field("point", point_type),
            pa.field("tags", pa.list_(pa.int32())),
            pa.field("vector", vector_type),
        ]
        arrays += [
            # No null structs: the 2.0 file format refuses them.
            pa.array([{"x": i % 100, "y": None if i % 3 == 0 else "p%d" % i} for i in ids], point_type),
            pa.array([None if i % 13 == 0 else [i + k for k in range(i % 4)] for i in ids], pa.list_(pa.int32())),
            pa.array([None if i % 17 == 0 else [float(i), i / 2.0, -float(i)] for i in ids], vector_type),
        ]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def legacy_options():
    """Write options selecting legacy (v0.x) data files in this release."""
    parameters = _parameters(lance.write_dataset)
    if "data_storage_version" in parameters:
        return {"data_storage_version": "legacy"}
    if "use_legacy_format" in parameters:
        return {"use_legacy_format": True}
    return {}


def v2_0_options():
    """Write options selecting 2.0 data files, or ScenarioUnsupported."""
    parameters = _parameters(lance.write_dataset)
    if "data_storage_version" in parameters:
        return {"data_storage_version": "2.0"}
    if "use_legacy_format" in parameters:
        return {"use_legacy_format": False}
    if "use_experimental_writer" in parameters:  # how releases before 0.12 select their 2.0 writer
        return {"use_experimental_writer": True}
    raise ScenarioUnsupported("lance %s cannot select the data storage version" % lance.__version__)


def referenced_deletion_files(path):
    """``{fragment_id: deletion file name}`` as this release reports them."""
    names = {}
    for fragment in lance.dataset(str(path)).get_fragments():
        reported = fragment.metadata.deletion_file
        # 0.20 offers a method returning the relative path; later releases an
        # object whose path() takes the fragment id.
        relative = reported() if callable(reported) else (reported and reported.path(fragment.fragment_id))
        if relative:
            require((path / relative).is_file(), "%s is referenced but missing" % relative)
            names[fragment.fragment_id] = relative.rsplit("/", 1)[-1]
    return names


def write_appends_deletes(path):
    """Appends over several fragments, a sparse (.arrow) and a dense (.bin) delete."""
    lance.write_dataset(make_rows(0, 10100), str(path), max_rows_per_file=10000, **legacy_options())
    lance.write_dataset(make_rows(10100, 50), str(path), mode="append", max_rows_per_file=20)
    dataset = lance.dataset(str(path))
    dataset.delete("id IN (10050, 10101, 10130)")
    dataset.delete("id < 6000")
    files = referenced_deletion_files(path)
    require(files.get(0, "").endswith(".bin"), "dense delete in fragment 0 wrote %r" % files.get(0))
    require(files.get(1, "").endswith(".arrow"), "sparse delete in fragment 1 wrote %r" % files.get(1))


def write_schema_evolution(path):
    """Add (SQL and merge), rename and drop columns, where this release can."""
    lance.write_dataset(make_rows(0, 30, nested=True), str(path), max_rows_per_file=10, **legacy_options())
    dataset = lance.dataset(str(path))
    dataset.add_columns({"double_id": "id * 2"})
    extra = pa.table({"id": pa.array(range(30), pa.int64()), "score": pa.array(range(30), pa.int32())})
    dataset.merge(extra, left_on="id")
    dataset = lance.dataset(str(path))
    dataset.alter_columns({"path": "label", "name": "title"})
    dataset.drop_columns(["value"])
    names = lance.dataset(str(path)).schema.names
    require(names == ["id", "title", "point", "tags", "vector", "double_id", "score"], "schema %r" % names)


def write_overwrite(path):
    lance.write_dataset(make_rows(0, 20), str(path), **legacy_options())
    replacement = pa.table({"key": pa.array(["a", "b", "c"]), "amount": pa.array([1.5, None, 3.5])})
    lance.write_dataset(replacement, str(path), mode="overwrite", **legacy_options())
    lance.write_dataset(replacement, str(path), mode="append")
    require(lance.dataset(str(path)).count_rows() == 6, "overwrite plus append should leave 6 rows")


def write_scalar_index(path):
    lance.write_dataset(make_rows(0, 40), str(path), max_rows_per_file=20, **legacy_options())
    lance.dataset(str(path)).create_scalar_index("id", "BTREE", name="id_btree")
    lance.write_dataset(make_rows(40, 10), str(path), mode="append")
    indices = lance.dataset(str(path)).list_indices()
    require(len(indices) == 1, "indices %r" % indices)


def write_update_compaction(path):
    lance.write_dataset(make_rows(0, 40), str(path), max_rows_per_file=10, **legacy_options())
    dataset = lance.dataset(str(path))
    dataset.update({"value": "value + 1000"}, where="id % 4 = 0")
    dataset.delete("id % 9 = 0")
    metrics = lance.dataset(str(path)).optimize.compact_files(target_rows_per_fragment=1000)
    require(metrics.fragments_added == 1, "compaction metrics %r" % (metrics,))
    require(len(lance.dataset(str(path)).get_fragments()) == 1, "compaction should leave one fragment")


def write_tags(path):
    lance.write_dataset(make_rows(0, 10), str(path), **legacy_options())
    lance.write_dataset(make_rows(10, 10), str(path), mode="append")
    dataset = lance.dataset(str(path))
    dataset.tags.create("first", 1)
    dataset.tags.create("second", 2)
    require((path / "_refs" / "tags" / "first.json").is_file(), "tag file missing")


def write_default_format_nested(path):
    """This release's default data file version, with nested columns."""
    lance.write_dataset(make_rows(0, 30, nested=True), str(path), max_rows_per_file=15)
    lance.write_dataset(make_rows(30, 10, nested=True), str(path), mode="append")
    lance.dataset(str(path)).delete("id IN (4, 33)")


def write_v2_0_history(path):
    """Create, append and delete with 2.0 data files chosen explicitly (older
    releases default to legacy files)."""
    options = v2_0_options()
    lance.write_dataset(make_rows(0, 30), str(path), max_rows_per_file=20, **options)
    lance.write_dataset(make_rows(30, 10), str(path), mode="append", **options)
    lance.dataset(str(path)).delete("id IN (3, 31)")
    require(lance.dataset(str(path)).count_rows() == 38, "create, append and delete should leave 38 rows")


def write_legacy_history(path):
    """Create, append and delete with legacy data files chosen explicitly."""
    options = legacy_options()
    lance.write_dataset(make_rows(0, 30), str(path), max_rows_per_file=20, **options)
    lance.write_dataset(make_rows(30, 10), str(path), mode="append", **options)
    lance.dataset(str(path)).delete("id IN (3, 31)")
    require(lance.dataset(str(path)).count_rows() == 38, "create, append and delete should leave 38 rows")


VECTOR_DIMENSION = 32


def vector_rows(start, count):
    """Vectors derived from the row id alone, varied enough to train PQ."""
    values = [
        ((i * 2654435761 + k * 40503) % 1000003) / 1000003.0
        for i in range(start, start + count)
        for k in range(VECTOR_DIMENSION)
    ]
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(values, pa.float32()), VECTOR_DIMENSION)
    return pa.table({"id": pa.array(range(start, start + count), pa.int64()), "vector": vectors})


def write_vector_index_delta(path):
    """A vector index, an append, then a delta segment for the new fragment
    (``optimize_indices(num_indices_to_merge=0)``): two segments of one index."""
    lance.write_dataset(vector_rows(0, 512), str(path))
    lance.dataset(str(path)).create_index("vector", index_type="IVF_PQ", num_partitions=1, num_sub_vectors=2)
    lance.write_dataset(vector_rows(512, 512), str(path), mode="append")
    optimizer = lance.dataset(str(path)).optimize
    if not hasattr(optimizer, "optimize_indices"):
        raise ScenarioUnsupported("lance %s cannot optimize indices" % lance.__version__)
    optimizer.optimize_indices(num_indices_to_merge=0)
    dataset = lance.dataset(str(path))
    if hasattr(dataset, "describe_indices"):
        segments = [len(index.segments) for index in dataset.describe_indices()]
    else:
        segments = [len(dataset.list_indices())]
    require(segments == [2], "expected one index of two segments, found %r" % segments)


#: The scalar index types a release may offer, and the column of
#: :func:`index_rows` each indexes.
SCALAR_INDEX_TYPES = (
    ("BTREE", "id"),
    ("BITMAP", "category"),
    ("LABEL_LIST", "labels"),
    ("ZONEMAP", "value"),
    ("BLOOMFILTER", "label"),
    ("NGRAM", "label"),
    ("INVERTED", "label"),
)
#: The vector index types a release may offer, with their parameters. The
#: HNSW ones get a dataset of their own: releases that cannot remap them
#: refuse to compact a dataset that has one.
VECTOR_INDEX_TYPES: tuple[tuple[str, dict[str, int]], ...] = (
    ("IVF_FLAT", {}),
    ("IVF_PQ", {"num_sub_vectors": 2}),
    ("IVF_SQ", {}),
    ("IVF_RQ", {}),
)
HNSW_INDEX_TYPES: tuple[tuple[str, dict[str, int]], ...] = (
    ("IVF_HNSW_SQ", {}),
    ("IVF_HNSW_PQ", {"num_sub_vectors": 2}),
)


def index_rows(start, count):
    """:func:`make_rows` with a category (a few values, some null) and a list of labels."""
    table = make_rows(start, count)
    ids = range(start, start + count)
    categories = pa.array([None if i % 4 == 3 else ("red", "green", "blue")[i % 4] for i in ids], pa.string())
    labels = pa.array([None if i % 7 == 0 else ["l%d" % (i % 3), "m%d" % (i % 5)] for i in ids], pa.list_(pa.string()))
    return table.append_column("category", categories).append_column("labels", labels)


def _step(skipped, name, run):
    """Run one maintenance step of an index walk; a release that fails it (old
    releases cannot optimize or remap some index types) commits nothing, and
    the failure is recorded in ``skipped`` while the walk goes on."""
    try:
        run()
    except Exception as exc:  # the release's own failure, whatever its type
        skipped[name] = "lance %s: %s" % (lance.__version__, str(exc).strip().splitlines()[0][:200])


def _index_walk(path, rows, create, kinds, skipped):
    """Write two fragments, create each index this release offers (``create(dataset,
    kind)``; a kind the release refuses is recorded in ``skipped`` with its message),
    then append, fold the append into delta segments, delete and compact, each as far
    as the release can: the indices an old release leaves behind, in the layouts it wrote."""
    lance.write_dataset(rows(0, 512), str(path), max_rows_per_file=256)
    made = []
    for kind in kinds:
        try:
            create(lance.dataset(str(path)), kind)
        except Exception as exc:  # a release refuses an index type it lacks in many ways
            skipped[kind] = "lance %s: %s" % (lance.__version__, str(exc).strip().splitlines()[0][:200])
            continue
        made.append(kind)
    if not made:
        raise ScenarioUnsupported("lance %s creates none of %s" % (lance.__version__, ", ".join(kinds)))
    lance.write_dataset(rows(512, 64), str(path), mode="append")
    optimizer = lance.dataset(str(path)).optimize
    if hasattr(optimizer, "optimize_indices"):
        _step(skipped, "optimize_indices", lambda: optimizer.optimize_indices(num_indices_to_merge=0))
    lance.dataset(str(path)).delete("id % 10 = 3")
    _step(
        skipped, "compact_files", lambda: lance.dataset(str(path)).optimize.compact_files(target_rows_per_fragment=4096)
    )
    names = [index["name"] for index in lance.dataset(str(path)).list_indices()]
    require(all(kind.lower() in names for kind in made), "indices %r, created %r" % (names, made))


def write_scalar_indices(path, skipped):
    """Every scalar index type this release creates, one column each."""
    columns = dict(SCALAR_INDEX_TYPES)

    def create(dataset, kind):
        dataset.create_scalar_index(columns[kind], kind, name=kind.lower())

    _index_walk(path, index_rows, create, [kind for kind, _ in SCALAR_INDEX_TYPES], skipped)


def _vector_walk(path, kinds, skipped):
    parameters = dict(kinds)

    def create(dataset, kind):
        dataset.create_index("vector", index_type=kind, name=kind.lower(), num_partitions=2, **parameters[kind])

    _index_walk(path, vector_rows, create, [kind for kind, _ in kinds], skipped)


def write_vector_indices(path, skipped):
    """Every IVF index type this release creates (HNSW apart), on one vector column."""
    _vector_walk(path, VECTOR_INDEX_TYPES, skipped)


def write_hnsw_indices(path, skipped):
    """Every IVF_HNSW index type this release creates, on one vector column."""
    _vector_walk(path, HNSW_INDEX_TYPES, skipped)


def write_update_rebased_over_project(path):
    """Two handles read one version; the first drops a column, the second then
    updates one row: the Update commits after the Project and rebases over
    it (the conflict matrix's project/update cell, with the release alone)."""
    lance.write_dataset(make_rows(0, 12), str(path), max_rows_per_file=4)
    lance.dataset(str(path)).add_columns({"extra": "id + 1000"})
    read = lance.dataset(str(path)).version
    first, second = lance.dataset(str(path), version=read), lance.dataset(str(path), version=read)
    first.drop_columns(["extra"])
    second.update({"value": "-1"}, where="id = 0")
    dataset = lance.dataset(str(path))
    require(dataset.version == read + 2, "expected the Project and the Update, found version %d" % dataset.version)
    require("extra" not in dataset.schema.names, "schema %r" % dataset.schema.names)


WRITERS = {
    "appends_deletes": (write_appends_deletes, ("delete",)),
    "schema_evolution": (write_schema_evolution, ("add_columns", "alter_columns", "drop_columns", "merge")),
    "overwrite": (write_overwrite, ()),
    "scalar_index": (write_scalar_index, ("create_scalar_index",)),
    "update_compaction": (write_update_compaction, ("update", "optimize")),
    "tags": (write_tags, ("tags",)),
    "default_format_nested": (write_default_format_nested, ()),
    "v2_0_history": (write_v2_0_history, ("delete",)),
    "legacy_history": (write_legacy_history, ("delete",)),
    "vector_index_delta": (write_vector_index_delta, ("create_index", "optimize")),
    "update_rebased_over_project": (write_update_rebased_over_project, ("add_columns", "drop_columns", "update")),
    "scalar_indices": (write_scalar_indices, ("create_scalar_index", "optimize")),
    "vector_indices": (write_vector_indices, ("create_index", "optimize")),
    "hnsw_indices": (write_hnsw_indices, ("create_index", "optimize")),
}
#: Writers that also report the index types the release refused (their
#: ``skipped`` entries are named ``scenario/TYPE``).
REPORTS_PARTS = ("scalar_indices", "vector_indices", "hnsw_indices")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = Path(argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    skipped = {}
    for name, (write, needed) in WRITERS.items():
        missing = [method for method in needed if not hasattr(lance.LanceDataset, method)]
        if missing:
            skipped[name] = "lance %s has no %s" % (lance.__version__, ", ".join(missing))
            continue
        target = out_dir / name
        if target.exists():
            raise SystemExit("refusing to overwrite %s" % target)
        parts = {}
        try:
            if name in REPORTS_PARTS:
                write(target, parts)
            else:
                write(target)
        except ScenarioUnsupported as exc:
            # Whatever the scenario wrote before it found the gap is not a
            # dataset anyone asked for.
            shutil.rmtree(target, ignore_errors=True)
            skipped[name] = str(exc)
            continue
        written[name] = name
        skipped.update(("%s/%s" % (name, part), reason) for part, reason in parts.items())
    print(json.dumps({"lance_version": lance.__version__, "datasets": written, "skipped": skipped}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
