"""How much an Arrow IPC file's first record batch would expand to, read from
its FlatBuffers metadata alone (nothing is decoded or decompressed).

pyarrow trusts the sizes an IPC file declares: a record batch's row count, and
for a compressed body the uncompressed length stored in front of each buffer.
A file of a few hundred bytes can declare a buffer of 2**40 bytes, which
pyarrow would try to allocate before noticing anything is wrong. Readers of
small IPC files (deletion files) call :func:`arrow_batch_bounds` first and
only hand the file to pyarrow when the declared sizes fit what they expect.

The walk follows the IPC file layout of the Arrow columnar format: the file is
``ARROW1`` + padding, messages, the ``Footer`` FlatBuffer, its ``int32``
length and ``ARROW1``. ``Footer.recordBatches`` (field 3) is a vector of
``Block`` structs locating each record batch message; that message's header
(``Message.header``, field 2, of union type ``RecordBatch`` = 3) holds the row
count (field 0), the ``FieldNode`` vector (field 1), the ``Buffer`` vector
(field 2) and, when the body is compressed, a ``BodyCompression`` table
(field 3). A compressed buffer starts with its uncompressed length as an
``int64`` (``-1``: stored uncompressed).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

ARROW_MAGIC = b"ARROW1"

_RECORD_BATCH = 3  # MessageHeader union member
_BLOCK_BYTES = 24  # Block: offset i64, metaDataLength i32, 4 bytes padding, bodyLength i64
_FIELD_NODE_BYTES = 16  # FieldNode: length i64, null_count i64
_BUFFER_BYTES = 16  # Buffer: offset i64, length i64
_CONTINUATION = 0xFFFFFFFF


@dataclass(frozen=True)
class BatchBounds:
    """What the first record batch of an IPC file declares."""

    #: Record batches listed in the footer.
    batches: int
    #: Rows of the first batch (0 when there is none).
    rows: int = 0
    #: The largest size one of its buffers expands to: its stored length when
    #: the body is not compressed, else the declared uncompressed length.
    largest_buffer: int = 0


class _Malformed(Exception):
    """The FlatBuffers structure is broken."""


class _Bytes:
    """Little-endian reads confined to ``data[start:end]``."""

    def __init__(self, data: bytes, start: int = 0, end: int | None = None):
        self.data = data
        self.start = start
        self.end = len(data) if end is None else end

    def read(self, fmt: str, position: int):
        size = struct.calcsize(fmt)
        if position < self.start or position + size > self.end:
            raise _Malformed(f"a read at {position} is outside [{self.start}, {self.end})")
        return struct.unpack_from("<" + fmt, self.data, position)[0]

    def table(self, position: int) -> _Table:
        return _Table(self, position)

    def root(self) -> _Table:
        """The root table of a FlatBuffer starting at ``start``."""
        return self.table(self.start + self.read("I", self.start))


class _Table:
    """A FlatBuffers table; its fields are located through its vtable."""

    def __init__(self, buffer: _Bytes, position: int):
        self.buffer = buffer
        self.position = position
        self.vtable = position - buffer.read("i", position)
        self.vtable_bytes = buffer.read("H", self.vtable)

    def field(self, slot: int) -> int | None:
        """Where field ``slot`` is stored; None when the table omits it."""
        entry = 4 + 2 * slot
        if entry + 2 > self.vtable_bytes:
            return None
        offset = self.buffer.read("H", self.vtable + entry)
        return self.position + offset if offset else None

    def scalar(self, slot: int, fmt: str, default=0):
        position = self.field(slot)
        return default if position is None else self.buffer.read(fmt, position)

    def child(self, slot: int) -> _Table | None:
        position = self.field(slot)
        return None if position is None else self.buffer.table(position + self.buffer.read("I", position))

    def structs(self, slot: int, item_bytes: int) -> tuple[int, int]:
        """(where the first item is, how many there are) of a vector of structs."""
        position = self.field(slot)
        if position is None:
            return 0, 0
        start = position + self.buffer.read("I", position)
        count = self.buffer.read("I", start)
        if start + 4 + count * item_bytes > self.buffer.end:
            raise _Malformed(f"a vector of {count} items runs past its buffer")
        return start + 4, count


def arrow_batch_bounds(data: bytes) -> BatchBounds | None:
    """The bounds of ``data``'s first record batch; None when ``data`` is not
    a structurally sound IPC file (no magic, a footer or message out of place,
    a buffer outside the batch body, a column whose length differs from the
    batch's)."""
    try:
        return _bounds(data)
    except (_Malformed, struct.error, OverflowError):
        return None


def _bounds(data: bytes) -> BatchBounds:
    whole = _Bytes(data)
    if len(data) < 18 or not data.startswith(ARROW_MAGIC) or not data.endswith(ARROW_MAGIC):
        raise _Malformed("no IPC file magic at both ends")
    footer_bytes = whole.read("i", len(data) - 10)
    footer_start = len(data) - 10 - footer_bytes
    if footer_bytes <= 0 or footer_start < 8:
        raise _Malformed("the footer length is out of range")
    footer = _Bytes(data, footer_start, len(data) - 10).root()
    first_block, batches = footer.structs(3, _BLOCK_BYTES)
    if batches == 0:
        return BatchBounds(batches=0)

    offset = whole.read("q", first_block)
    meta_bytes = whole.read("i", first_block + 8)
    body_bytes = whole.read("q", first_block + 16)
    if offset < 8 or meta_bytes < 8 or body_bytes < 0 or offset + meta_bytes + body_bytes > len(data):
        raise _Malformed("the record batch block lies outside the file")
    prefix = 8 if whole.read("I", offset) == _CONTINUATION else 4
    message = _Bytes(data, offset + prefix, offset + meta_bytes).root()
    if message.scalar(1, "B") != _RECORD_BATCH:
        raise _Malformed("the first block does not hold a record batch")
    batch = message.child(2)
    if batch is None:
        raise _Malformed("a record batch message without its header")
    rows = batch.scalar(0, "q")

    first_node, nodes = batch.structs(1, _FIELD_NODE_BYTES)
    for index in range(nodes):
        if whole.read("q", first_node + index * _FIELD_NODE_BYTES) != rows:
            raise _Malformed("a column's length differs from the batch's row count")

    compressed = batch.field(3) is not None
    body = offset + meta_bytes
    largest = 0
    first_buffer, buffers = batch.structs(2, _BUFFER_BYTES)
    for index in range(buffers):
        start = whole.read("q", first_buffer + index * _BUFFER_BYTES)
        length = whole.read("q", first_buffer + index * _BUFFER_BYTES + 8)
        if start < 0 or length < 0 or start + length > body_bytes:
            raise _Malformed("a buffer lies outside the batch body")
        expanded = length
        if compressed and length >= 8:
            declared = whole.read("q", body + start)
            expanded = length - 8 if declared == -1 else declared
        largest = max(largest, expanded)
    return BatchBounds(batches=batches, rows=rows, largest_buffer=largest)
