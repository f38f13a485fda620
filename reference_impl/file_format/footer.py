"""Footers and metadata of Lance data files (file format: file layout, footer).

Every Lance data file ends with ``u16 major, u16 minor, b"LANC"`` (little
endian). What comes before depends on the version:

* legacy v1 files (footer version 0.0, 0.1 or 0.2) end with a 16-byte footer
  whose first field is the i64 position of the file's metadata;
* v2.x files (footer 0.3, which the table format calls 2.0, and 2.x) end with
  a 40-byte footer pointing at the column metadata, the column metadata
  offsets table and the global buffer offsets table (see ``protos/file2.proto``
  for the whole layout).

:func:`inspect_file` reads just enough of any Lance file to report its
version and shape; :func:`read_v2_metadata` loads everything a v2.x reader
needs before touching data pages. Every position, size and count read from
disk is checked against the file size before it is used.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError

from ..errors import CorruptFileError, UnsupportedFeatureError
from ..storage import Storage
from ..wire import encodings_v2_0_pb2, encodings_v2_1_pb2, encodings_v2_3_pb2, file2_pb2, file_pb2

MAGIC = b"LANC"
VERSION_AND_MAGIC_SIZE = 8
LEGACY_FOOTER_SIZE = 16
V2_FOOTER_SIZE = 40
OFFSETS_TABLE_ENTRY_SIZE = 16  # u64 position + u64 size
#: Bytes :func:`inspect_file` reads at once from the end of a file: the
#: footer, both offsets tables and, for all but very wide files, the first
#: column's metadata lie in them.
INSPECT_TAIL_BYTES = 64 << 10

_U16_PAIR = struct.Struct("<HH")
_OFFSETS_ENTRY = struct.Struct("<QQ")
_V2_FOOTER = struct.Struct("<QQQIIHH")

# What the footer of a file written as "2.0" says, and what manifests say.
V2_0_FOOTER_VERSION = (0, 3)
V2_0_VERSION = (2, 0)
# The newest file version the reference reads (the structural layouts of 2.1
# and 2.2, the planar layout of 2.3 as pylance 14 writes it: file_format/v2_1/).
NEWEST_VERSION = (2, 3)
# The first version whose pages are planar layouts (encodings_v2_3.proto).
PLANAR_VERSION = (2, 3)

# Type names carried by the google.protobuf.Any messages of v2 files.
ARRAY_ENCODING_TYPE = "lance.encodings.ArrayEncoding"
COLUMN_ENCODING_TYPE = "lance.encodings.ColumnEncoding"
# The page encoding of 2.1+ files (encodings_v2_1.proto).
PAGE_LAYOUT_TYPE = "lance.encodings21.PageLayout"
# The page encoding of 2.3 files (encodings_v2_3.proto; unstable upstream).
PLANAR_LAYOUT_TYPE = "lance.encodings23.PlanarLayout"
# pylance writes type URLs with an empty host ("/lance.encodings.ArrayEncoding").
TYPE_URL_PREFIX = "/"

LAYOUT_LEGACY = "legacy"
LAYOUT_V2 = "v2"
LAYOUT_UNKNOWN = "unknown"


class FileInfo(NamedTuple):
    """What the footer (and, for v2.x, the first column) says about a file.

    ``major``/``minor`` is the version as a manifest records it
    (``DataFile.file_major_version``/``file_minor_version``): 2.0 for a footer
    that says 0.3, the footer's own numbers otherwise. ``footer_major`` and
    ``footer_minor`` are the raw footer numbers. The counts are ``None``
    where the layout has no such notion (legacy files) or is unknown (a
    future major version).

    Immutable like :class:`V2Footer`, and for the same reason a NamedTuple.
    """

    major: int
    minor: int
    footer_major: int
    footer_minor: int
    size: int
    layout: str
    num_columns: int | None = None
    num_rows: int | None = None
    num_global_buffers: int | None = None

    @property
    def version(self) -> str:
        return f"{self.major}.{self.minor}"


class V2Footer(NamedTuple):
    """The 40-byte footer of a v2.x file, its fields already range-checked.

    A NamedTuple rather than a frozen dataclass: one is built for every data
    file a validation reads, and a frozen dataclass costs twice as much to
    build.
    """

    column_metadata_start: int
    column_metadata_offsets_start: int
    global_buffer_offsets_start: int
    num_global_buffers: int
    num_columns: int
    major: int
    minor: int


@dataclass
class V2Metadata:
    """Everything before the data pages a v2.x reader needs."""

    path: str
    size: int
    footer: V2Footer
    columns: list[file2_pb2.ColumnMetadata]
    global_buffers: list[tuple[int, int]]
    descriptor: file_pb2.FileDescriptor | None

    @property
    def version(self) -> tuple[int, int]:
        return manifest_version(self.footer.major, self.footer.minor)

    @property
    def num_rows(self) -> int:
        """Rows in the file: the pages of column 0, or the descriptor's count
        when the file has no columns."""
        if self.columns:
            return sum(page.length for page in self.columns[0].pages)
        return self.descriptor.length if self.descriptor is not None else 0


def manifest_version(footer_major: int, footer_minor: int) -> tuple[int, int]:
    """The version a manifest records for a file with this footer version."""
    if (footer_major, footer_minor) == V2_0_FOOTER_VERSION:
        return V2_0_VERSION
    return footer_major, footer_minor


def layout_of(footer_major: int, footer_minor: int) -> str:
    """Which container layout a footer version implies."""
    if footer_major == 0 and footer_minor <= 2:
        return LAYOUT_LEGACY
    if (footer_major, footer_minor) == V2_0_FOOTER_VERSION or footer_major == 2:
        # The major number changes only when the container changes, so every
        # 2.x minor shares the 2.0 container.
        return LAYOUT_V2
    return LAYOUT_UNKNOWN


# -- reading helpers ----------------------------------------------------------


def _full_path(storage: Storage, relpath: str) -> str:
    return storage.path_text(relpath)


def _check_range(path: str, what: str, position: int, size: int, start: int, end: int) -> None:
    """Refuse a byte range that does not lie inside ``[start, end)``."""
    if position < start or size < 0 or position + size > end:
        raise CorruptFileError(
            path, f"{what} at [{position}, {position + size}) lies outside the allowed range [{start}, {end})"
        )


def parse_message(path: str, message_class, data: bytes, what: str):
    """Parse a protobuf message, turning any decoding failure into CorruptFileError."""
    try:
        return message_class.FromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise CorruptFileError(path, f"{what} is not a valid {message_class.DESCRIPTOR.full_name}: {exc}") from None


def type_name_of(type_url: str) -> str:
    """The message name of an Any type URL, with or without a host part."""
    return type_url.rsplit("/", 1)[-1]


def pack_any(message) -> bytes:
    """Serialize ``message`` inside an Any, with the type URL pylance uses."""
    # Deterministic: map entries sorted, so the same schema gives the same bytes.
    value = message.SerializeToString(deterministic=True)
    wrapper = any_pb2.Any(type_url=TYPE_URL_PREFIX + message.DESCRIPTOR.full_name, value=value)
    return wrapper.SerializeToString(deterministic=True)


class FileTail(NamedTuple):
    """A file's size and its last ``min(size, INSPECT_TAIL_BYTES)`` bytes,
    read with one call: the footer, both offsets tables and, for all but very
    wide files, the column metadata lie in them, so one read serves what
    :func:`inspect_file` (run for every data file a validation reads) and
    :func:`read_v2_metadata` need. See :func:`read_tail`."""

    #: The file's path as text, for messages.
    path: str
    size: int
    #: Where ``data`` starts in the file.
    start: int
    data: bytes
    #: Where ranges before ``start`` are read from.
    storage: Storage
    relpath: str

    def read(self, offset: int, length: int) -> bytes:
        """Bytes ``[offset, offset + length)``, from memory when they lie in
        the tail; a range outside the file is refused as Storage.read does."""
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptFileError(
                self.path, f"byte range [{offset}, {offset + length}) is outside the file ({self.size} bytes)"
            )
        if offset >= self.start:
            offset -= self.start
            return self.data[offset : offset + length]
        return self.storage.read(self.relpath, offset, length)

    def read_inside(self, offset: int, length: int) -> bytes:
        """:meth:`read` for a range the caller has already checked to lie
        inside the file: the footer's tables and the ranges they name, read
        for every data file a validation opens, skip the second check."""
        start = offset - self.start
        if start >= 0:
            return self.data[start : start + length]
        return self.storage.read(self.relpath, offset, length)


def read_tail(storage: Storage, relpath: str) -> FileTail:
    """Resolve the path once, take the size and read the file's tail."""
    path = _full_path(storage, relpath)
    size = storage.size(relpath)
    start = max(0, size - INSPECT_TAIL_BYTES)
    return FileTail(path, size, start, storage.read(relpath, start, size - start), storage, relpath)


