"""Rules on deletion files (table format: deletion files).

Every rule here looks at a fragment's deletion file through
:func:`deletion_content`, which reads the file once per validation run and
never expands it beyond what the fragment can hold:

* a ``.bin`` file stays a Roaring bitmap: its count and largest value come
  from the bitmap itself, so a few bytes of run containers claiming four
  billion offsets cost nothing;
* an ``.arrow`` file's record batch header is read first (a small
  FlatBuffers walk over the IPC footer and message, :func:`_arrow_batch_bounds`),
  and the batch body is only decoded when its row count and the declared
  uncompressed size of each (possibly ZSTD/LZ4-compressed) buffer fit the
  fragment's physical rows. The offsets then go straight into a Roaring
  bitmap, never into a Python list.

A file that is larger than :data:`MAX_FILE_BYTES`, or an Arrow file with more
than :data:`MAX_ARROW_OFFSETS` offsets in a fragment that has that many rows,
is reported by ``deletion/unchecked`` (info) instead of being read.
"""

from __future__ import annotations

import array
import re
import struct
import sys
from dataclasses import dataclass, field as dc_field

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
from pyroaring import BitMap

from reference_impl.deletions import DELETIONS_DIR, deletion_file_location
from reference_impl.errors import LanceFormatError
from reference_impl.fragments import DeletionFileType, Fragment
from reference_impl.naming import list_versions
from reference_impl.manifest_file import read_manifest_file
from reference_impl.refs import BRANCHES_DIR, TREE_DIR, decode_ref_file_name, is_valid_branch_name
from reference_impl.storage import Storage

from ..context import DatasetView, VersionView
from ..registry import Scope, Severity, rule

#: Deletion files larger than this are not read (a Roaring bitmap of every
#: u32 takes about 512 MiB in its largest form).
MAX_FILE_BYTES = 1 << 29
#: Arrow deletion files listing more offsets than this are not decoded.
MAX_ARROW_OFFSETS = 1 << 26

DELETION_FILE_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)\.(arrow|bin)$")
ARROW_MAGIC = b"ARROW1"


@dataclass
class DeletionContent:
    """What one deletion file holds, or why it could not be read.

    ``status`` is one of ``ok``, ``missing`` (no file at the derived
    location), ``unreadable`` (the file exists but cannot be read, or its
    path leads out of the dataset), ``unknown-kind`` (a file_type that is
    neither ARROW_ARRAY nor BITMAP), ``undeclared-base`` (a base_id the
    manifest does not declare: the base-path rules report it),
    ``kind-mismatch`` (the bytes are of the other kind), ``arrow-layout`` /
    ``bitmap-layout`` (the bytes are not a valid file of the recorded kind),
    ``too-many`` (the file lists more offsets than the fragment has rows, so
    some are repeated or out of range) and ``too-large`` (not read, see the
    module docstring).
    """

    status: str
    location: str
    message: str = ""
    #: The distinct non-negative offsets (status ok).
    offsets: BitMap = dc_field(default_factory=BitMap)
    #: How many values the file lists (an Arrow column may repeat one).
    entries: int = 0
    #: How many values are negative (only an int32 column can hold them).
    negatives: int = 0
    #: How many distinct negative values there are.
    distinct_negatives: int = 0
    #: The Arrow column type ("int32" or "uint32") of an ``.arrow`` file.
    column_type: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _location(storage: Storage, relpath: str, root: Storage) -> str:
    """A finding location: relative to the dataset root when the file is under it."""
    if storage.root == root.root:
        return relpath
    return f"{storage.root}/{relpath}"


def deletion_content(view: VersionView, fragment: Fragment) -> DeletionContent | None:
    """The content of ``fragment``'s deletion file (None when it has none),
    read at most once per validation run."""
    deletion_file = fragment.deletion_file
    if deletion_file is None:
        return None
    manifest = view.manifest
    position = next((i for i, f in enumerate(manifest.fragments) if f is fragment), None)
    in_manifest = view.at(f"fragments[{position}].deletion_file")
    if not isinstance(deletion_file.file_type, DeletionFileType):
        return DeletionContent(
            "unknown-kind",
            in_manifest,
            f"file_type {deletion_file.file_type!r} is neither ARROW_ARRAY (0) nor BITMAP (1)",
        )
    if deletion_file.base_id is not None and manifest.base_path(deletion_file.base_id) is None:
        return DeletionContent("undeclared-base", in_manifest)
    root = view.dataset.storage
    try:
        storage, relpath = deletion_file_location(root, fragment.id, deletion_file, manifest.base_paths)
    except LanceFormatError as exc:
        return DeletionContent("unreadable", in_manifest, exc.problem)
    location = _location(storage, relpath, root)
    limit = max(0, fragment.physical_rows)
    key = ("rules.deletions", str(storage.root), relpath, limit)
    loaded = view.dataset.cached(key, lambda: _read(storage, relpath, deletion_file.file_type, limit, location))
    if loaded.ok:
        return loaded.value
    return DeletionContent("unreadable", location, loaded.error.problem)


