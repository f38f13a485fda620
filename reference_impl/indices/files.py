"""Reading an index segment's files (upstream format/index/index.md, "Index
Storage"): most index types store their structures in Lance files inside the
segment's directory, each with its own schema, schema metadata (parameters
the index pages name) and global buffers. :func:`read_index_file` gives one
such file as plain data; the module of each index type interprets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from ..errors import CorruptFileError
from ..file_format.reader import LanceFileReader
from ..fragment_writer import LEGACY_DATA_STORAGE_VERSION, dataset_data_version, encode_lance_file
from ..index_metadata import IndexMetadata
from ..schema import Field
from ..storage import Storage

if TYPE_CHECKING:
    from ..dataset import Dataset

#: The largest index file read whole. Index files are read completely (the
#: reference answers no query progressively); a file claiming more than this
#: is refused before its pages are read.
MAX_INDEX_FILE_BYTES = 1 << 32


class IndexFormatError(CorruptFileError):
    """An index file that does not hold what its index page says (a missing
    column, a metadata key that does not parse, a value out of range)."""


@dataclass(frozen=True)
class IndexFileContents:
    """One Lance file of an index segment, read whole."""

    #: Where it is, for messages (a path relative to the storage it came from).
    path: str
    table: pa.Table
    #: The schema metadata of the file (string keys, byte values).
    metadata: Mapping[str, bytes]
    #: The global buffers of the file; buffer 0 holds the file descriptor.
    global_buffers: tuple[bytes, ...]

    def text(self, key: str) -> str:
        """A metadata value as text; :class:`IndexFormatError` when the key is
        missing or is not UTF-8."""
        try:
            return bytes(self.metadata[key]).decode("utf-8")
        except KeyError:
            raise IndexFormatError(self.path, f"the schema metadata has no {key!r}") from None
        except UnicodeDecodeError:
            raise IndexFormatError(self.path, f"the schema metadata value of {key!r} is not UTF-8 text") from None

    def column(self, name: str) -> pa.ChunkedArray:
        """A column of the file; :class:`IndexFormatError` when there is none."""
        if name not in self.table.column_names:
            raise IndexFormatError(self.path, f"has no column {name!r} (it has {self.table.column_names})")
        return self.table.column(name)


def read_index_file(dataset: Dataset, index: IndexMetadata, name: str) -> IndexFileContents:
    """The file ``name`` of ``index``'s directory, read whole with the file's
    own schema. Raises :class:`~reference_impl.errors.LanceFormatError`
    subclasses naming the file: the file is missing, too large, or not a
    Lance file the reference reads."""
    location = dataset.index_file_location(index, name)
    storage, relpath = location.storage, location.relpath
    size = storage.size(relpath)
    if size > MAX_INDEX_FILE_BYTES:
        raise IndexFormatError(str(location), f"holds {size} bytes, more than the {MAX_INDEX_FILE_BYTES} read here")
    reader = LanceFileReader(storage, relpath)
    descriptor = reader.metadata.descriptor
    if descriptor is None:
        raise IndexFormatError(str(location), "has no file descriptor (its schema), which an index file needs")
    table = reader.read()
    buffers = tuple(bytes(reader.global_buffer(number)) for number in range(len(reader.metadata.global_buffers)))
    return IndexFileContents(str(location), table, dict(descriptor.schema.metadata), buffers)


def index_file_version(dataset: Dataset) -> str:
    """The file version of the index files a writer adds to ``dataset``: the
    version of its data files, as pylance 14 writes every index file (a 2.0
    dataset gets 2.0 index files, which readers of 2.0 data can open; a 2.2
    dataset 2.2 ones). A dataset of legacy files, a version no writer
    writes any more, gets 2.0."""
    version = dataset_data_version(dataset.manifest)
    return "2.0" if version == LEGACY_DATA_STORAGE_VERSION else version


def write_index_file(
    storage: Storage,
    relpath: str,
    table: pa.Table,
    fields: list[Field],
    metadata: Mapping[str, bytes] | None = None,
    *,
    version: str,
    global_buffers: Sequence[bytes] = (),
) -> int:
    """Store ``table`` as a new Lance file of ``version`` (see
    :func:`index_file_version`) at ``relpath``, ``global_buffers`` after the
    descriptor; its size in bytes. The file is encoded whole before it is
    stored, and never replaces one."""
    written = encode_lance_file(table, fields, dict(metadata or {}), version=version, global_buffers=global_buffers)
    storage.put_if_not_exists(relpath, written.chunks)
    return written.size
