"""Sets of row addresses (or row ids) as scalar indices store them: a
serialized ``RowAddrTreeMap``. Upstream format/index/scalar/bitmap.md and
label_list.md name it without giving its layout; the layout below is what
pylance 14 writes and reads (docs/spec-discrepancies.md, "Index formats").

Layout, little-endian: a u32 count of fragments (the high 32 bits of the
values), then for each in ascending order a u32 fragment id, a u32 byte
length and that many bytes of a 32-bit Roaring bitmap in the portable
serialization, holding the low 32 bits (the offsets in the fragment) of the
set's values of that fragment. A row address is ``fragment_id << 32 |
offset`` (table format: row addresses); a set of stable row ids (segments
of versions that store them) is split the same way.

pylance 14 writes every Roaring bitmap without run containers (cookie
12346, an offset header, array containers up to 4,096 values and bitmap
containers above), a fragment whose rows are all in the set included: it
writes no shorthand for a whole fragment, and no entry for a fragment with
no row in the set, so an empty set is the four bytes of a zero count.
:func:`encode_row_addr_map` writes the same bytes; :func:`decode_row_addr_map`
reads any portable Roaring bitmap (run containers too, as pylance does).
"""

from __future__ import annotations

import struct

import numpy as np
from pyroaring import BitMap

#: A set holding more row addresses than this is refused before it is
#: expanded (a few bytes of Roaring bitmap can claim billions of offsets).
MAX_ROWS = 1 << 31

#: The portable Roaring format's cookie for a bitmap without run containers.
_NO_RUN_COOKIE = 12346
#: Values a Roaring array container holds at most; more go in a bitmap container.
_ARRAY_CONTAINER_MAX = 4096


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
    """The serialized map of ``addresses`` (any iterable of row addresses),
    byte for byte as pylance 14 writes it."""
    given = addresses if isinstance(addresses, np.ndarray) else np.fromiter(addresses, dtype=np.uint64)
    ordered = np.unique(given.astype(np.uint64, copy=False))
    fragments = (ordered >> np.uint64(32)).astype(np.uint32)
    ids, starts = np.unique(fragments, return_index=True)
    ends = np.append(starts[1:], len(ordered))[: len(starts)]
    out = [struct.pack("<I", len(ids))]
    for fragment_id, start, end in zip(ids.tolist(), starts.tolist(), ends.tolist(), strict=True):
        bitmap = encode_roaring32((ordered[start:end] & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        out.append(struct.pack("<II", fragment_id, len(bitmap)))
        out.append(bitmap)
    return b"".join(out)


def encode_roaring32(values: np.ndarray) -> bytes:
    """The portable serialization, without run containers, of a set of u32
    ``values`` given ascending and unique: the cookie and container count,
    per container its key (the high 16 bits) and cardinality less one, the
    byte offset of each container from the start, then the containers
    (ascending u16 values, or a 65,536-bit bitmap above 4,096 values)."""
    values = np.asarray(values, dtype=np.uint32)
    keys = (values >> np.uint32(16)).astype(np.uint16)
    container_keys, starts = np.unique(keys, return_index=True)
    ends = np.append(starts[1:], len(values))[: len(starts)]
    count = len(container_keys)
    header = [struct.pack("<II", _NO_RUN_COOKIE, count)]
    bodies: list[bytes] = []
    for key, start, end in zip(container_keys.tolist(), starts.tolist(), ends.tolist(), strict=True):
        low = (values[start:end] & np.uint32(0xFFFF)).astype(np.uint16)
        header.append(struct.pack("<HH", key, len(low) - 1))
        if len(low) <= _ARRAY_CONTAINER_MAX:
            bodies.append(low.astype("<u2").tobytes())
        else:
            bits = np.zeros(1 << 16, dtype=bool)
            bits[low] = True
            bodies.append(np.packbits(bits, bitorder="little").tobytes())
    position = 8 + 4 * count + 4 * count
    for body in bodies:
        header.append(struct.pack("<I", position))
        position += len(body)
    return b"".join(header + bodies)
