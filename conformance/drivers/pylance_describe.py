"""The describe document of one version as pylance sees it (the describe
half of :mod:`conformance.drivers.pylance_driver`).

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

One description for every release. Older releases lack some of these
accessors (pylance 0.20 has no ``tracked_files``, ``describe_indices``,
``config``, ``base_paths``, ``metadata`` or ``has_stable_row_ids``, and its
fragment metadata is a JSON document rather than attributes). Each accessor is
feature-detected, never chosen by version number: a fact the release keeps
but does not expose as a typed accessor comes from its debug rendering or an
older accessor (``list_indices``, ``FragmentMetadata.to_json``), and a fact
the release cannot show at all is one of :func:`unreported_keys`.

``lance`` is imported inside the functions (lazy: ``conformance`` imports on
a machine without pylance); the module imports only the standard library,
``conformance.describe`` and :mod:`.rust_debug`, so it runs inside an old
release's own environment too (:mod:`conformance.drivers.release`).
"""

from __future__ import annotations

import functools
import inspect
import os
import tempfile
from dataclasses import dataclass
from typing import Any, cast

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
from .rust_debug import DebugStruct, DebugTuple, parse_rust_debug

U64_MAX = (1 << 64) - 1
#: A row address is ``fragment_id << 32 | offset``.
ROW_OFFSET_MASK = (1 << 32) - 1


@functools.lru_cache(maxsize=1)
def _manifest_renders_config() -> bool:
    """Whether the release's manifest rendering (``lance.debug``) has the
    table config (0.19 and later do; earlier ones leave it out)."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
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
        # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
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
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance.fragment

    if not _fragment_metadata_has_attributes():
        return set()
    data_file = getattr(lance.fragment, "DataFile", None)
    return set(getattr(data_file, "__dataclass_fields__", {})) | {n for n in dir(data_file) if not n.startswith("_")}


def _fragment_metadata_has_attributes() -> bool:
    """Whether ``FragmentMetadata`` is the typed record of newer releases
    (``files``, ``physical_rows``, ``deletion_file`` as attributes)."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
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


def describe(uri: str | os.PathLike[str], version: int | None = None) -> Description:
    """The canonical describe document of one version, as pylance sees it."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
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
