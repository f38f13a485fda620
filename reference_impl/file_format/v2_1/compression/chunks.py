"""The buffers of every mini block chunk of a page, decoded together
(encoding.md, "Mini Block Page Layout": a page's chunks share its
encoding).

Decoding chunk by chunk costs a few numpy calls per chunk, and a page holds
thousands of chunks of a few hundred values each. A scheme module may
therefore also expose ``decode_chunks(node, buffers, counts, decoder)``: the
same decoding over one buffer of every chunk at once (a
:class:`ChunkBuffers`), ``counts[k]`` values for chunk ``k``, yielding the
values of all chunks one after the other. It makes the checks ``decode``
makes, vectorized over the chunks; where a check looks at each chunk's
buffer on its own, its error names the first chunk that fails it. A node it
does not handle (a form the chunks cannot share, or one whose errors only
the chunk by chunk path reports) raises :class:`ChunkByChunk` before it
reads anything, and the page is then decoded one chunk at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class ChunkByChunk(Exception):
    """An encoding (named by the message) that is decoded one chunk at a time."""


@dataclass(frozen=True)
class ChunkBuffers:
    """One buffer of every chunk of a page: chunk ``k``'s is
    ``data[starts[k] : starts[k] + sizes[k]]``. The ranges lie inside
    ``data``, in chunk order and apart (each within its own chunk)."""

    data: np.ndarray  # uint8: the page's chunks
    starts: np.ndarray  # int64
    sizes: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.starts)

    def buffer(self, chunk: int) -> memoryview:
        """Chunk ``chunk``'s buffer, for decoding it on its own."""
        start = int(self.starts[chunk])
        return self.data[start : start + int(self.sizes[chunk])].data

    def part(self, skip: np.ndarray | int, sizes: np.ndarray) -> ChunkBuffers:
        """``sizes[k]`` bytes of each buffer from its byte ``skip[k]``
        (callers keep them inside the buffer)."""
        return ChunkBuffers(self.data, self.starts + skip, np.asarray(sizes, dtype=np.int64))

    def select(self, chunks: np.ndarray) -> ChunkBuffers:
        """The buffers of some chunks (indices in ascending order)."""
        return ChunkBuffers(self.data, self.starts[chunks], self.sizes[chunks])

    def joined(self) -> np.ndarray:
        """The buffers' bytes one after the other, in one array."""
        return gather_ranges(self.data, self.starts, self.sizes)

    def leading(self, dtype: np.dtype) -> np.ndarray:
        """The first value of type ``dtype`` of every buffer (callers
        checked that each buffer holds one)."""
        positions = self.starts[:, None] + np.arange(dtype.itemsize)
        return self.data[positions].reshape(-1).view(dtype)


def first(flags: np.ndarray) -> int | None:
    """The first chunk whose flag is set, or None."""
    found = np.flatnonzero(flags)
    return int(found[0]) if len(found) else None


def segment_starts(lengths: np.ndarray) -> np.ndarray:
    """Where each of consecutive segments of ``lengths`` begins."""
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def gather_ranges(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``data[starts[k] : starts[k] + lengths[k]]`` for every ``k`` (``data``
    of bytes), one after the other, in one pass over ``data``: a mask of the
    bytes kept, built as runs (gap, range, gap, ...) by one ``np.repeat``,
    then one boolean index. The ranges must be in order and apart
    (``ValueError`` otherwise: a caller's mistake, never the file's)."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(starts) == 0:
        return np.zeros(0, dtype=data.dtype)
    ends = starts + lengths
    if np.any(lengths < 0) or starts[0] < 0 or np.any(starts[1:] < ends[:-1]) or ends[-1] > len(data):
        raise ValueError("ranges to gather are out of order, overlap or leave the buffer")
    # Whole words where every range allows it: an eighth of the mask.
    unit = _common_unit(starts, ends)
    words = data[: len(data) - len(data) % unit].view(f"<u{unit}") if unit > 1 else data
    runs = np.empty(2 * len(starts) + 1, dtype=np.int64)
    runs[0] = starts[0]
    runs[2:-1:2] = starts[1:] - ends[:-1]
    runs[1::2] = lengths
    runs[-1] = len(words) * unit - ends[-1]
    kept = np.zeros(len(runs), dtype=np.bool_)
    kept[1::2] = True
    return words[np.repeat(kept, runs // unit)].view(data.dtype)


def _common_unit(starts: np.ndarray, ends: np.ndarray) -> int:
    bits = np.bitwise_or.reduce(starts) | np.bitwise_or.reduce(ends) if len(starts) else 0
    for unit in (8, 4, 2):
        if bits % unit == 0:
            return unit
    return 1


class ChunkCursor:
    """The buffers of every chunk, handed out in order (one
    :class:`ChunkBuffers` per buffer of a chunk)."""

    def __init__(self, buffers: Sequence[ChunkBuffers]):
        self._buffers = list(buffers)
        self._next = 0

    def take(self, what: str) -> ChunkBuffers:
        """The next buffer of every chunk; a chunk without it goes chunk by
        chunk, where the error names it."""
        if self._next >= len(self._buffers):
            raise ChunkByChunk(f"{what} past the chunks' buffers")
        buffers = self._buffers[self._next]
        self._next += 1
        return buffers

    def give_back(self, buffers: ChunkBuffers) -> None:
        """Put ``buffers`` in place of the ones last taken (general
        compression hands its inner encoding the decompressed buffers)."""
        self._next -= 1
        self._buffers[self._next] = buffers
