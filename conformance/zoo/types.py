"""Zoo features about what a dataset stores: nested and odd types, JSON,
blobs (v1: a ``lance-encoding:blob`` large binary; v2: ``lance.blob.blob_field``
inline, packed, dedicated and external), and every data storage version
pylance writes (legacy, 2.0, 2.1, 2.2, 2.3)."""

from __future__ import annotations

import datetime
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa

from . import data
from .model import Feature, FeatureUnavailable, require
from .writing import append, file_versions, open_dataset, write

_FLAT = ["id", "embedding", "big_text", "big_bytes", "amount", "moment_utc", "moment_berlin", "day", "half"]
#: The odd columns each data storage version takes: 2.0 refuses null structs
#: (and so lists of structs holding them), legacy a dictionary whose append
#: brings other words, 2.1 maps; each version keeps as many as it can.
_STORAGE_COLUMNS: dict[str, list[str]] = {
    "legacy": _FLAT,
    "2.0": [*_FLAT, "category"],
    "2.1": [name for name in data.ODD_SCHEMA.names if name != "attributes"],
    "2.2": list(data.ODD_SCHEMA.names),
    "2.3": list(data.ODD_SCHEMA.names),
}


def _storage_version(version: str, *, cheap: bool = False) -> Feature:
    columns = _STORAGE_COLUMNS[version]
    expected = "0.2" if version == "legacy" else version

    def build(path: Path) -> None:
        write(data.odd_rows(0, 30).select(columns), path, max_rows_per_file=15, data_storage_version=version)
        append(data.odd_rows(30, 10).select(columns), path)
        open_dataset(path).delete("id IN (4, 33)")
        open_dataset(path).add_columns({"id_plus_one": "id + 1"})
        require(file_versions(path) == {expected}, f"data file versions {file_versions(path)}")

    name = "storage_" + version.replace(".", "_")
    return Feature(name, f"data storage version {version}: appends, a delete, a new column", build, cheap=cheap)


def build_odd_types(path: Path) -> None:
    """Every odd column of :data:`~.data.ODD_SCHEMA` at pylance's default
    storage version, over two writes."""
    write(data.odd_rows(0, 40), path, max_rows_per_file=25)
    append(data.odd_rows(40, 10), path)
    table = open_dataset(path).to_table()
    require(table.schema.equals(data.ODD_SCHEMA), f"pylance changed the schema: {table.schema}")


def build_json(path: Path) -> None:
    """A JSON column (``pa.json_(pa.string())``), then an append."""
    write(data.json_rows(0, 30), path)
    append(data.json_rows(30, 10), path)
    got = open_dataset(path).schema.field("doc").type
    require(isinstance(got, pa.ExtensionType) or "json" in str(got), f"doc is {got}")


def build_fixed_size_list_of_structs(path: Path) -> None:
    """A fixed-size list of structs beside a plain column, at pylance's default
    storage version (pylance 14 writes it and cannot read both columns back
    together)."""
    ids = range(12)
    point = pa.struct([("x", pa.int32()), ("y", pa.float64())])
    pairs = pa.array([[{"x": i, "y": i / 2}, {"x": -i, "y": None}] for i in ids], pa.list_(point, 2))
    write(pa.table({"id": pa.array(ids, pa.int64()), "pairs": pairs}), path)
    require(open_dataset(path).count_rows() == 12, "rows not written")


#: Field metadata asking pylance for each encoding the 2.1+ writer offers
#: (upstream encoding page; pylance reads these keys from field metadata).
ENCODING_HINTS: dict[str, dict[str, str]] = {
    "zstd_text": {"lance-encoding:compression": "zstd", "lance-encoding:compression-level": "3"},
    "lz4_ints": {"lance-encoding:compression": "lz4"},
    "fullzip_bytes": {"lance-encoding:structural-encoding": "fullzip"},
    "miniblock_ints": {"lance-encoding:structural-encoding": "miniblock"},
    "bss_floats": {"lance-encoding:bss": "on"},
    "rle_runs": {"lance-encoding:rle-threshold": "0.9"},
    "packed_struct": {"lance-encoding:packed": "true"},
    "dict_text": {"lance-encoding:dict-divisor": "2"},
    "constant": {},
    "all_null": {},
}