def _version_and_magic(tail: FileTail) -> tuple[int, int]:
    """The footer version in the last 8 bytes, after checking that the file
    can hold them and ends with the magic."""
    data = tail.data
    if tail.size < VERSION_AND_MAGIC_SIZE:
        raise CorruptFileError(tail.path, f"file is {tail.size} bytes, too small to hold a Lance footer")
    if not data.endswith(MAGIC):
        raise CorruptFileError(
            tail.path, f"file does not end with the Lance magic {MAGIC!r} (found {data[-len(MAGIC) :]!r})"
        )
    major, minor = _U16_PAIR.unpack_from(data, len(data) - VERSION_AND_MAGIC_SIZE)
    return major, minor


def read_footer_version(storage: Storage, relpath: str) -> tuple[int, int, int]:
    """(size, footer major, footer minor) after checking the magic."""
    tail = read_tail(storage, relpath)
    return (tail.size, *_version_and_magic(tail))


def _v2_layout(tail: FileTail) -> tuple[tuple[int, ...], list[tuple[int, int]], list[tuple[int, int]]]:
    """The range-checked 40-byte footer of a v2.x file and its two offsets
    tables: the (position, size) entries of the column metadata and of the
    global buffers.

    The footer comes as its seven fields in :class:`V2Footer`'s order, a
    plain tuple: :func:`inspect_file` runs this for every data file a
    validation reads and needs two of the fields, and building the
    NamedTuple took a twentieth of its time; :func:`read_v2_metadata` wraps
    them.

    The entries are u64 (never negative): :func:`_check_range`'s test is
    written inline, so that its message is formatted only for an entry that
    fails; it is then called to raise.
    """
    path, size, data = tail.path, tail.size, tail.data
    if size < V2_FOOTER_SIZE:
        raise CorruptFileError(path, f"file is {size} bytes, too small for a {V2_FOOTER_SIZE}-byte v2 footer")
    fields = _V2_FOOTER.unpack_from(data, len(data) - V2_FOOTER_SIZE)
    cm_start, cmo_start, gbo_start, num_buffers, num_columns, _, _ = fields
    footer_start = size - V2_FOOTER_SIZE
    # Both offsets tables must fit between their start and the footer; their
    # sizes follow from the counts, which bounds the counts by the file size.
    columns_size, buffers_size = OFFSETS_TABLE_ENTRY_SIZE * num_columns, OFFSETS_TABLE_ENTRY_SIZE * num_buffers
    if cmo_start + columns_size > footer_start:
        _check_range(path, "column metadata offsets table", cmo_start, columns_size, 0, footer_start)
    if gbo_start + buffers_size > footer_start:
        _check_range(path, "global buffer offsets table", gbo_start, buffers_size, 0, footer_start)
    if cm_start > cmo_start:
        raise CorruptFileError(
            path, f"column metadata start {cm_start} lies after the column metadata offsets table ({cmo_start})"
        )
    # Both tables were just checked to lie inside the file.
    column_table = list(_OFFSETS_ENTRY.iter_unpack(tail.read_inside(cmo_start, columns_size)))
    buffer_table = list(_OFFSETS_ENTRY.iter_unpack(tail.read_inside(gbo_start, buffers_size)))
    for position, length in column_table:
        if position < cm_start or position + length > cmo_start:
            _check_entries(path, "metadata of column", column_table, cm_start, cmo_start)
    for position, length in buffer_table:
        if position + length > footer_start:
            _check_entries(path, "global buffer", buffer_table, 0, footer_start)
    return fields, column_table, buffer_table


def _check_entries(path: str, what: str, table: list[tuple[int, int]], start: int, end: int) -> None:
    """:func:`_check_range` for each entry of an offsets table, named by its
    index: raises for the first entry outside ``[start, end)``. Called only
    once an entry failed the inline test, so that a table that passes costs
    no message and no index."""
    for index, (position, length) in enumerate(table):
        _check_range(path, f"{what} {index}", position, length, start, end)


def check_column_metadata(path: str, index: int, column: file2_pb2.ColumnMetadata, size: int) -> None:
    """Range-check the buffers a column's metadata points at."""
    _checked_rows(path, index, column, size)


def _checked_rows(path: str, index: int, column: file2_pb2.ColumnMetadata, size: int) -> int:
    """:func:`check_column_metadata`, and the column's rows (the sum of its
    page lengths) counted in the same pass: every data file a validation
    reads comes through here, and protobuf field access is slow.

    Positions and sizes are u64, never negative, so only the end can fall
    outside ``[0, size)``: that is tested inline, and :func:`_check_range`
    (which raises) is called only for a buffer that fails it.
    """
    rows = 0
    # [:]: iterate a list, not the repeated field, which has no iterator of
    # its own (a for loop over it ends in a raised and caught IndexError).
    pages = column.pages[:]
    for page in pages:
        offsets, sizes = page.buffer_offsets, page.buffer_sizes
        if len(offsets) != len(sizes):
            raise CorruptFileError(
                path,
                f"column {index} page {_position(pages, page)} lists {len(offsets)} buffer offsets but "
                f"{len(sizes)} buffer sizes",
            )
        if offsets:  # often none: a zip over empty fields still costs
            for position, length in zip(offsets[:], sizes[:], strict=True):
                if position + length > size:
                    what = f"column {index} page {_position(pages, page)} buffer"
                    _check_range(path, what, position, length, 0, size)
        rows += page.length
    offsets, sizes = column.buffer_offsets, column.buffer_sizes
    if len(offsets) != len(sizes):
        raise CorruptFileError(path, f"column {index} lists unequal numbers of buffer offsets and sizes")
    if offsets:
        for position, length in zip(offsets[:], sizes[:], strict=True):
            if position + length > size:
                _check_range(path, f"column {index} buffer", position, length, 0, size)
    return rows


def _position(items: list, item) -> int:
    """Where ``item`` (that very object) is in ``items``: the number of a page
    for a message, found only once the page failed a check (``list.index``
    compares by equality, and two pages may be equal)."""
    return next(index for index, candidate in enumerate(items) if candidate is item)


def _parse_column(path: str, index: int, data: bytes, size: int) -> file2_pb2.ColumnMetadata:
    column = parse_message(path, file2_pb2.ColumnMetadata, data, f"metadata of column {index}")
    check_column_metadata(path, index, column, size)
    return column


# -- public entry points ------------------------------------------------------


def inspect_file(storage: Storage | FileTail, relpath: str) -> FileInfo:
    """Version and shape of any Lance data file, from its footer.

    For v2.x files the row count is the ``length`` of the file descriptor in
    global buffer 0. Page lengths are no substitute: from 2.1 on, a page of a
    leaf column under a fixed-size list of structs counts the list's items,
    not the rows. A file without global buffers falls back on the sum of the
    page lengths of column 0 (in 2.0, every column holds the same top-level
    rows), or 0 when it has no columns either. Column 0's metadata is
    checked in every case.

    ``storage`` may also be the :class:`FileTail` of ``relpath``, already
    read: the validator reads each data file's tail itself, its path checked
    once for every version that lists it. Otherwise the path is resolved once
    and the tail read with one call (:func:`read_tail`).
    """
    tail = storage if isinstance(storage, FileTail) else read_tail(storage, relpath)
    path, size = tail.path, tail.size
    footer_major, footer_minor = _version_and_magic(tail)
    major, minor = manifest_version(footer_major, footer_minor)
    layout = layout_of(footer_major, footer_minor)
    if layout == LAYOUT_LEGACY:
        if size < LEGACY_FOOTER_SIZE:
            raise CorruptFileError(path, f"file is {size} bytes, too small for a {LEGACY_FOOTER_SIZE}-byte footer")
        (metadata_position,) = struct.unpack("<q", tail.read(size - LEGACY_FOOTER_SIZE, 8))
        if not 0 <= metadata_position < size - LEGACY_FOOTER_SIZE:
            raise CorruptFileError(path, f"metadata position {metadata_position} lies outside the file ({size} bytes)")
        return FileInfo(major, minor, footer_major, footer_minor, size, layout)
    if layout == LAYOUT_UNKNOWN:
        return FileInfo(major, minor, footer_major, footer_minor, size, layout)

    footer_fields, column_table, buffer_table = _v2_layout(tail)
    _, _, _, num_buffers, num_columns, _, _ = footer_fields
    num_rows = 0
    if column_table:
        # _v2_layout checked every table entry to lie inside the file.
        position, length = column_table[0]
        first = parse_message(
            path, file2_pb2.ColumnMetadata, tail.read_inside(position, length), "metadata of column 0"
        )
        num_rows = _checked_rows(path, 0, first, size)
    if buffer_table:
        num_rows = _read_descriptor(tail, buffer_table[0]).length
    # Positional: FileInfo's keyword form costs half as much again, once per data file.
    return FileInfo(major, minor, footer_major, footer_minor, size, layout, num_columns, num_rows, num_buffers)


