"""The posting codecs of an INVERTED index's ``part_N_invert.lance`` (upstream
format/index/scalar/fts.md, "FTS List File Schema", names the columns and
``posting_block_size``; the byte layout below is what pylance 14 writes, read
from lance-index's ``scalar/inverted/encoding.rs`` and recorded in
docs/spec-discrepancies.md).

A token's posting list is its (document id, frequency) pairs in ascending
document id, cut into blocks of ``posting_block_size`` (128) documents, one
``_posting`` list entry per block. Each block of 128 starts with an f32 (the
block's best score):

* a full block then holds the first document id (u32), a bit width (u8)
  and the 128 document id deltas bit-packed (each id minus the one before,
  the first minus itself, so 0), then a bit width and the 128 frequencies
  bit-packed;
* the last block, when shorter, holds the rest with the ``posting_tail_codec``
  of the file's metadata: ``varint_delta_v1`` writes LEB128 varints of the
  ids as deltas (the first absolute) and then of the frequencies;
  ``fixed32_v1`` writes them as u32.

Bit packing is the ``bitpacking`` crate's BitPacker4x: 128 values in four
interleaved lanes (value ``i`` in lane ``i % 4``), each lane's 32 values
packed least significant bit first into 32-bit words, word ``w`` of lane
``j`` stored as the ``4w + j``-th u32; a width of ``b`` bits takes ``16b``
bytes.

Positions (``with_position``) are one byte stream per token
(``_compressed_position``) with the byte offset of each posting block's part
in ``_position_block_offset``. A block's part holds, document after
document, each document's positions as deltas (the first absolute): with
``packed_delta_v1`` in groups of 128 deltas (a bit width, then BitPacker4x
bits) and the remaining deltas as varints; with ``varint_doc_delta_v2`` all
as varints.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

import numpy as np

#: Documents per block that pylance 14 writes (and the only width read here).
BLOCK_SIZE = 128
_LANES = 4


class PostingFormatError(ValueError):
    """Bytes that do not decode under the posting layout."""


class TailCodec(enum.Enum):
    """How the last, partial posting block is written (``posting_tail_codec``)."""

    VARINT_DELTA = "varint_delta_v1"
    FIXED32 = "fixed32_v1"


class PositionsCodec(enum.Enum):
    """How a block's positions are written (``positions_codec``)."""

    PACKED_DELTA = "packed_delta_v1"
    VARINT_DOC_DELTA = "varint_doc_delta_v2"


