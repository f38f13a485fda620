"""The valid base datasets the mutations start from.

They are written by pylance 14, the production implementation (imported only
when a base is built), because several shapes the rules must see only it
writes: legacy (v0.x) data files, a MemWAL index, pylance's own index files.
Each builder says what its dataset holds; the mutations in
:mod:`conformance.mutations.topics` rely on those facts, and the validator
tests check that every base is clean before a mutation is applied.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa

from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage
from reference_impl.transactions import read_transaction_file

#: The shard the ``mem_wal_shards`` base writes to.
MEM_WAL_SHARD = uuid.UUID("5b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d")


def _lance():
    import lance  # lazy: pylance is optional (the test extra); only building a base needs it

    return lance


def _rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"row {i}" if i % 4 else None for i in ids],
            "point": [{"x": float(i), "y": -float(i)} for i in ids],
        }
    )


def build_plain(path: Path) -> None:
    """pylance 14, V2 names, several versions: appends, a sparse and a dense
    delete, a scalar index, a tag and table config."""
    _lance().write_dataset(_rows(0, 3000), path, max_rows_per_file=1000)
    _lance().write_dataset(_rows(3000, 500), path, mode="append")
    dataset = _lance().dataset(path)
    dataset.delete("id < 3")
    dataset.delete("id >= 1000 AND id < 1800")
    dataset.create_scalar_index("id", "BTREE")
    dataset.tags.create("stable", 2)
    dataset.update_config({"owner.team": "conformance"})


def build_stable_row_ids(path: Path) -> None:
    """pylance 14 with stable row ids and V1 names."""
    _lance().write_dataset(
        _rows(0, 100), path, enable_stable_row_ids=True, max_rows_per_file=40, enable_v2_manifest_paths=False
    )
    _lance().write_dataset(_rows(100, 30), path, mode="append")
    _lance().dataset(path).delete("id % 10 = 0")


def build_reserved_row_ids(path: Path) -> None:
    """pylance 14 with stable row ids (version 1), then a ReserveRowIds of 50
    ids committed by the reference writer (version 2; pylance 14 has no call
    for it), then a pylance append (version 3), whose rows take ids above the
    reservation."""
    # lazy: the reference writer is needed by this base only
    from reference_impl.dataset import Dataset
    from reference_impl.newer_operations import ReserveRowIds

    _lance().write_dataset(_rows(0, 60), path, enable_stable_row_ids=True, max_rows_per_file=30)
    Dataset.open(str(path)).commit(ReserveRowIds(num_row_ids=50))
    _lance().write_dataset(_rows(60, 10), path, mode="append")


def build_mem_wal_shards(path: Path) -> None:
    """pylance 14: a table with a primary key and a MemWAL (unsharded), and
    one shard's writer putting five rows two to a MemTable: under
    _mem_wal/{shard}/, five WAL entries, manifest versions 1 to 4 and three
    SSTable generations, named as the newest MemWAL page says."""
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False, metadata={"lance-schema:unenforced-primary-key": "true"}),
            pa.field("v", pa.int64()),
        ]
    )
    _lance().write_dataset(pa.table({"id": [1, 2, 3], "v": [0, 0, 0]}, schema=schema), path)
    _lance().dataset(path).initialize_mem_wal(unsharded=True)
    writer = _lance().dataset(path).mem_wal_writer(str(MEM_WAL_SHARD), max_memtable_rows=2)
    try:
        for i in range(5):
            writer.put(pa.table({"id": [10 + i], "v": [i]}, schema=schema))
    finally:
        writer.close()


def build_legacy(path: Path) -> None:
    """pylance 14 with legacy (v0.x) data files: created empty (version 1 has
    no fragment), then two fragments, a second data file per fragment and a
    delete."""
    _lance().write_dataset(_rows(0, 60).slice(0, 0), path, data_storage_version="legacy")
    _lance().write_dataset(_rows(0, 60), path, mode="append", max_rows_per_file=40)
    _lance().dataset(path).add_columns({"double_id": "id * 2"})
    _lance().dataset(path).delete("id = 7")


def build_shallow_clone(path: Path) -> None:
    """A shallow clone (base path 0 is the source, a sibling directory named
    ``<name>-source`` opened by absolute path), then an append and a delete in
    the clone."""
    source = path.parent / f"{path.name}-source"
    dataset = _lance().write_dataset(_rows(0, 50), source.absolute(), max_rows_per_file=30)
    dataset.tags.create("published", 1)
    dataset.shallow_clone(str(path.absolute()), "published")
    _lance().write_dataset(_rows(50, 20), path, mode="append")
    _lance().dataset(path).delete("id = 3 OR id = 55")


def build_evolution(path: Path) -> None:
    """pylance 14, one version per kind of operation the transaction rules
    compare: 1 create (Overwrite), 2 Append, 3 Delete, 4 Update, 5 add_columns
    (Merge), 6 drop_columns (Project), 7 and 8 compaction (ReserveFragments,
    then a Rewrite built on version 6), 9 Restore of version 3, 10 Delete,
    11 Update."""
    _lance().write_dataset(_rows(0, 30), path, max_rows_per_file=10)
    _lance().write_dataset(_rows(30, 10), path, mode="append")
    dataset = _lance().dataset(path)
    dataset.delete("id < 3")
    dataset.update({"name": "'changed'"}, where="id = 12")
    dataset.add_columns({"double_id": "id * 2"})
    dataset.drop_columns(["point"])
    dataset.optimize.compact_files(target_rows_per_fragment=1000)
    _lance().dataset(path, version=3).restore()
    dataset = _lance().dataset(path)
    dataset.delete("id = 20")
    dataset.update({"name": "'again'"}, where="id = 15")

    storage = LocalStorage(path)
    kinds = [
        read_transaction_file(storage, read_manifest_file(storage, relpath).manifest.transaction_file).operation_name
        for _, relpath in sorted(list_versions(storage).manifests().items())
    ]
    expected = [
        "overwrite",
        "append",
        "delete",
        "update",
        "merge",
        "project",
        "reserve_fragments",
        "rewrite",
        "restore",
        "delete",
        "update",
    ]
    if kinds != expected:
        raise AssertionError(f"the evolution base has operations {kinds}, expected {expected}")


_PRIMARY_KEY = "lance-schema:unenforced-primary-key"
_NESTED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False, metadata={_PRIMARY_KEY: "true", _PRIMARY_KEY + ":position": "1"}),
        pa.field(
            "meta",
            pa.struct([pa.field("tenant", pa.int32(), nullable=False), pa.field("note", pa.string())]),
            nullable=False,
        ),
        pa.field("tags", pa.list_(pa.field("item", pa.int32(), nullable=False)), nullable=False),
        pa.field("vec", pa.list_(pa.float32(), 2)),
    ]
)


def _nested_rows(start: int, count: int) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "id": i,
                "meta": {"tenant": i % 3, "note": None if i % 5 == 0 else f"n{i}"},
                "tags": [i, i + 1][: i % 3],
                "vec": [float(i), 0.5],
            }
            for i in range(start, start + count)
        ],
        schema=_NESTED_SCHEMA,
    )


def build_nested_pk(path: Path) -> None:
    """pylance 14: a nested schema (non-nullable struct and list, a fixed-size
    list) with a primary key on ``id``; 1 create, 2 append, 3 rename ``vec``
    to ``embedding`` (Project), 4 btree index on ``id``, 5 MemWAL index
    (bucket sharding on ``id``, every index maintained)."""
    _lance().write_dataset(_nested_rows(0, 60), path, max_rows_per_file=30)
    _lance().write_dataset(_nested_rows(60, 20), path, mode="append")
    _lance().dataset(path).alter_columns({"path": "vec", "name": "embedding"})
    _lance().dataset(path).create_scalar_index("id", "BTREE", name="id_idx")
    _lance().dataset(path).initialize_mem_wal(bucket_column="id", num_buckets=2)


def build_branched(path: Path) -> None:
    """pylance 14 with branches: main has versions 1 and 2 (an append) and
    tag ``v1``; branch ``feature/x`` starts from version 1 and appends (its
    versions 1 and 2, version 2 tagged ``on-branch``); branch ``empty``
    starts from version 1 and has no commit of its own."""
    dataset = _lance().write_dataset(_rows(0, 200), path.absolute(), max_rows_per_file=100)
    dataset.tags.create("v1", 1)
    branch = dataset.create_branch("feature/x", 1)
    _lance().write_dataset(_rows(200, 50), branch, mode="append")
    _lance().dataset(path.absolute()).create_branch("empty", 1)
    _lance().dataset(path.absolute()).tags.create("on-branch", ("feature/x", 2))
    _lance().write_dataset(_rows(250, 10), path.absolute(), mode="append")


_V2_0_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("score", pa.float64(), nullable=False),
    ]
)


def _v2_0_rows(start: int, count: int) -> pa.Table:
    return pa.Table.from_pylist(
        [{"id": i, "name": None if i % 3 == 0 else f"n{i}", "score": i / 4} for i in range(start, start + count)],
        schema=_V2_0_SCHEMA,
    )


def build_v2_0(path: Path) -> None:
    """pylance 14 writing version 2.0 data files (on purpose: the 2.0 base,
    beside :func:`build_v2_1` and the default-version ``nested_pk``; the
    schema mutations rewrite its files in 2.0): non-nullable ``id`` and
    ``score`` beside a nullable ``name`` with nulls; 1 create (two fragments
    of 50 rows), 2 append."""
    _lance().write_dataset(_v2_0_rows(0, 100), path, data_storage_version="2.0", max_rows_per_file=50)
    _lance().write_dataset(_v2_0_rows(100, 20), path, mode="append")


def build_v2_1(path: Path) -> None:
    """pylance 14 writing version 2.1 data files (structural page layouts):
    the rows and versions of :func:`build_v2_0`."""
    _lance().write_dataset(_v2_0_rows(0, 100), path, data_storage_version="2.1", max_rows_per_file=50)
    _lance().write_dataset(_v2_0_rows(100, 20), path, mode="append")


#: Values of the blobs base, by how pylance 14 stores them under the
#: thresholds :func:`build_blobs` sets (inline up to 64 bytes, packed up to
#: 1000, dedicated above).
BLOB_INLINE = b"inline value"
BLOB_PACKED = (b"p" * 300, b"q" * 400)
BLOB_DEDICATED = b"d" * 3000
#: The objects external blobs point to, relative to the sibling directories
#: ``<name>-external`` (a declared base path) and ``<name>-outside`` (none).
EXTERNAL_OBJECT = "sub/object.bin"
OUTSIDE_OBJECT = "object.bin"


def build_blobs(path: Path) -> None:
    """pylance 14, file version 2.2, a blob v2 column of every stored kind:
    version 1 has an inline value, a null, an empty value, two values packed
    into one sidecar and one in a dedicated sidecar; version 2 appends two
    external blobs under the declared non-root base path ``ext`` (the
    sibling directory ``<name>-external``: the whole object and a range of
    it) and one absolute ``file://`` URI outside every base (the sibling
    ``<name>-outside``, which the writer was allowed to reference)."""
    lance = _lance()
    blob = lance.blob
    external, outside = path.parent / f"{path.name}-external", path.parent / f"{path.name}-outside"
    (external / EXTERNAL_OBJECT).parent.mkdir(parents=True, exist_ok=True)
    (external / EXTERNAL_OBJECT).write_bytes(bytes(range(256)) * 4)
    outside.mkdir(parents=True, exist_ok=True)
    (outside / OUTSIDE_OBJECT).write_bytes(b"outside " * 16)
    field = blob.blob_field("blob", inline_size_threshold=64, dedicated_size_threshold=1000)
    schema = pa.schema([pa.field("id", pa.int64()), field])

    def rows(start: int, values: list) -> pa.Table:
        ids = pa.array(range(start, start + len(values)), pa.int64())
        return pa.table({"id": ids, "blob": blob.blob_array(values)}, schema=schema)

    bases = [lance.DatasetBasePath(external.absolute().as_uri(), name="ext", is_dataset_root=False)]
    created = [BLOB_INLINE, None, b"", *BLOB_PACKED, BLOB_DEDICATED]
    lance.write_dataset(rows(0, created), path, data_storage_version="2.2", initial_bases=bases)
    object_uri = (external / EXTERNAL_OBJECT).absolute().as_uri()
    appended = [
        blob.Blob.from_uri(object_uri),
        blob.Blob.from_uri(object_uri, 16, 32),
        blob.Blob.from_uri((outside / OUTSIDE_OBJECT).absolute().as_uri()),
    ]
    lance.write_dataset(rows(len(created), appended), path, mode="append", allow_external_blob_outside_bases=True)


#: Words of the text index base's values: ASCII (so every row's tokens and
#: trigrams are defined exactly), mixed case, with punctuation.
TEXT_WORDS = ("Alpha", "beta", "gamma,", "delta", "lance", "x1", "zeta!", "eta", "th-eta", "iota", "kappa", "lambda")


def _text_rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    texts = [
        None
        if i % 29 == 0
        else ""
        if i % 31 == 0
        else " ".join(TEXT_WORDS[(i * 7 + k * k) % 12] for k in range(i % 9 + 1))
        for i in ids
    ]
    docs = [None if i % 13 == 0 else f'{{"a": {i % 7}, "name": "n{i % 5}"}}' for i in ids]
    return pa.table({"id": pa.array(ids, pa.int64()), "text": texts, "doc": pa.array(docs, pa.json_(pa.utf8()))})


def build_text_indices(path: Path) -> None:
    """pylance 14 with the text indices (reference_impl/indices/inverted.py,
    ngram.py, json_index.py): 400 rows in two fragments, an INVERTED index
    ``text_fts`` (simple tokenizer, no stemming or stop words, positions: its
    postings are defined exactly) and an NGRAM index ``text_ngram`` on
    ``text``; 100 rows appended, rows deleted, ``optimize_indices`` merging
    the new rows; then a JSON index ``doc_name`` on the path ``name`` of
    ``doc`` with a BITMAP target."""
    lance = _lance()
    from lance.indices import IndexConfig  # lazy: pylance is optional (see _lance)

    dataset = lance.write_dataset(_text_rows(0, 400), path, max_rows_per_file=200)
    dataset.create_scalar_index(
        "text", "INVERTED", name="text_fts", with_position=True, stem=False, remove_stop_words=False
    )
    dataset.create_scalar_index("text", "NGRAM", name="text_ngram")
    dataset = lance.write_dataset(_text_rows(400, 100), path, mode="append")
    dataset.delete("id % 10 = 3")
    dataset.optimize.optimize_indices()
    config = IndexConfig(index_type="json", parameters={"target_index_type": "bitmap", "path": "name"})
    dataset.create_scalar_index("doc", config, name="doc_name")


def vector_rows(start: int, count: int, dimension: int = 8) -> pa.Table:
    import numpy as np  # lazy: only the vector base draws vectors

    generator = np.random.default_rng(start)
    values = generator.standard_normal((count, 2, dimension)).astype(np.float32)
    return pa.table(
        {
            "id": pa.array(range(start, start + count), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(values[:, 0].ravel()), dimension),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(values[:, 1].ravel()), dimension),
        }
    )


def _zone_index_rows(start: int, count: int) -> pa.Table:
    ids = range(start, start + count)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "value": pa.array([None if i % 7 == 0 else 3 * i for i in ids], pa.int64()),
            "name": pa.array([None if i % 4 == 0 else f"name {i}" for i in ids], pa.string()),
        }
    )


def build_vectors(path: Path) -> None:
    """pylance 14 with vector indices over two 8-dimensional columns: 1
    create (300 rows, two fragments), 2 IVF_PQ ``vec_idx`` on ``vec`` (4
    partitions, 4 sub-vectors, l2), 3 IVF_HNSW_SQ ``emb_idx`` on ``emb``
    (4 partitions, cosine), 4 append (100 rows), 5 optimize_indices (a delta
    segment of each), 6 delete."""
    lance = _lance()
    lance.write_dataset(vector_rows(0, 300), path, max_rows_per_file=150)
    dataset = lance.dataset(path)
    dataset.create_index("vec", "IVF_PQ", name="vec_idx", target_partition_size=64, num_sub_vectors=4)
    dataset.create_index("emb", "IVF_HNSW_SQ", name="emb_idx", target_partition_size=64, metric="cosine")
    lance.write_dataset(vector_rows(300, 100), path, mode="append")
    lance.dataset(path).optimize.optimize_indices()
    lance.dataset(path).delete("id % 7 = 0")


#: The zones of the zone_indices base, for both its indices.
ZONE_ROWS = 100


def build_zone_indices(path: Path) -> None:
    """pylance 14 with a ZONEMAP index on ``value`` (nulls every 7th row) and a
    BLOOMFILTER index on ``name`` (nulls every 4th row), both cutting zones
    of :data:`ZONE_ROWS` rows, over fragments of 1000 and 500 rows; rows are
    deleted before the indices are built (``id % 250 = 3``: they lie inside
    zones or between them; most zones have none) and after (ids 1200 to
    1209: still in the statistics). Versions: 1 create, 2 delete, 3 and 4 the indices, 5 delete."""
    lance = _lance()
    dataset = lance.write_dataset(_zone_index_rows(0, 1500), path, max_rows_per_file=1000)
    dataset.delete("id % 250 = 3")
    config = lance.indices.IndexConfig
    dataset.create_scalar_index("value", config(index_type="zonemap", parameters={"rows_per_zone": ZONE_ROWS}))
    bloom = {"number_of_items": ZONE_ROWS, "probability": 0.01}
    dataset.create_scalar_index("name", config(index_type="bloomfilter", parameters=bloom))
    dataset.delete("id >= 1200 AND id < 1210")


#: The shared phrases of the minhash_lsh base (rows whose id is not a multiple of 5).
MINHASH_PHRASES = ("north river stone", "south cloud ember", "east west river", "stone ember cloud north")


def minhash_text(i: int) -> str | None:
    """Row ``i``'s text in the minhash_lsh base: null every 13th row, empty
    every 17th, a text of its own every 5th, else one of four phrases (so
    that buckets hold many documents)."""
    if i % 13 == 0:
        return None
    if i % 17 == 0:
        return ""
    if i % 5 == 0:
        return f"unique words of row {i:04d} here"
    return f"{MINHASH_PHRASES[i % 4]} {i % 3}"


def build_minhash_lsh(path: Path) -> None:
    """pylance 14 with a MINHASH_LSH index ``text_minhash`` (the defaults:
    128 hashes, 16 bands, shingles of 3, the simple tokenizer) on ``text``
    (:func:`minhash_text`) over 400 rows in two fragments; rows deleted
    before the index (``id % 50 = 7``: not indexed) and after (ids 300 to
    309: still indexed); data files of format 2.0. Versions: 1 create, 2 delete, 3 the index, 4 delete."""
    lance = _lance()
    ids = range(400)
    table = pa.table({"id": pa.array(ids, pa.int64()), "text": pa.array([minhash_text(i) for i in ids], pa.string())})
    # Data files of format 2.0 keep strings as their bytes (the mutations edit a text in place).
    dataset = lance.write_dataset(table, path, max_rows_per_file=200, data_storage_version="2.0")
    dataset.delete("id % 50 = 7")
    dataset.create_scalar_index("text", "MINHASHLSH", name="text_minhash")
    dataset.delete("id >= 300 AND id < 310")


#: The page size of the rtree base's index: a few hundred boxes make three levels.
RTREE_PAGE_SIZE = 8


def rtree_rows(start: int, count: int) -> pa.Table:
    """Rows with a GeoArrow point column ``geom`` (``struct<x, y>`` named
    ``geoarrow.point``, null every 9th row); points differ (so that pylance
    stores the coordinates plain, not as a dictionary) but for row ``i`` with
    ``i % 40 = 1``, which holds the point of row ``i - 1``."""

    def point(i: int) -> dict[str, float]:
        i -= i % 40 == 1
        return {"x": (i * 7919 % 10007) / 97.25 - 50.0, "y": (i * 104729 % 10009) / 101.5 - 40.0}

    ids = range(start, start + count)
    xy = pa.struct([pa.field("x", pa.float64(), nullable=False), pa.field("y", pa.float64(), nullable=False)])
    points = pa.array([None if i % 9 == 0 else point(i) for i in ids], xy)
    geom = pa.field("geom", xy, metadata={b"ARROW:extension:name": b"geoarrow.point"})
    schema = pa.schema([pa.field("id", pa.int64()), geom])
    return pa.Table.from_arrays([pa.array(ids, pa.int64()), points], schema=schema)


def build_rtree(path: Path) -> None:
    """pylance 14 with an RTREE index ``geom_idx`` on ``geom`` (page size
    :data:`RTREE_PAGE_SIZE`: leaf pages, one level of branch pages and the
    root) over 400 rows in two fragments; rows are deleted before the index
    is built (``id % 50 = 3``: not indexed) and after (ids 300 to 309: still
    indexed). Versions: 1 create, 2 delete, 3 the index, 4 delete."""
    lance = _lance()
    dataset = lance.write_dataset(rtree_rows(0, 400), path, max_rows_per_file=200)
    dataset.delete("id % 50 = 3")
    config = lance.indices.IndexConfig(index_type="rtree", parameters={"page_size": RTREE_PAGE_SIZE})
    dataset.create_scalar_index("geom", config, name="geom_idx")
    dataset.delete("id >= 300 AND id < 310")


BASES = {
    "blobs": build_blobs,
    "branched": build_branched,
    "nested_pk": build_nested_pk,
    "plain": build_plain,
    "stable_row_ids": build_stable_row_ids,
    "reserved_row_ids": build_reserved_row_ids,
    "mem_wal_shards": build_mem_wal_shards,
    "text_indices": build_text_indices,
    "legacy": build_legacy,
    "shallow_clone": build_shallow_clone,
    "evolution": build_evolution,
    "v2_0": build_v2_0,
    "v2_1": build_v2_1,
    "vectors": build_vectors,
    "zone_indices": build_zone_indices,
    "minhash_lsh": build_minhash_lsh,
    "rtree": build_rtree,
}


def build_bases(directory: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Build the named bases (default: all) under ``directory``; name -> root."""
    directory = Path(directory)
    built = {}
    for name in names or sorted(BASES):
        BASES[name](directory / name)
        built[name] = directory / name
    return built