def encoding_rows(count: int) -> pa.Table:
    """3,000-odd rows of :data:`ENCODING_HINTS`' columns: runs, repeats,
    constants, wide and narrow values, so that every hint has data to use."""
    ids = range(count)
    columns = {
        "zstd_text": pa.array([f"value-{i % 50}-{'x' * (i % 7)}" for i in ids]),
        "lz4_ints": pa.array([(i * 7) % 1000 for i in ids], pa.int64()),
        "fullzip_bytes": pa.array([bytes([i % 256]) * (i % 300) for i in ids], pa.binary()),
        "miniblock_ints": pa.array([i % 17 for i in ids], pa.int32()),
        "bss_floats": pa.array([((i * 7919) % 1000) / 7.0 for i in ids], pa.float32()),
        "rle_runs": pa.array([i // 100 for i in ids], pa.int64()),
        "packed_struct": pa.array(
            [{"a": i, "b": i / 3} for i in ids], pa.struct([("a", pa.int32()), ("b", pa.float64())])
        ),
        "dict_text": pa.array([data.WORDS[i % 3] for i in ids]),
        "constant": pa.array([42] * count, pa.int64()),
        "all_null": pa.array([None] * count, pa.string()),
    }
    fields = [pa.field("id", pa.int64())] + [
        pa.field(name, array.type, metadata=ENCODING_HINTS[name] or None) for name, array in columns.items()
    ]
    return pa.Table.from_arrays([pa.array(ids, pa.int64()), *columns.values()], schema=pa.schema(fields))


def _encodings(version: str) -> Feature:
    def build(path: Path) -> None:
        write(encoding_rows(3000), path, data_storage_version=version)
        require(file_versions(path) == {version}, f"data file versions {file_versions(path)}")

    name = "encodings_" + version.replace(".", "_")
    return Feature(name, f"every encoding hint of field metadata, file version {version}", build)


#: A ``lance.bfloat16`` value: the upper half of the float32 (the extension's
#: storage is a two-byte fixed-size binary).
def _bfloat16(value: float) -> bytes:
    return struct.pack("<f", value)[2:]


BFLOAT16 = {"ARROW:extension:name": "lance.bfloat16", "ARROW:extension:metadata": ""}


def build_extension_types(path: Path) -> None:
    """Arrow extension types and other rarities: a fixed-shape tensor,
    bfloat16 scalars and vectors (by their extension metadata: pylance 14's
    ``lance.arrow`` cannot be imported without pandas), a timestamp with a
    fixed-offset zone, a large list of structs."""
    ids = list(range(12))
    tensor_type = pa.fixed_shape_tensor(pa.float32(), [2, 2])
    tensor_storage = pa.FixedSizeListArray.from_arrays(pa.array([float(k) for k in range(48)], pa.float32()), 4)
    halves = pa.array([None if i % 5 == 0 else _bfloat16(i / 4) for i in ids], pa.binary(2))
    vectors = pa.FixedSizeListArray.from_arrays(pa.array([_bfloat16(k / 2) for k in range(24)], pa.binary(2)), 2)
    zone = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    moments = [datetime.datetime(2024, 2, 29, 12, tzinfo=zone) + datetime.timedelta(minutes=i) for i in ids]
    items = pa.struct([("a", pa.int32()), ("b", pa.string())])
    schema = pa.schema(
        [
            pa.field("id", pa.int64()),
            pa.field("tensor", tensor_type),
            pa.field("half", pa.binary(2), metadata=BFLOAT16),
            pa.field("half_vector", pa.list_(pa.field("item", pa.binary(2), metadata=BFLOAT16), 2)),
            pa.field("moment", pa.timestamp("us", tz="+05:30")),
            pa.field("long_items", pa.large_list(items)),
        ]
    )
    long_items = pa.array(
        [None if i % 4 == 0 else [{"a": i, "b": f"x{i}"}] * (i % 3) for i in ids], pa.large_list(items)
    )
    columns = [
        pa.array(ids, pa.int64()),
        pa.ExtensionArray.from_storage(tensor_type, tensor_storage),
        halves,
        vectors,
        pa.array(moments, pa.timestamp("us", tz="+05:30")),
        long_items,
    ]
    write(pa.Table.from_arrays(columns, schema=schema), path)
    append(pa.Table.from_arrays(columns, schema=schema).slice(0, 3), path)


#: Field metadata marking a blob v1 column.
BLOB_V1 = {"lance-encoding:blob": "true"}


def _blob_v1(version: str) -> Feature:
    def build(path: Path) -> None:
        _write_blob_v1(path, version)

    name = "blob_v1" + ("" if version == "2.1" else "_" + version.replace(".", "_"))
    return Feature(name, f"a large_binary column marked lance-encoding:blob, file version {version}", build)


def _write_blob_v1(path: Path, version: str) -> None:
    """A ``large_binary`` column marked ``lance-encoding:blob``: pylance 14
    keeps it a blob v1 column in 2.1 and stores it as blob v2 from 2.2 on."""
    ids = list(range(30))
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("payload", pa.large_binary(), metadata=BLOB_V1)])
    values = [None if i % 7 == 0 else data.blob_bytes(i) for i in ids]
    write(
        pa.table([pa.array(ids, pa.int64()), pa.array(values, pa.large_binary())], schema=schema),
        path,
        data_storage_version=version,
    )
    open_dataset(path).delete("id = 5")


def _blob_module() -> Any:
    try:
        from lance import blob  # lazy: pylance is optional (the test extra); only blob v2 builders need it
    except ImportError as exc:
        raise FeatureUnavailable(f"blob v2: lance.blob cannot be imported: {exc}") from exc
    if not hasattr(blob, "blob_field"):
        raise FeatureUnavailable("blob v2: lance.blob.blob_field is missing")
    return blob


