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
    "corrupt file" error; a file in table.proto's form would make the dataset
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

Bounds
    A deletion file is small on disk whatever it claims, so nothing is
    expanded before its size is known to fit. :func:`inspect_deletion_bytes`
    is the one decoder: it keeps a ``.bin`` file as a Roaring bitmap (a few
    hundred kilobytes of run containers can mark all four billion u32
    offsets), and reads an ``.arrow`` file's row count and the declared
    (uncompressed) size of each buffer from the IPC metadata
    (:mod:`reference_impl._arrow_ipc_bounds`) before pyarrow decodes or
    decompresses anything; the offsets then go into a bitmap too. The
    functions returning lists (:func:`read_deletion_file`,
    :func:`decode_arrow_deletions`, :func:`decode_bitmap_deletions`) compare
    the count and the largest offset with the fragment's ``physical_rows``
    and with ``max_offsets`` (default :data:`DEFAULT_MAX_OFFSETS`) before
    listing. Files over :data:`MAX_FILE_BYTES` are not read. Every violation
    is a :class:`~reference_impl.errors.CorruptFileError` naming the file;
    :func:`inspect_deletion_file` reports the same findings as a
    :class:`DeletionFileContent` instead, for tools that describe damaged
    files rather than refuse them (the validator).
"""

from __future__ import annotations

import array
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from pyroaring import BitMap

from . import entropy
from ._arrow_ipc_bounds import ARROW_MAGIC, arrow_batch_bounds
from .errors import CorruptFileError, LanceFormatError, UnsupportedFeatureError
from .fragments import DeletionFile, DeletionFileType
from .manifest import BasePath
from .storage import Storage

DELETIONS_DIR = "_deletions"

#: More deleted offsets than this always go to a bitmap (pylance's rule).
BITMAP_COUNT_THRESHOLD = 5_000

# pyarrow and numpy are imported inside the functions that read or write
# ``.arrow`` files: validating a dataset whose deletion files are all Roaring
# bitmaps never needs them, and they are most of the validator's start-up.


def arrow_deletion_schema():
    """The schema of ``.arrow`` files the reference writer produces (a
    ``pyarrow.Schema``)."""
    import pyarrow as pa  # lazy: needs pyarrow

    return pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])


U32_MAX = 2**32 - 1

#: Deletion files larger than this are not read (a Roaring bitmap of every
#: u32 takes about 512 MiB in its largest form).
MAX_FILE_BYTES = 1 << 29

#: Most offsets listed (or an ``.arrow`` batch decoded) when the caller gives
#: no other limit. A Python list of this many ints costs several hundred
#: megabytes (as :data:`reference_impl.row_ids.DEFAULT_MAX_ROWS`).
DEFAULT_MAX_OFFSETS = 1 << 24


# -- reading ------------------------------------------------------------------------


class DeletionStatus(str, Enum):
    """What :func:`inspect_deletion_bytes` / :func:`inspect_deletion_file`
    made of a deletion file."""

    #: The file is a well-formed file of its recorded kind.
    OK = "ok"
    #: No file at the location.
    MISSING = "missing"
    #: The bytes are a file of the other kind.
    KIND_MISMATCH = "kind-mismatch"
    #: The bytes are not a valid ``.arrow`` deletion file.
    ARROW_LAYOUT = "arrow-layout"
    #: The bytes are not a valid ``.bin`` deletion file.
    BITMAP_LAYOUT = "bitmap-layout"
    #: An ``.arrow`` file lists more offsets than the fragment has rows (seen
    #: in its metadata; the batch is not decoded).
    TOO_MANY = "too-many"
    #: Beyond what this reader reads: the file is larger than ``max_bytes``,
    #: or an ``.arrow`` file lists more than ``max_offsets`` offsets.
    TOO_LARGE = "too-large"


@dataclass
class DeletionFileContent:
    """What one deletion file holds, or what is wrong with it.

    The offsets stay a Roaring bitmap: nothing here is expanded into a list,
    so a ``.bin`` file marking four billion offsets costs what its bytes cost.
    """

    status: DeletionStatus
    #: Why the status is not OK.
    problem: str = ""
    #: The kind the bytes are: the recorded one when OK, the other one on
    #: KIND_MISMATCH, None otherwise.
    found: DeletionFileType | None = None
    #: The column type (``int32``, ``uint32``, ...) of a one-column ``.arrow`` file.
    column_type: str | None = None
    #: Record batches of an ``.arrow`` file that opened.
    batches: int | None = None
    #: How many values the file lists (an ``.arrow`` column may repeat one or
    #: hold negatives). On TOO_MANY, the row count the batch declares.
    entries: int = 0
    #: The distinct non-negative offsets (status OK).
    offsets: BitMap = field(default_factory=BitMap)
    #: How many listed values are negative (only an ``int32`` column holds them).
    negatives: int = 0
    #: How many distinct negative values there are.
    distinct_negatives: int = 0

    @property
    def ok(self) -> bool:
        return self.status is DeletionStatus.OK

    @property
    def repeated(self) -> int:
        """Listed values beyond the first occurrence of each."""
        return self.entries - self.distinct_negatives - len(self.offsets)

    def problem_for(self, physical_rows: int | None = None) -> str | None:
        """Why this file is not a valid list of deleted offsets (of a
        fragment with ``physical_rows`` rows, when given); None when it is.
        Looks at counts and the largest offset only, never at every offset."""
        if not self.ok:
            return self.problem
        if self.negatives:
            return f"the column holds {self.negatives} negative offsets"
        if self.repeated:
            return f"{self.repeated} offsets are listed more than once"
        if physical_rows is not None and self.offsets and self.offsets.max() >= physical_rows:
            return f"deleted offset {self.offsets.max()} is past the fragment's {physical_rows} physical rows"
        return None


def inspect_deletion_bytes(
    data: bytes,
    kind: DeletionFileType,
    *,
    physical_rows: int | None = None,
    max_offsets: int | None = None,
) -> DeletionFileContent:
    """What ``data``, a deletion file recorded as ``kind``, holds.

    A ``.bin`` file is deserialized into a bitmap and kept so. An ``.arrow``
    file's record batch is only decoded after its metadata shows that its row
    count is at most ``physical_rows`` (else TOO_MANY) and at most
    ``max_offsets`` (default :data:`DEFAULT_MAX_OFFSETS`; else TOO_LARGE),
    and that no buffer expands to more than those rows need (else
    ARROW_LAYOUT): a compressed buffer declaring 2**40 bytes is never
    decompressed. Never raises on bad bytes.
    """
    if kind is DeletionFileType.ARROW_ARRAY:
        limit = DEFAULT_MAX_OFFSETS if max_offsets is None else max_offsets
        return _inspect_arrow(data, physical_rows, limit)
    return _inspect_bitmap(data)


def inspect_deletion_file(
    storage: Storage,
    relpath: str,
    kind: DeletionFileType,
    *,
    physical_rows: int | None = None,
    max_offsets: int | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> DeletionFileContent:
    """What the deletion file at ``relpath`` (of ``kind``) holds, as
    :func:`inspect_deletion_bytes`; MISSING when there is no file, TOO_LARGE
    (unread) when it holds more than ``max_bytes``. A path leading out of
    ``storage`` or a file that cannot be read raises the storage's
    :class:`~reference_impl.errors.LanceFormatError`."""
    storage.path(relpath)  # a path leading out of storage raises here
    if not storage.has_entry(relpath):
        return DeletionFileContent(DeletionStatus.MISSING, "the file does not exist")
    size = storage.size(relpath)
    if size > max_bytes:
        return DeletionFileContent(
            DeletionStatus.TOO_LARGE, f"the file holds {size} bytes, more than the limit of {max_bytes}"
        )
    return inspect_deletion_bytes(storage.read(relpath), kind, physical_rows=physical_rows, max_offsets=max_offsets)


def _listed(
    content: DeletionFileContent,
    path: str,
    physical_rows: int | None,
    max_offsets: int | None,
    num_deleted_rows: int = 0,
) -> list[int]:
    """The offsets of ``content``, ascending, once every check passed: the
    count is compared with the limits before the list is made."""
    problem = content.problem_for(physical_rows)
    if problem is not None:
        raise CorruptFileError(path, problem)
    count = len(content.offsets)
    limit = DEFAULT_MAX_OFFSETS if max_offsets is None else max_offsets
    if count > limit:
        raise CorruptFileError(path, f"the file lists {count} offsets, more than the limit of {limit}")
    if num_deleted_rows and num_deleted_rows != count:
        raise CorruptFileError(path, f"file lists {count} deleted rows, the manifest says {num_deleted_rows}")
    return list(content.offsets)


def decode_arrow_deletions(
    data: bytes, path: str, *, physical_rows: int | None = None, max_offsets: int | None = None
) -> list[int]:
    """Offsets (ascending) of an ``.arrow`` deletion file held in memory.

    Raises :class:`CorruptFileError` naming ``path`` when the file is not a
    valid deletion file, when an offset is not below ``physical_rows`` (when
    given), or when it lists more than ``physical_rows`` or ``max_offsets``
    (default :data:`DEFAULT_MAX_OFFSETS`) offsets: those counts are checked
    before anything is decompressed or listed.
    """
    content = inspect_deletion_bytes(
        data, DeletionFileType.ARROW_ARRAY, physical_rows=physical_rows, max_offsets=max_offsets
    )
    return _listed(content, path, physical_rows, max_offsets)


def decode_bitmap_deletions(
    data: bytes, path: str, *, physical_rows: int | None = None, max_offsets: int | None = None
) -> list[int]:
    """Offsets (ascending) of a ``.bin`` deletion file held in memory, with
    the checks of :func:`decode_arrow_deletions` (the bitmap's count and
    largest value are checked before it is expanded)."""
    content = inspect_deletion_bytes(data, DeletionFileType.BITMAP, physical_rows=physical_rows)
    return _listed(content, path, physical_rows, max_offsets)


def _arrow_errors() -> tuple[type[BaseException], ...]:
    """What pyarrow raises on damaged input (ArrowInvalid is a ValueError; a
    damaged field name surfaces as UnicodeDecodeError, also a ValueError)."""
    import pyarrow as pa  # lazy: needs pyarrow

    return (pa.ArrowException, OSError, ValueError, IndexError, KeyError, TypeError, OverflowError)


#: Bytes a decoded buffer may take beyond 8 per row (validity bitmaps and
#: padding) before its declared size is taken for a lie.
_BUFFER_SLACK = 64


def _bitmap(data: bytes) -> BitMap | str:
    """The bitmap ``data`` serializes, or what is wrong with it."""
    try:
        bitmap = BitMap.deserialize(bytes(data))
        consumed = len(bitmap.serialize())
    except Exception as exc:  # pyroaring raises ValueError, IndexError, ... on bad input
        return f"not a portable 32-bit Roaring bitmap: {exc}"
    if consumed != len(data):
        return f"{len(data) - consumed} bytes follow the Roaring bitmap"
    return bitmap


def _inspect_bitmap(data: bytes) -> DeletionFileContent:
    bitmap = _bitmap(data)
    if isinstance(bitmap, str):
        if data.startswith(ARROW_MAGIC) and arrow_batch_bounds(data) is not None:
            return DeletionFileContent(
                DeletionStatus.KIND_MISMATCH,
                "the kind is BITMAP but the file is an Arrow IPC file",
                found=DeletionFileType.ARROW_ARRAY,
            )
        return DeletionFileContent(DeletionStatus.BITMAP_LAYOUT, bitmap)
    return DeletionFileContent(DeletionStatus.OK, found=DeletionFileType.BITMAP, offsets=bitmap, entries=len(bitmap))


def _inspect_arrow(data: bytes, physical_rows: int | None, max_offsets: int) -> DeletionFileContent:
    import numpy as np  # lazy: keeps start-up time down
    import pyarrow as pa  # lazy: needs pyarrow
    import pyarrow.ipc as ipc  # lazy: needs pyarrow

    arrow_errors = _arrow_errors()

    def layout(problem: str, **known) -> DeletionFileContent:
        return DeletionFileContent(DeletionStatus.ARROW_LAYOUT, problem, **known)

    try:
        reader = ipc.open_file(pa.BufferReader(data))
        schema = reader.schema
        batches = reader.num_record_batches
    except arrow_errors as exc:
        if not isinstance(_bitmap(data), str):
            return DeletionFileContent(
                DeletionStatus.KIND_MISMATCH,
                "the kind is ARROW_ARRAY but the file is a Roaring bitmap",
                found=DeletionFileType.BITMAP,
            )
        return layout(f"not an Arrow IPC file: {type(exc).__name__}: {exc}")
    if len(schema) != 1:
        return layout(f"the file has {len(schema)} columns, not exactly one", batches=batches)
    column_type = schema.types[0]
    known = {"batches": batches, "column_type": str(column_type)}
    if column_type not in (pa.int32(), pa.uint32()):
        return layout(f"the column has type {column_type}, not a 32-bit integer", **known)
    if batches != 1:
        return layout(f"the file has {batches} record batches, not exactly one", **known)

    bounds = arrow_batch_bounds(data)
    if bounds is None or bounds.batches != 1:
        return layout("the record batch metadata is malformed", **known)
    if physical_rows is not None and bounds.rows > physical_rows:
        return DeletionFileContent(
            DeletionStatus.TOO_MANY,
            f"the file lists {bounds.rows} offsets but the fragment has only {physical_rows} rows",
            entries=bounds.rows,
            **known,
        )
    if bounds.rows > max_offsets:
        return DeletionFileContent(
            DeletionStatus.TOO_LARGE,
            f"the file lists {bounds.rows} offsets, more than the limit of {max_offsets}",
            entries=bounds.rows,
            **known,
        )
    if bounds.largest_buffer > 8 * bounds.rows + _BUFFER_SLACK:
        return layout(
            f"a buffer expands to {bounds.largest_buffer} bytes, more than {bounds.rows} 32-bit offsets need",
            **known,
        )

    try:
        batch = reader.get_batch(0)
        batch.validate(full=True)
        column = batch.column(0)
        nulls = column.null_count
        values = column.fill_null(0).to_numpy(zero_copy_only=False)
    except arrow_errors as exc:
        return layout(f"the record batch does not decode: {type(exc).__name__}: {exc}", **known)
    if nulls:
        return layout(f"the column holds {nulls} nulls", **known)
    negatives = distinct_negatives = 0
    if column.type == pa.int32():
        below = values < 0
        negatives = int(below.sum())
        if negatives:
            distinct_negatives = int(np.unique(values[below]).size)
            values = values[~below]
    words = array.array("I")
    words.frombytes(values.astype("<u4", copy=False).tobytes())
    if sys.byteorder != "little":
        words.byteswap()
    return DeletionFileContent(
        DeletionStatus.OK,
        found=DeletionFileType.ARROW_ARRAY,
        offsets=BitMap(words),
        entries=len(column),
        negatives=negatives,
        distinct_negatives=distinct_negatives,
        **known,
    )


def deletion_file_location(
    storage: Storage,
    fragment_id: int,
    deletion_file: DeletionFile,
    base_paths: Iterable[BasePath] | None = None,
) -> tuple[Storage, str]:
    """The storage holding the deletion file and its path inside it."""
    _known_type(storage, fragment_id, deletion_file)
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


def _known_type(storage: Storage, fragment_id: int, deletion_file: DeletionFile) -> DeletionFileType:
    """The kind of ``deletion_file``; one this implementation does not know
    (a plain int) raises :class:`UnsupportedFeatureError`."""
    if not isinstance(deletion_file.file_type, DeletionFileType):
        raise UnsupportedFeatureError(
            str(storage.path(DELETIONS_DIR)),
            f"fragment {fragment_id} has a deletion file of unknown type {deletion_file.file_type!r}",
        )
    return deletion_file.file_type


def read_deletion_file(
    storage: Storage,
    fragment_id: int,
    deletion_file: DeletionFile,
    *,
    base_paths: Iterable[BasePath] | None = None,
    physical_rows: int | None = None,
    max_offsets: int | None = None,
) -> list[int]:
    """The deleted offsets of a fragment, ascending.

    Checks, besides the file's own form: every offset is below
    ``physical_rows`` when given, the file lists at most ``max_offsets``
    (default :data:`DEFAULT_MAX_OFFSETS`) offsets, and ``num_deleted_rows``
    matches (when it is non-zero: 0 is what writers that predate the field
    leave, meaning unknown). Counts are checked before the offsets are
    decompressed or listed. A missing file raises
    :class:`~reference_impl.errors.LanceFormatError`; every other failure is a
    :class:`CorruptFileError` naming the file.
    """
    kind = _known_type(storage, fragment_id, deletion_file)
    where, relpath = deletion_file_location(storage, fragment_id, deletion_file, base_paths)
    path = str(where.path(relpath))
    content = inspect_deletion_file(where, relpath, kind, physical_rows=physical_rows, max_offsets=max_offsets)
    if content.status is DeletionStatus.MISSING:
        raise LanceFormatError(path, content.problem)
    return _listed(content, path, physical_rows, max_offsets, deletion_file.num_deleted_rows)


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
    import pyarrow as pa  # lazy: needs pyarrow
    import pyarrow.ipc as ipc  # lazy: needs pyarrow

    values = _checked_offsets(offsets)
    schema = arrow_deletion_schema()
    batch = pa.record_batch([pa.array(values, pa.uint32())], schema=schema)
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, schema) as writer:
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
        file_type=kind, read_version=read_version, id=entropy.current().randbits(64), num_deleted_rows=len(values)
    )
    storage.put_if_not_exists(deletion_file.path(fragment_id), data)
    return deletion_file
