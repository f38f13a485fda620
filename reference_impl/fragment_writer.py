"""Writing rows as new fragments (table format: fragments, data files).

A table is cut into chunks of at most ``max_rows_per_file`` rows; each chunk
becomes one fragment with one Lance data file under ``data/``, of the
dataset's data storage version (2.0, 2.1 or 2.2: requirement
data-file.same-format-version, from table.proto's ``DataStorageFormat``,
wants every data file of a version in one file version, the one
``data_format`` names; :func:`dataset_data_version` takes it from the files
already there). The fragments' ids, and their row ids when the dataset uses
stable row ids, are assigned at commit (:mod:`reference_impl.commit`), so
they leave here with id 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from . import entropy, jsonb
from .arrow_schema import schema_to_arrow
from .errors import UnsupportedFeatureError
from .file_format.writer import WrittenFile, write_v2_0
from .file_format.writer_v2_1 import V2_1_VERSION, V2_2_VERSION, write_v2_1
from .fragments import DataFile, Fragment
from .manifest import Manifest
from .schema import Field, Schema
from .storage import Storage

DEFAULT_MAX_ROWS_PER_FILE = 1024 * 1024
#: The structural (2.1+) versions, by the name a manifest's ``data_format`` gives them.
_STRUCTURAL_VERSIONS = {"2.1": V2_1_VERSION, "2.2": V2_2_VERSION}
WRITABLE_DATA_VERSIONS = ("2.0", *_STRUCTURAL_VERSIONS)
#: The data file version the reference writer uses when none is named.
DEFAULT_DATA_STORAGE_VERSION = "2.0"
#: What pylance's ``data_format`` names legacy (v0.1/v0.2) data files.
LEGACY_DATA_STORAGE_VERSION = "0.1"


def data_file_name() -> str:
    """A fresh data file name from a random UUID, as upstream layout.md names
    data files: its first 3 bytes as 24 binary digits, then its other 13
    bytes as 26 hex digits (the binary prefix spreads files over object-store
    partitions)."""
    raw = entropy.current().uuid4().bytes
    prefix = "".join(f"{byte:08b}" for byte in raw[:3])
    return f"{prefix}{raw[3:].hex()}.lance"


def check_writable_version(version: str) -> None:
    if version not in WRITABLE_DATA_VERSIONS:
        raise UnsupportedFeatureError(
            f"data_storage_version={version}",
            f"the reference writer writes Lance data files of version {', '.join(WRITABLE_DATA_VERSIONS)} only",
        )


def dataset_data_version(manifest: Manifest) -> str:
    """The data storage version a dataset's new files are written in.

    The version its data files already share (requirement
    data-file.same-format-version), so that a write to a dataset another
    writer created (pylance's default is 2.2) matches its files whatever
    either writer's default; the manifest's ``data_format`` when it has no
    data files, or when they disagree (the dataset is broken already, and
    ``data_format`` is what it declares); :data:`DEFAULT_DATA_STORAGE_VERSION`
    when neither says."""
    versions = {_version_name(f) for fragment in manifest.fragments for f in fragment.files}
    if len(versions) == 1:
        return versions.pop()
    if manifest.data_format and manifest.data_format.version:
        return manifest.data_format.version
    return DEFAULT_DATA_STORAGE_VERSION


def _version_name(data_file: DataFile) -> str:
    if data_file.is_legacy:
        return LEGACY_DATA_STORAGE_VERSION
    major, minor = data_file.format_version
    return f"{major}.{minor}"


def encode_lance_file(
    table: pa.Table,
    fields: list[Field],
    schema_metadata: dict[str, bytes] | None = None,
    *,
    version: str,
    global_buffers: Sequence[bytes] = (),
) -> WrittenFile:
    """``table`` encoded as a Lance file of the writable ``version`` (2.0 by
    the 2.0 writer, 2.1 and 2.2 by the structural one)."""
    check_writable_version(version)
    if version in _STRUCTURAL_VERSIONS:
        return write_v2_1(
            table, fields, schema_metadata, version=_STRUCTURAL_VERSIONS[version], global_buffers=global_buffers
        )
    return write_v2_0(table, fields, schema_metadata, global_buffers)


def write_data_file(
    storage: Storage, table: pa.Table, fields: list[Field], schema_metadata=None, *, version: str = "2.0"
) -> DataFile:
    """Store ``table`` (whose columns are the top-level ``fields``) as one new
    data file of ``version`` and describe it as the manifest records it."""
    # JSON text is stored as binary documents (upstream table/jsonb.md).
    table = jsonb.stored_table(table)
    name = data_file_name()
    written = encode_lance_file(table, fields, schema_metadata, version=version)
    storage.put_if_not_exists(f"data/{name}", written.chunks)
    return DataFile(
        path=name,
        fields=list(written.fields),
        column_indices=list(written.column_indices),
        file_major_version=written.major,
        file_minor_version=written.minor,
        file_size_bytes=written.size,
    )


def write_fragments(
    storage: Storage,
    table: pa.Table,
    schema: Schema,
    *,
    max_rows_per_file: int = DEFAULT_MAX_ROWS_PER_FILE,
    version: str = "2.0",
) -> list[Fragment]:
    """New fragments holding ``table``'s rows; ids are assigned at commit."""
    if max_rows_per_file < 1:
        raise ValueError("max_rows_per_file must be positive")
    table = table.select(schema_to_arrow(schema).names).cast(schema_to_arrow(schema))
    fragments = []
    for start in range(0, table.num_rows, max_rows_per_file):
        chunk = table.slice(start, max_rows_per_file)
        data_file = write_data_file(storage, chunk, schema.fields, version=version)
        fragments.append(Fragment(id=0, files=[data_file], physical_rows=chunk.num_rows))
    return fragments
