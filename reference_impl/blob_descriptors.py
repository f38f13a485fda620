"""Blob v2 descriptors, without Arrow: what a stored descriptor says and
where it puts a value's bytes (upstream ``docs/src/format/table/blob.md``,
"Stored Descriptor", "Legacy Sidecar Resolution", "Validation and
Compatibility").

A blob v2 field (``ARROW:extension:name = lance.blob.v2`` on the field) keeps
its logical shape in the manifest, while its data file stores one physical
column: a packed struct of five children per value, the *descriptor*
(``kind``, ``position``, ``size``, ``blob_id``, ``blob_uri``). The kind says
where the bytes are:

* ``INLINE`` (0): ``[position, position + size)`` of the owning data file;
* ``PACKED`` (1): an interval of a sidecar of the owning data file, named by
  ``blob_id``;
* ``DEDICATED`` (2): a whole sidecar (``position`` 0, ``size`` its length);
* ``EXTERNAL`` (3): an object outside the table's ownership: with ``blob_id``
  0 ``blob_uri`` is an absolute URI, otherwise it is a path relative to the
  manifest base path of that id; ``size`` 0 means "the object's length";
* ``MANAGED`` (4): an object the table owns under a base path (the
  ``managed_blobs`` table capability).

A sidecar of data file ``data/<key>.lance`` is ``data/<key>/<name>.blob``
where ``name`` is the 32 bits of ``blob_id`` written least significant first.

Locations stay inside the dataset root and its declared base paths: an
absolute external URI elsewhere is refused (:class:`ExternalBlobOutsideError`)
unless the caller declares a root holding it (``external_roots``). Every
length read from a descriptor is checked against the size of the object it
points into before anything is read.

This module imports no pyarrow (nor the file reader): the validator's blob
rules load it at start-up and only a version with blob v2 fields reads
descriptors, through :mod:`reference_impl.blobs`, which holds the Arrow side
(reading the descriptor column, presenting descriptors and values, taking
blobs).
"""

from __future__ import annotations

import enum
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import CorruptFileError, LanceFormatError, PathEscapeError
from .fragments import DataFile, Fragment
from .schema import TOP_LEVEL_PARENT, Field
from .storage import Storage, is_object_store_uri, local_path
from .type_grammar import BLOB_V2_EXTENSION, EXTENSION_NAME_KEY

if TYPE_CHECKING:
    from .dataset import Dataset, FileLocation

U64_MAX = 2**64 - 1
SIDECAR_SUFFIX = ".blob"


class BlobKind(enum.IntEnum):
    """``kind`` of a descriptor (blob.md, "Stored Descriptor")."""

    INLINE = 0
    PACKED = 1
    DEDICATED = 2
    EXTERNAL = 3
    MANAGED = 4


class ExternalBlobOutsideError(PathEscapeError):
    """An external blob's absolute URI lies outside the dataset root and every
    declared base path (and every root the caller declared): it is not read."""


@dataclass(frozen=True)
class Descriptor:
    """One non-null stored descriptor, as recorded (the kind may be unknown)."""

    kind: int
    position: int
    size: int
    blob_id: int
    blob_uri: str

    @property
    def known_kind(self) -> BlobKind | None:
        return BlobKind(self.kind) if self.kind in BlobKind._value2member_map_ else None


@dataclass(frozen=True)
class BlobLocation:
    """Where a value's bytes are: ``[position, position + size)`` of
    ``relpath`` in ``storage``; ``size`` None: up to the object's length (the
    external ``size = 0`` sentinel)."""

    storage: Storage
    relpath: str
    position: int
    size: int | None

    def __str__(self) -> str:
        return self.storage.join(self.relpath)


# -- the schema ---------------------------------------------------------------------


def is_blob_v2(field: Field) -> bool:
    """Whether ``field`` is a blob v2 field (blob.md, "Logical Input")."""
    value = field.metadata.get(EXTENSION_NAME_KEY)
    return value is not None and value == BLOB_V2_EXTENSION.encode()


