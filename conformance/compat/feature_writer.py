"""Write the compatibility matrix's feature datasets with one release (run
inside that release's environment).

Usage: ``python feature_writer.py OUT_DIR FEATURE [FEATURE ...]``

A standalone script: it imports only the standard library, and inside
:func:`main` the ``pyarrow`` and ``lance`` of the environment it runs in,
never ``conformance`` (the matrix imports :data:`FEATURES` from this file
without importing ``lance``). Each feature is one dataset whose newest
version shows the feature; every operation is probed in the release's public
API (a parameter in a signature, a method on a class, a write the release
accepts), and a feature the release cannot produce is reported as not
offered with the reason, never as a failure of the script.

The datasets of the ``txn-*`` and ``index-*`` features use 2.0 data files
where the release can choose them (its default otherwise), so that a reader
failing them fails on the transaction or the index, not on the file version;
the ``file-*`` features test the file versions.

The last line of stdout is a JSON object::

    {"lance_version": "0.20.0",
     "datasets": {"feature": "relative/path", ...},
     "not_offered": {"feature": "reason", ...},
     "write_errors": {"feature": "error type: message", ...}}

``write_errors`` are operations the release offers but failed (its own
defect, or a probe that guessed wrong): the feature is left out of the
matrix for that writer, and the failure is reported.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
from pathlib import Path

#: Every feature the matrix knows, with what its dataset holds; the order is
#: the order of the page's feature list.
FEATURES: dict[str, str] = {
    "file-legacy": "legacy (v0.x) data files",
    "file-2.0": "2.0 data files",
    "file-2.1": "2.1 data files",
    "file-2.2": "2.2 data files",
    "naming-v1": "manifests named by version number (V1 naming)",
    "naming-v2": "manifests named by the inverted, zero-padded version (V2 naming)",
    "stable-row-ids": "stable row ids (row id sequences in the manifest)",
    "deletion-files": "deletion files: a sparse Arrow file and a dense bitmap",
    "index-btree": "a BTREE scalar index",
    "index-bitmap": "a BITMAP scalar index",
    "index-label-list": "a LABEL_LIST scalar index",
    "index-inverted": "an INVERTED (full-text) index",
    "index-ngram": "an NGRAM index",
    "index-zonemap": "a ZONEMAP index",
    "index-bloomfilter": "a BLOOMFILTER index",
    "index-ivf-flat": "an IVF_FLAT vector index",
    "index-ivf-pq": "an IVF_PQ vector index",
    "index-ivf-sq": "an IVF_SQ vector index",
    "index-ivf-hnsw-sq": "an IVF_HNSW_SQ vector index",
    "txn-append": "newest version: an Append",
    "txn-delete": "newest version: a Delete",
    "txn-update": "newest version: an Update",
    "txn-overwrite": "newest version: an Overwrite",
    "txn-merge": "newest version: a Merge (columns joined from a table)",
    "txn-add-columns": "newest version: new columns computed from SQL",
    "txn-drop-columns": "newest version: a Project dropping a column",
    "txn-rename-column": "newest version: a Project renaming a column",
    "txn-compaction": "newest version: a Rewrite (compaction)",
    "txn-restore": "newest version: a Restore of an older version",
    "txn-create-index": "newest version: a CreateIndex",
    "txn-data-overlay": "newest version: a DataOverlay transaction with no overlay files",
}


class NotOffered(Exception):
    """The release lacks an operation or a parameter the feature needs."""


def _parameters(function):
    try:
        return inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return {}


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0][:300] if text else "")


class Writer:
    """The release's lance and pyarrow, and the probes every feature shares."""

    def __init__(self, lance, pa):
        self.lance = lance
        self.pa = pa
        self.write_parameters = _parameters(lance.write_dataset)

    def rows(self, start, count):
        """Rows whose values derive from the row id alone."""
        pa = self.pa
        ids = list(range(start, start + count))
        return pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "value": pa.array([None if i % 7 == 0 else i * 0.5 for i in ids], pa.float64()),
                "label": pa.array([None if i % 5 == 0 else "row-%d" % i for i in ids], pa.string()),
                "category": pa.array([("red", "green", "blue")[i % 3] for i in ids], pa.string()),
                "tags": pa.array([["t%d" % (i % 4), "u%d" % (i % 3)] for i in ids], pa.list_(pa.string())),
            }
        )

    def vectors(self, start, count, dimension=16):
        pa = self.pa
        values = [
            ((i * 2654435761 + k * 40503) % 1000003) / 1000003.0
            for i in range(start, start + count)
            for k in range(dimension)
        ]
        return pa.table(
            {
                "id": pa.array(range(start, start + count), pa.int64()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(values, pa.float32()), dimension),
            }
        )

    def file_version(self, version):
        """Write options selecting data file ``version``; NotOffered when the release cannot."""
        if "data_storage_version" in self.write_parameters:
            return {"data_storage_version": version}
        if version in ("legacy", "2.0") and "use_legacy_format" in self.write_parameters:
            return {"use_legacy_format": version == "legacy"}
        raise NotOffered("lance %s cannot select data storage version %s" % (self.lance.__version__, version))

    def base_options(self):
        """2.0 data files where selectable (see the module docstring)."""
        try:
            return self.file_version("2.0")
        except NotOffered:
            return {}

    def write(self, table, path, **options):
        return self.lance.write_dataset(table, str(path), **options)

    def base(self, path, count=60, **extra):
        options = dict(self.base_options(), max_rows_per_file=count // 2)
        options.update(extra)
        self.write(self.rows(0, count), path, **options)
        return self.lance.dataset(str(path))

    def method(self, name, owner=None):
        owner = owner if owner is not None else self.lance.LanceDataset
        if not hasattr(owner, name):
            raise NotOffered("lance %s has no %s.%s" % (self.lance.__version__, owner.__name__, name))
        return getattr(owner, name)


def _file_feature(version):
    def write(w, path):
        options = w.file_version(version)
        try:
            w.write(w.rows(0, 40), path, max_rows_per_file=20, **options)
        except Exception as exc:  # the release refuses the version it was asked for
            raise NotOffered(
                "lance %s refuses data storage version %s: %s" % (w.lance.__version__, version, _first_line(exc))
            ) from None
        w.write(w.rows(40, 10), path, mode="append", **options)
        dataset = w.lance.dataset(str(path))
        recorded = getattr(dataset, "data_storage_version", None)
        if recorded is not None and version != "legacy" and str(recorded) != version:
            raise NotOffered("lance %s wrote %s when asked for %s" % (w.lance.__version__, recorded, version))

    return write


def _naming(v2):
    def write(w, path):
        if "enable_v2_manifest_paths" not in w.write_parameters:
            if v2:
                raise NotOffered("lance %s has no enable_v2_manifest_paths" % w.lance.__version__)
            w.base(path)
        else:
            w.base(path, enable_v2_manifest_paths=v2)
        w.write(w.rows(60, 5), path, mode="append")
        names = os.listdir(os.path.join(str(path), "_versions"))
        padded = any(len(name.split(".")[0]) == 20 for name in names)
        if padded != v2:
            raise NotOffered("lance %s wrote manifests %r" % (w.lance.__version__, sorted(names)))

    return write


def write_stable_row_ids(w, path):
    for name in ("enable_stable_row_ids", "enable_move_stable_row_ids"):
        try:
            w.base(path, **{name: True})
        except TypeError:
            shutil.rmtree(str(path), ignore_errors=True)
            continue
        break
    else:
        raise NotOffered("lance %s accepts no stable row id option" % w.lance.__version__)
    dataset = w.lance.dataset(str(path))
    flag = getattr(dataset, "has_stable_row_ids", None)
    rendering = w.lance.debug.format_manifest(dataset) if hasattr(w.lance, "debug") else ""
    if flag is False or (flag is None and "row_id_meta: Some" not in rendering):
        raise NotOffered("lance %s accepted the option but wrote no stable row ids" % w.lance.__version__)
    dataset.delete("id % 6 = 1")
    w.lance.dataset(str(path)).update({"value": "value + 100"}, where="id % 6 = 2")


def write_deletion_files(w, path):
    w.write(w.rows(0, 3000), path, max_rows_per_file=2000, **w.base_options())
    dataset = w.lance.dataset(str(path))
    dataset.delete("id IN (2001, 2500)")
    dataset.delete("id < 1500")


#: ``feature: (index type, column)``; the vector ones index ``vector`` of :meth:`Writer.vectors`.
SCALAR_INDICES = {
    "index-btree": ("BTREE", "id"),
    "index-bitmap": ("BITMAP", "category"),
    "index-label-list": ("LABEL_LIST", "tags"),
    "index-inverted": ("INVERTED", "label"),
    "index-ngram": ("NGRAM", "label"),
    "index-zonemap": ("ZONEMAP", "value"),
    "index-bloomfilter": ("BLOOMFILTER", "label"),
}
VECTOR_INDICES = {
    "index-ivf-flat": ("IVF_FLAT", {}),
    "index-ivf-pq": ("IVF_PQ", {"num_sub_vectors": 2}),
    "index-ivf-sq": ("IVF_SQ", {}),
    "index-ivf-hnsw-sq": ("IVF_HNSW_SQ", {}),
}


def _scalar_index(feature):
    kind, column = SCALAR_INDICES[feature]

    def write(w, path):
        w.method("create_scalar_index")
        dataset = w.base(path)
        try:
            dataset.create_scalar_index(column, kind, name=kind.lower())
        except Exception as exc:  # a release refuses an index type it lacks in many ways
            raise NotOffered("lance %s: %s" % (w.lance.__version__, _first_line(exc))) from None

    return write


def _vector_index(feature):
    kind, parameters = VECTOR_INDICES[feature]

    def write(w, path):
        w.method("create_index")
        w.write(w.vectors(0, 512), path, max_rows_per_file=256, **w.base_options())
        try:
            w.lance.dataset(str(path)).create_index(
                "vector", index_type=kind, name=kind.lower(), num_partitions=2, **parameters
            )
        except Exception as exc:  # a release refuses an index type it lacks in many ways
            raise NotOffered("lance %s: %s" % (w.lance.__version__, _first_line(exc))) from None

    return write


def write_append(w, path):
    w.base(path)
    w.write(w.rows(60, 10), path, mode="append", **w.base_options())


def write_delete(w, path):
    w.base(path).delete("id % 4 = 1")


def write_update(w, path):
    w.method("update")
    w.base(path).update({"value": "value * 10"}, where="id % 3 = 0")


def write_overwrite(w, path):
    w.base(path)
    w.write(w.rows(100, 25), path, mode="overwrite", **w.base_options())


def write_merge(w, path):
    w.method("merge")
    dataset = w.base(path)
    # A score for every row: old releases cannot write the nulls a partial join needs.
    extra = w.pa.table({"id": w.pa.array(range(60), w.pa.int64()), "score": w.pa.array(range(60), w.pa.int32())})
    dataset.merge(extra, left_on="id")


def write_add_columns(w, path):
    w.method("add_columns")
    w.base(path).add_columns({"double_id": "id * 2"})


def write_drop_columns(w, path):
    w.method("drop_columns")
    w.base(path).drop_columns(["value"])


def write_rename_column(w, path):
    w.method("alter_columns")
    w.base(path).alter_columns({"path": "label", "name": "title"})


def write_compaction(w, path):
    w.method("optimize")
    dataset = w.base(path, count=80)
    dataset.delete("id % 5 = 0")
    metrics = w.lance.dataset(str(path)).optimize.compact_files(target_rows_per_fragment=1000)
    if getattr(metrics, "fragments_added", 1) < 1:
        raise NotOffered("lance %s compacted nothing: %r" % (w.lance.__version__, metrics))


def write_restore(w, path):
    w.method("restore")
    w.base(path)
    w.write(w.rows(60, 10), path, mode="append", **w.base_options())
    w.lance.dataset(str(path), version=1).restore()


def write_create_index(w, path):
    w.method("create_scalar_index")
    w.base(path).create_scalar_index("id", "BTREE")


def write_data_overlay(w, path):
    """A version whose inline transaction holds DataOverlay, an operation
    readers before 9.0 do not know (lance-format/lance#9454): no overlay file,
    so no reader feature flag either, only the transaction."""
    operation = getattr(getattr(w.lance, "LanceOperation", None), "DataOverlay", None)
    if operation is None:
        raise NotOffered("lance %s has no LanceOperation.DataOverlay" % w.lance.__version__)
    dataset = w.base(path)
    w.lance.LanceDataset.commit(str(path), operation(groups=[]), read_version=dataset.version)


WRITERS = {
    "file-legacy": _file_feature("legacy"),
    "file-2.0": _file_feature("2.0"),
    "file-2.1": _file_feature("2.1"),
    "file-2.2": _file_feature("2.2"),
    "naming-v1": _naming(False),
    "naming-v2": _naming(True),
    "stable-row-ids": write_stable_row_ids,
    "deletion-files": write_deletion_files,
    **{feature: _scalar_index(feature) for feature in SCALAR_INDICES},
    **{feature: _vector_index(feature) for feature in VECTOR_INDICES},
    "txn-append": write_append,
    "txn-delete": write_delete,
    "txn-update": write_update,
    "txn-overwrite": write_overwrite,
    "txn-merge": write_merge,
    "txn-add-columns": write_add_columns,
    "txn-drop-columns": write_drop_columns,
    "txn-rename-column": write_rename_column,
    "txn-compaction": write_compaction,
    "txn-restore": write_restore,
    "txn-create-index": write_create_index,
    "txn-data-overlay": write_data_overlay,
}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    unknown = [name for name in argv[2:] if name not in WRITERS]
    if unknown:
        print("unknown features: %s" % ", ".join(unknown), file=sys.stderr)
        return 2
    # lazy: this module is imported by the matrix for FEATURES, without lance.
    import lance
    import pyarrow as pa

    writer = Writer(lance, pa)
    out_dir = Path(argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    not_offered = {}
    write_errors = {}
    for name in argv[2:]:
        target = out_dir / name
        if target.exists():
            raise SystemExit("refusing to overwrite %s" % target)
        try:
            WRITERS[name](writer, target)
        except NotOffered as exc:
            # Whatever the feature wrote before the gap showed is not a dataset anyone asked for.
            shutil.rmtree(str(target), ignore_errors=True)
            not_offered[name] = str(exc)
            continue
        except BaseException as exc:  # the release's own failure (a Rust panic too) on an operation it offers
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            shutil.rmtree(str(target), ignore_errors=True)
            write_errors[name] = "lance %s: %s" % (lance.__version__, _first_line(exc))
            continue
        written[name] = name
    report = {"lance_version": lance.__version__, "datasets": written, "not_offered": not_offered}
    report["write_errors"] = write_errors
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
