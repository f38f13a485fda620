"""Index segments as a manifest records them (upstream format/index/index.md,
"Basic Concepts" and "Loading an index"; table.proto ``IndexSection``,
``IndexMetadata``): the uuid naming the segment's directory, the fields it
is keyed on, the fragments it covers (a serialized 32-bit Roaring bitmap),
the details identifying its type, and its files.
"""

from __future__ import annotations

import uuid as uuid_module
from dataclasses import dataclass
from dataclasses import field as dc_field

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

#: The directory under a base path holding one directory per segment uuid
#: (index.md, "Index Storage").
INDICES_DIR = "_indices"


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