def _read(storage: Storage, relpath: str, kind: DeletionFileType, limit: int, location: str) -> DeletionContent:
    if not storage.exists(relpath):
        try:
            storage.path(relpath)
        except LanceFormatError as exc:
            return DeletionContent("unreadable", location, exc.problem)
        return DeletionContent("missing", location, "the file does not exist")
    size = storage.size(relpath)
    if size > MAX_FILE_BYTES:
        return DeletionContent("too-large", location, f"the file holds {size} bytes, more than this validator reads")
    data = storage.read(relpath)
    if kind is DeletionFileType.ARROW_ARRAY:
        return _read_arrow(data, limit, location)
    return _read_bitmap(data, location)


# -- Roaring bitmaps (.bin) ---------------------------------------------------------


def _bitmap(data: bytes) -> BitMap | str:
    """The bitmap, or what is wrong with the bytes."""
    try:
        bitmap = BitMap.deserialize(bytes(data))
        consumed = len(bitmap.serialize())
    except Exception as exc:  # pyroaring raises ValueError, IndexError, ... on bad input
        return f"not a portable 32-bit Roaring bitmap: {exc}"
    if consumed != len(data):
        return f"{len(data) - consumed} bytes follow the Roaring bitmap"
    return bitmap


def _read_bitmap(data: bytes, location: str) -> DeletionContent:
    bitmap = _bitmap(data)
    if isinstance(bitmap, str):
        if data.startswith(ARROW_MAGIC) and _arrow_batch_bounds(data) is not None:
            return DeletionContent("kind-mismatch", location, "the kind is BITMAP but the file is an Arrow IPC file")
        return DeletionContent("bitmap-layout", location, bitmap)
    return DeletionContent("ok", location, offsets=bitmap, entries=len(bitmap))


# -- Arrow IPC files (.arrow) -------------------------------------------------------


class _Malformed(Exception):
    """The FlatBuffers structure of an IPC file is broken."""


class _Buffer:
    """Bounds-checked little-endian reads from bytes."""

    def __init__(self, data: bytes, start: int = 0, end: int | None = None):
        self.data = data
        self.start = start
        self.end = len(data) if end is None else end

    def read(self, fmt: str, position: int):
        size = struct.calcsize(fmt)
        if position < self.start or position + size > self.end:
            raise _Malformed(f"offset {position} is outside [{self.start}, {self.end})")
        return struct.unpack_from("<" + fmt, self.data, position)[0]

    def table(self, position: int) -> "_Table":
        return _Table(self, position)

    def root(self) -> "_Table":
        return self.table(self.start + self.read("I", self.start))


class _Table:
    """A FlatBuffers table: fields are found through its vtable."""

    def __init__(self, buffer: _Buffer, position: int):
        self.buffer = buffer
        self.position = position
        self.vtable = position - buffer.read("i", position)
        self.vtable_size = buffer.read("H", self.vtable)

    def field(self, slot: int) -> int | None:
        """Absolute position of field ``slot``, None when it is absent."""
        entry = 4 + 2 * slot
        if entry + 2 > self.vtable_size:
            return None
        offset = self.buffer.read("H", self.vtable + entry)
        return self.position + offset if offset else None

    def scalar(self, slot: int, fmt: str, default=0):
        position = self.field(slot)
        return default if position is None else self.buffer.read(fmt, position)

    def child(self, slot: int) -> "_Table | None":
        position = self.field(slot)
        return None if position is None else self.buffer.table(position + self.buffer.read("I", position))

    def vector(self, slot: int, item_size: int) -> tuple[int, int]:
        """(position of the first item, item count) of a vector of structs."""
        position = self.field(slot)
        if position is None:
            return 0, 0
        start = position + self.buffer.read("I", position)
        count = self.buffer.read("I", start)
        if start + 4 + count * item_size > self.buffer.end:
            raise _Malformed(f"a vector of {count} items runs past the end")
        return start + 4, count


