"""``Variable``: variable-width values as offsets and bytes (encoding.md,
"Compression" / "Variable"; ``Variable`` in ``protos/encodings_v2_1.proto``).

The offsets' width comes from the ``offsets`` child (a ``Flat`` of 32 or 64
bits); the layout of the one buffer depends on the context:

* mini block chunk: ``num_values + 1`` offsets, then the bytes; the offsets
  count from the start of the buffer (the first one is where the bytes
  begin); the chunks of a page are decoded together by
  :func:`decode_chunks`;
* block (a whole page buffer, such as a dictionary): a u32 giving the
  offsets' width in bits, then where the bytes begin (u32 for 32-bit
  offsets; for 64-bit offsets a u64 at byte 8), then the offsets and the
  bytes; offsets count from the start of the bytes (writers of 2.1 before
  it was stable framed it differently: :func:`_early_block`);
* full zip: the values arrive unzipped by :mod:`..full_zip`, u64 offsets
  in one buffer and the bytes in the next.
"""

from __future__ import annotations

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import VariableWidthValues
from . import encoded_offsets
from .base import BufferCursor, ValueContext, ValueDecoder
from .buffer_compression import decompress
from .chunks import ChunkByChunk, ChunkCursor, first, segment_starts

_OFFSET_TYPES: dict[int, np.dtype] = {32: np.dtype("<u4"), 64: np.dtype("<u8")}


def offset_type(node: enc.Variable, decoder: ValueDecoder) -> np.dtype:
    """The stored offsets' type (only flat offsets are plain)."""
    offsets = node.offsets
    kind = offsets.WhichOneof("compression")
    if kind != "flat":
        raise decoder.unsupported(f"variable-width offsets compressed as {kind!r} are not supported")
    dtype = _OFFSET_TYPES.get(offsets.flat.bits_per_value)
    if dtype is None:
        raise decoder.corrupt(f"variable-width offsets of {offsets.flat.bits_per_value} bits")
    return dtype


def decode(node: enc.Variable, buffers: BufferCursor, num_values: int, decoder: ValueDecoder) -> VariableWidthValues:
    if decoder.context is ValueContext.MINI_BLOCK and node.offsets.WhichOneof("compression") not in ("flat", None):
        return encoded_offsets.decode(node, buffers, num_values, decoder)  # 2.3: compressed offsets
    dtype = offset_type(node, decoder)
    if decoder.context is ValueContext.FULL_ZIP:
        if node.HasField("values"):
            decoder.refuse_buffer_compression(node.values, "variable-width values")
        return _unzipped(buffers, decoder)
    buffer = buffers.take("variable-width values")
    if node.HasField("values"):
        buffer = decompress(node.values, buffer, decoder, "variable-width values")
    if decoder.context is ValueContext.BLOCK:
        return _block(buffer, dtype, num_values, decoder)
    return _offsets_then_bytes(buffer, dtype, 0, num_values, decoder)


def _unzipped(buffers: BufferCursor, decoder: ValueDecoder) -> VariableWidthValues:
    """Full zip values, unzipped: u64 offsets in one buffer, bytes in the next."""
    raw_offsets = buffers.take("unzipped offsets")
    data = buffers.take("unzipped values")
    if len(raw_offsets) % 8 or not raw_offsets.size:
        raise decoder.corrupt("unzipped offsets are not whole u64 values")
    offsets = raw_offsets.view("<u8").astype(np.uint64, copy=False)
    if np.any(offsets[1:] < offsets[:-1]) or int(offsets[-1]) > len(data):
        raise decoder.corrupt("unzipped offsets decrease or run past their values")
    return VariableWidthValues(offsets, data)


def _block(buffer: np.ndarray, dtype: np.dtype, num_values: int, decoder: ValueDecoder) -> VariableWidthValues:
    if len(buffer) < 8:
        raise decoder.corrupt(f"a variable-width block of {len(buffer)} bytes has no header")
    if buffer[1] or buffer[2] or buffer[3]:
        return _early_block(buffer, dtype, num_values, decoder)
    bits = int(buffer[:4].view("<u4")[0])
    if bits != dtype.itemsize * 8:
        raise decoder.corrupt(f"a variable-width block says {bits}-bit offsets, its encoding {dtype.itemsize * 8}")
    header = 8 if bits == 32 else 16
    if len(buffer) < header:
        raise decoder.corrupt("a variable-width block is shorter than its header")
    bytes_start = int(buffer[4:8].view("<u4")[0]) if bits == 32 else int(buffer[8:16].view("<u8")[0])
    values = _offsets_then_bytes(buffer[header:], dtype, bytes_start - header, num_values, decoder, relative=True)
    return values


def _early_block(buffer: np.ndarray, dtype: np.dtype, num_values: int, decoder: ValueDecoder) -> VariableWidthValues:
    """The header of blocks from writers of 2.1 before it was stable (pylance
    0.33 among them): a u8 offset width, the value count and where the bytes
    begin (u32 each for 32-bit offsets, u64 for 64-bit). A count below 2**24
    has a zero in bytes 1-3 of the current header's u32 width, never here,
    which is how pylance's reader tells the two apart."""
    bits = int(buffer[0])
    if bits != dtype.itemsize * 8:
        raise decoder.corrupt(f"a variable-width block says {bits}-bit offsets, its encoding {dtype.itemsize * 8}")
    word = dtype.itemsize
    header = 1 + 2 * word
    if len(buffer) < header:
        raise decoder.corrupt("a variable-width block is shorter than its header")
    count = int.from_bytes(buffer[1 : 1 + word].tobytes(), "little")
    if count != num_values:
        raise decoder.corrupt(f"a variable-width block of {count} values where {num_values} are expected")
    bytes_start = int.from_bytes(buffer[1 + word : header].tobytes(), "little")
    # The offsets follow the 9- or 17-byte header unaligned: copy them out.
    return _offsets_then_bytes(buffer[header:].copy(), dtype, bytes_start - header, num_values, decoder, relative=True)


