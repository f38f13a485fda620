"""Ordered maps from byte strings to integers as the Rust ``fst`` crate (0.4)
serializes them: the token set of an INVERTED index with
``token_set_format = "fst"`` (upstream format/index/scalar/fts.md names the
format without giving its layout; the layout below is the crate's, from its
``src/raw`` sources, and is recorded in docs/spec-discrepancies.md).

Layout, every integer little-endian:

* a header of two u64: the format version (1 to 3) and a type tag;
* the nodes, each written before the nodes that point to it, so a node's
  transitions lead to lower addresses. A node is read backwards from its
  *address*, the address of its last byte, which holds the state byte;
* a footer: u64 key count, u64 root address and, from version 3, a u32
  checksum (CRC-32C of everything before it, masked as the Snappy framing
  format masks it).

Address 0 is the empty final node (no transitions, final output 0). The
state byte's two high bits say the node's kind:

* ``11`` one transition to the node written just before this one (its
  address is this node's lowest address minus one), output 0; the low six
  bits index a table of common input bytes, 0 meaning the input byte
  precedes the state byte;
* ``10`` one transition with an output: [output][address delta][pack
  sizes][input?][state], the pack-size byte holding the delta's byte count
  in its high nibble and the output's in its low nibble;
* ``0F`` any number of transitions (F: the node is final); the low six bits
  are the count (0: a count byte precedes the state byte, where 1 means
  256). Before the count: the pack sizes, then (version 2 on, more than 32
  transitions) a 256-byte index from input byte to transition number, the
  inputs, the address deltas and the outputs, each list in reverse order,
  and the final output of a final node.

A transition's target is the node's lowest address minus its delta (a delta
of 0 is the empty final node). A key's value is the sum of the outputs along
its path plus the final node's final output.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

#: The newest format version this reader knows.
NEWEST_VERSION = 3
#: Transitions above which a version 2+ node carries a 256-byte input index.
_INDEX_THRESHOLD = 32
#: The largest key accepted (a path longer than this is a corrupt map).
MAX_KEY_BYTES = 1 << 16

# The crate's table of frequent input bytes: a one-transition node whose
# input is among the first 63 stores its index + 1 in the state byte.
_COMMON_INPUTS = (
    b"te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHGWUV,YKJZXQ;)(~[]$!'*@"
    + bytes(range(0x00, 0x20))
    + b' "#<>\\^`{|}'
    + bytes(range(0x7F, 0x100))
)


class FstError(ValueError):
    """Bytes that are not a serialized ``fst`` map."""


@dataclass(frozen=True)
class FstMap:
    """A decoded map: keys in ascending byte order with their values."""

    version: int
    fst_type: int
    keys: tuple[bytes, ...]
    values: tuple[int, ...]
    #: Whether the stored checksum matched (None: version < 3 has none).
    checksum_ok: bool | None


def _crc32c_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC_TABLE = _crc32c_table()


def masked_crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``, masked as the fst crate stores it."""
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _uint(data: bytes, at: int, size: int) -> int:
    return int.from_bytes(data[at : at + size], "little") if size else 0


@dataclass(frozen=True)
class _Node:
    final: bool
    final_output: int
    #: (input byte, output, target address), ascending by input byte.
    transitions: tuple[tuple[int, int, int], ...]


