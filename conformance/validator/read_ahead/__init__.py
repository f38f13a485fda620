"""Reading local data file tails ahead of the checks, in a second process.

A footer check is Python under the interpreter lock, so threads cannot
share it; what another core can take is the reading: the four system calls
a file costs (open, seek to the end, read the tail, close), a third of a
footer check on a local disk. For a batch of thousands of local files the
validating process starts :mod:`.child` (a plain interpreter, no project
import) with the paths, reads the first few files itself while it starts,
and then takes each tail from its output as it comes to the file
(:class:`TailReader`). The tails are the bytes an in-process read gives;
any file the child could not read cleanly is read again in the validating
process, which meets the error there, so the report is the same with or
without it (benchmarks/README.md, sixth round)."""

from .process import DEFAULT_READ_AHEAD, ReadAhead, TailReader

__all__ = ["DEFAULT_READ_AHEAD", "ReadAhead", "TailReader"]
