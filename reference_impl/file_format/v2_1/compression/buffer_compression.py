"""General-purpose compression of one buffer (encoding.md, "General";
``BufferCompression`` / ``CompressionScheme`` in
``protos/encodings_v2_1.proto``).

The frames are pylance's (the prose names the schemes, not the bytes):

* LZ4: the uncompressed size as a u32, then one raw LZ4 block;
* Zstandard: the uncompressed size as a u64, then a Zstandard frame.

Both are undone with pyarrow's codecs, asked for exactly the declared size;
the declared size is bounded before anything is allocated: by
:data:`MAX_RATIO` times the compressed size (or a MiB), and by what is left
of the decode's budget (:class:`.base.DecompressionBudget`, one per page), so
many small buffers cannot add up to an absurd allocation either.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ....wire import encodings_v2_1_pb2 as enc
from .base import ValueDecoder

# Largest expansion of one buffer accepted beyond its first MiB (LZ4 cannot
# exceed 255; Zstandard's long runs can, but not a real page's values).
MAX_RATIO = 4096
SMALL_BUFFER_ALLOWANCE = 1 << 20

_FRAMES = {
    enc.COMPRESSION_ALGORITHM_LZ4: ("lz4_raw", 4, "<u4"),
    enc.COMPRESSION_ALGORITHM_ZSTD: ("zstd", 8, "<u8"),
}


def decompress(compression: enc.BufferCompression, data: np.ndarray, decoder: ValueDecoder, what: str) -> np.ndarray:
    """The bytes ``data`` holds compressed as ``compression`` says."""
    frame = _FRAMES.get(compression.scheme)
    if frame is None:
        name = enc.CompressionScheme.Name(compression.scheme) if compression.scheme in (0, 1, 2) else compression.scheme
        raise decoder.unsupported(f"general compression {name} of {what} is not supported")
    codec_name, prefix, prefix_type = frame
    if len(data) == 0:
        return data
    if len(data) < prefix:
        raise decoder.corrupt(f"compressed {what} of {len(data)} bytes have no size prefix")
    size = int(data[:prefix].view(prefix_type)[0])
    if size > max(SMALL_BUFFER_ALLOWANCE, MAX_RATIO * len(data)):
        raise decoder.corrupt(f"compressed {what} of {len(data)} bytes declare {size} bytes uncompressed")
    if size > decoder.budget.remaining:
        raise decoder.corrupt(f"compressed {what} declare more bytes than this reader decompresses for one page")
    decoder.budget.remaining -= size
    payload = data[prefix:]
    try:
        out = pa.Codec(codec_name).decompress(pa.py_buffer(payload), decompressed_size=size)
    except (pa.ArrowException, ValueError, OSError) as exc:
        raise decoder.corrupt(f"compressed {what} do not decompress: {exc}") from None
    return np.frombuffer(out, dtype=np.uint8)