def _blob_v2_table(blob: Any, values: list, **thresholds) -> pa.Table:
    field = blob.blob_field("payload", **thresholds)
    ids = pa.array(range(len(values)), pa.int64())
    return pa.table([ids, blob.blob_array(values)], schema=pa.schema([pa.field("id", pa.int64()), field]))


def _blob_v2(kind: str, summary: str, thresholds: dict[str, int], sizes: list[int], *, cheap: bool = False) -> Feature:
    def build(path: Path) -> None:
        blob = _blob_module()
        values = [
            None if i % 9 == 4 else bytes((i * 13 + k) % 256 for k in range(size)) for i, size in enumerate(sizes)
        ]
        write(_blob_v2_table(blob, values, **thresholds), path, data_storage_version="2.2")
        more = [bytes((i * 5 + k) % 256 for k in range(sizes[i % len(sizes)])) for i in range(4)]
        extra = _blob_v2_table(blob, more, **thresholds)
        extra = extra.set_column(0, "id", pa.array(range(len(values), len(values) + 4), pa.int64()))
        append(extra, path)
        open_dataset(path).delete("id = 1")
        require(file_versions(path) == {"2.2"}, f"data file versions {file_versions(path)}")

    return Feature(f"blob_v2_{kind}", summary, build, cheap=cheap)


def _external_blobs(blob: Any, where: Path) -> list:
    """Blob v2 values referring to files in ``where``: a whole file, a range
    of another, a null and an inline value."""
    where.mkdir(parents=True)
    whole, ranged = where / "whole.bin", where / "ranged.bin"
    whole.write_bytes(data.blob_bytes(11))
    ranged.write_bytes(data.blob_bytes(23))
    return [blob.Blob(uri=whole.as_uri()), blob.Blob(uri=ranged.as_uri(), position=10, size=100), None, b"inline"]


def build_blob_v2_external(path: Path) -> None:
    """Blob v2 values at external URIs under a base path the dataset
    registers (sibling ``<name>-media``): readers may read them."""
    blob = _blob_module()
    try:
        from lance import DatasetBasePath  # lazy: pylance is optional (the test extra)
    except ImportError as exc:
        raise FeatureUnavailable(f"base paths: lance.DatasetBasePath is missing: {exc}") from exc
    media = (path.parent / f"{path.name}-media").absolute()
    values = _external_blobs(blob, media)
    base = DatasetBasePath(str(media), name="media")
    write(_blob_v2_table(blob, values), path, data_storage_version="2.2", initial_bases=[base])
    require(open_dataset(path).count_rows() == 4, "external blobs not written")


def build_blob_v2_external_outside(path: Path) -> None:
    """Blob v2 values at external URIs outside the dataset and its base paths
    (sibling ``<name>-outside``), written with ``allow_external_blob_outside_bases``."""
    blob = _blob_module()
    values = _external_blobs(blob, (path.parent / f"{path.name}-outside").absolute())
    try:
        write(_blob_v2_table(blob, values), path, data_storage_version="2.2", allow_external_blob_outside_bases=True)
    except TypeError as exc:
        raise FeatureUnavailable(f"external blobs outside the bases: {exc}") from exc
    require(open_dataset(path).count_rows() == 4, "external blobs not written")


FEATURES: tuple[Feature, ...] = (
    _storage_version("legacy"),
    _storage_version("2.0"),
    _storage_version("2.1"),
    _storage_version("2.2", cheap=True),
    _storage_version("2.3"),
    Feature(
        "odd_types",
        "structs, lists of structs, maps, fixed-size lists, large, dictionary, decimal, zoned timestamps",
        build_odd_types,
    ),
    Feature("json", "a JSON column", build_json),
    Feature("fixed_size_list_of_structs", "a fixed-size list of structs (2.2)", build_fixed_size_list_of_structs),
    _blob_v1("2.1"),
    _blob_v1("2.2"),
    _encodings("2.1"),
    _encodings("2.2"),
    _encodings("2.3"),
    Feature("extension_types", "tensor, bfloat16, fixed-offset zone, large list of structs", build_extension_types),
    _blob_v2("inline", "blob v2 values small enough to stay inline in the data file", {}, [0, 3, 17, 40, 64] * 3),
    _blob_v2(
        "packed",
        "blob v2 values packed into .pack sidecars (small pack files, several of them)",
        {"inline_size_threshold": 16, "pack_file_size_threshold": 4096},
        [200, 900, 1500, 2500] * 4,
    ),
    _blob_v2(
        "dedicated",
        "blob v2 values in dedicated .blob sidecars",
        {"inline_size_threshold": 16, "dedicated_size_threshold": 256},
        [300, 1000, 5000, 20] * 3,
    ),
    Feature("blob_v2_external", "blob v2 values at external URIs under a registered base path", build_blob_v2_external),
    Feature(
        "blob_v2_external_outside",
        "blob v2 values at external URIs outside the dataset and its base paths",
        build_blob_v2_external_outside,
    ),
)
