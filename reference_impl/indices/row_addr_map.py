"""Sets of row addresses as scalar indices store them: a serialized
``RowAddrTreeMap`` (upstream format/index/scalar/bitmap.md names it without
giving its layout; the layout below is what pylance 14 writes, recorded in
docs/spec-discrepancies.md).

Layout, little-endian: a u32 count of fragments, then for each fragment in
ascending id order a u32 fragment id, a u32 byte length and that many bytes
of a 32-bit Roaring bitmap (portable serialization) holding the offsets of
the fragment's rows in the set. A row address is ``fragment_id << 32 |
offset`` (table format: row addresses).
"""

from __future__ import annotations

import struct

import numpy as np
from pyroaring import BitMap

#: A set holding more row addresses than this is refused before it is
#: expanded (a few bytes of Roaring bitmap can claim billions of offsets).
MAX_ROWS = 1 << 31


class RowAddrMapError(ValueError):
    """Bytes that are not a serialized row address map."""


def decode_row_addr_map(raw: bytes, *, max_rows: int = MAX_ROWS) -> np.ndarray:
    """The row addresses of a serialized map, ascending (``uint64``)."""
    view = memoryview(raw)
    if len(view) < 4:
        raise RowAddrMapError(f"{len(view)} bytes cannot hold the fragment count")
    (count,) = struct.unpack_from("<I", view, 0)
    position, previous, total = 4, -1, 0
    parts: list[np.ndarray] = []
    for number in range(count):
        if position + 8 > len(view):
            raise RowAddrMapError(f"fragment {number} of {count} starts past the end ({len(view)} bytes)")
        fragment_id, size = struct.unpack_from("<II", view, position)
        position += 8
        if fragment_id <= previous:
            raise RowAddrMapError(f"fragment ids are not ascending ({fragment_id} after {previous})")
        if position + size > len(view):
            raise RowAddrMapError(f"the bitmap of fragment {fragment_id} runs past the end ({size} bytes)")
        try:
            offsets = BitMap.deserialize(bytes(view[position : position + size]))
        except Exception as exc:  # pyroaring raises several types on bad input
            raise RowAddrMapError(f"the bitmap of fragment {fragment_id} does not decode: {exc}") from None
        total += len(offsets)
        if total > max_rows:
            raise RowAddrMapError(f"holds more than {max_rows} row addresses")
        parts.append(np.asarray(offsets.to_array(), dtype=np.uint64) | np.uint64(fragment_id << 32))
        position += size
        previous = fragment_id
    if position != len(view):
        raise RowAddrMapError(f"{len(view) - position} bytes follow the last fragment")
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def encode_row_addr_map(addresses) -> bytes:
    """The serialized map of ``addresses`` (any iterable of row addresses)."""
    ordered = np.unique(np.fromiter(addresses, dtype=np.uint64))
    fragments = (ordered >> np.uint64(32)).astype(np.uint32)
    out = [struct.pack("<I", len(np.unique(fragments)))]
    for fragment_id in np.unique(fragments):
        offsets = (ordered[fragments == fragment_id] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        bitmap = BitMap(offsets.tolist()).serialize()
        out.append(struct.pack("<II", int(fragment_id), len(bitmap)))
        out.append(bitmap)
    return b"".join(out)
