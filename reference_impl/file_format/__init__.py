"""The Lance data file layer (file format specification).

* :func:`inspect_file` reports the version and shape of any Lance data file
  (legacy v1, 2.0, 2.1, 2.2 and later) from its footer.
* :func:`write_v2_0` encodes an Arrow table as a version 2.0 file with plain
  (uncompressed) encodings, the way pylance writes ``data_storage_version="2.0"``;
  :func:`write_file` also stores it. :mod:`.writer_v2_1` writes 2.1 files in
  their simplest valid form (mini block, full zip and all-null pages without
  compression).
* :class:`LanceFileReader` / :func:`read_v2_0` decode a 2.0 file's columns
  into Arrow, and refuse encodings they do not implement.

Wire messages are in ``protos/file2.proto`` (container) and
``protos/encodings_v2_0.proto`` (2.0 page encodings).
"""

from __future__ import annotations

from .footer import FileInfo, V2Metadata, inspect_file, read_v2_metadata
from .reader import LanceFileReader, read_v2_0
from .writer import WrittenFile, write_file, write_v2_0

__all__ = [
    "FileInfo",
    "LanceFileReader",
    "V2Metadata",
    "WrittenFile",
    "inspect_file",
    "read_v2_0",
    "read_v2_metadata",
    "write_file",
    "write_v2_0",
]