_RECORD_BATCH_HEADER = 3  # MessageHeader union: RecordBatch
_BLOCK_SIZE = 24  # Block struct: offset i64, metaDataLength i32 (+4 padding), bodyLength i64
_BUFFER_SIZE = 16  # Buffer struct: offset i64, length i64


@dataclass
class _BatchBounds:
    batches: int
    rows: int = 0
    #: The largest size a buffer of the batch expands to (its own length when
    #: the body is not compressed, else the declared uncompressed length).
    largest_buffer: int = 0


def _arrow_batch_bounds(data: bytes) -> _BatchBounds | None:
    """Row count and largest expanded buffer of the first record batch of an
    Arrow IPC file, read from the FlatBuffers metadata alone (nothing is
    decompressed); None when the file's structure is broken."""
    try:
        return _batch_bounds(data)
    except (_Malformed, struct.error, OverflowError):
        return None


def _batch_bounds(data: bytes) -> _BatchBounds:
    whole = _Buffer(data)
    if len(data) < 18 or not data.startswith(ARROW_MAGIC) or not data.endswith(ARROW_MAGIC):
        raise _Malformed("no Arrow IPC file magic")
    footer_size = whole.read("i", len(data) - 10)
    footer_start = len(data) - 10 - footer_size
    if footer_size <= 0 or footer_start < 8:
        raise _Malformed("footer length out of range")
    footer = _Buffer(data, footer_start, len(data) - 10).root()
    first, count = footer.vector(3, _BLOCK_SIZE)  # Footer.recordBatches
    bounds = _BatchBounds(batches=count)
    if count == 0:
        return bounds
    offset = whole.read("q", first)
    meta_length = whole.read("i", first + 8)
    body_length = whole.read("q", first + 16)
    if offset < 8 or meta_length < 8 or body_length < 0 or offset + meta_length + body_length > len(data):
        raise _Malformed("record batch block outside the file")
    prefix = 8 if whole.read("I", offset) == 0xFFFFFFFF else 4
    message = _Buffer(data, offset + prefix, offset + meta_length).root()
    if message.scalar(1, "B") != _RECORD_BATCH_HEADER:  # Message.header_type
        raise _Malformed("the block does not hold a record batch")
    batch = message.child(2)  # Message.header
    if batch is None:
        raise _Malformed("record batch message without a header")
    bounds.rows = batch.scalar(0, "q")  # RecordBatch.length
    compressed = batch.field(3) is not None  # RecordBatch.compression
    body = offset + meta_length
    first_buffer, buffers = batch.vector(2, _BUFFER_SIZE)  # RecordBatch.buffers
    for index in range(buffers):
        start = whole.read("q", first_buffer + index * _BUFFER_SIZE)
        length = whole.read("q", first_buffer + index * _BUFFER_SIZE + 8)
        if start < 0 or length < 0 or start + length > body_length:
            raise _Malformed("a buffer lies outside the batch body")
        expanded = length
        if compressed and length >= 8:
            declared = whole.read("q", body + start)
            expanded = length - 8 if declared == -1 else declared
        bounds.largest_buffer = max(bounds.largest_buffer, expanded)
    return bounds


# What pyarrow raises on damaged input.
_ARROW_ERRORS = (pa.ArrowException, OSError, ValueError, IndexError, KeyError, TypeError, OverflowError)


