"""The validating process's side of the read-ahead (see the package docs)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .child import HEADER, write_all

if TYPE_CHECKING:
    import subprocess

#: The script the read-ahead process runs.
CHILD_SCRIPT = Path(__file__).with_name("child.py")
#: Bytes taken from the pipe at a time.
_READ_BYTES = 1 << 18
#: The pipe's capacity asked of Linux (its default is 64 KiB): room for
#: the child to run a few thousand small files ahead, so that a slow
#: stretch of checks on this side never leaves it waiting for room.
_PIPE_BYTES = 1 << 20


@dataclass(frozen=True)
class ReadAhead:
    """When a batch of local data files has its tails read ahead."""

    #: Batches of fewer files not yet read are read in the validating
    #: process (the child's start, about 12 ms on another core, is worth it
    #: from a few thousand files on).
    min_files: int = 2048
    #: The batch's first files, read by the validating process itself
    #: while the child starts.
    head: int = 1024

    def __post_init__(self) -> None:
        if self.min_files < 1 or self.head < 0:
            raise ValueError(f"a read-ahead needs min_files >= 1 and head >= 0, not {self}")


DEFAULT_READ_AHEAD = ReadAhead()


class TailReader:
    """A running read-ahead process and the tails it has sent. Ask
    :meth:`next_tail` for the files in the order they were given; close it
    (or use it as a context manager) when done: a child still running then
    is stopped by its pid."""

    def __init__(self, paths: list[str], tail_bytes: int, process: subprocess.Popen[bytes], pipe: int) -> None:
        self._paths = paths
        self._tail_bytes = tail_bytes
        self._next = 0
        self._process = process
        self._pipe = pipe
        self._buffer = b""
        self._position = 0

    @classmethod
    def start(cls, paths: list[str], tail_bytes: int, open_flags: int) -> TailReader | None:
        """A child reading the tails of ``paths`` (local file paths, each
        once), or None where one cannot be started (no ``memfd_create``
        outside Linux, no interpreter to run, no process to spare): then
        the validating process reads every file itself."""
        if not paths or not hasattr(os, "memfd_create") or not sys.executable:
            return None
        import subprocess  # here: its import costs a small validation more than it reads

        try:
            # The paths go in as a file in memory, so that handing over a
            # hundred thousand of them never waits for the child to start.
            listing = os.memfd_create("lance-conformance-paths", os.MFD_CLOEXEC)
            try:
                write_all(listing, os.fsencode("\0".join(paths) + "\0"))
                os.lseek(listing, 0, os.SEEK_SET)
                command = [sys.executable, "-I", "-S", str(CHILD_SCRIPT), str(tail_bytes), str(open_flags)]
                process = subprocess.Popen(command, stdin=listing, stdout=subprocess.PIPE, bufsize=0)
            finally:
                os.close(listing)
        except (OSError, ValueError):
            return None
        assert process.stdout is not None
        pipe = process.stdout.fileno()
        _widen(pipe)
        return cls(paths, tail_bytes, process, pipe)

    @property
    def pid(self) -> int:
        return self._process.pid

    def next_tail(self, path: str) -> tuple[int, bytes] | None:
        """``(size, tail)`` of ``path`` when it is the next file the child
        was given and it read it cleanly; otherwise None (a file of the
        head, one the child could not read, or a child that stopped), and
        the caller reads the file itself."""
        index = self._next
        if index >= len(self._paths) or self._paths[index] != path:
            return None
        self._next = index + 1
        header = self._take(HEADER.size)
        if header is None:
            return None
        size, length = HEADER.unpack(header)
        if size < 0:
            return None
        if not 0 <= length <= min(size, self._tail_bytes):  # not what the child writes: trust none of it
            self._stop_reading()
            return None
        data = self._take(length)
        return None if data is None else (size, data)

    def _take(self, length: int) -> bytes | None:
        """The next ``length`` bytes of the child's output; None once it has
        ended (then every later file is read by the caller)."""
        buffer, position = self._buffer, self._position
        while len(buffer) - position < length:
            try:
                more = os.read(self._pipe, _READ_BYTES) if self._pipe >= 0 else b""
            except OSError:  # the pipe's own failure, never the data file's: the caller reads the file
                more = b""
            if not more:
                self._stop_reading()
                return None
            buffer, position = buffer[position:] + more, 0
        self._buffer, self._position = buffer, position + length
        return buffer[position : position + length]

    def _stop_reading(self) -> None:
        self._paths = self._paths[: self._next]
        self._buffer, self._position, self._pipe = b"", 0, -1

    def close(self) -> None:
        """Stop the child if it still runs, and reap it."""
        self._stop_reading()
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        assert self._process.stdout is not None
        self._process.stdout.close()

    def __enter__(self) -> TailReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _widen(pipe: int) -> None:
    """Ask for a larger pipe (Linux only; any refusal leaves the default)."""
    try:
        import fcntl

        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass
