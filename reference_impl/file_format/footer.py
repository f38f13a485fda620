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

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError

from ..errors import CorruptFileError, UnsupportedFeatureError
from ..storage import Storage
from ..wire import encodings_v2_0_pb2, file2_pb2, file_pb2

MAGIC = b"LANC"
VERSION_AND_MAGIC_SIZE = 8
LEGACY_FOOTER_SIZE = 16
V2_FOOTER_SIZE = 40
OFFSETS_TABLE_ENTRY_SIZE = 16  # u64 position + u64 size

# What the footer of a file written as "2.0" says, and what manifests say.
V2_0_FOOTER_VERSION = (0, 3)
V2_0_VERSION = (2, 0)

# Type names carried by the google.protobuf.Any messages of v2 files.
ARRAY_ENCODING_TYPE = "lance.encodings.ArrayEncoding"
COLUMN_ENCODING_TYPE = "lance.encodings.ColumnEncoding"
# pylance writes type URLs with an empty host ("/lance.encodings.ArrayEncoding").
TYPE_URL_PREFIX = "/"

LAYOUT_LEGACY = "legacy"
LAYOUT_V2 = "v2"
LAYOUT_UNKNOWN = "unknown"


@dataclass(frozen=True)
class FileInfo:
    """What the footer (and, for v2.x, the first column) says about a file.

    ``major``/``minor`` is the version as a manifest records it
    (``DataFile.file_major_version``/``file_minor_version``): 2.0 for a footer
    that says 0.3, the footer's own numbers otherwise. ``footer_major`` and
    ``footer_minor`` are the raw footer numbers. The counts are ``None``
    where the layout has no such notion (legacy files) or is unknown (a
    future major version).
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


@dataclass(frozen=True)
class V2Footer:
    """The 40-byte footer of a v2.x file, its fields already range-checked."""

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
    return str(storage.path(relpath))


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
    wrapper = any_pb2.Any(type_url=TYPE_URL_PREFIX + message.DESCRIPTOR.full_name, value=message.SerializeToString())
    return wrapper.SerializeToString()


def read_footer_version(storage: Storage, relpath: str) -> tuple[int, int, int]:
    """(size, footer major, footer minor) after checking the magic."""
    path = _full_path(storage, relpath)
    size = storage.size(relpath)
    if size < VERSION_AND_MAGIC_SIZE:
        raise CorruptFileError(path, f"file is {size} bytes, too small to hold a Lance footer")
    tail = storage.read(relpath, size - VERSION_AND_MAGIC_SIZE, VERSION_AND_MAGIC_SIZE)
    if tail[4:] != MAGIC:
        raise CorruptFileError(path, f"file does not end with the Lance magic {MAGIC!r} (found {tail[4:]!r})")
    major, minor = struct.unpack("<HH", tail[:4])
    return size, major, minor


def read_v2_footer(storage: Storage, relpath: str, size: int) -> V2Footer:
    """Parse and range-check the 40-byte footer of a v2.x file."""
    path = _full_path(storage, relpath)
    if size < V2_FOOTER_SIZE:
        raise CorruptFileError(path, f"file is {size} bytes, too small for a {V2_FOOTER_SIZE}-byte v2 footer")
    raw = storage.read(relpath, size - V2_FOOTER_SIZE, V2_FOOTER_SIZE)
    (cm_start, cmo_start, gbo_start, num_buffers, num_columns, major, minor) = struct.unpack("<QQQIIHH", raw[:36])
    footer_start = size - V2_FOOTER_SIZE
    # Both offsets tables must fit between their start and the footer; their
    # sizes follow from the counts, which bounds the counts by the file size.
    _check_range(path, "column metadata offsets table", cmo_start, OFFSETS_TABLE_ENTRY_SIZE * num_columns, 0, footer_start)
    _check_range(path, "global buffer offsets table", gbo_start, OFFSETS_TABLE_ENTRY_SIZE * num_buffers, 0, footer_start)
    if cm_start > cmo_start:
        raise CorruptFileError(
            path, f"column metadata start {cm_start} lies after the column metadata offsets table ({cmo_start})"
        )
    return V2Footer(cm_start, cmo_start, gbo_start, num_buffers, num_columns, major, minor)


def _offsets_table(raw: bytes, count: int) -> list[tuple[int, int]]:
    return [struct.unpack_from("<QQ", raw, OFFSETS_TABLE_ENTRY_SIZE * i) for i in range(count)]


def read_offsets_tables(storage: Storage, relpath: str, size: int, footer: V2Footer):
    """The (position, size) entries of the column metadata and global buffers."""
    path = _full_path(storage, relpath)
    column_table = _offsets_table(
        storage.read(relpath, footer.column_metadata_offsets_start, OFFSETS_TABLE_ENTRY_SIZE * footer.num_columns),
        footer.num_columns,
    )
    buffer_table = _offsets_table(
        storage.read(relpath, footer.global_buffer_offsets_start, OFFSETS_TABLE_ENTRY_SIZE * footer.num_global_buffers),
        footer.num_global_buffers,
    )
    for index, (position, length) in enumerate(column_table):
        _check_range(
            path,
            f"metadata of column {index}",
            position,
            length,
            footer.column_metadata_start,
            footer.column_metadata_offsets_start,
        )
    for index, (position, length) in enumerate(buffer_table):
        _check_range(path, f"global buffer {index}", position, length, 0, size - V2_FOOTER_SIZE)
    return column_table, buffer_table


def check_column_metadata(path: str, index: int, column: file2_pb2.ColumnMetadata, size: int) -> None:
    """Range-check the buffers a column's metadata points at."""
    for page_number, page in enumerate(column.pages):
        if len(page.buffer_offsets) != len(page.buffer_sizes):
            raise CorruptFileError(
                path,
                f"column {index} page {page_number} lists {len(page.buffer_offsets)} buffer offsets "
                f"but {len(page.buffer_sizes)} buffer sizes",
            )
        for position, length in zip(page.buffer_offsets, page.buffer_sizes):
            _check_range(path, f"column {index} page {page_number} buffer", position, length, 0, size)
    if len(column.buffer_offsets) != len(column.buffer_sizes):
        raise CorruptFileError(path, f"column {index} lists unequal numbers of buffer offsets and sizes")
    for position, length in zip(column.buffer_offsets, column.buffer_sizes):
        _check_range(path, f"column {index} buffer", position, length, 0, size)


