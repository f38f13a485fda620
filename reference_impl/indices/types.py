"""Index types and the compatibility check a reader makes before using a
segment (upstream format/index/index.md, "Index Compatibility").

A segment's ``index_details`` is a protobuf ``Any``; the message name at the
end of its type URL says which index type it is. A reader skips a segment
whose type it does not know, or whose ``index_version`` is newer than the
versions it reads, and scans the fragments that segment covers instead.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..index_metadata import IndexMetadata


class IndexType(enum.Enum):
    """The index types the upstream index pages specify, by the name of their
    details message (the type URL's last component, compared ignoring case,
    as type URLs are)."""

    BTREE = "BTreeIndexDetails"
    BITMAP = "BitmapIndexDetails"
    LABEL_LIST = "LabelListIndexDetails"
    ZONEMAP = "ZoneMapIndexDetails"
    BLOOM_FILTER = "BloomFilterIndexDetails"
    NGRAM = "NGramIndexDetails"
    INVERTED = "InvertedIndexDetails"
    JSON = "JsonIndexDetails"
    VECTOR = "VectorIndexDetails"
    FRAGMENT_REUSE = "FragmentReuseIndexDetails"
    MEM_WAL = "MemWalIndexDetails"
    MINHASH_LSH = "MinHashLshIndexDetails"
    RTREE = "RTreeIndexDetails"

    @classmethod
    def of(cls, index: IndexMetadata) -> IndexType | None:
        """The type of a segment, or None for a type URL naming no type
        specified here (or no details at all: segments of early releases)."""
        if not index.type_url:
            return None
        message = index.type_url.rsplit("/", 1)[-1].rsplit(".", 1)[-1].lower()
        return _BY_MESSAGE.get(message)


_BY_MESSAGE = {member.value.lower(): member for member in IndexType}


class Usability(enum.Enum):
    """Whether a reader may use a segment, and why not."""

    USABLE = "usable"
    UNKNOWN_TYPE = "unknown type"
    UNKNOWN_VERSION = "unknown version"
    #: No ``index_version`` recorded: a segment of a release from before
    #: index versions were recorded (pylance 0.20 writes none), whose layout
    #: the version cannot tell; read as an unknown version.
    UNVERSIONED = "no index_version recorded"


#: The newest ``index_version`` of each type the reference reads (its module
#: under this package reads the files); a segment recording a newer one is
#: skipped as the page says, and so is a type missing here.
READ_VERSIONS: dict[IndexType, int] = {
    IndexType.INVERTED: 2,  # .inverted (posting format_version 2, blocks of 128)
    IndexType.NGRAM: 1,  # .ngram (0: row ids, 1: row addresses)
    IndexType.JSON: 0,  # .json_index (details; the files are the target's)
    # IVF (FLAT, PQ, SQ, HNSW; RabitQ's structure): pylance 14 records 1, and 2 for IVF_RQ.
    IndexType.VECTOR: 2,
    IndexType.ZONEMAP: 0,
    IndexType.BLOOM_FILTER: 0,
    IndexType.BTREE: 1,  # btree.py
    IndexType.BITMAP: 1,  # .bitmap: row ids before version 1, row addresses from it
    IndexType.LABEL_LIST: 2,  # .label_list: row ids before version 2, row addresses from it
    # .minhash_lsh: pylance 14 records 0 (stored row ids); 1 is the page's layout (row addresses).
    IndexType.MINHASH_LSH: 1,
    # .rtree: row ids before version 1, row addresses from it; pylance 14 records 0 (row ids,
    # equal to row addresses without stable row ids).
    IndexType.RTREE: 1,
}


@dataclass(frozen=True)
class Compatibility:
    index_type: IndexType | None
    usability: Usability

    @property
    def usable(self) -> bool:
        return self.usability is Usability.USABLE


def compatibility(index: IndexMetadata) -> Compatibility:
    """Whether the reference can use ``index`` (index.md, "Index Compatibility":
    check the type, then the version)."""
    index_type = IndexType.of(index)
    if index_type is None or index_type not in READ_VERSIONS:
        return Compatibility(index_type, Usability.UNKNOWN_TYPE)
    if index.index_version is None:
        return Compatibility(index_type, Usability.UNVERSIONED)
    if index.index_version > READ_VERSIONS[index_type]:
        return Compatibility(index_type, Usability.UNKNOWN_VERSION)
    return Compatibility(index_type, Usability.USABLE)