def _offsets_then_bytes(
    buffer: np.ndarray,
    dtype: np.dtype,
    bytes_start: int,
    num_values: int,
    decoder: ValueDecoder,
    relative: bool = False,
) -> VariableWidthValues:
    """Offsets at the start of ``buffer``; with ``relative`` they count from
    ``bytes_start`` (the bytes follow them), else from the buffer's start."""
    offsets_bytes = (num_values + 1) * dtype.itemsize
    if len(buffer) < offsets_bytes:
        raise decoder.corrupt(
            f"{num_values} variable-width values need {offsets_bytes} bytes of offsets but the buffer has {len(buffer)}"
        )
    offsets = buffer[:offsets_bytes].view(dtype).astype(dtype.newbyteorder("="), copy=False)
    if relative:
        if not offsets_bytes <= bytes_start <= len(buffer):
            raise decoder.corrupt(f"variable-width bytes start at {bytes_start}, outside the buffer")
        data = buffer[bytes_start:]
    else:
        data = buffer
        if num_values and int(offsets[0]) < offsets_bytes:
            raise decoder.corrupt(_overlap(int(offsets[0]), offsets_bytes))
    if num_values and (np.any(offsets[1:] < offsets[:-1]) or int(offsets[-1]) > len(data)):
        raise decoder.corrupt("variable-width offsets decrease or run past their buffer")
    return VariableWidthValues(offsets, data)


def decode_chunks(
    node: enc.Variable, buffers: ChunkCursor, counts: np.ndarray, decoder: ValueDecoder
) -> VariableWidthValues:
    """:func:`decode` over every mini block chunk of a page (:mod:`.chunks`):
    the offsets of all chunks are gathered and checked at once, then the
    bytes they delimit, and the offsets are renumbered over the joined
    bytes."""
    offsets = node.offsets
    dtype = _OFFSET_TYPES.get(offsets.flat.bits_per_value) if offsets.WhichOneof("compression") == "flat" else None
    if decoder.context is not ValueContext.MINI_BLOCK or node.HasField("values") or dtype is None:
        raise ChunkByChunk("variable")
    chunks = buffers.take("variable-width values")
    offsets_bytes = (counts + 1) * dtype.itemsize
    short = first(chunks.sizes < offsets_bytes)
    if short is not None:
        raise decoder.corrupt_chunk(
            short,
            f"{counts[short]} variable-width values need {offsets_bytes[short]} bytes of offsets "
            f"but the buffer has {chunks.sizes[short]}",
        )
    # Chunk k's offsets are stored[firsts[k] : lasts[k] + 1].
    stored = chunks.part(0, offsets_bytes).joined().view(dtype)
    firsts = segment_starts(counts + 1)
    lasts = firsts + counts
    # Compared unsigned, as stored: a huge u64 offset stays huge.
    steps_down = stored[1:] < stored[:-1]
    across = firsts[1:] - 1  # the step from one chunk's last offset to the next chunk's first
    steps_down[across] = False
    bad = stored[lasts] > chunks.sizes.astype(np.uint64)
    overlapping = first((stored[firsts] < offsets_bytes.astype(np.uint64)) & (counts > 0))
    if overlapping is not None:
        raise decoder.corrupt_chunk(
            overlapping, _overlap(int(stored[firsts][overlapping]), int(offsets_bytes[overlapping]))
        )
    down = np.flatnonzero(steps_down)
    bad[np.searchsorted(firsts, down, side="right") - 1] = True
    bad &= counts > 0
    wrong = first(bad)
    if wrong is not None:
        raise decoder.corrupt_chunk(wrong, "variable-width offsets decrease or run past their buffer")
    # Every offset of a chunk with values is now within its buffer; a chunk
    # without values keeps none of its bytes.
    value_start = np.where(counts > 0, stored[firsts], 0).astype(np.int64)
    value_end = np.where(counts > 0, stored[lasts], 0).astype(np.int64)
    data = chunks.part(value_start, value_end - value_start).joined()
    # The steps between stored offsets are the values' lengths, but for the
    # jumps from one chunk's offsets to the next chunk's.
    lengths = np.delete(np.diff(stored), across)
    out_offsets = np.zeros(len(lengths) + 1, dtype=np.uint32 if len(data) < 2**32 else np.uint64)
    np.cumsum(lengths, out=out_offsets[1:])
    return VariableWidthValues(out_offsets, data)


def _overlap(value_start: int, offsets_bytes: int) -> str:
    """A mini block chunk's bytes begin after its offsets: pylance 14 refuses
    a first offset inside them ("value region ... overlaps the requested
    offsets"), which would read the offsets as values."""
    return f"variable-width bytes start at {value_start}, inside the {offsets_bytes} bytes of offsets"