def _read_arrow(data: bytes, limit: int, location: str) -> DeletionContent:
    try:
        reader = ipc.open_file(pa.BufferReader(data))
        schema = reader.schema
        batches = reader.num_record_batches
    except _ARROW_ERRORS as exc:
        if not isinstance(_bitmap(data), str):
            return DeletionContent(
                "kind-mismatch", location, "the kind is ARROW_ARRAY but the file is a Roaring bitmap"
            )
        return DeletionContent("arrow-layout", location, f"not an Arrow IPC file: {type(exc).__name__}: {exc}")
    if len(schema) != 1:
        return DeletionContent("arrow-layout", location, f"the file has {len(schema)} columns, not exactly one")
    column_type = schema.types[0]
    if column_type not in (pa.int32(), pa.uint32()):
        return DeletionContent("arrow-layout", location, f"the column has type {column_type}, not a 32-bit integer")
    if batches != 1:
        return DeletionContent("arrow-layout", location, f"the file has {batches} record batches, not exactly one")
    bounds = _arrow_batch_bounds(data)
    if bounds is None or bounds.batches != 1:
        return DeletionContent("arrow-layout", location, "the record batch metadata is malformed")
    if bounds.rows > limit:
        return DeletionContent(
            "too-many", location, f"the file lists {bounds.rows} offsets but the fragment has only {limit} rows",
            entries=bounds.rows,
        )
    if bounds.rows > MAX_ARROW_OFFSETS:
        return DeletionContent(
            "too-large", location, f"the file lists {bounds.rows} offsets, more than this validator reads"
        )
    if bounds.largest_buffer > 8 * bounds.rows + 64:
        return DeletionContent(
            "arrow-layout", location,
            f"a buffer expands to {bounds.largest_buffer} bytes, more than {bounds.rows} 32-bit offsets need",
        )
    try:
        batch = reader.get_batch(0)
        batch.validate(full=True)
        column = batch.column(0)
        nulls = column.null_count
        values = column.fill_null(0).to_numpy(zero_copy_only=False)
    except _ARROW_ERRORS as exc:
        return DeletionContent(
            "arrow-layout", location, f"the record batch does not decode: {type(exc).__name__}: {exc}"
        )
    if nulls:
        return DeletionContent("arrow-layout", location, f"the column holds {nulls} nulls")
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
    return DeletionContent(
        "ok", location, offsets=BitMap(words), entries=len(column), negatives=negatives,
        distinct_negatives=distinct_negatives, column_type=str(column.type),
    )


# -- rules ---------------------------------------------------------------------------


def _with_deletions(view: VersionView):
    """(fragment, content) for each fragment with a deletion file."""
    for fragment in view.manifest.fragments:
        content = deletion_content(view, fragment)
        if content is not None:
            yield fragment, content


def _describe(fragment: Fragment) -> str:
    return f"fragment {fragment.id}"


