"""What every compression scheme module shares: the buffers it reads, the
context it is decoded in, and the errors it raises (encoding.md,
"Compression").

A scheme module exposes ``decode(node, buffers, num_values, decoder)``:
``node`` is its message (the chosen field of ``CompressiveEncoding``),
``buffers`` a :class:`BufferCursor` from which it takes its buffers in order
(a scheme with children lets them take theirs), and ``decoder`` the
:class:`ValueDecoder` that decodes child encodings and builds errors naming
the file. Every length, count and offset a scheme reads is checked against
its buffers before anything is allocated. A scheme may also define
``decode_chunks``, the same decoding over every chunk of a mini block page
at once (:mod:`.chunks`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field

import numpy as np
from google.protobuf.unknown_fields import UnknownFieldSet

from ....errors import CorruptFileError, UnsupportedFeatureError
from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues
from .chunks import ChunkByChunk, ChunkCursor


class ValueContext(enum.Enum):
    """Where the values being decoded are stored; some schemes lay out their
    buffers differently per context (encoding.md, the compression table)."""

    #: One chunk of a mini block page: the chunk's value buffers.
    MINI_BLOCK = "mini block"
    #: One whole buffer of a page (a dictionary, levels of a constant page).
    BLOCK = "block"
    #: The values of a full zip page, already unzipped (one per value).
    FULL_ZIP = "full zip"


class BufferCursor:
    """The buffers of one decode, handed out in order."""

    def __init__(self, buffers: Sequence[memoryview], decoder: ValueDecoder):
        self._buffers = list(buffers)
        self._next = 0
        self._decoder = decoder

    def take(self, what: str) -> np.ndarray:
        """The next buffer as uint8, or a corruption error naming ``what``."""
        if self._next >= len(self._buffers):
            raise self._decoder.corrupt(f"{what} needs buffer {self._next} but only {len(self._buffers)} are stored")
        buffer = self._buffers[self._next]
        self._next += 1
        return np.frombuffer(buffer, dtype=np.uint8)

    def give_back(self, buffer: np.ndarray) -> None:
        """Put ``buffer`` in place of the one last taken: a wrapper such as
        general compression hands its inner encoding the undone buffer."""
        if self._next == 0:
            raise self._decoder.corrupt("a buffer given back before any was taken")
        self._next -= 1
        self._buffers[self._next] = buffer.data

    @property
    def remaining(self) -> int:
        return len(self._buffers) - self._next


SchemeDecoder = Callable[..., DecodedValues]
#: ``decode_chunks`` of a scheme (:mod:`.chunks`).
ChunkSchemeDecoder = Callable[..., DecodedValues]

# Bytes general compression may produce for one page.
PAGE_DECOMPRESSED_BYTES = 1 << 28


@dataclass
class DecompressionBudget:
    """Bytes general compression may still produce for one page."""

    remaining: int = PAGE_DECOMPRESSED_BYTES


@dataclass
class ValueDecoder:
    """Decodes a tree of compressive encodings; ``where`` names the file,
    column and page for error messages."""

    where: str
    context: ValueContext
    schemes: dict[str, SchemeDecoder]
    depth: int = 0
    # What general compression may still produce for the page being decoded
    # (shared by the decodes of its chunks): a bound on the allocations the
    # sizes of compressed buffers ask for.
    budget: DecompressionBudget = dc_field(default_factory=lambda: DecompressionBudget())
    # The schemes that decode every chunk of a page at once (:mod:`.chunks`).
    chunk_schemes: dict[str, ChunkSchemeDecoder] = dc_field(default_factory=dict)

    def decode(self, encoding: enc.CompressiveEncoding, buffers: BufferCursor, num_values: int) -> DecodedValues:
        kind = encoding.WhichOneof("compression")
        if kind is None:
            unknown = sorted(field.field_number for field in UnknownFieldSet(encoding))
            if unknown:
                # A scheme newer than this reader's protos (2.3 is unstable upstream).
                raise self.unsupported(f"compressive encoding field {unknown[0]} (a scheme this reader does not know)")
            raise self.corrupt("a compressive encoding without a scheme")
        scheme = self.schemes.get(kind)
        if scheme is None:
            raise self.unsupported(f"compressive encoding {kind!r} is not supported")
        if self.depth > MAX_ENCODING_DEPTH:
            raise self.corrupt(f"compressive encodings nested deeper than {MAX_ENCODING_DEPTH} levels")
        self.depth += 1
        try:
            return scheme(getattr(encoding, kind), buffers, num_values, self)
        finally:
            self.depth -= 1

    def decode_chunks(
        self, encoding: enc.CompressiveEncoding, buffers: ChunkCursor, counts: np.ndarray
    ) -> DecodedValues:
        """The values of every chunk of a page (``counts[k]`` of chunk
        ``k``), one after the other; raises :class:`.chunks.ChunkByChunk`
        for an encoding that has no ``decode_chunks`` (unknown ones among
        them: the chunk by chunk path names them)."""
        kind = encoding.WhichOneof("compression")
        scheme = self.chunk_schemes.get(kind) if kind is not None else None
        if scheme is None or self.depth > MAX_ENCODING_DEPTH:
            raise ChunkByChunk(str(kind))
        self.depth += 1
        try:
            return scheme(getattr(encoding, kind), buffers, counts, self)
        finally:
            self.depth -= 1

    def corrupt(self, problem: str) -> CorruptFileError:
        return CorruptFileError(self.where, problem)

    def corrupt_chunk(self, chunk: int, problem: str) -> CorruptFileError:
        """The error decoding chunk ``chunk`` on its own would raise."""
        return CorruptFileError(f"{self.where} chunk {chunk}", problem)

    def unsupported(self, problem: str) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(self.where, problem)

    def refuse_buffer_compression(self, compression: enc.BufferCompression, what: str) -> None:
        """Schemes call this for a general compression they cannot undo yet."""
        name = enc.CompressionScheme.Name(compression.scheme)
        raise self.unsupported(f"general compression {name} of {what} is not supported")


#: Most bytes values that are stored nowhere (a constant, values packed to
#: 0 bits) may expand to: the file's size cannot bound them.
MAX_EXPANDED_BYTES = 1 << 30

# Deepest tree of compressive encodings accepted (real files nest a few).
MAX_ENCODING_DEPTH = 32
