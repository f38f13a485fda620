"""Deletion files (table format: deletion files).

A fragment with deleted rows names one deletion file, which lists the
*offsets* (0-based physical row positions) of its deleted rows. It lives at
``_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}`` and comes in two
kinds:

``.arrow`` (``ARROW_ARRAY``)
    An Arrow IPC *file* (not stream) holding exactly one record batch with
    exactly one integer column of offsets. The reader accepts ``int32`` and
    ``uint32`` columns of any name, nullable or not, compressed or not; it
    refuses nulls, negative values and duplicates. The offsets need not be in
    order (pylance writes them in hash-set order); they are returned sorted.

``.bin`` (``BITMAP``)
    A 32-bit Roaring bitmap in the portable serialization, with nothing after
    it.

What the reference writer produces, and why
    ``.arrow`` files get one column ``row_id: uint32 not null``, one batch, no
    compression. The seeds call the column an ``Int32Array``, but every pylance
    release we looked at (0.7.5 through 14.0.2) writes ``uint32`` and pylance
    14 refuses any other schema (``int32``, or a nullable ``uint32``) with a
    "corrupt file" error; a file in the seed's form would make the dataset
    unreadable by the reference peer. The departure is recorded in
    docs/spec-discrepancies.md.

Which kind the writer picks when not told (:func:`choose_deletion_file_type`)
    ``.bin`` when the deletions are dense, that is when at least half of the
    offsets ``0..max(offsets)`` are deleted, or when there are more than
    :data:`BITMAP_COUNT_THRESHOLD` of them; ``.arrow`` otherwise. A flat array
    costs four bytes per deleted row whatever their layout, while a Roaring
    bitmap costs at most two bytes per row and about one bit per row of the
    covered range once that range is mostly deleted; small sparse sets stay in
    the simpler, universally read Arrow form (the seeds: bitmaps for large
    sets, Arrow files for small ones). The count threshold is pylance's.

Base paths
    A deletion file with a ``base_id`` lives under the declared base path of
    that id (``Manifest.base_paths``) rather than the dataset root: under
    ``{base}/_deletions/`` when the base is a dataset root, directly in
    ``{base}/`` otherwise (layout: base path system). Pass the manifest's base
    paths as ``base_paths``.
"""

from __future__ import annotations

import secrets
from typing import Iterable, Sequence

import pyarrow as pa
import pyarrow.ipc as ipc
from pyroaring import BitMap

from .errors import CorruptFileError, UnsupportedFeatureError
from .fragments import DeletionFile, DeletionFileType
from .manifest import BasePath
from .storage import Storage

DELETIONS_DIR = "_deletions"

#: More deleted offsets than this always go to a bitmap (pylance's rule).
BITMAP_COUNT_THRESHOLD = 5_000

#: The schema of ``.arrow`` files the reference writer produces.
ARROW_DELETION_SCHEMA = pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])

U32_MAX = 2**32 - 1


# -- decoding -------------------------------------------------------------------


def decode_arrow_deletions(data: bytes, path: str) -> list[int]:
    """Offsets (ascending) of an ``.arrow`` deletion file held in memory."""
    try:
        offsets = _arrow_offsets(data, path)
    except _ARROW_ERRORS as exc:
        raise CorruptFileError(path, f"not a readable Arrow IPC file: {type(exc).__name__}: {exc}") from None
    if offsets and min(offsets) < 0:
        raise CorruptFileError(path, f"deletion column holds the negative offset {min(offsets)}")
    unique = sorted(set(offsets))
    if len(unique) != len(offsets):
        raise CorruptFileError(path, "deletion column holds an offset more than once")
    return unique


# What pyarrow raises on damaged input (ArrowInvalid is a ValueError; a
# damaged field name surfaces as UnicodeDecodeError, also a ValueError).
_ARROW_ERRORS = (pa.ArrowException, OSError, ValueError, IndexError, KeyError, TypeError, OverflowError)


def _arrow_offsets(data: bytes, path: str) -> list[int]:
    reader = ipc.open_file(pa.BufferReader(data))
    schema = reader.schema
    if len(schema) != 1:
        raise CorruptFileError(path, f"deletion file has {len(schema)} columns, expected exactly one")
    column_type = schema.types[0]
    if column_type not in (pa.int32(), pa.uint32()):
        raise CorruptFileError(path, f"deletion column has type {column_type}, expected int32 or uint32")
    if reader.num_record_batches != 1:
        raise CorruptFileError(
            path, f"deletion file has {reader.num_record_batches} record batches, expected exactly one"
        )
    batch = reader.get_batch(0)
    batch.validate(full=True)
    column = batch.columns[0]
    if column.null_count:
        raise CorruptFileError(path, f"deletion column holds {column.null_count} nulls")
    return column.to_pylist()


def decode_bitmap_deletions(data: bytes, path: str) -> list[int]:
    """Offsets (ascending) of a ``.bin`` deletion file held in memory."""
    try:
        bitmap = BitMap.deserialize(bytes(data))
        consumed = len(bitmap.serialize())
    except Exception as exc:  # pyroaring raises ValueError, IndexError, ...
        raise CorruptFileError(path, f"not a portable 32-bit Roaring bitmap: {exc}") from None
    if consumed != len(data):
        raise CorruptFileError(path, f"{len(data) - consumed} bytes follow the Roaring bitmap")
    return list(bitmap)


