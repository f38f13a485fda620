"""The read-ahead process: the tail of each file it is given, in order.

Run by its file path with ``python -I -S child.py TAIL_BYTES OPEN_FLAGS``, so
it starts in about 12 ms and imports nothing but the standard library.

* Standard input: the paths, each followed by a NUL byte (a path holds
  none), read whole before the first file is opened.
* Standard output, for each path in order: a header of two little-endian
  signed 64-bit integers, the file's size and the count of bytes that
  follow, then those bytes: the file's last ``min(size, TAIL_BYTES)``.
  A size of -1, with no bytes, marks a file not read here (it could not be
  opened or read, or it changed while it was read); the validating process
  reads that one itself.

It never writes anything but its standard output, and stops quietly when
the validating process closes its end of the pipe.
"""

from __future__ import annotations

import os
import struct
import sys

HEADER = struct.Struct("<qq")
#: The header of a file not read here.
NOT_READ = HEADER.pack(-1, 0)


def read_tail(path: str | bytes, tail_bytes: int, open_flags: int, small: bool = False) -> tuple[int, bytes]:
    """``(size, tail)`` of the local file ``path``: its size and its last
    ``min(size, tail_bytes)`` bytes, unless it changed while it was read
    (then the tail is shorter: the caller checks). The validating process
    reads its own files with it too. When the file is expected to be
    ``small`` (the one before was), one read from the start tries to take
    it whole: a read shorter than asked ends at the end of the file, so its
    length is the size and the seek is saved."""
    fd = os.open(path, open_flags)
    try:
        if small:
            data = os.pread(fd, tail_bytes + 1, 0)
            if len(data) <= tail_bytes:
                return len(data), data
        # The size of a regular file is where its end is; seeking there is
        # cheaper than os.fstat, whose stat_result costs more to build than
        # the rest of the call.
        size = os.lseek(fd, 0, os.SEEK_END)
        start = size - tail_bytes if size > tail_bytes else 0
        return size, os.pread(fd, size - start, start)
    finally:
        os.close(fd)


#: Output gathered before one write to the pipe.
WRITE_BYTES = 1 << 16


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main(argv: list[str]) -> int:
    tail_bytes, open_flags = int(argv[0]), int(argv[1])
    paths = sys.stdin.buffer.read().split(b"\0")[:-1]
    out = sys.stdout.fileno()
    pending: list[bytes] = []
    pending_bytes = 0
    small = True
    try:
        for path in paths:
            try:
                size, data = read_tail(path, tail_bytes, open_flags, small)
            except OSError:
                size, data = -1, b""
            if len(data) != min(size, tail_bytes):  # unreadable, or changed while read
                pending.append(NOT_READ)
                pending_bytes += HEADER.size
                continue
            small = size <= tail_bytes
            pending += (HEADER.pack(size, len(data)), data)
            pending_bytes += HEADER.size + len(data)
            if pending_bytes >= WRITE_BYTES:
                write_all(out, b"".join(pending))
                pending, pending_bytes = [], 0
        write_all(out, b"".join(pending))
    except BrokenPipeError:  # the validating process stopped reading: nothing left to do
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
