"""The bloom filter index: per zone of rows (:mod:`.zones`), whether the zone
holds a null and a split block bloom filter of its other values, in one file,
``bloomfilter.lance`` (upstream protos/index.proto ``BloomFilterIndexDetails``,
an empty message; there is no page, so the layout below is what pylance 14
writes, recorded in docs/spec-discrepancies.md).

File: columns ``fragment_id``, ``zone_start``, ``zone_length`` (UInt64),
``has_null`` (Boolean) and ``bloom_filter_data`` (Binary, one filter per
zone); schema metadata ``bloomfilter_item`` (the rows per zone, which is also
the number of distinct values each filter is sized for), and
``bloomfilter_probability`` (the false positive probability it is sized
for), and the optional ``null_bitmap`` (:mod:`.zones`).

Filter: the split block bloom filter of Parquet (parquet-format
BloomFilter.md, "Split Block Bloom Filters"): a sequence of 32-byte blocks,
each eight little-endian 32-bit words. A value's 64-bit hash is XXH64 of its
bytes with seed 0 (:mod:`.xxhash64`); the hash's upper 32 bits pick the block
(``(upper * block_count) >> 32``), and its lower 32 bits set one bit in each
word: in word ``i``, bit ``(lower * SALT[i] mod 2**32) >> 27``. A value may be
in the filter when all eight of its bits are set. The bytes hashed are the
value's little-endian bytes at its Arrow width for integers, floats, dates,
times and timestamps, and the value's own bytes for strings (UTF-8) and
binary values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..index_metadata import IndexMetadata
from .files import IndexFileContents, IndexFormatError, read_index_file
from .xxhash64 import xxh64_rows
from .zones import Zones, read_null_rows, read_zones

if TYPE_CHECKING:
    from ..dataset import Dataset

BLOOM_FILTER_FILE = "bloomfilter.lance"
ITEMS_KEY = "bloomfilter_item"
PROBABILITY_KEY = "bloomfilter_probability"
HAS_NULL = "has_null"
FILTER_DATA = "bloom_filter_data"
#: pylance 14's defaults, which a file without the keys was built with.
DEFAULT_ITEMS = 8192
DEFAULT_PROBABILITY = 0.00057

#: Parquet's eight odd constants, one per word of a block.
SALT = np.array(
    [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31], dtype=np.uint32
)
WORDS_PER_BLOCK = 8
BLOCK_BYTES = 4 * WORDS_PER_BLOCK


class BloomFilterError(ValueError):
    """Bytes that are not a split block bloom filter, or values of a type the
    index does not hash."""


@dataclass(frozen=True)
class SplitBlockBloomFilter:
    """One zone's filter: ``blocks`` is a ``(block_count, 8)`` uint32 array."""

    blocks: np.ndarray

    @classmethod
    def from_bytes(cls, raw: bytes) -> SplitBlockBloomFilter:
        if not raw or len(raw) % BLOCK_BYTES:
            raise BloomFilterError(f"{len(raw)} bytes is not a positive multiple of the {BLOCK_BYTES}-byte block")
        return cls(np.frombuffer(raw, dtype="<u4").astype(np.uint32).reshape(-1, WORDS_PER_BLOCK))

    @classmethod
    def empty(cls, block_count: int) -> SplitBlockBloomFilter:
        return cls(np.zeros((block_count, WORDS_PER_BLOCK), dtype=np.uint32))

    def to_bytes(self) -> bytes:
        return self.blocks.astype("<u4").tobytes()

    def block_of(self, hashes: np.ndarray) -> np.ndarray:
        """The block each hash falls in."""
        upper = np.asarray(hashes, dtype=np.uint64) >> np.uint64(32)
        return ((upper * np.uint64(len(self.blocks))) >> np.uint64(32)).astype(np.intp)

    @staticmethod
    def masks(hashes: np.ndarray) -> np.ndarray:
        """The eight words of set bits of each hash, ``(len(hashes), 8)``."""
        lower = (np.asarray(hashes, dtype=np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return np.left_shift(np.uint32(1), (lower[:, None] * SALT[None, :]) >> np.uint32(27))

    def might_contain(self, hashes: np.ndarray) -> np.ndarray:
        """Whether each hash may have been inserted (False: certainly not)."""
        hashes = np.asarray(hashes, dtype=np.uint64)
        if not len(hashes):
            return np.zeros(0, dtype=bool)
        words = self.blocks[self.block_of(hashes)]
        return ((words & self.masks(hashes)) != 0).all(axis=1)

    def with_inserted(self, hashes: np.ndarray) -> SplitBlockBloomFilter:
        """A copy of this filter with ``hashes`` inserted."""
        hashes = np.asarray(hashes, dtype=np.uint64)
        blocks = self.blocks.copy()
        np.bitwise_or.at(blocks, self.block_of(hashes), self.masks(hashes))
        return SplitBlockBloomFilter(blocks)


# -- the bytes of values --------------------------------------------------------


def _fixed_width(data_type: pa.DataType) -> bool:
    return (
        pa.types.is_integer(data_type)
        or data_type in (pa.float32(), pa.float64())
        or pa.types.is_date(data_type)
        or pa.types.is_time(data_type)
        or pa.types.is_timestamp(data_type)
    )


def _variable_width(data_type: pa.DataType) -> bool:
    return (
        pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_binary(data_type)
        or pa.types.is_large_binary(data_type)
    )


def hashes_type(data_type: pa.DataType) -> bool:
    """Whether the index hashes values of ``data_type`` (what pylance 14
    builds bloom filters over)."""
    return _fixed_width(data_type) or _variable_width(data_type)


def value_hashes(values: pa.Array) -> np.ndarray:
    """The hash of every value (uint64; 0 where the value is null, which the
    filter does not hold)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not hashes_type(values.type):
        raise BloomFilterError(f"the bloom filter index does not hash values of type {values.type}")
    count = len(values)
    if _fixed_width(values.type):
        width = values.type.bit_width // 8
        raw = np.frombuffer(values.buffers()[1], dtype=np.uint8)
        matrix = raw[values.offset * width : (values.offset + count) * width].reshape(count, width)
        hashes = xxh64_rows(matrix)
    else:
        offset_type = np.int64 if values.type in (pa.large_string(), pa.large_binary()) else np.int32
        offsets = np.frombuffer(values.buffers()[1], dtype=offset_type)[values.offset : values.offset + count + 1]
        data = values.buffers()[2]
        data_bytes = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
        starts, lengths = offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64)
        hashes = np.zeros(count, dtype=np.uint64)
        # One vectorised hash per distinct length: the rows of one length
        # form a byte matrix.
        for length in np.unique(lengths):
            rows = np.flatnonzero(lengths == length)
            matrix = data_bytes[starts[rows, None] + np.arange(int(length))[None, :]].reshape(len(rows), int(length))
            hashes[rows] = xxh64_rows(matrix)
    if values.null_count:
        hashes[np.asarray(values.is_null())] = 0
    return hashes


# -- the file -------------------------------------------------------------------


@dataclass(frozen=True)
class BloomFilterIndex:
    """One segment's ``bloomfilter.lance``, decoded."""

    path: str
    number_of_items: int
    probability: float
    zones: Zones
    has_null: np.ndarray
    filters: tuple[SplitBlockBloomFilter, ...]
    #: Row addresses of the null rows, or None when the file records none.
    null_rows: np.ndarray | None


def _number(contents: IndexFileContents, key: str, default, parse):
    if key not in contents.metadata:
        return default
    text = contents.text(key)
    try:
        return parse(text)
    except ValueError:
        raise IndexFormatError(contents.path, f"{key} is {text!r}, not a number") from None


def bloom_filter_of(contents: IndexFileContents) -> BloomFilterIndex:
    """Decode a ``bloomfilter.lance`` already read; :class:`IndexFormatError`
    when it does not hold the layout described above."""
    number_of_items = _number(contents, ITEMS_KEY, DEFAULT_ITEMS, int)
    probability = _number(contents, PROBABILITY_KEY, DEFAULT_PROBABILITY, float)
    if number_of_items <= 0 or not 0.0 < probability < 1.0:
        raise IndexFormatError(contents.path, f"{ITEMS_KEY}={number_of_items}, {PROBABILITY_KEY}={probability}")
    has_null = contents.column(HAS_NULL)
    if has_null.type != pa.bool_() or has_null.null_count:
        raise IndexFormatError(contents.path, f"{HAS_NULL} must be booleans without nulls, not {has_null.type}")
    data = contents.column(FILTER_DATA)
    if not (pa.types.is_binary(data.type) or pa.types.is_large_binary(data.type)) or data.null_count:
        raise IndexFormatError(contents.path, f"{FILTER_DATA} must be binary values without nulls, not {data.type}")
    filters = []
    for zone, raw in enumerate(data.to_pylist()):
        try:
            filters.append(SplitBlockBloomFilter.from_bytes(raw))
        except BloomFilterError as exc:
            raise IndexFormatError(contents.path, f"the filter of zone {zone}: {exc}") from None
    return BloomFilterIndex(
        contents.path,
        number_of_items,
        probability,
        read_zones(contents),
        np.asarray(has_null.to_numpy(zero_copy_only=False), dtype=bool),
        tuple(filters),
        read_null_rows(contents),
    )


def read_bloom_filter(dataset: Dataset, index: IndexMetadata) -> BloomFilterIndex:
    """The bloom filter index of segment ``index`` of ``dataset``."""
    return bloom_filter_of(read_index_file(dataset, index, BLOOM_FILTER_FILE))
