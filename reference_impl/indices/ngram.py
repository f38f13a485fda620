"""NGRAM segments as plain data, and the trigrams of a value (upstream
format/index/scalar/ngram.md).

``ngram_postings.lance`` has one row per token: ``tokens`` (u32, a hashed
trigram) and ``posting_list``, the rows holding it as a serialized
``RoaringTreemap`` (the ``roaring`` crate's 64-bit set: a u64 count of
32-bit bitmaps, then for each in ascending order a u32 holding the high 32
bits of its members and a 32-bit Roaring bitmap in the portable format). The
members are row addresses, or row ids in a segment of ``index_version`` 0
(the page); the layout of the treemap is recorded in
docs/spec-discrepancies.md.

The trigrams of a value (lance-index ``scalar/ngram.rs``, which the page
summarises as "all 3-character sequences in the text after applying ASCII
folding and lowercasing"): the whole value lower-cased and ASCII-folded,
every run of three consecutive characters kept when all three are ASCII
letters or digits. A trigram's token is ``37² c₀ + 37 c₁ + c₂``, where a
digit ``d`` counts ``d + 1`` and a letter its place in the alphabet plus 10
(``a`` = 11). Null values are indexed under token 0; a value without
trigrams under no token.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from pyroaring import BitMap

from ..index_metadata import IndexMetadata
from .files import IndexFormatError, read_index_file

if TYPE_CHECKING:
    from ..dataset import Dataset

POSTINGS_FILE = "ngram_postings.lance"
#: The token of null values.
NULL_TOKEN = 0
#: The newest ``index_version`` read: 0 stores row ids, 1 row addresses.
NEWEST_VERSION = 1
_SPAN = 37
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
#: A posting list claiming more rows than this is refused before expansion.
MAX_ROWS = 1 << 31


class TreemapError(ValueError):
    """Bytes that are not a serialized RoaringTreemap."""


def token_of(trigram: str) -> int:
    """The token of a trigram of ASCII letters and digits (lower case)."""
    token = 0
    for character in trigram:
        token = token * _SPAN + _ALPHABET.index(character) + 1
    return token


def trigram_of(token: int) -> str:
    """The trigram a token stands for ("" for the null token)."""
    out = []
    for _ in range(3):
        token, digit = divmod(token, _SPAN)
        if digit:
            out.append(_ALPHABET[digit - 1])
    return "".join(reversed(out))


def trigram_tokens(value: str) -> set[int] | None:
    """The tokens of a value, or None when the value holds characters other
    than ASCII (their folding is lance's table, which the page does not
    give: such a value is not checked)."""
    if not value.isascii():
        return None
    text = value.lower()
    found = set()
    for start in range(len(text) - 2):
        trigram = text[start : start + 3]
        if trigram.isalnum():
            found.add(token_of(trigram))
    return found


def _portable_size(raw: bytes, at: int) -> int:
    """The byte length of the 32-bit Roaring bitmap (portable format) at ``raw[at:]``."""
    start = at

    def take(size: int) -> int:
        nonlocal at
        if at + size > len(raw):
            raise TreemapError("a bitmap runs past the end")
        at += size
        return at - size

    (cookie,) = struct.unpack_from("<I", raw, take(4))
    runs = b""
    if cookie & 0xFFFF == 12347:
        count = (cookie >> 16) + 1
        runs = raw[take((count + 7) // 8) : at]
    elif cookie == 12346:
        (count,) = struct.unpack_from("<I", raw, take(4))
    else:
        raise TreemapError(f"a bitmap starts with the unknown cookie {cookie:#x}")
    if count > 1 << 16:
        raise TreemapError(f"a bitmap claims {count} containers")
    header = raw[take(4 * count) : at]
    if not runs or count >= 4:
        take(4 * count)  # container offsets
    for number in range(count):
        (cardinality,) = struct.unpack_from("<H", header, 4 * number + 2)
        if runs and runs[number // 8] >> (number % 8) & 1:
            (run_count,) = struct.unpack_from("<H", raw, take(2))
            take(4 * run_count)
        elif cardinality + 1 > 4096:
            take(8192)
        else:
            take(2 * (cardinality + 1))
    return at - start


def decode_treemap(raw: bytes, *, max_rows: int = MAX_ROWS) -> np.ndarray:
    """The members of a serialized RoaringTreemap, ascending (uint64)."""
    raw = bytes(raw)
    if len(raw) < 8:
        raise TreemapError(f"{len(raw)} bytes cannot hold the bitmap count")
    (count,) = struct.unpack_from("<Q", raw, 0)
    at, previous, total = 8, -1, 0
    parts = []
    for number in range(count):
        if at + 4 > len(raw):
            raise TreemapError(f"bitmap {number} of {count} starts past the end")
        (high,) = struct.unpack_from("<I", raw, at)
        if high <= previous:
            raise TreemapError(f"high keys are not ascending ({high} after {previous})")
        try:
            size = _portable_size(raw, at + 4)
            members = BitMap.deserialize(raw[at + 4 : at + 4 + size])
        except (TreemapError, struct.error) as exc:
            raise TreemapError(f"bitmap {number}: {exc}") from None
        except Exception as exc:  # pyroaring raises several types on bad input
            raise TreemapError(f"bitmap {number} does not decode: {exc}") from None
        total += len(members)
        if total > max_rows:
            raise TreemapError(f"holds more than {max_rows} rows")
        parts.append(np.asarray(members.to_array(), dtype=np.uint64) | np.uint64(high << 32))
        at += 4 + size
        previous = high
    if at != len(raw):
        raise TreemapError(f"{len(raw) - at} bytes follow the last bitmap")
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


@dataclass(frozen=True)
class NGramSegment:
    #: Token per row of the file (None where the column is null).
    tokens: tuple[int | None, ...]
    #: The rows of each token, ascending (row addresses, or row ids at version 0).
    postings: tuple[np.ndarray, ...]
    #: Whether the postings hold row addresses (False: row ids).
    row_addresses: bool


def read_ngram(dataset: Dataset, index: IndexMetadata) -> NGramSegment:
    """The segment ``index`` of ``dataset``, decoded (:class:`IndexFormatError`
    when the file does not hold what the layout says)."""
    contents = read_index_file(dataset, index, POSTINGS_FILE)
    tokens = contents.column("tokens").to_pylist()
    lists = contents.column("posting_list")
    postings = []
    for row, raw in enumerate(lists.to_pylist()):
        if raw is None:
            raise IndexFormatError(contents.path, f"posting_list is null in row {row}")
        try:
            postings.append(decode_treemap(raw))
        except TreemapError as exc:
            raise IndexFormatError(contents.path, f"posting_list of row {row}: {exc}") from None
    return NGramSegment(tuple(tokens), tuple(postings), (index.index_version or 0) >= 1)