def nested_blob_v2_fields(fields: Sequence[Field]) -> list[Field]:
    """Blob v2 fields below the top level (beneath a struct or a list), which
    this reference does not read."""
    return [f for f in fields if f.parent_id != TOP_LEVEL_PARENT and is_blob_v2(f)]


def top_level_blob_field(dataset: Dataset, column: str) -> Field:
    """The top-level blob v2 field called ``column``; ValueError otherwise."""
    for field in dataset.schema.top_level():
        if field.name == column:
            if not is_blob_v2(field):
                raise ValueError(f"column {column!r} is not a blob v2 column")
            return field
    raise ValueError(f"no column {column!r}")


# -- descriptors --------------------------------------------------------------------


def sidecar_name(blob_id: int) -> str:
    """The file name of sidecar ``blob_id``: its 32 bits least significant
    first, then ``.blob`` (blob.md, "Legacy Sidecar Resolution")."""
    return f"{blob_id:032b}"[::-1] + SIDECAR_SUFFIX


def sidecar_relpath(data_file: FileLocation, blob_id: int) -> str:
    """The path of sidecar ``blob_id`` of the data file at ``data_file``, in
    the data file's storage: ``<data dir>/<key>/<name>.blob``."""
    directory, name = posixpath.split(data_file.relpath)
    key = name[: -len(".lance")] if name.endswith(".lance") else name
    return posixpath.join(directory, key, sidecar_name(blob_id))


def managed_path_problem(path: str) -> str | None:
    """Why ``path`` is not a canonical managed object path (blob.md,
    "Managed"), or None."""
    if not path:
        return "is empty"
    if "://" in path or "\\" in path:
        return "holds a scheme delimiter or a backslash"
    if path.startswith("/") or path.endswith("/"):
        return "starts or ends with a slash"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "has an empty, '.' or '..' component"
    return None


def descriptor_problem(descriptor: Descriptor) -> str | None:
    """What makes a non-null descriptor malformed for its kind, or None
    (blob.md, "Stored Descriptor": the children each kind uses, and
    "Validation and Compatibility": unknown kinds and overflow are errors)."""
    kind = descriptor.known_kind
    if kind is None:
        return f"kind {descriptor.kind} is not a known storage kind (0 to 4)"
    if descriptor.position + descriptor.size > U64_MAX:
        return f"position {descriptor.position} + size {descriptor.size} overflows 64 bits"
    if kind in (BlobKind.INLINE, BlobKind.PACKED, BlobKind.DEDICATED) and descriptor.blob_uri:
        return f"a {kind.name.lower()} descriptor with blob_uri {descriptor.blob_uri!r} (must be empty)"
    if kind is BlobKind.INLINE and descriptor.blob_id != 0:
        return f"an inline descriptor with blob_id {descriptor.blob_id} (must be 0)"
    if kind in (BlobKind.PACKED, BlobKind.DEDICATED) and descriptor.blob_id == 0:
        return f"a {kind.name.lower()} descriptor with blob_id 0 (a sidecar id is nonzero)"
    if kind is BlobKind.DEDICATED and descriptor.position != 0:
        return f"a dedicated descriptor at position {descriptor.position} (must be 0)"
    if kind is BlobKind.EXTERNAL and not descriptor.blob_uri:
        return "an external descriptor without a blob_uri"
    if kind is BlobKind.MANAGED:
        problem = managed_path_problem(descriptor.blob_uri)
        if problem is not None:
            return f"a managed descriptor whose blob_uri {descriptor.blob_uri!r} {problem}"
    return None


# -- where the bytes are ------------------------------------------------------------