def unpack_block(data: bytes, at: int, width: int) -> tuple[np.ndarray, int]:
    """128 values BitPacker4x-packed at ``width`` bits from ``data[at:]``;
    returns them (uint32) and the offset after them."""
    if width > 32:
        raise PostingFormatError(f"a bit width of {width} (32 at most)")
    size = 16 * width
    if at + size > len(data):
        raise PostingFormatError(f"{size} packed bytes at {at} run past the end ({len(data)} bytes)")
    if width == 0:
        return np.zeros(BLOCK_SIZE, dtype=np.uint32), at
    words = np.frombuffer(data, dtype="<u4", count=4 * width, offset=at).reshape(width, _LANES).astype(np.uint64)
    # Each value's bits start at k * width in its lane's stream of words; two
    # neighbouring words joined hold any value of up to 32 bits.
    padded = np.vstack([words, np.zeros((1, _LANES), dtype=np.uint64)])
    starts = np.arange(BLOCK_SIZE // _LANES, dtype=np.uint64) * np.uint64(width)
    first, shift = starts // np.uint64(32), starts % np.uint64(32)
    joined = padded[first.astype(np.intp)] | (padded[first.astype(np.intp) + 1] << np.uint64(32))
    values = (joined >> shift[:, None]) & np.uint64((1 << width) - 1)
    # values[k, lane] is value 4k + lane.
    return values.reshape(BLOCK_SIZE).astype(np.uint32), at + size


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    """A LEB128 u32 at ``data[at:]`` and the offset after it."""
    value = shift = 0
    while at < len(data):
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if value > 0xFFFFFFFF:
                raise PostingFormatError("a varint exceeds 32 bits")
            return value, at
        shift += 7
        if shift >= 35:
            raise PostingFormatError("a varint runs past 5 bytes")
    raise PostingFormatError("a varint runs past the end")


@dataclass(frozen=True)
class PostingList:
    """One token's postings, decoded."""

    doc_ids: np.ndarray
    frequencies: np.ndarray
    #: The f32 best score each block starts with.
    block_scores: tuple[float, ...]


def decode_posting_list(blocks: list[bytes], length: int, tail: TailCodec) -> PostingList:
    """The postings of one token from its ``_posting`` entries, ``length``
    (``_length``) documents in all."""
    full, rest = divmod(length, BLOCK_SIZE)
    expected = full + (1 if rest else 0)
    if len(blocks) != expected:
        raise PostingFormatError(f"{len(blocks)} blocks where {length} documents take {expected}")
    ids: list[np.ndarray] = []
    freqs: list[np.ndarray] = []
    scores: list[float] = []
    for number, block in enumerate(blocks):
        block = bytes(block)
        if len(block) < 4:
            raise PostingFormatError(f"block {number} has {len(block)} bytes, too few for its score")
        scores.append(struct.unpack_from("<f", block, 0)[0])
        if number < full:
            block_ids, block_freqs, end = _full_block(block, 4)
        else:
            block_ids, block_freqs, end = _tail_block(block, 4, rest, tail)
        if end != len(block):
            raise PostingFormatError(f"block {number} has {len(block) - end} bytes after its postings")
        ids.append(block_ids)
        freqs.append(block_freqs)
    empty = np.zeros(0, dtype=np.uint64)
    return PostingList(
        np.concatenate(ids) if ids else empty,
        np.concatenate(freqs) if freqs else empty,
        tuple(scores),
    )


def _full_block(block: bytes, at: int) -> tuple[np.ndarray, np.ndarray, int]:
    if at + 5 > len(block):
        raise PostingFormatError("a full block ends before its first document id and bit width")
    (first,) = struct.unpack_from("<I", block, at)
    deltas, at = unpack_block(block, at + 5, block[at + 4])
    if at >= len(block):
        raise PostingFormatError("a full block ends before its frequencies' bit width")
    frequencies, at = unpack_block(block, at + 1, block[at])
    ids = np.uint64(first) + np.cumsum(deltas.astype(np.uint64))
    return ids, frequencies.astype(np.uint64), at


def _tail_block(block: bytes, at: int, count: int, tail: TailCodec) -> tuple[np.ndarray, np.ndarray, int]:
    if tail is TailCodec.FIXED32:
        size = 8 * count
        if at + size > len(block):
            raise PostingFormatError(f"a fixed32 tail of {count} documents needs {size} bytes")
        fixed = np.frombuffer(block, dtype="<u4", count=2 * count, offset=at).astype(np.uint64)
        return fixed[:count], fixed[count:], at + size
    values = []
    for _ in range(2 * count):
        value, at = read_varint(block, at)
        values.append(value)
    ids = np.cumsum(np.asarray(values[:count], dtype=np.uint64))
    return ids, np.asarray(values[count:], dtype=np.uint64), at


def decode_block_positions(part: bytes, frequencies: np.ndarray, codec: PositionsCodec) -> list[np.ndarray]:
    """Each document's positions in one posting block's part of the
    position stream, given the block's frequencies."""
    total = int(frequencies.sum())
    deltas: list[int] = []
    at = 0
    if codec is PositionsCodec.PACKED_DELTA:
        for _ in range(total // BLOCK_SIZE):
            if at >= len(part):
                raise PostingFormatError("the position stream ends before a packed group")
            group, at = unpack_block(part, at + 1, part[at])
            deltas.extend(int(value) for value in group)
        tail = total % BLOCK_SIZE
    else:
        tail = total
    for _ in range(tail):
        value, at = read_varint(part, at)
        deltas.append(value)
    if at != len(part):
        raise PostingFormatError(f"{len(part) - at} bytes follow a block's positions")
    documents = []
    start = 0
    for frequency in frequencies.tolist():
        documents.append(np.cumsum(np.asarray(deltas[start : start + frequency], dtype=np.uint64)))
        start += frequency
    return documents
