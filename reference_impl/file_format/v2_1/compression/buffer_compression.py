"""``BufferCompression``: one buffer compressed as a unit by a general-purpose
codec, LZ4 or Zstandard (encoding.md, "Compression" / "General";
``BufferCompression`` and ``CompressionScheme`` in
``protos/encodings_v2_1.proto``).

The prose names the codecs but not the framing around them; pylance's
writer (``rust/lance-encoding/src/encodings/physical/block.rs``) frames them
so:

* Zstandard: the decompressed size as a little-endian u64, then one zstd
  frame. Files from older writers hold the bare frame; a buffer that starts
  with the zstd frame magic and whose frame header descriptor has bit 4
  (0x10, which RFC 8878 leaves unused) clear is taken as such a bare frame,
  as pylance's reader does, its size read from the frame header's
  content size field (a bare frame without that field is refused: its size
  would be unknown before decompressing).
* LZ4: the decompressed size as a little-endian u32, then one LZ4 block
  (no frame).
* An empty Zstandard buffer decompresses to nothing.

The declared size is checked before anything is allocated: no codec can
expand its input more than :data:`MAX_EXPANSION` times, so a larger claim is
a corrupt buffer; all buffers of one page together may not declare more than
the decode's budget (:class:`.base.DecompressionBudget`), so many small
buffers cannot add up to an absurd allocation either; and the codec writes at
most the declared size (pyarrow's ``Codec.decompress`` with
``decompressed_size``), failing when the data does not decompress to exactly
that many bytes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ....wire import encodings_v2_1_pb2 as enc
from .base import ValueDecoder

_ZSTD_MAGIC = 0xFD2FB528

#: The most each codec can expand its input (per compressed byte, plus a
#: constant for headers): a zstd block of a single repeated byte stores up to
#: 128 KiB in 4 bytes; an LZ4 match byte extends a match by at most 255.
MAX_EXPANSION: dict[int, int] = {
    enc.COMPRESSION_ALGORITHM_ZSTD: 32 * 1024,
    enc.COMPRESSION_ALGORITHM_LZ4: 255,
}
_EXPANSION_SLACK = 1 << 16


def decompress(compression: enc.BufferCompression, data: np.ndarray, decoder: ValueDecoder, what: str) -> np.ndarray:
    """The bytes of ``data`` (uint8) with ``compression`` undone."""
    scheme = compression.scheme
    if scheme == enc.COMPRESSION_ALGORITHM_ZSTD:
        if len(data) == 0:
            return data
        size, payload = _zstd_frame(data, what, decoder)
        return _run("zstd", payload, size, scheme, what, decoder)
    if scheme == enc.COMPRESSION_ALGORITHM_LZ4:
        if len(data) < 4:
            raise decoder.corrupt(f"LZ4-compressed {what} of {len(data)} bytes has no size prefix")
        size = int(data[:4].view("<u4")[0])
        return _run("lz4_raw", data[4:], size, scheme, what, decoder)
    name = enc.CompressionScheme.Name(scheme) if scheme in enc.CompressionScheme.values() else str(scheme)
    raise decoder.unsupported(f"general compression {name} of {what} is not supported")


def _zstd_frame(data: np.ndarray, what: str, decoder: ValueDecoder) -> tuple[int, np.ndarray]:
    """(declared size, the frame) of a Zstandard buffer."""
    if len(data) >= 8 and int(data[:4].view("<u4")[0]) == _ZSTD_MAGIC and not data[4] & 0x10:
        return _bare_frame_size(data, what, decoder), data
    if len(data) < 8:
        raise decoder.corrupt(f"zstd-compressed {what} of {len(data)} bytes has no size prefix")
    return int(data[:8].view("<u8")[0]), data[8:]


def _bare_frame_size(frame: np.ndarray, what: str, decoder: ValueDecoder) -> int:
    """The content size a zstd frame header records (RFC 8878, 3.1.1.1)."""
    descriptor = int(frame[4])
    size_flag = descriptor >> 6
    single_segment = bool(descriptor & 0x20)
    dictionary_id_bytes = (0, 1, 2, 4)[descriptor & 0x03]
    size_bytes = (1 if single_segment else 0, 2, 4, 8)[size_flag]
    if size_bytes == 0:
        raise decoder.unsupported(f"zstd-compressed {what} is a frame that does not record its size")
    start = 5 + (0 if single_segment else 1) + dictionary_id_bytes
    if start + size_bytes > len(frame):
        raise decoder.corrupt(f"zstd-compressed {what} ends inside its frame header")
    size = int.from_bytes(frame[start : start + size_bytes].tobytes(), "little")
    return size + 256 if size_bytes == 2 else size


def _run(codec: str, payload: np.ndarray, size: int, scheme: int, what: str, decoder: ValueDecoder) -> np.ndarray:
    limit = len(payload) * MAX_EXPANSION[scheme] + _EXPANSION_SLACK
    if size > limit:
        raise decoder.corrupt(f"compressed {what} of {len(payload)} bytes claims {size} bytes decompressed")
    if size > decoder.budget.remaining:
        raise decoder.corrupt(f"compressed {what} declares more bytes than this reader decompresses for one page")
    decoder.budget.remaining -= size
    if size == 0:
        return np.zeros(0, np.uint8)
    raw = pa.py_buffer(payload)  # the bytes where they are, not a copy
    out = _decompress(codec, raw, size, what, decoder)
    # pyarrow's raw LZ4 hands back the declared size even when the block
    # holds less; one byte less must then not be enough room.
    if codec == "lz4_raw" and _fits(codec, raw, size - 1):
        raise decoder.corrupt(f"compressed {what} decompresses to fewer bytes than the {size} it declares")
    return np.frombuffer(out, dtype=np.uint8)


def _decompress(codec: str, raw: pa.Buffer, size: int, what: str, decoder: ValueDecoder) -> pa.Buffer:
    try:
        out = pa.Codec(codec).decompress(raw, decompressed_size=size)
    except (OSError, ValueError, pa.ArrowException) as error:
        raise decoder.corrupt(
            f"compressed {what} does not decompress to the {size} bytes it declares: {error}"
        ) from None
    if out.size != size:
        raise decoder.corrupt(f"compressed {what} decompresses to {out.size} bytes, not the {size} it declares")
    return out


def _fits(codec: str, raw: pa.Buffer, size: int) -> bool:
    try:
        pa.Codec(codec).decompress(raw, decompressed_size=size)
    except (OSError, ValueError, pa.ArrowException):
        return False
    return True
