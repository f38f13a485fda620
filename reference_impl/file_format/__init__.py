"""The Lance data file layer (file format specification).

* :func:`inspect_file` reports the version and shape of any Lance data file
  (legacy v1, 2.0, 2.1, 2.2 and later) from its footer.
* :func:`write_v2_0` encodes an Arrow table as a version 2.0 file with plain
  (uncompressed) encodings, the way pylance writes ``data_storage_version="2.0"``;
  :func:`write_file` also stores it. :mod:`.writer_v2_1` writes 2.1 and 2.2
  files in their simplest valid form (mini block, full zip and all-null
  pages without compression; at 2.2 the mini block pages with 32-bit chunk
  words, as 2.2 readers require).
* :class:`LanceFileReader` / :func:`read_v2_0` decode a 2.0 file's columns
  into Arrow, and refuse encodings they do not implement. Files of version
  2.1 and 2.2 go through the same :class:`LanceFileReader`, which routes them
  to :mod:`.v2_1` (structural layouts: mini block, full zip, constant/all-null
  and blob pages; repetition and definition levels; structs, lists, maps,
  fixed-size lists and packed structs assembled into Arrow; compressive
  encodings behind :func:`.v2_1.compression.decode_values` and
  :func:`.v2_1.compression.decode_chunk_values`, one module per scheme).
  Legacy (v1) files are inspected but not decoded: the upstream
  specification no longer documents their page encodings
  (docs/reference-implementation.md, "Writing").
* :mod:`.read_plan` maps requested fields to the columns a data file lists
  (in 2.1+ only leaves and packed structs own columns).

Wire messages are in ``protos/file2.proto`` (container),
``protos/encodings_v2_0.proto`` (2.0 page encodings) and
``protos/encodings_v2_1.proto`` (2.1+ page layouts and compression).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .footer import FileInfo, V2Metadata, inspect_file, read_v2_metadata

if TYPE_CHECKING:
    from .reader import LanceFileReader, read_v2_0
    from .writer import WrittenFile, write_file, write_v2_0

#: Names whose modules need pyarrow and numpy, imported when first asked for
#: (module ``__getattr__``): the footer parser above is all the validator and
#: ``describe`` need, and importing the reader and writer with it would load
#: pyarrow into every validation (most of its start-up).
_LAZY = {
    "LanceFileReader": ".reader",
    "read_v2_0": ".reader",
    "WrittenFile": ".writer",
    "write_file": ".writer",
    "write_v2_0": ".writer",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # found directly from now on
    return value


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