@rule(
    "deletion/file-exists",
    severity=Severity.ERROR,
    requirements=("deletion.file-exists", "deletion.path-derived"),
    summary="The deletion file a fragment names exists at its derived location and can be read",
)
def file_exists(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status == "missing" and _other_kind_path(view, fragment) is None:
            yield f"{_describe(fragment)}: no deletion file at the derived location", content.location
        elif content.status == "unreadable":
            yield f"{_describe(fragment)}: the deletion file cannot be read: {content.message}", content.location


def _other_kind_path(view: VersionView, fragment: Fragment) -> str | None:
    """The location of a file named like the missing one but with the other
    kind's extension, when there is one."""
    deletion_file = fragment.deletion_file
    if deletion_file.file_type is DeletionFileType.ARROW_ARRAY:
        other = DeletionFileType.BITMAP
    else:
        other = DeletionFileType.ARROW_ARRAY
    try:
        storage, relpath = deletion_file_location(
            view.dataset.storage, fragment.id, deletion_file, view.manifest.base_paths
        )
    except LanceFormatError:
        return None
    candidate = relpath[: -len(deletion_file.file_type.extension)] + other.extension
    return _location(storage, candidate, view.dataset.storage) if storage.exists(candidate) else None


@rule(
    "deletion/extension-matches-kind",
    severity=Severity.ERROR,
    requirements=("deletion.extension-matches-kind", "deletion.either-kind"),
    summary="The deletion file's kind is ARROW_ARRAY (.arrow) or BITMAP (.bin), and its file is of that kind",
)
def extension_matches_kind(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status in ("unknown-kind", "kind-mismatch"):
            yield f"{_describe(fragment)}: {content.message}", content.location
        elif content.status == "missing":
            other = _other_kind_path(view, fragment)
            if other is not None:
                yield (
                    f"{_describe(fragment)}: the kind is {fragment.deletion_file.file_type.name}, but the file on "
                    f"disk has the other extension ({other})",
                    content.location,
                )


@rule(
    "deletion/arrow-layout",
    severity=Severity.ERROR,
    requirements=("deletion.arrow-layout",),
    summary="An .arrow deletion file is an Arrow IPC file with one record batch of one non-null 32-bit integer column",
)
def arrow_layout(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status == "arrow-layout":
            yield f"{_describe(fragment)}: {content.message}", content.location


@rule(
    "deletion/arrow-uint32",
    severity=Severity.INFO,
    requirements=("deletion.arrow-layout",),
    summary="An .arrow deletion column is Int32 as the seeds say (pylance writes uint32; "
    "see docs/spec-discrepancies.md)",
)
def arrow_uint32(view: VersionView):
    unsigned = [
        content.location for _, content in _with_deletions(view) if content.ok and content.column_type == "uint32"
    ]
    if unsigned:
        shown = ", ".join(unsigned[:3]) + (" ..." if len(unsigned) > 3 else "")
        yield (
            f"{len(unsigned)} .arrow deletion files hold a uint32 column, not the seeds' Int32 (pylance's form; "
            f"see docs/spec-discrepancies.md): {shown}",
            unsigned[0] if len(unsigned) == 1 else view.at("fragments"),
        )


@rule(
    "deletion/bitmap-layout",
    severity=Severity.ERROR,
    requirements=("deletion.bitmap-layout",),
    summary="A .bin deletion file is a portable 32-bit Roaring bitmap with nothing after it",
)
def bitmap_layout(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status == "bitmap-layout":
            yield f"{_describe(fragment)}: {content.message}", content.location


@rule(
    "deletion/count-matches-metadata",
    severity=Severity.ERROR,
    requirements=("deletion.count-matches-metadata",),
    summary="num_deleted_rows equals the number of distinct offsets the deletion file marks",
)
def count_matches_metadata(view: VersionView):
    for fragment, content in _with_deletions(view):
        if not content.ok:
            continue
        marked = len(content.offsets) + content.distinct_negatives
        if marked != fragment.deletion_file.num_deleted_rows:
            yield (
                f"{_describe(fragment)}: the deletion file marks {marked} rows, num_deleted_rows says "
                f"{fragment.deletion_file.num_deleted_rows}",
                content.location,
            )


@rule(
    "deletion/offsets-distinct",
    severity=Severity.ERROR,
    requirements=("deletion.arrow-layout", "deletion.count-matches-metadata"),
    summary="An .arrow deletion file lists each offset once",
)
def offsets_distinct(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.ok:
            repeated = content.entries - content.distinct_negatives - len(content.offsets)
            if repeated > 0:
                yield f"{_describe(fragment)}: {repeated} offsets are listed more than once", content.location


@rule(
    "deletion/offsets-in-range",
    severity=Severity.ERROR,
    requirements=("deletion.offsets-in-range",),
    summary="Every deleted offset is at least 0 and below the fragment's physical_rows",
)
def offsets_in_range(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status == "too-many":
            yield f"{_describe(fragment)}: {content.message}, so some are repeated or out of range", content.location
        if not content.ok:
            continue
        if content.negatives:
            yield f"{_describe(fragment)}: {content.negatives} offsets are negative", content.location
        if content.offsets and content.offsets.max() >= fragment.physical_rows:
            beyond = len(content.offsets)
            if fragment.physical_rows > 0:
                beyond -= content.offsets.rank(fragment.physical_rows - 1)
            yield (
                f"{_describe(fragment)}: {beyond} offsets (the largest {content.offsets.max()}) are not below its "
                f"{fragment.physical_rows} physical rows",
                content.location,
            )


@rule(
    "deletion/count-within-physical-rows",
    severity=Severity.ERROR,
    requirements=("deletion.count-within-physical-rows",),
    summary="A fragment's num_deleted_rows does not exceed its physical_rows",
)
def count_within_physical_rows(view: VersionView):
    for index, fragment in enumerate(view.manifest.fragments):
        deletion_file = fragment.deletion_file
        if deletion_file is not None and deletion_file.num_deleted_rows > fragment.physical_rows:
            yield (
                f"{_describe(fragment)}: num_deleted_rows {deletion_file.num_deleted_rows} exceeds its "
                f"{fragment.physical_rows} physical rows",
                view.at(f"fragments[{index}].deletion_file.num_deleted_rows"),
            )


@rule(
    "deletion/read-version-earlier",
    severity=Severity.ERROR,
    requirements=("deletion.read-version-earlier",),
    summary="A deletion file's read_version is earlier than the version listing it",
)
def read_version_earlier(view: VersionView):
    for index, fragment in enumerate(view.manifest.fragments):
        deletion_file = fragment.deletion_file
        if deletion_file is not None and deletion_file.read_version >= view.version:
            yield (
                f"{_describe(fragment)}: the deletion file was computed from version {deletion_file.read_version}, "
                f"not earlier than this version {view.version}",
                view.at(f"fragments[{index}].deletion_file.read_version"),
            )


@rule(
    "deletion/absent-when-nothing-deleted",
    severity=Severity.ERROR,
    requirements=("deletion.absent-when-nothing-deleted",),
    summary="A fragment without deleted rows has no deletion file",
)
def absent_when_nothing_deleted(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.ok and content.entries == 0:
            yield f"{_describe(fragment)}: the deletion file marks no row", content.location
        elif not content.ok and fragment.deletion_file.num_deleted_rows == 0 and content.status not in (
            "too-many", "too-large"
        ):
            yield (
                f"{_describe(fragment)}: num_deleted_rows is 0, yet the fragment names a deletion file",
                content.location,
            )


@rule(
    "deletion/unchecked",
    severity=Severity.INFO,
    requirements=("deletion.offsets-in-range", "deletion.count-matches-metadata"),
    summary="Deletion files too large for this validator to read are reported, not read",
)
def unchecked(view: VersionView):
    for fragment, content in _with_deletions(view):
        if content.status == "too-large":
            yield f"{_describe(fragment)}: not checked: {content.message}", content.location


# -- files nobody refers to ------------------------------------------------------------

#: Branch directories searched for manifests that may refer to root deletion files.
MAX_BRANCHES = 256
#: Beyond this many manifests (all branches together) the search for
#: unreferenced deletion files is skipped: it would read every one of them.
MAX_MANIFESTS_SCANNED = 2_000


def _referenced_deletion_names(dataset: DatasetView) -> set[str] | None:
    """File names under the root's ``_deletions/`` that a retained manifest
    (of the main branch, or of a branch through a base path) refers to; None
    when some manifest could not be read (then nothing is called unreferenced)."""
    names: set[str] = set()
    root = dataset.storage
    budget = MAX_MANIFESTS_SCANNED - len(dataset.manifest_paths())
    if budget < 0:
        return None
    for version in dataset.manifest_paths():
        loaded = dataset.manifest_file(version)
        if not loaded.ok:
            return None
        _collect(loaded.value.manifest, root, root, names)
    for file_name in root.list_dir(BRANCHES_DIR)[:MAX_BRANCHES]:
        branch = decode_ref_file_name(file_name)
        if branch is None or not is_valid_branch_name(branch):
            continue
        if not root.is_dir(f"{TREE_DIR}/{branch}"):
            continue
        where = Storage(root.path(f"{TREE_DIR}/{branch}"), writable=False)
        try:
            branch_manifests = list_versions(where).manifests()
        except LanceFormatError:
            return None
        budget -= len(branch_manifests)
        if budget < 0:
            return None
        for relpath in branch_manifests.values():
            try:
                manifest = read_manifest_file(where, relpath).manifest
            except LanceFormatError:
                return None
            _collect(manifest, where, root, names)
    return names


def _collect(manifest, storage: Storage, root: Storage, names: set[str]) -> None:
    for fragment in manifest.fragments:
        deletion_file = fragment.deletion_file
        if deletion_file is None or not isinstance(deletion_file.file_type, DeletionFileType):
            continue
        try:
            where, relpath = deletion_file_location(storage, fragment.id, deletion_file, manifest.base_paths)
        except LanceFormatError:
            continue
        if where.root == root.root and relpath.startswith(DELETIONS_DIR + "/"):
            names.add(relpath[len(DELETIONS_DIR) + 1 :])


@rule(
    "deletion/unreferenced-files",
    severity=Severity.INFO,
    requirements=("deletion.path-derived",),
    summary="Every file in _deletions/ has a deletion file name and is referred to by a retained version",
    scope=Scope.DATASET,
)
def unreferenced_files(dataset: DatasetView):
    entries = [name for name in dataset.storage.list_dir(DELETIONS_DIR) if not name.startswith(".")]
    if not entries:
        return
    referenced = _referenced_deletion_names(dataset)
    stray = [name for name in entries if not DELETION_FILE_NAME.match(name)]
    for name in stray[:20]:
        yield f"'{name}' is not named {{fragment_id}}-{{read_version}}-{{id}}.{{arrow|bin}}", f"{DELETIONS_DIR}/{name}"
    if referenced is None:
        return
    orphans = [name for name in entries if DELETION_FILE_NAME.match(name) and name not in referenced]
    if orphans:
        shown = ", ".join(orphans[:5]) + (" ..." if len(orphans) > 5 else "")
        yield (
            f"{len(orphans)} deletion files are referred to by no retained version (left by a failed commit or "
            f"an incomplete cleanup): {shown}",
            DELETIONS_DIR,
        )