def deletion_file_location(
    storage: Storage,
    fragment_id: int,
    deletion_file: DeletionFile,
    base_paths: Iterable[BasePath] | None = None,
) -> tuple[Storage, str]:
    """The storage holding the deletion file and its path inside it."""
    if not isinstance(deletion_file.file_type, DeletionFileType):
        raise UnsupportedFeatureError(
            str(storage.path(DELETIONS_DIR)),
            f"fragment {fragment_id} has a deletion file of unknown type {deletion_file.file_type!r}",
        )
    relpath = deletion_file.path(fragment_id)
    if deletion_file.base_id is None:
        return storage, relpath
    for base in base_paths or ():
        if base.id == deletion_file.base_id:
            if base.is_dataset_root:
                return storage.for_base(base.path), relpath
            return storage.for_base(base.path), relpath.split("/", 1)[1]
    raise CorruptFileError(
        relpath, f"deletion file of fragment {fragment_id} names base_id {deletion_file.base_id}, not declared"
    )


def read_deletion_file(
    storage: Storage,
    fragment_id: int,
    deletion_file: DeletionFile,
    *,
    base_paths: Iterable[BasePath] | None = None,
    physical_rows: int | None = None,
) -> list[int]:
    """The deleted offsets of a fragment, ascending.

    Checks, besides the file's own form: ``num_deleted_rows`` matches (when it
    is non-zero: 0 is what writers that predate the field leave, meaning
    unknown), and every offset is below ``physical_rows`` when given. Every
    failure is a :class:`CorruptFileError` naming the file.
    """
    where, relpath = deletion_file_location(storage, fragment_id, deletion_file, base_paths)
    path = str(where.path(relpath))
    data = where.read(relpath)
    if deletion_file.file_type is DeletionFileType.ARROW_ARRAY:
        offsets = decode_arrow_deletions(data, path)
    else:
        offsets = decode_bitmap_deletions(data, path)
    if deletion_file.num_deleted_rows and deletion_file.num_deleted_rows != len(offsets):
        raise CorruptFileError(
            path, f"file lists {len(offsets)} deleted rows, the manifest says {deletion_file.num_deleted_rows}"
        )
    if physical_rows is not None and offsets and offsets[-1] >= physical_rows:
        raise CorruptFileError(
            path, f"deleted offset {offsets[-1]} is past the fragment's {physical_rows} physical rows"
        )
    return offsets


# -- encoding -------------------------------------------------------------------


def _checked_offsets(offsets: Iterable[int]) -> list[int]:
    values = list(offsets)
    for v in values:
        if not isinstance(v, int) or not 0 <= v <= U32_MAX:
            raise ValueError(f"deleted offset {v!r} is not a u32")
    unique = sorted(set(values))
    if len(unique) != len(values):
        raise ValueError("deleted offsets must be distinct")
    return unique


def encode_arrow_deletions(offsets: Iterable[int]) -> bytes:
    """An ``.arrow`` deletion file: one batch, one ``row_id: uint32 not null``
    column holding the offsets in ascending order, uncompressed."""
    values = _checked_offsets(offsets)
    batch = pa.record_batch([pa.array(values, pa.uint32())], schema=ARROW_DELETION_SCHEMA)
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, ARROW_DELETION_SCHEMA) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def encode_bitmap_deletions(offsets: Iterable[int]) -> bytes:
    """A ``.bin`` deletion file: the portable Roaring serialization."""
    return BitMap(_checked_offsets(offsets)).serialize()


def choose_deletion_file_type(offsets: Sequence[int]) -> DeletionFileType:
    """The kind the writer uses when not told (see the module docstring)."""
    values = _checked_offsets(offsets)
    if not values:
        return DeletionFileType.ARROW_ARRAY
    dense = 2 * len(values) >= values[-1] + 1
    if dense or len(values) > BITMAP_COUNT_THRESHOLD:
        return DeletionFileType.BITMAP
    return DeletionFileType.ARROW_ARRAY


def write_deletion_file(
    storage: Storage,
    fragment_id: int,
    read_version: int,
    offsets: Iterable[int],
    *,
    file_type: DeletionFileType | None = None,
) -> DeletionFile:
    """Write the deletion file of ``fragment_id`` (built against
    ``read_version``) listing ``offsets``, and return its metadata.

    The id is a random u64 and the file is created with put-if-not-exists, so
    an existing file is never replaced. An empty ``offsets`` is refused: a
    fragment without deletions has no deletion file.
    """
    values = _checked_offsets(offsets)
    if not values:
        raise ValueError("a fragment without deleted rows has no deletion file")
    kind = choose_deletion_file_type(values) if file_type is None else DeletionFileType(file_type)
    data = encode_arrow_deletions(values) if kind is DeletionFileType.ARROW_ARRAY else encode_bitmap_deletions(values)
    deletion_file = DeletionFile(
        file_type=kind, read_version=read_version, id=secrets.randbits(64), num_deleted_rows=len(values)
    )
    storage.put_if_not_exists(deletion_file.path(fragment_id), data)
    return deletion_file
