"""Index metadata (table format: IndexMetadata, IndexSection) and the
fragment reuse index.

The reference implementation treats index payloads as opaque: it reads and
writes the metadata a manifest keeps about each index, not the index files.
The one index whose content it reads is the fragment reuse index, a system
index whose details (kept in the manifest) record how compactions moved
rows, so that the coverage of other indices can be translated as readers
translate it (:func:`covered_fragment_ids`).
"""

from __future__ import annotations

import uuid as uuid_module
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field

from google.protobuf.message import DecodeError
from pyroaring import BitMap

from .wire import table_pb2


def uuid_from_bytes(raw: bytes) -> str:
    """The hyphenated form of a 16-byte ``UUID`` message payload."""
    if len(raw) != 16:
        raise ValueError(f"a UUID holds 16 bytes, not {len(raw)}")
    return str(uuid_module.UUID(bytes=bytes(raw)))


#: A Roaring bitmap of a few bytes can hold four billion ids; no table has
#: this many fragments, so a larger bitmap is refused before it is expanded.
MAX_BITMAP_FRAGMENTS = 1 << 24


def decode_fragment_bitmap(raw: bytes) -> list[int]:
    """Fragment ids of a serialized 32-bit Roaring bitmap, ascending.

    Raises ``ValueError`` when the bytes are not a valid bitmap, or when it
    holds more ids than :data:`MAX_BITMAP_FRAGMENTS`.
    """
    if not raw:
        return []
    try:
        bitmap = BitMap.deserialize(bytes(raw))
    except Exception as exc:  # pyroaring raises several types on bad input
        raise ValueError(f"not a serialized 32-bit Roaring bitmap: {exc}") from None
    if len(bitmap) > MAX_BITMAP_FRAGMENTS:
        raise ValueError(f"the bitmap holds {len(bitmap)} fragment ids, more than any table has")
    return list(bitmap)


def encode_fragment_bitmap(fragment_ids) -> bytes:
    return BitMap(sorted(fragment_ids)).serialize()


@dataclass
class IndexFile:
    path: str
    size_bytes: int


@dataclass
class IndexMetadata:
    uuid: str
    name: str
    fields: list[int]
    dataset_version: int
    fragment_bitmap: bytes | None = None
    type_url: str | None = None
    details: bytes = b""
    index_version: int | None = None
    created_at: int | None = None
    base_id: int | None = None
    files: list[IndexFile] = dc_field(default_factory=list)

    def fragment_ids(self) -> list[int] | None:
        """Covered fragment ids, or None when the manifest records no bitmap."""
        if self.fragment_bitmap is None:
            return None
        return decode_fragment_bitmap(self.fragment_bitmap)

    @classmethod
    def from_proto(cls, msg: table_pb2.IndexMetadata) -> IndexMetadata:
        """Decode; raises ``ValueError`` on a malformed UUID."""
        return cls(
            uuid=uuid_from_bytes(msg.uuid.uuid),
            name=msg.name,
            fields=list(msg.fields),
            dataset_version=msg.dataset_version,
            fragment_bitmap=bytes(msg.fragment_bitmap) if msg.fragment_bitmap else None,
            type_url=msg.index_details.type_url if msg.HasField("index_details") else None,
            details=bytes(msg.index_details.value) if msg.HasField("index_details") else b"",
            index_version=msg.index_version if msg.HasField("index_version") else None,
            created_at=msg.created_at if msg.HasField("created_at") else None,
            base_id=msg.base_id if msg.HasField("base_id") else None,
            files=[IndexFile(f.path, f.size_bytes) for f in msg.files],
        )

    def to_proto(self) -> table_pb2.IndexMetadata:
        msg = table_pb2.IndexMetadata(
            name=self.name,
            fields=self.fields,
            dataset_version=self.dataset_version,
            fragment_bitmap=self.fragment_bitmap or b"",
            files=[table_pb2.IndexFile(path=f.path, size_bytes=f.size_bytes) for f in self.files],
        )
        msg.uuid.uuid = uuid_module.UUID(self.uuid).bytes
        if self.type_url is not None:
            msg.index_details.type_url = self.type_url
            msg.index_details.value = self.details
        if self.index_version is not None:
            msg.index_version = self.index_version
        if self.created_at is not None:
            msg.created_at = self.created_at
        if self.base_id is not None:
            msg.base_id = self.base_id
        return msg


