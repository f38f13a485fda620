"""The manifest file container (table format: manifest; commit protocol).

A manifest file (``_versions/*.manifest``) is laid out as::

    [u32 length][IndexSection]      optional, at Manifest.index_section
    [u32 length][Transaction]       optional, at Manifest.transaction_section
    [u32 length][Manifest]          at the footer's position
    i64 position | u16 major | u16 minor | "LANC"      (16-byte footer)

All integers are little-endian. Section positions are absolute offsets in the
file, and a position of 0 is valid (presence, not value, says a section
exists). Every offset and length read from disk is checked against the file
size before anything is sliced, so a hostile file cannot make the reader read
out of bounds or allocate more than the file holds.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from dataclasses import field as dc_field

from google.protobuf.message import DecodeError

from .errors import CorruptFileError
from .fragments import Fragment, FragmentDecoder
from .index_metadata import IndexMetadata
from .manifest import Manifest, transaction_section_fields
from .storage import Storage
from .transactions import Transaction
from .wire import table_pb2, transaction_pb2

MAGIC = b"LANC"
FOOTER = struct.Struct("<qHH4s")
LENGTH_PREFIX = struct.Struct("<I")

#: Footer version this implementation writes (pylance >= 4 writes 0.2 too).
WRITE_FOOTER_VERSION = (0, 2)


@dataclass
class ManifestFooter:
    manifest_position: int
    major: int
    minor: int


@dataclass
class ManifestFile:
    """Everything one manifest file holds."""

    path: str
    size: int
    footer: ManifestFooter
    manifest: Manifest
    #: Indices of the version; None when the manifest has no index section.
    indices: list[IndexMetadata] | None
    #: The embedded transaction; None when the manifest has no transaction section.
    transaction: Transaction | None
    #: The message bytes ``transaction`` was decoded from: a reader of the
    #: transaction file, which usually holds the same bytes, can compare them
    #: and reuse ``transaction`` (see ``read_transaction_file``).
    transaction_bytes: bytes | None = dc_field(default=None, repr=False, compare=False)
    #: The fragment messages, parsed but not decoded, when the file was read
    #: ``with_fragments=False``; ``manifest.fragments`` is then empty. None
    #: when the fragments were decoded.
    fragment_messages: list[table_pb2.DataFragment] | None = dc_field(default=None, repr=False, compare=False)


def parse_footer(data: bytes, path: str) -> ManifestFooter:
    """Decode the 16-byte footer at the end of ``data`` (the whole file)."""
    if len(data) < FOOTER.size:
        raise CorruptFileError(path, f"file is {len(data)} bytes, shorter than the {FOOTER.size}-byte footer")
    position, major, minor, magic = FOOTER.unpack_from(data, len(data) - FOOTER.size)
    if magic != MAGIC:
        raise CorruptFileError(path, f"footer magic is {magic!r}, expected {MAGIC!r}")
    return ManifestFooter(position, major, minor)


def read_section(data: bytes, position: int, path: str, what: str, *, end: int | None = None) -> bytes:
    """The message bytes of a length-prefixed section at ``position``.

    ``end`` bounds the section (the footer start by default).
    """
    limit = len(data) - FOOTER.size if end is None else end
    if position < 0 or position + LENGTH_PREFIX.size > limit:
        raise CorruptFileError(path, f"{what} position {position} is outside the file's content (0..{limit})")
    (length,) = LENGTH_PREFIX.unpack_from(data, position)
    start = position + LENGTH_PREFIX.size
    if start + length > limit:
        raise CorruptFileError(
            path, f"{what} length {length} at position {position} runs past the end of the content ({limit})"
        )
    return data[start : start + length]


def _parse(message, payload: bytes, path: str, what: str):
    try:
        message.ParseFromString(payload)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise CorruptFileError(path, f"{what} does not decode: {exc}") from None
    return message


def _decode_section(data: bytes, position: int, message, path: str, what: str):
    """Parse the length-prefixed section at ``position`` into ``message``."""
    return _parse(message, read_section(data, position, path, what), path, what)


def decode_manifest_file(
    data: bytes,
    path: str,
    decode_fragment: FragmentDecoder = Fragment.from_proto,
    *,
    with_transaction: bool = True,
    with_fragments: bool = True,
) -> ManifestFile:
    """Decode a whole manifest file held in memory (each fragment message,
    the manifest's and its transaction's, through ``decode_fragment``). With ``with_transaction`` False the
    embedded transaction is checked to parse but not decoded:
    ``transaction`` is None (for a reader that only describes the version:
    pylance's transaction of an Overwrite lists every fragment again, and
    decoding it took longer than the manifest itself). With
    ``with_fragments`` False the fragment messages are parsed (the manifest
    message is parsed whole) but not decoded: ``manifest.fragments`` is
    empty and ``fragment_messages`` holds them (for ``describe``, which
    builds its description of each fragment from the message itself)."""
    footer = parse_footer(data, path)
    manifest_msg = _decode_section(data, footer.manifest_position, table_pb2.Manifest(), path, "manifest")
    return _decode_parsed(
        data, path, footer, manifest_msg, decode_fragment if with_fragments else None, with_transaction
    )


def _decode_parsed(
    data: bytes,
    path: str,
    footer: ManifestFooter,
    manifest_msg: table_pb2.Manifest,
    decode_fragment: FragmentDecoder | None = Fragment.from_proto,
    with_transaction: bool = True,
) -> ManifestFile:
    """Decode a manifest file whose footer and manifest message are parsed
    (its fragments left as messages when ``decode_fragment`` is None)."""
    try:
        manifest = Manifest.from_proto(manifest_msg, decode_fragment)
    except ValueError as exc:
        raise CorruptFileError(path, f"manifest content is invalid: {exc}") from None

    indices = None
    if manifest.index_section is not None:
        section = _decode_section(data, manifest.index_section, table_pb2.IndexSection(), path, "index section")
        try:
            indices = [IndexMetadata.from_proto(m) for m in section.indices]
            for index in indices:
                index.fragment_ids()  # a bitmap that does not decode is corruption
        except ValueError as exc:
            raise CorruptFileError(path, f"index section is invalid: {exc}") from None

    transaction, transaction_bytes = _embedded_transaction(
        data, manifest.transaction_section, path, with_transaction, decode_fragment or Fragment.from_proto
    )
    fragment_messages = None if decode_fragment else manifest_msg.fragments[:]
    return ManifestFile(path, len(data), footer, manifest, indices, transaction, transaction_bytes, fragment_messages)


def _embedded_transaction(
    data: bytes,
    position: int | None,
    path: str,
    decode: bool = True,
    decode_fragment: FragmentDecoder = Fragment.from_proto,
) -> tuple[Transaction | None, bytes | None]:
    """The transaction section at ``position`` (None: there is none), decoded
    (unless ``decode`` is False: None; its fragments through
    ``decode_fragment``), and its message bytes."""
    if position is None:
        return None, None
    what = "transaction section"
    transaction_bytes = read_section(data, position, path, what)
    message = _parse(transaction_pb2.Transaction(), transaction_bytes, path, what)
    return (Transaction.from_proto(message, path, decode_fragment) if decode else None), transaction_bytes


@dataclass
class ManifestHeader:
    """What a committer needs of a version it does not build on: the version
    number and the transaction (table format, "Conflict Resolution": a
    writer checks the *transactions* committed since its read version,
    commit.conservative-conflicts), without the fragments, schema and indices.

    Holds the file's bytes and its parsed manifest message, so that
    :meth:`decode` gives the whole :class:`ManifestFile` when a decision
    needs more (the latest version, the deletion files of a same-rows check)
    without reading or parsing the file again.
    """

    path: str
    version: int
    #: The manifest's ``transaction_file`` field ("" when it names none).
    transaction_file: str
    #: The embedded transaction; None when the manifest has no transaction section.
    transaction: Transaction | None
    transaction_bytes: bytes | None = dc_field(repr=False, compare=False)
    _data: bytes = dc_field(repr=False, compare=False)
    _footer: ManifestFooter = dc_field(repr=False, compare=False)
    _message: table_pb2.Manifest = dc_field(repr=False, compare=False)

    def decode(self) -> ManifestFile:
        """The whole manifest file (fragments, schema, indices)."""
        return _decode_parsed(self._data, self.path, self._footer, self._message)


def decode_manifest_header(data: bytes, path: str) -> ManifestHeader:
    """The version and transaction of a manifest file held in memory. The
    manifest message is parsed (protobuf), but none of its fragments are
    turned into :class:`~reference_impl.fragments.Fragment` objects: checking
    n newer versions of a table of f fragments costs n transaction decodes,
    not n * f fragment decodes."""
    footer = parse_footer(data, path)
    message = _decode_section(data, footer.manifest_position, table_pb2.Manifest(), path, "manifest")
    position = transaction_section_fields(message)["transaction_section"]
    transaction, transaction_bytes = _embedded_transaction(data, position, path)
    return ManifestHeader(
        path, message.version, message.transaction_file, transaction, transaction_bytes, data, footer, message
    )


#: No real manifest comes near this; a larger file is refused before reading.
MAX_MANIFEST_BYTES = 1 << 30


def read_manifest_file(
    storage: Storage,
    relpath: str,
    decode_fragment: FragmentDecoder = Fragment.from_proto,
    *,
    with_transaction: bool = True,
    with_fragments: bool = True,
) -> ManifestFile:
    """Read and decode ``relpath`` (a path relative to the dataset root).
    ``decode_fragment`` decodes each fragment message; a reader of many
    versions of one table (the validator's ``--all-versions``) passes one
    that keeps what it decoded by the message's bytes, so that a fragment
    listed unchanged by hundreds of manifests is decoded once and is one
    object in all of them. ``with_transaction`` and ``with_fragments`` as
    for :func:`decode_manifest_file`."""
    return decode_manifest_file(
        *_read_manifest_bytes(storage, relpath),
        decode_fragment,
        with_transaction=with_transaction,
        with_fragments=with_fragments,
    )


def read_manifest_header(storage: Storage, relpath: str) -> ManifestHeader:
    """Read ``relpath`` and decode its version and transaction only
    (:func:`decode_manifest_header`)."""
    return decode_manifest_header(*_read_manifest_bytes(storage, relpath))


def _read_manifest_bytes(storage: Storage, relpath: str) -> tuple[bytes, str]:
    """The bytes of the manifest file at ``relpath`` and its path for messages;
    a file too large for a manifest is refused before it is read."""
    path = storage.path_text(relpath)
    size = storage.size(relpath)
    if size > MAX_MANIFEST_BYTES:
        raise CorruptFileError(path, f"{size} bytes is too large for a manifest")
    return storage.read(relpath), path


def encode_manifest_file(
    manifest: Manifest,
    indices: list[IndexMetadata] | None = None,
    transaction: Transaction | None = None,
) -> bytes:
    """Lay out a manifest file: index section, transaction section, manifest,
    footer. Sets ``manifest.index_section`` and ``manifest.transaction_section``
    to the positions they get (or None when absent)."""
    return _encode(manifest, indices, transaction)[0]


def encode_manifest_file_as(
    path: str,
    manifest: Manifest,
    indices: list[IndexMetadata] | None = None,
    transaction: Transaction | None = None,
) -> tuple[bytes, ManifestFile]:
    """:func:`encode_manifest_file`, and the :class:`ManifestFile` a reader
    decoding those bytes at ``path`` gets, built from the objects encoded
    instead of decoding them again (a committer returns the version it has
    just written: decoding it would cost a fragment decode per fragment).
    Encoding is deterministic and every message type round-trips, so the
    two are equal (tests/reference_impl/commit/test_loop.py checks it)."""
    data, transaction_bytes = _encode(manifest, indices, transaction)
    manifest_file = ManifestFile(
        path,
        len(data),
        parse_footer(data, path),
        manifest,
        indices,
        transaction,
        transaction_bytes,
    )
    return data, manifest_file


def _encode(
    manifest: Manifest, indices: list[IndexMetadata] | None, transaction: Transaction | None
) -> tuple[bytes, bytes | None]:
    """The manifest file's bytes and the transaction section's message bytes."""
    out = bytearray()

    def append_section(payload: bytes) -> int:
        position = len(out)
        out.extend(LENGTH_PREFIX.pack(len(payload)))
        out.extend(payload)
        return position

    manifest.index_section = None
    if indices is not None:
        section = table_pb2.IndexSection(indices=[i.to_proto() for i in indices])
        manifest.index_section = append_section(section.SerializeToString(deterministic=True))
    manifest.transaction_section = None
    manifest.transaction_section_field = None
    transaction_bytes = None
    if transaction is not None:
        transaction_bytes = transaction.to_proto().SerializeToString(deterministic=True)
        manifest.transaction_section = append_section(transaction_bytes)
        manifest.transaction_section_field = 21
    position = append_section(manifest.to_proto().SerializeToString(deterministic=True))
    out.extend(FOOTER.pack(position, *WRITE_FOOTER_VERSION, MAGIC))
    return bytes(out), transaction_bytes