def _parse_column(path: str, index: int, data: bytes, size: int) -> file2_pb2.ColumnMetadata:
    column = parse_message(path, file2_pb2.ColumnMetadata, data, f"metadata of column {index}")
    check_column_metadata(path, index, column, size)
    return column


# -- public entry points ------------------------------------------------------


def inspect_file(storage: Storage, relpath: str) -> FileInfo:
    """Version and shape of any Lance data file, from its footer.

    For v2.x files the row count is the sum of the page lengths of column 0
    (every column of a file holds the same top-level rows; 0 when column 0
    has no pages); a file without columns takes it from the file descriptor
    in global buffer 0, or 0 when there is none.
    """
    size, footer_major, footer_minor = read_footer_version(storage, relpath)
    path = _full_path(storage, relpath)
    major, minor = manifest_version(footer_major, footer_minor)
    layout = layout_of(footer_major, footer_minor)
    if layout == LAYOUT_LEGACY:
        if size < LEGACY_FOOTER_SIZE:
            raise CorruptFileError(path, f"file is {size} bytes, too small for a {LEGACY_FOOTER_SIZE}-byte footer")
        (metadata_position,) = struct.unpack("<q", storage.read(relpath, size - LEGACY_FOOTER_SIZE, 8))
        if not 0 <= metadata_position < size - LEGACY_FOOTER_SIZE:
            raise CorruptFileError(path, f"metadata position {metadata_position} lies outside the file ({size} bytes)")
        return FileInfo(major, minor, footer_major, footer_minor, size, layout)
    if layout == LAYOUT_UNKNOWN:
        return FileInfo(major, minor, footer_major, footer_minor, size, layout)

    footer = read_v2_footer(storage, relpath, size)
    column_table, buffer_table = read_offsets_tables(storage, relpath, size, footer)
    if column_table:
        position, length = column_table[0]
        first = _parse_column(path, 0, storage.read(relpath, position, length), size)
        num_rows = sum(page.length for page in first.pages)
    elif buffer_table:
        descriptor = _read_descriptor(storage, relpath, buffer_table[0])
        num_rows = descriptor.length
    else:
        num_rows = 0
    return FileInfo(
        major,
        minor,
        footer_major,
        footer_minor,
        size,
        layout,
        num_columns=footer.num_columns,
        num_rows=num_rows,
        num_global_buffers=footer.num_global_buffers,
    )


def _read_descriptor(storage: Storage, relpath: str, location: tuple[int, int]) -> file_pb2.FileDescriptor:
    path = _full_path(storage, relpath)
    position, length = location
    return parse_message(path, file_pb2.FileDescriptor, storage.read(relpath, position, length), "global buffer 0")


def read_v2_metadata(storage: Storage, relpath: str) -> V2Metadata:
    """Footer, every column's metadata and the file descriptor of a v2.x file.

    Raises UnsupportedFeatureError for files that are not v2.x (legacy v1
    files, or an unknown future major version).
    """
    size, footer_major, footer_minor = read_footer_version(storage, relpath)
    path = _full_path(storage, relpath)
    if layout_of(footer_major, footer_minor) != LAYOUT_V2:
        raise UnsupportedFeatureError(
            path, f"file format version {footer_major}.{footer_minor} is not a v2.x file and is not supported here"
        )
    footer = read_v2_footer(storage, relpath, size)
    column_table, buffer_table = read_offsets_tables(storage, relpath, size, footer)
    # The column metadata sits back to back before the offsets table: one read.
    block_start = footer.column_metadata_start
    block = storage.read(relpath, block_start, footer.column_metadata_offsets_start - block_start)
    columns = [
        _parse_column(path, index, block[position - block_start : position - block_start + length], size)
        for index, (position, length) in enumerate(column_table)
    ]
    descriptor = _read_descriptor(storage, relpath, buffer_table[0]) if buffer_table else None
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
            path, f"deferred encoding of {what}", encoding.indirect.buffer_location, encoding.indirect.buffer_length, 0, size
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
    }[expected_type]
    return parse_message(path, message_class, wrapper.value, f"encoding of {what}")