# -- the fragment reuse index (upstream format/index/system/frag_reuse.md) ----------------

#: The name of the fragment reuse index, a system index of which a version
#: has at most one.
FRAGMENT_REUSE_INDEX_NAME = "__lance_frag_reuse"

#: The largest external content of a fragment reuse index read here; the
#: page keeps small histories inline and a history this large is refused
#: before it is loaded.
MAX_REUSE_CONTENT_BYTES = 64 << 20


@dataclass(frozen=True)
class FragmentRewrite:
    """One rewrite a fragment reuse index records: the fragments it read
    and the fragments it wrote in their place."""

    sources: frozenset[int]
    destinations: frozenset[int]


def fragment_rewrites(index: IndexMetadata, read: Callable[[str, int, int], bytes]) -> list[FragmentRewrite]:
    """The rewrites the fragment reuse index ``index`` records, in the order
    they were committed (by the dataset version of each reuse version).

    ``read(path, offset, size)`` reads the content kept in an external file
    (a path relative to the table root). The page keeps that content in
    ``_indices/<uuid of the reuse index>/details.binpb``, and pylance 14
    resolves the recorded path in that directory, as is done here. Only the legacy groups of index
    version 0 (``InlineContent.versions``) are known to the reference's
    table.proto; transitions of index version 1 are skipped, which the page
    allows a reader to do (it then translates less). Raises ``ValueError``
    for details that do not decode."""
    details = table_pb2.FragmentReuseIndexDetails()
    try:
        details.ParseFromString(index.details)
        content = details.inline
        if details.WhichOneof("content") == "external":
            external = details.external
            if external.size > MAX_REUSE_CONTENT_BYTES:
                raise ValueError(f"its external content of {external.size} bytes is more than is read here")
            content = table_pb2.FragmentReuseIndexDetails.InlineContent()
            path = f"_indices/{index.uuid}/{external.path}"
            content.ParseFromString(read(path, external.offset, external.size))
    except (DecodeError, RecursionError) as exc:
        raise ValueError(f"the fragment reuse index details do not decode: {exc}") from None
    versions = sorted(content.versions, key=lambda version: version.dataset_version)
    return [
        FragmentRewrite(
            sources=frozenset(f.id for f in group.old_fragments),
            destinations=frozenset(f.id for f in group.new_fragments),
        )
        for version in versions
        for group in version.groups
    ]


def translated_fragment_ids(stored: list[int] | None, rewrites: list[FragmentRewrite]) -> list[int] | None:
    """The fragments an index covers once the rewrites recorded since it was
    built are applied (the page's compaction use case: the index's entries
    for rewritten fragments are translated to the fragments written in
    their place). A rewrite all of whose sources the index covers moves its
    coverage to the destinations; one it covers only partly takes those
    sources away and adds nothing, since the destinations then hold rows the
    index never saw (what Lance does). None (no bitmap stored) stays None."""
    if stored is None:
        return None
    covered = set(stored)
    for rewrite in rewrites:
        if not rewrite.sources or not rewrite.sources & covered:
            continue
        whole = rewrite.sources <= covered
        covered -= rewrite.sources
        if whole:
            covered |= rewrite.destinations
    return sorted(covered)


def covered_fragment_ids(
    indices: list[IndexMetadata], read: Callable[[str, int, int], bytes]
) -> dict[str, list[int] | None]:
    """The fragments each index of a version covers as readers see them, by
    uuid: the stored bitmap, translated through the version's fragment reuse
    index when there is one. The reuse index's own bitmap (the fragments its
    rewrites wrote) is translated too, as pylance 14 does: a fragment it
    names that a later rewrite consumed is gone from it. Raises
    ``ValueError`` for a bitmap or fragment reuse details that do not
    decode."""
    reuse = [index for index in indices if index.name == FRAGMENT_REUSE_INDEX_NAME]
    rewrites = [rewrite for index in reuse for rewrite in fragment_rewrites(index, read)]
    return {index.uuid: translated_fragment_ids(index.fragment_ids(), rewrites) for index in indices}