def _read_descriptor(tail: FileTail, location: tuple[int, int]) -> file_pb2.FileDescriptor:
    """The file descriptor in global buffer 0, at a ``location`` that
    :func:`_v2_layout` checked to lie inside the file."""
    position, length = location
    return parse_message(tail.path, file_pb2.FileDescriptor, tail.read_inside(position, length), "global buffer 0")


def read_v2_metadata(storage: Storage, relpath: str) -> V2Metadata:
    """Footer, every column's metadata and the file descriptor of a v2.x file.

    Raises UnsupportedFeatureError for files that are not v2.x (legacy v1
    files, or an unknown future major version).
    """
    tail = read_tail(storage, relpath)
    path, size = tail.path, tail.size
    footer_major, footer_minor = _version_and_magic(tail)
    if layout_of(footer_major, footer_minor) != LAYOUT_V2:
        raise UnsupportedFeatureError(
            path, f"file format version {footer_major}.{footer_minor} is not a v2.x file and is not supported here"
        )
    fields, column_table, buffer_table = _v2_layout(tail)
    footer = V2Footer._make(fields)
    # The column metadata sits back to back before the offsets table: one read.
    block_start = footer.column_metadata_start
    block = tail.read(block_start, footer.column_metadata_offsets_start - block_start)
    columns = [
        _parse_column(path, index, block[position - block_start : position - block_start + length], size)
        for index, (position, length) in enumerate(column_table)
    ]
    descriptor = _read_descriptor(tail, buffer_table[0]) if buffer_table else None
    return V2Metadata(path, size, footer, columns, buffer_table, descriptor)


def unpack_encoding(
    storage: Storage, relpath: str, size: int, encoding: file2_pb2.Encoding, expected_type: str, what: str
):
    """The message inside a page or column ``Encoding``.

    Direct and deferred (indirect) encodings are both followed. An Any of
    another type than ``expected_type`` is an encoding this module does not
    implement (for example a v2.1 ``PageLayout``).
    """
    path = _full_path(storage, relpath)
    location = encoding.WhichOneof("location")
    if location == "direct":
        raw = encoding.direct.encoding
    elif location == "indirect":
        _check_range(
            path,
            f"deferred encoding of {what}",
            encoding.indirect.buffer_location,
            encoding.indirect.buffer_length,
            0,
            size,
        )
        raw = storage.read(relpath, encoding.indirect.buffer_location, encoding.indirect.buffer_length)
    else:
        raise CorruptFileError(path, f"{what} has no encoding")
    wrapper = parse_message(path, any_pb2.Any, raw, f"encoding of {what}")
    type_name = type_name_of(wrapper.type_url)
    if type_name != expected_type:
        raise UnsupportedFeatureError(
            path, f"{what}: encoding {type_name or '(empty type URL)'} is not supported (expected {expected_type})"
        )
    message_class = {
        ARRAY_ENCODING_TYPE: encodings_v2_0_pb2.ArrayEncoding,
        COLUMN_ENCODING_TYPE: encodings_v2_0_pb2.ColumnEncoding,
        PAGE_LAYOUT_TYPE: encodings_v2_1_pb2.PageLayout,
        PLANAR_LAYOUT_TYPE: encodings_v2_3_pb2.PlanarLayout,
    }[expected_type]
    return parse_message(path, message_class, wrapper.value, f"encoding of {what}")