def _node(data: bytes, version: int, address: int, limit: int) -> _Node:
    """The node whose state byte is at ``address``."""
    if address == 0:
        return _Node(True, 0, ())
    if address >= limit:
        raise FstError(f"a node address {address} lies outside the nodes (which end before {limit})")

    def need(position: int) -> int:
        if position < 16:  # the header holds no nodes
            raise FstError(f"the node at {address} runs into the header")
        return position

    state = data[address]
    kind = state >> 6
    if kind == 0b11:  # one transition to the node just before, output 0
        common = state & 0x3F
        low = address if common else address - 1
        inp = _COMMON_INPUTS[common - 1] if common else data[need(address - 1)]
        return _Node(False, 0, ((inp, 0, need(low - 1)),))
    if kind == 0b10:  # one transition with an output
        common = state & 0x3F
        at = address - (0 if common else 1)
        inp = _COMMON_INPUTS[common - 1] if common else data[need(at)]
        sizes = data[need(at - 1)]
        tsize, osize = sizes >> 4, sizes & 0x0F
        delta_at = need(at - 1 - tsize)
        output_at = need(delta_at - osize)
        delta = _uint(data, delta_at, tsize)
        return _Node(False, 0, ((inp, _uint(data, output_at, osize), _target(output_at, delta, address)),))
    final = bool(state & 0x40)
    count = state & 0x3F
    at = address
    if count == 0:
        at -= 1
        count = data[need(at)]
        if count == 1:
            count = 256
    sizes = data[need(at - 1)]
    tsize, osize = sizes >> 4, sizes & 0x0F
    if tsize > 8 or osize > 8:
        raise FstError(f"the node at {address} packs integers in {max(tsize, osize)} bytes (8 at most)")
    at -= 1
    if version >= 2 and count > _INDEX_THRESHOLD:
        at -= 256
    inputs_at = need(at - count)
    deltas_at = need(inputs_at - count * tsize)
    outputs_at = need(deltas_at - count * osize)
    lowest = outputs_at - (osize if final else 0)
    need(lowest)
    final_output = _uint(data, lowest, osize) if final else 0
    transitions = []
    for number in range(count):
        # Lists are stored in reverse: transition 0 sits at the highest slot.
        slot = count - 1 - number
        inp = data[inputs_at + slot]
        delta = _uint(data, deltas_at + slot * tsize, tsize)
        output = _uint(data, outputs_at + slot * osize, osize)
        transitions.append((inp, output, _target(lowest, delta, address)))
    return _Node(final, final_output, tuple(transitions))


def _target(lowest: int, delta: int, address: int) -> int:
    if delta == 0:
        return 0
    target = lowest - delta
    if target < 16:
        raise FstError(f"a transition of the node at {address} points before the nodes (delta {delta})")
    return target


def decode_fst_map(raw: bytes, *, max_keys: int = 1 << 26) -> FstMap:
    """Every key and value of a serialized map, in key order.

    Raises :class:`FstError` when the bytes are not a map this layout
    describes: a short or unknown header, a root address that does not end
    the nodes, a transition pointing forward or outside, keys out of order,
    or more keys than the footer (or ``max_keys``) says.
    """
    data = bytes(raw)
    if len(data) < 32:
        raise FstError(f"{len(data)} bytes cannot hold a header and a footer")
    version, fst_type = struct.unpack_from("<QQ", data, 0)
    if not 1 <= version <= NEWEST_VERSION:
        raise FstError(f"format version {version} is not one of 1 to {NEWEST_VERSION}")
    end = len(data) - (4 if version >= 3 else 0)
    checksum_ok = None
    if version >= 3:
        if len(data) < 36:
            raise FstError(f"{len(data)} bytes cannot hold a version 3 header and footer")
        (stored,) = struct.unpack_from("<I", data, end)
        checksum_ok = masked_crc32c(data[:end]) == stored
    count, root = struct.unpack_from("<QQ", data, end - 16)
    nodes_end = end - 16
    if root != 0 and root != nodes_end - 1:
        raise FstError(f"the root address {root} is not the last byte of the nodes ({nodes_end - 1})")
    if count > max_keys:
        raise FstError(f"the footer claims {count} keys, more than the {max_keys} read here")
    keys: list[bytes] = []
    values: list[int] = []
    # Depth-first in input order gives the keys ascending. Targets lie below
    # their node, so the walk ends; the key count bounds its output.
    stack: list[tuple[int, bytes, int]] = [(root, b"", 0)]
    while stack:
        address, prefix, total = stack.pop()
        node = _node(data, version, address, nodes_end)
        if node.final:
            if len(keys) >= count:
                raise FstError(f"the nodes hold more keys than the {count} the footer says")
            keys.append(prefix)
            values.append(total + node.final_output)
        if node.transitions and len(prefix) >= MAX_KEY_BYTES:
            raise FstError(f"a key runs past {MAX_KEY_BYTES} bytes")
        for inp, output, target in reversed(node.transitions):
            if target != 0 and target >= address:
                raise FstError(f"a transition of the node at {address} points forward to {target}")
            stack.append((target, prefix + bytes((inp,)), total + output))
    if len(keys) != count:
        raise FstError(f"the nodes hold {len(keys)} keys where the footer says {count}")
    for before, after in zip(keys, keys[1:], strict=False):
        if not before < after:
            raise FstError(f"keys are not ascending ({before!r} then {after!r})")
    return FstMap(int(version), int(fst_type), tuple(keys), tuple(values), checksum_ok)