def relative_inside(uri: str, root: str) -> str | None:
    """``uri`` relative to the location ``root`` when it lies under it."""
    if is_object_store_uri(uri) or is_object_store_uri(root):
        if not (is_object_store_uri(uri) and is_object_store_uri(root)):
            return None
        prefix = root.rstrip("/") + "/"
        return uri[len(prefix) :] if uri.startswith(prefix) and len(uri) > len(prefix) else None
    try:
        path = local_path(uri)
    except LanceFormatError:
        return None
    if not path.is_absolute():
        return None
    relative = os.path.relpath(os.path.normpath(path), os.path.normpath(local_path(root)))
    if relative == "." or relative == ".." or relative.startswith("../"):
        return None
    return relative.replace(os.sep, "/")


def _base_storage(dataset: Dataset, base_id: int, what: str) -> Storage:
    base = dataset.manifest.base_path(base_id)
    if base is None:
        raise PathEscapeError(dataset.manifest_file.path, f"{what} refers to base_id {base_id}, which is not declared")
    return dataset.storage.for_base(base.path)


def external_containers(dataset: Dataset, external_roots: Sequence[str] = ()) -> list[Storage]:
    """Where an absolute external URI may be read: the dataset root, each
    declared base path, then each root the caller declares."""
    storages = [dataset.storage]
    storages += [dataset.storage.for_base(base.path) for base in dataset.manifest.base_paths]
    storages += [dataset.storage.for_base(root) for root in external_roots]
    return storages


def locate(
    dataset: Dataset, data_file: FileLocation, descriptor: Descriptor, external_roots: Sequence[str] = ()
) -> BlobLocation:
    """Where ``descriptor`` (read from the data file at ``data_file``) puts
    its bytes. A malformed descriptor is a :class:`CorruptFileError` naming
    the data file; an undeclared base a :class:`PathEscapeError`; an absolute
    URI outside every readable root an :class:`ExternalBlobOutsideError`."""
    problem = descriptor_problem(descriptor)
    if problem is not None:
        raise CorruptFileError(str(data_file), f"blob descriptor: {problem}")
    kind = BlobKind(descriptor.kind)
    if kind is BlobKind.INLINE:
        return BlobLocation(data_file.storage, data_file.relpath, descriptor.position, descriptor.size)
    if kind in (BlobKind.PACKED, BlobKind.DEDICATED):
        sidecar = sidecar_relpath(data_file, descriptor.blob_id)
        return BlobLocation(data_file.storage, sidecar, descriptor.position, descriptor.size)
    if kind is BlobKind.MANAGED:
        storage = _base_storage(dataset, descriptor.blob_id, f"a managed blob in {data_file}")
        return BlobLocation(storage, descriptor.blob_uri, descriptor.position, descriptor.size)
    size = descriptor.size or None  # 0: the object's whole length from position
    if descriptor.blob_id:
        storage = _base_storage(dataset, descriptor.blob_id, f"an external blob in {data_file}")
        return BlobLocation(storage, descriptor.blob_uri, descriptor.position, size)
    for container in external_containers(dataset, external_roots):
        inside = relative_inside(descriptor.blob_uri, container.location)
        if inside is not None:
            return BlobLocation(container, inside, descriptor.position, size)
    raise ExternalBlobOutsideError(
        str(data_file),
        f"external blob {descriptor.blob_uri!r} is outside the dataset root and its declared base paths; not read",
    )


def read_location(location: BlobLocation) -> bytes:
    """The bytes at ``location``, its range checked against the object's size
    first (a range past the end is a :class:`CorruptFileError`)."""
    if location.size == 0:
        return b""
    object_size = location.storage.size(location.relpath)
    length = object_size if location.size is None else location.size
    if location.position + length > object_size:
        raise CorruptFileError(
            str(location),
            f"blob range [{location.position}, {location.position + length}) is outside the object "
            f"({object_size} bytes)",
        )
    return location.storage.read(location.relpath, location.position, length)


# -- the data file storing a blob field ----------------------------------------------


def blob_data_file(fragment: Fragment, field: Field) -> DataFile | None:
    """The data file of ``fragment`` that stores blob field ``field`` (a later
    file wins, as for every field), or None."""
    found = None
    for data_file in fragment.files:
        if field.id in data_file.fields:
            found = data_file
    return found
