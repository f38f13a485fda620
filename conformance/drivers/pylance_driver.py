"""The pylance driver: what pylance itself believes a Lance dataset contains.

:func:`describe` builds the same canonical document as the reference driver
(``conformance/schemas/describe.schema.json``) but every fact in it comes from
pylance, never from our own decoding of Lance files or protobufs. Comparing the
two documents is therefore a comparison of two independent readers.

Where the facts come from, in order of preference:

* pylance's typed Python API: ``ds.version``, ``ds.count_rows()``,
  ``ds.get_fragments()`` / ``FragmentMetadata``, ``ds.describe_indices()``,
  ``ds.tags.list()``, ``ds.config()``, ``ds.metadata``, ``ds.base_paths()``,
  ``ds.schema``, ``ds.data_storage_version``, ``ds.has_stable_row_ids``,
  ``ds.versions()``, ``ds.tracked_files()``;
* scans (``with_row_address`` / ``with_row_id``) for which rows are visible, so
  deleted offsets and stable row ids are what pylance actually filters and
  reports, not what a deletion file or row-id sequence says on disk;
* ``lance.debug.format_manifest``, pylance's own rendering of the manifest it
  loaded, for the facts the typed API has no accessor for (the keys in
  :data:`FROM_DEBUG_RENDERING`). That rendering is Rust ``{:#?}`` output, which
  :func:`~conformance.drivers.rust_debug.parse_rust_debug` turns back into
  Python values.

``lance`` is imported inside the functions so that ``conformance`` imports on a
machine without pylance.

One driver for every release. Older releases lack some of these accessors
(pylance 0.20 has no ``tracked_files``, ``describe_indices``, ``config``,
``base_paths``, ``metadata`` or ``has_stable_row_ids``, and its fragment
metadata is a JSON document rather than attributes). Each accessor is
feature-detected, never chosen by version number: a fact the release keeps
but does not expose as a typed accessor comes from its debug rendering or an
older accessor (``list_indices``, ``FragmentMetadata.to_json``), and a fact
the release cannot show at all is added to :data:`UNREPORTED`, computed from
the installed release on first use. The module imports only the standard
library and ``conformance.describe`` (itself standard library only), so it runs
inside an old release's own environment too
(:mod:`conformance.drivers.release`).

Size. One cohesive concept (about 630 lines): the canonical description as
pylance reports it, every fact with its feature-detected source. The parser
of pylance's debug rendering is :mod:`conformance.drivers.rust_debug`.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from ..describe import (
    DESCRIBE_FORMAT,
    BasePathDescription,
    DataFileDescription,
    DataFormatDescription,
    Description,
    FieldDescription,
    FragmentDescription,
    IndexDescription,
    NamingScheme,
    TagDescription,
    WriterVersionDescription,
    metadata_value,
)

# DebugUnit is not used here; it stays importable from this module, where the
# parser lived before it had a module of its own.
from .lance_core_conflicts import conflict_from_message
from .protocol import Capability, DriverInfo, WriteConflict, WriteKind
from .rust_debug import DebugStruct, DebugTuple, DebugUnit, parse_rust_debug  # noqa: F401

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

U64_MAX = (1 << 64) - 1
#: A row address is ``fragment_id << 32 | offset``.
ROW_OFFSET_MASK = (1 << 32) - 1

#: ``UNREPORTED`` (keys of the describe document this driver cannot see
#: through the installed pylance; a comparison against another driver skips
#: exactly these) is computed on first access by :func:`unreported_keys`.
#: Paths use ``.`` for nesting and ``[]`` for "every element of a list". It is
#: empty for pylance 14, which exposes every key, some of them only through
#: ``lance.debug`` (see below).
#: Declared here for type checkers (a declaration without a value binds no
#: name, so the module ``__getattr__`` below still computes it).
UNREPORTED: frozenset[str]


def __getattr__(name: str):
    if name == "UNREPORTED":
        return unreported_keys()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=1)
def _manifest_renders_config() -> bool:
    """Whether the release's manifest rendering (``lance.debug``) has the
    table config (0.19 and later do; earlier ones leave it out)."""
    import tempfile

    import lance
    import lance.debug
    import pyarrow as pa

    with tempfile.TemporaryDirectory(prefix="lance-conformance-probe-") as scratch:
        dataset = lance.write_dataset(pa.table({"x": [1]}), os.path.join(scratch, "probe.lance"))
        return "config" in lance.debug.format_manifest(dataset)


def unreported_keys() -> frozenset[str]:
    """The describe keys the installed release has no way to show.

    Each is detected from the API itself: a release that cannot list the
    files of a version cannot say which naming scheme it followed, one whose
    fragment metadata has no file sizes or base ids cannot report them, and
    so on. Without pylance installed nothing can be reported, and nothing is
    claimed here (the driver then fails on use)."""
    try:
        import lance
        import lance.fragment
    except ImportError:
        return frozenset()
    dataset_class = lance.LanceDataset
    unreported = set()
    if not hasattr(dataset_class, "tracked_files"):
        unreported.add("naming_scheme")
    if not hasattr(dataset_class, "base_paths"):
        unreported.update({"base_paths", "fragments[].files[].base_id"})
    if not hasattr(dataset_class, "metadata"):
        unreported.add("table_metadata")
    if not hasattr(dataset_class, "describe_indices"):
        unreported.add("indices[].type_url")
    if not hasattr(dataset_class, "tags"):
        unreported.add("tags")  # releases before 0.16 have no tags
    if not hasattr(dataset_class, "config") and not _manifest_renders_config():
        unreported.add("config")  # releases before 0.19 show a table's config nowhere
    data_file_fields = _data_file_fields()
    if "file_size_bytes" not in data_file_fields:
        unreported.add("fragments[].files[].file_size_bytes")
    if "base_id" not in data_file_fields:
        unreported.add("fragments[].files[].base_id")
    return frozenset(unreported)


def _data_file_fields() -> set[str]:
    """The facts the release's fragment metadata keeps per data file: the
    typed ``DataFile`` record's fields where there is one (older releases
    have none and report files as JSON without sizes or base ids)."""
    import lance.fragment

    if not _fragment_metadata_has_attributes():
        return set()
    data_file = getattr(lance.fragment, "DataFile", None)
    return set(getattr(data_file, "__dataclass_fields__", {})) | {n for n in dir(data_file) if not n.startswith("_")}


def _fragment_metadata_has_attributes() -> bool:
    """Whether ``FragmentMetadata`` is the typed record of newer releases
    (``files``, ``physical_rows``, ``deletion_file`` as attributes)."""
    import lance.fragment

    return "files" in getattr(lance.fragment.FragmentMetadata, "__dataclass_fields__", {})


#: Keys whose value comes from ``lance.debug.format_manifest`` because pylance
#: has no typed accessor for them. They are still pylance's own view, but if a
#: future pylance changes its debug rendering these are the keys to move into
#: :data:`UNREPORTED`.
FROM_DEBUG_RENDERING: frozenset[str] = frozenset(
    {
        "schema[].id",
        "schema[].parent_id",
        "schema[].name",
        "schema[].logical_type",
        "schema[].nullable",
        "reader_feature_flags",
        "writer_feature_flags",
        "max_fragment_id",
        "next_row_id",
        "data_format.file_format",
        "writer_version",
    }
)


# ---------------------------------------------------------------------------
# Public driver API
# ---------------------------------------------------------------------------


NAME = "pylance"
CAPABILITIES = frozenset(
    {Capability.LIST_VERSIONS, Capability.READ_LATEST, Capability.TIME_TRAVEL, Capability.DESCRIBE, Capability.BLOBS}
)


def info() -> DriverInfo:
    """The installed pylance: its package version and the Lance core version
    it records as writer (:func:`lance_core_version`). It writes
    (:func:`write`) when the release has the calls the writes use
    (:func:`writes_supported`)."""
    import lance

    writes = writes_supported()
    return DriverInfo(
        name=NAME,
        implementation=NAME,
        version=lance.__version__,
        lance_version=lance_core_version(),
        capabilities=CAPABILITIES | (WRITE_CAPABILITIES if writes else frozenset()),
        write_operations=_WRITE_OPERATIONS if writes else frozenset(),
        data_storage_versions=WRITE_DATA_STORAGE_VERSIONS if writes else (),
        unreported=unreported_keys(),
    )


@cache
def lance_core_version() -> str | None:
    """The version of the Lance Rust core inside the installed pylance.

    pylance has no accessor for it, but the core records itself as the
    writer of every manifest it commits (library ``lance``): a one-row
    dataset is written to a temporary directory and its writer version read
    back. None when the release does not show it."""
    import tempfile

    import lance
    import pyarrow as pa

    try:
        with tempfile.TemporaryDirectory(prefix="lance-conformance-core-version-") as scratch:
            path = os.path.join(scratch, "probe")
            lance.write_dataset(pa.table({"probe": pa.array([1], pa.int64())}), path)
            writer = describe(path).get("writer_version")
    except Exception:  # an old release that cannot describe it: the version stays unknown
        return None
    if not writer or writer.get("library") != "lance":
        return None
    return writer.get("version")


def versions(uri: str | os.PathLike[str]) -> list[int]:
    """Every version pylance lists for the dataset, ascending."""
    import lance

    return sorted(int(entry["version"]) for entry in lance.dataset(str(uri)).versions())


def read_table(uri: str | os.PathLike[str], version: int | None = None, *, schema: pa.Schema | None = None) -> pa.Table:
    """The visible rows of one version as pylance scans them (in the
    dataset's own Arrow schema: the expected ``schema`` is not needed).

    Blob columns are read as their values (``blob_handling="all_binary"``):
    by default pylance returns each blob's (position, size) description in
    the data file instead, which is not the column's content.
    """
    import inspect

    import lance

    dataset = lance.dataset(str(uri), version=version)
    if "blob_handling" in inspect.signature(dataset.to_table).parameters:
        return dataset.to_table(blob_handling="all_binary")
    blob_columns = [field.name for field in dataset.schema if (field.metadata or {}).get(BLOB_KEY) == b"true"]
    if not blob_columns:
        return dataset.to_table()
    return _with_blob_values(dataset, blob_columns)


#: Field metadata marking a blob column.
BLOB_KEY = b"lance-encoding:blob"


def _with_blob_values(dataset, blob_columns: list[str]) -> pa.Table:
    """Rows of a release without ``blob_handling``: its scan returns each
    blob's (position, size) description, so the values are fetched with
    ``take_blobs`` by row id and put in the column's place, typed as the
    dataset's schema says."""
    import pyarrow as pa

    table = dataset.to_table(with_row_id=True)
    row_ids = table.column("_rowid").to_pylist()
    table = table.drop_columns(["_rowid"])
    for name in blob_columns:
        values = [blob.readall() for blob in _take_blobs(dataset, row_ids, name)] if row_ids else []
        position = table.schema.get_field_index(name)
        field = dataset.schema.field(name)
        table = table.set_column(position, field, pa.array(values, field.type))
    return table


def _take_blobs(dataset, row_ids: list[int], column: str) -> list:
    """``take_blobs`` by row id: releases up to 0.26 take ``(row_ids, column)``;
    from 0.27 the column comes first and the row ids are the ``ids`` keyword."""
    import inspect

    parameters = list(inspect.signature(dataset.take_blobs).parameters)
    if parameters and parameters[0] == "blob_column":
        return dataset.take_blobs(column, ids=row_ids)
    return dataset.take_blobs(row_ids, column)


def describe(uri: str | os.PathLike[str], version: int | None = None) -> Description:
    """The canonical describe document of one version, as pylance sees it."""
    import lance
    import lance.debug

    dataset = lance.dataset(str(uri), version=version)
    manifest = parse_rust_debug(lance.debug.format_manifest(dataset))
    if not isinstance(manifest, DebugStruct) or manifest.name != "Manifest":
        raise ValueError("lance.debug.format_manifest did not render a Manifest")

    fragments = _describe_fragments(dataset, manifest)
    return Description(
        describe_format=DESCRIBE_FORMAT,
        version=int(dataset.version),
        naming_scheme=_naming_scheme(dataset),
        num_rows=int(dataset.count_rows()),
        schema=_describe_schema(manifest["schema"]),
        schema_metadata=_schema_metadata(dataset.schema.metadata),
        fragments=fragments,
        reader_feature_flags=int(manifest["reader_feature_flags"]),
        writer_feature_flags=int(manifest["writer_feature_flags"]),
        max_fragment_id=_optional_int(manifest["max_fragment_id"]),
        next_row_id=_next_row_id(manifest),
        data_format=_data_format(dataset, manifest, fragments),
        writer_version=_writer_version(manifest["writer_version"]),
        indices=_describe_indices(dataset, manifest),
        config=_config(dataset, manifest),
        table_metadata={str(k): str(v) for k, v in (getattr(dataset, "metadata", None) or {}).items()},
        base_paths=_describe_base_paths(dataset),
        tags=_describe_tags(dataset),
    )


# ---------------------------------------------------------------------------
# Pieces of the document
# ---------------------------------------------------------------------------


def _naming_scheme(dataset) -> NamingScheme | None:
    """Classify the manifest path pylance tracks for this version (None, and
    ``naming_scheme`` in :data:`UNREPORTED`, for a release that cannot list
    the files of a version)."""
    if not hasattr(dataset, "tracked_files"):
        return None
    version = int(dataset.version)
    tracked = dataset.tracked_files(min_version=version).read_all()
    manifest_paths = {
        row["path"]
        for row in tracked.select(["version", "path", "type"]).to_pylist()
        if row["type"] == "manifest" and row["version"] == version
    }
    if len(manifest_paths) != 1:
        raise ValueError(f"pylance tracks {sorted(manifest_paths)} as the manifest of version {version}")
    (path,) = manifest_paths
    name = path.rsplit("/", 1)[-1]
    if name == f"{version}.manifest":
        return "v1"
    if name == f"{U64_MAX - version:020d}.manifest":
        return "v2"
    if name == "_latest.manifest":
        return "legacy"
    raise ValueError(f"manifest path {path!r} of version {version} follows no known naming scheme")


def _data_format(dataset, manifest: DebugStruct, fragments: list[FragmentDescription]) -> DataFormatDescription:
    """The dataset's data storage format as the release sees it.

    Releases before 0.16 keep no dataset-level format (their manifest has no
    ``data_storage_format`` and the dataset no ``data_storage_version``): each
    data file carries its own version, so the format they read is the one
    the data files say, the first file of the first fragment as later
    releases infer it for a manifest without ``data_format``; a dataset
    without data files is legacy (0.1) to them, as to those later releases.
    """
    if "data_storage_format" in manifest.fields and hasattr(dataset, "data_storage_version"):
        return DataFormatDescription(
            file_format=str(manifest["data_storage_format"]["file_format"]),
            version=str(dataset.data_storage_version),
        )
    first_file = next((files[0] for files in (f["files"] for f in fragments) if files), None)
    if first_file is None or first_file["file_major_version"] < 2:
        return DataFormatDescription(file_format="lance", version=LEGACY_FORMAT_VERSION)
    return DataFormatDescription(
        file_format="lance", version=f"{first_file['file_major_version']}.{first_file['file_minor_version']}"
    )


#: How pylance names the legacy (v1) data storage format.
LEGACY_FORMAT_VERSION = "0.1"


def _describe_schema(schema: DebugStruct) -> list[FieldDescription]:
    """Fields depth first, which is the order a manifest lists them in."""
    described: list[FieldDescription] = []

    def visit(field: DebugStruct) -> None:
        logical_type = field["logical_type"]
        described.append(
            FieldDescription(
                id=int(field["id"]),
                parent_id=int(field["parent_id"]),
                name=str(field["name"]),
                # Rendered as LogicalType("int64"): a one-item tuple struct.
                logical_type=str(logical_type.items[0] if isinstance(logical_type, DebugTuple) else logical_type),
                nullable=bool(field["nullable"]),
            )
        )
        for child in field["children"]:
            visit(child)

    for top_level in schema["fields"]:
        visit(top_level)
    return described


def _schema_metadata(metadata: dict | None) -> dict[str, str]:
    """pyarrow's schema metadata (bytes to bytes) in the document's text form."""
    return {
        (key.decode("utf-8") if isinstance(key, bytes) else str(key)): (
            metadata_value(value) if isinstance(value, bytes) else str(value)
        )
        for key, value in (metadata or {}).items()
    }


def _describe_fragments(dataset, manifest: DebugStruct) -> list[FragmentDescription]:
    # Metadata first, scan second: the document reports what the manifest
    # records, so nothing the scan might learn (pylance keeps file sizes in a
    # cache) should be able to leak into it.
    records = [_fragment_record(fragment.metadata) for fragment in dataset.get_fragments()]
    if hasattr(dataset, "has_stable_row_ids"):
        stable_row_ids = bool(dataset.has_stable_row_ids)
    else:
        stable_row_ids = bool(int(manifest["reader_feature_flags"]) & STABLE_ROW_IDS_FLAG)
    visible = _visible_rows_by_fragment(dataset, with_row_ids=stable_row_ids)

    described: list[FragmentDescription] = []
    for record in records:
        fragment_id = record.id
        rows = visible.get(fragment_id, [])
        visible_offsets = {offset for offset, _ in rows}
        deleted_offsets = [offset for offset in range(record.physical_rows) if offset not in visible_offsets]
        if not record.has_deletion_file:
            num_deleted_rows = 0
        elif record.num_deleted_rows is not None:
            num_deleted_rows = record.num_deleted_rows
        else:
            # Manifests from old writers may leave the count out; pylance then
            # learns it from the deletion file, which is what the scan shows.
            num_deleted_rows = len(deleted_offsets)
        described.append(
            FragmentDescription(
                id=fragment_id,
                physical_rows=record.physical_rows,
                num_deleted_rows=num_deleted_rows,
                deleted_offsets=deleted_offsets,
                files=record.files,
                # With stable row ids every visible row was scanned with one.
                row_ids=cast("list[int]", [row_id for _, row_id in rows]) if stable_row_ids else None,
            )
        )
    return described


#: Reader feature flag 2: the dataset has stable row ids.
STABLE_ROW_IDS_FLAG = 2


@dataclass
class _FragmentRecord:
    """What the fragment metadata of any release says about one fragment."""

    id: int
    physical_rows: int
    has_deletion_file: bool
    num_deleted_rows: int | None
    files: list[DataFileDescription]


def _fragment_record(metadata) -> _FragmentRecord:
    """Typed attributes where the release has them (pylance 14), else the
    JSON document older releases' ``FragmentMetadata.to_json`` returns."""
    if hasattr(metadata, "files"):
        deletion_file = metadata.deletion_file
        return _FragmentRecord(
            id=int(metadata.id),
            physical_rows=int(metadata.physical_rows),
            has_deletion_file=deletion_file is not None,
            num_deleted_rows=None
            if deletion_file is None or deletion_file.num_deleted_rows is None
            else int(deletion_file.num_deleted_rows),
            files=[_describe_data_file(data_file) for data_file in metadata.files],
        )
    document = metadata.to_json()
    deletion_file = document.get("deletion_file")
    return _FragmentRecord(
        id=int(document["id"]),
        physical_rows=int(document["physical_rows"]),
        has_deletion_file=deletion_file is not None,
        num_deleted_rows=None
        if deletion_file is None or deletion_file.get("num_deleted_rows") is None
        else int(deletion_file["num_deleted_rows"]),
        files=[_describe_data_file_document(data_file) for data_file in document["files"]],
    )


def _describe_data_file_document(data_file: dict) -> DataFileDescription:
    """A data file from ``to_json``: keys a release does not write are facts
    it does not keep (see :func:`unreported_keys`)."""
    base_id = data_file.get("base_id")
    return DataFileDescription(
        path=str(data_file["path"]),
        fields=[int(field_id) for field_id in data_file["fields"]],
        column_indices=[int(index) for index in data_file.get("column_indices", [])],
        file_major_version=int(data_file.get("file_major_version", 0)),
        file_minor_version=int(data_file.get("file_minor_version", 0)),
        file_size_bytes=int(data_file.get("file_size_bytes") or 0),
        base_id=None if base_id is None else int(base_id),
    )


def _scans_row_addresses(dataset) -> bool:
    """Whether the release's scanner takes ``with_row_address`` (0.16 on)."""
    import inspect

    return "with_row_address" in inspect.signature(dataset.scanner).parameters


def _scanned_row_ids(dataset) -> list[int]:
    """``_rowid`` of every visible row, scanning as little as the release allows.

    An empty projection is cheapest, but pylance 0.11 refuses it on 2.0 data
    files ("Does not find any data file for schema"); it then scans the first
    top-level column, which every data file of a fragment covers between them.
    """
    try:
        table = dataset.to_table(columns=[], with_row_id=True)
    except Exception:
        if not dataset.schema.names:
            raise
        table = dataset.to_table(columns=dataset.schema.names[:1], with_row_id=True)
    return table.column("_rowid").to_pylist()


def _visible_rows_by_fragment(dataset, *, with_row_ids: bool) -> dict[int, list[tuple[int, int | None]]]:
    """``{fragment_id: [(offset, row_id), ...]}`` of visible rows, by offset.

    One scan of the whole version: the rows pylance returns are exactly the
    ones it considers visible, so the offsets missing from a fragment are the
    ones it treats as deleted.
    """
    if _scans_row_addresses(dataset):
        table = dataset.to_table(columns=[], with_row_address=True, with_row_id=with_row_ids)
        addresses = table.column("_rowaddr").to_pylist()
        row_ids = table.column("_rowid").to_pylist() if with_row_ids else [None] * len(addresses)
    elif not with_row_ids:
        # Before row addresses could be asked for (0.16), a scan's row id of
        # a dataset without stable row ids *is* the row address.
        addresses = _scanned_row_ids(dataset)
        row_ids = [None] * len(addresses)
    else:
        raise RuntimeError(
            "this pylance release scans no row addresses, and with stable row ids its row ids are not addresses: "
            "it cannot show which rows of a fragment are visible"
        )
    by_fragment: dict[int, list[tuple[int, int | None]]] = {}
    for address, row_id in zip(addresses, row_ids, strict=True):
        by_fragment.setdefault(address >> 32, []).append((address & ROW_OFFSET_MASK, row_id))
    for rows in by_fragment.values():
        rows.sort()
    return by_fragment


def _describe_data_file(data_file) -> DataFileDescription:
    return DataFileDescription(
        path=str(data_file.path),
        fields=[int(field_id) for field_id in data_file.fields],
        column_indices=[int(index) for index in data_file.column_indices],
        file_major_version=int(data_file.file_major_version),
        file_minor_version=int(data_file.file_minor_version),
        # pylance shows a recorded size of 0 ("unknown") as None. A release
        # without sizes or base ids has them in UNREPORTED.
        file_size_bytes=int(getattr(data_file, "file_size_bytes", None) or 0),
        base_id=None if getattr(data_file, "base_id", None) is None else int(data_file.base_id),
    )


def _describe_indices(dataset, manifest: DebugStruct) -> list[IndexDescription]:
    if not hasattr(dataset, "describe_indices"):
        return _describe_listed_indices(dataset, manifest)
    described: list[IndexDescription] = []
    for index in dataset.describe_indices():
        for segment in index.segments:
            fragment_ids = segment.fragment_ids
            described.append(
                IndexDescription(
                    name=str(index.name),
                    uuid=str(segment.uuid),
                    fields=[int(field_id) for field_id in index.fields],
                    dataset_version=int(segment.dataset_version_at_last_update),
                    fragment_ids=sorted(int(i) for i in fragment_ids) if fragment_ids is not None else None,
                    type_url=str(index.type_url) if index.type_url else None,
                )
            )
    described.sort(key=lambda entry: (entry["name"], entry["uuid"]))
    return described


def _describe_listed_indices(dataset, manifest: DebugStruct) -> list[IndexDescription]:
    """Older releases list each index segment as a dict with field *names*
    and no type URL (``indices[].type_url`` is then unreported); the names
    are mapped to ids through the schema the release rendered."""
    field_ids = _field_ids_by_path(manifest["schema"])
    described: list[IndexDescription] = []
    for index in dataset.list_indices():
        fragment_ids = index.get("fragment_ids")
        described.append(
            IndexDescription(
                name=str(index["name"]),
                uuid=str(index["uuid"]),
                fields=[field_ids[str(name)] for name in index["fields"]],
                dataset_version=int(index["version"]),
                fragment_ids=sorted(int(i) for i in fragment_ids) if fragment_ids is not None else None,
                type_url=None,
            )
        )
    described.sort(key=lambda entry: (entry["name"], entry["uuid"]))
    return described


def _field_ids_by_path(schema: DebugStruct) -> dict[str, int]:
    """``{"a.b": id}`` for every field of a rendered schema."""
    ids: dict[str, int] = {}

    def visit(field: DebugStruct, prefix: str) -> None:
        path = f"{prefix}{field['name']}"
        ids[path] = int(field["id"])
        for child in field["children"]:
            visit(child, f"{path}.")

    for top_level in schema["fields"]:
        visit(top_level, "")
    return ids


def _config(dataset, manifest: DebugStruct) -> dict[str, str]:
    """``config()`` where the release has it, else the config its manifest
    rendering shows (absent from releases that predate table config)."""
    if hasattr(dataset, "config"):
        config = dataset.config()
    else:
        config = manifest.fields.get("config") or {}
    return {str(k): str(v) for k, v in config.items()}


def _describe_base_paths(dataset) -> list[BasePathDescription]:
    if not hasattr(dataset, "base_paths"):
        return []  # a release without base paths (``base_paths`` is unreported)
    base_paths = dataset.base_paths() or {}
    described = [
        BasePathDescription(
            id=int(base.id),
            name=None if base.name is None else str(base.name),
            is_dataset_root=bool(base.is_dataset_root),
            path=str(base.path),
        )
        for base in base_paths.values()
    ]
    described.sort(key=lambda entry: entry["id"])
    return described


def _next_row_id(manifest: DebugStruct) -> int:
    """Releases before stable row ids (0.11) have no ``next_row_id``: to them
    it is the field's default, 0, which is also what a manifest of a dataset
    without stable row ids records (and one with them has a reader flag such
    a release refuses)."""
    return int(manifest.fields.get("next_row_id", 0))


def _describe_tags(dataset) -> list[TagDescription]:
    if not hasattr(dataset, "tags"):
        return []  # a release without tags (``tags`` is unreported)
    tags = dataset.tags.list()
    return [
        TagDescription(
            name=str(name),
            version=int(tag["version"]),
            branch=None if tag.get("branch") is None else str(tag["branch"]),
        )
        for name, tag in sorted(tags.items())
    ]


def _writer_version(rendered: Any) -> WriterVersionDescription | None:
    if rendered is None:
        return None
    version = str(rendered["version"])
    if rendered.fields.get("prerelease"):
        version += f"-{rendered['prerelease']}"
    if rendered.fields.get("build_metadata"):
        version += f"+{rendered['build_metadata']}"
    return WriterVersionDescription(library=str(rendered["library"]), version=version)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


# -- writing (conformance.drivers.writes) ---------------------------------------------

# Private: it builds info()'s write_operations, the one declaration the suite reads.
#: The write operations :func:`write` performs through pylance's public API: every kind.
_WRITE_OPERATIONS: frozenset[str] = frozenset(kind.value for kind in WriteKind)
#: The data storage versions pylance 14 writes (``data_storage_version``; 2.2 by default).
WRITE_DATA_STORAGE_VERSIONS: tuple[str, ...] = ("2.0", "2.1", "2.2")
WRITE_CAPABILITIES = frozenset({Capability.WRITE, Capability.WRITE_AT_VERSION})


@cache
def writes_supported() -> bool:
    """Whether the installed release has what :func:`write` calls: the
    ``conflict_retries`` keyword of ``delete`` (pylance's own retries are
    turned off so that a write is committed on the version it read), merge
    insert and the tag API. Feature-detected, as every accessor here."""
    import inspect

    import lance

    dataset = lance.LanceDataset
    try:
        delete_takes_retries = "conflict_retries" in inspect.signature(dataset.delete).parameters
    except (TypeError, ValueError):  # a signature the release does not expose
        return False
    return delete_takes_retries and all(hasattr(dataset, name) for name in ("merge_insert", "tags", "update_config"))


def warm_up(uri: str | os.PathLike[str], *, storage_options: dict[str, str] | None = None) -> None:
    """Import pylance and open the dataset once, so that a writer's first
    operation does not carry the second an import takes (the concurrency
    harness calls it before its writers' start barrier)."""
    import lance

    lance.dataset(str(uri), storage_options=dict(storage_options) if storage_options else None)


def write(uri: str | os.PathLike[str], op: Any, *, storage_options: dict[str, str] | None = None) -> Any:
    """Perform ``op`` (a :data:`conformance.drivers.writes.WriteOp`) through
    pylance's public API: a :class:`~conformance.drivers.writes.WriteResult`
    with the version it committed (a tag: the version tagged) and, where
    pylance's own conflict retries are off, the version it was built on.
    ``op.read_version`` is honoured (the dataset is opened at that version and
    the operation committed from it); a commit conflict raises
    :class:`~conformance.drivers.writes.WriteConflict`. ``op.token`` is
    recorded in the transaction's properties where pylance's API takes them
    (``write_dataset``: create, append, overwrite). ``lance`` and the
    vocabulary are imported here, so the module stays importable without
    either."""
    import lance

    from . import writes

    options = dict(storage_options) if storage_options else None
    try:
        if isinstance(op, writes.Create):
            created = lance.write_dataset(
                op.rows,
                str(uri),
                mode="create",
                # A plain string: pylance's annotation lists the versions it knows.
                data_storage_version=cast(Any, op.data_storage_version),
                max_rows_per_file=op.max_rows_per_file or 1024 * 1024,
                enable_stable_row_ids=op.stable_row_ids,
                storage_options=options,
                transaction_properties=_token_properties(writes, op),
            )
            return writes.WriteResult(versions=(created.version,))
        dataset = lance.dataset(str(uri), version=op.read_version, storage_options=options)
        opened = dataset.version
        version = _perform_write(lance, writes, dataset, op, options)
        if version == opened and not isinstance(op, writes.Tag):
            # Nothing committed (a delete matching no row, a compaction with
            # nothing to do): the handle is still at the version opened.
            return writes.WriteResult()
        # Delete, update and upsert run with pylance's own retries off: computed on the version opened.
        read = (opened,) if isinstance(op, (writes.Delete, writes.Update, writes.Upsert)) else ()
        return writes.WriteResult(versions=(version,), read_versions=read)
    except OSError as exc:
        conflict = conflict_from(exc)
        if conflict is not None:
            raise conflict from exc
        raise


def conflict_from(error: BaseException) -> WriteConflict | None:
    """The commit conflict ``error`` (raised by pylance) signals, as a
    :class:`~conformance.drivers.protocol.WriteConflict` saying whether it is
    retryable; None when it is not a conflict. The one place pylance's
    conflict signal is read (the write driver, the conflict matrix and the
    concurrency harness all ask here).

    Measured with pylance 14 (nothing is documented upstream beyond the
    exception class): ``LanceDataset.commit(uri, operation, read_version=v)``
    raises ``lance.commit.CommitConflictError``, an ``OSError`` whose
    ``retryable`` attribute is True for a retryable conflict, False for an
    incompatible one. The high-level calls raise a plain ``OSError`` whose
    message is the Lance core's ("Incompatible transaction: ...";
    ``delete``/``update``/``merge_insert`` re-run themselves on a retryable
    conflict, ``conflict_retries`` times, then say "Too many concurrent
    writers. Attempted N retries.", retryable): those are told apart by the
    message (:mod:`.lance_core_conflicts`)."""
    if not isinstance(error, OSError):
        return None
    retryable = getattr(error, "retryable", None)
    if isinstance(retryable, bool):
        return WriteConflict(str(error), retryable=retryable)
    return conflict_from_message(str(error))


def _perform_write(lance: Any, writes: Any, dataset: Any, op: Any, options: dict[str, str] | None) -> int:
    if isinstance(op, (writes.Append, writes.Overwrite)):
        mode = "append" if isinstance(op, writes.Append) else "overwrite"
        extra = {} if op.max_rows_per_file is None else {"max_rows_per_file": op.max_rows_per_file}
        return lance.write_dataset(
            op.rows,
            dataset,
            mode=mode,
            storage_options=options,
            transaction_properties=_token_properties(writes, op),
            **extra,
        ).version
    if isinstance(op, writes.Delete):
        dataset.delete(op.where.to_sql(writes.SqlDialect.LANCE), conflict_retries=0)
    elif isinstance(op, writes.Update):
        values = {column: writes.sql_literal(value) for column, value in op.values}
        where = None if op.where is None else op.where.to_sql(writes.SqlDialect.LANCE)
        dataset.update(values, where=where, conflict_retries=0)
    elif isinstance(op, writes.Upsert):
        (
            dataset.merge_insert(list(op.on))
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .conflict_retries(0)
            .execute(op.rows)
        )
    elif isinstance(op, writes.AddColumns):
        dataset.add_columns({column.name: column.to_sql(writes.SqlDialect.LANCE) for column in op.columns})
    elif isinstance(op, writes.DropColumns):
        dataset.drop_columns(list(op.columns))
    elif isinstance(op, writes.AlterColumns):
        dataset.alter_columns(*(_pylance_alteration(alteration) for alteration in op.alterations))
    elif isinstance(op, writes.Compact):
        dataset.optimize.compact_files(
            target_rows_per_fragment=op.target_rows_per_fragment,
            materialize_deletions=op.materialize_deletions,
            num_threads=1,
        )
    elif isinstance(op, writes.CreateIndex):
        dataset.create_scalar_index(op.column, op.index_type, name=op.name)
    elif isinstance(op, writes.Tag):
        version = dataset.version if op.version is None else op.version
        dataset.tags.create(op.name, version)
        return version
    elif isinstance(op, writes.Restore):
        target = dataset.checkout_version(op.version)
        target.restore()
        return target.version
    elif isinstance(op, writes.Config):
        updates = {key: value for key, value in op.values if value is not None}
        removed = [key for key, value in op.values if value is None]
        if updates and removed:
            raise writes.WriteNotSupported("pylance sets and removes config keys in separate commits")
        if updates:
            dataset.update_config(updates)
        else:
            dataset.delete_config_keys(removed)
    else:
        raise writes.WriteNotSupported(f"the pylance driver does not perform {op.kind.value}")
    return dataset.version


def _token_properties(writes: Any, op: Any) -> dict[str, str] | None:
    """The transaction properties naming ``op`` (its token), None without one."""
    return None if op.token is None else {writes.TOKEN_PROPERTY: op.token}


def _pylance_alteration(alteration: Any) -> dict[str, Any]:
    change: dict[str, Any] = {"path": alteration.path}
    if alteration.rename is not None:
        change["name"] = alteration.rename
    if alteration.nullable is not None:
        change["nullable"] = alteration.nullable
    if alteration.data_type is not None:
        change["data_type"] = alteration.arrow_data_type()
    return change
