"""What the validator knows about a version's data files (table format: data
files, base path system; file format: footer and trailer).

The rules on data files, base paths and non-nullable columns look at the
``DataFile`` entries of the manifest through this module; those that need
the file itself share two cached loads, so that a data file listed by many
versions is resolved and read once per validation run:

* :func:`locate` resolves a data file against the dataset root or its declared
  base path and says whether it is there (memo key ``("data-file", root,
  relpath)``; it reports problems in its result, it never raises);
* :func:`file_facts` reads its footer with
  :func:`reference_impl.file_format.inspect_file`, plus, for legacy files, the
  row count kept in the legacy metadata (cache key ``("footer", location)``).

For the rules: a file whose base is undeclared or missing is left to the base
path rules, one whose path escapes to ``data-file/path``, a missing one to
``data-file/exists`` and an unreadable one to ``data-file/readable``: the other
rules skip it, so that one defect is reported once.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from google.protobuf.message import DecodeError

from reference_impl.dataset import FileLocation
from reference_impl.errors import CorruptFileError, LanceFormatError, PathEscapeError
from reference_impl.file_format import FileInfo, inspect_file
from reference_impl.file_format.footer import INSPECT_TAIL_BYTES, LAYOUT_LEGACY, LEGACY_FOOTER_SIZE, FileTail
from reference_impl.fragments import DataFile, Fragment
from reference_impl.storage import LocalStorage, Storage
from reference_impl.wire import file_pb2, table_pb2

from ..context import Loaded, VersionView
from .text import printable

#: Bytes read at once from the end of a data file; footer reads inside them
#: are served from memory. The same as inspect_file's own tail read.
TAIL_BYTES = INSPECT_TAIL_BYTES
#: Directory entries kept from one listing; a larger directory is checked file by file.
MAX_LISTED = 1 << 20
#: The largest legacy metadata block read to learn a legacy file's row count.
MAX_LEGACY_METADATA = 4 << 20
#: How data files are opened: read-only, and without blocking, since a named
#: pipe swapped in for a file after the listing must not hang the run.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK
#: ``C:`` and the like: absolute on Windows.
WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")

# -- where a data file is ------------------------------------------------------


class FileStatus(str, Enum):
    """Where a data file (or a declared base path) stands before it is read."""

    #: Resolved, and there (a base: a directory that exists).
    OK = "ok"
    #: The data file names a base_id the manifest does not declare.
    UNDECLARED_BASE = "undeclared-base"
    #: The base path is not a local path: it cannot be checked.
    BASE_UNUSABLE = "base-unusable"
    #: The base path's directory does not exist.
    BASE_MISSING = "base-missing"
    #: The base path is empty or holds a NUL byte.
    BASE_INVALID = "base-invalid"
    #: The data file's path is absolute, empty, or leads out of its root.
    ESCAPES = "escapes"
    #: Nothing at the resolved path (or it cannot be examined).
    MISSING = "missing"
    #: Something other than a regular file at the resolved path.
    NOT_A_FILE = "not-a-file"


@dataclass(frozen=True)
class BaseStorage:
    """A declared base path as the validator can use it."""

    storage: Storage | None
    is_dataset_root: bool
    status: FileStatus  # OK, BASE_UNUSABLE (not local: cannot check), BASE_INVALID or BASE_MISSING
    problem: str = ""

    @property
    def usable_storage(self) -> Storage | None:
        """The base's storage when its status is OK, else None."""
        return self.storage if self.status is FileStatus.OK else None


class Located(NamedTuple):
    """Where a data file resolved: ``status`` is OK or says why it is not
    usable (``problem`` tells more). A NamedTuple (immutable, and cheaper to
    build than a frozen dataclass): one is built for every data file."""

    status: FileStatus
    #: The storage the path resolved in, and the path in it (None and "" when
    #: it did not resolve): :attr:`location`, kept as its two parts.
    storage: Storage | None = None
    relpath: str = ""
    problem: str = ""
    #: The checked local path of the file (when it exists), as text: building
    #: a Path for each of thousands of files costs more than reading them.
    full: str | None = None
    #: ``str(location)``, computed once (the footer cache key).
    key: str = ""

    @property
    def ok(self) -> bool:
        return self.status is FileStatus.OK

    @property
    def location(self) -> FileLocation | None:
        """Where the path resolved, as the reference reader names a file
        (built when asked: most files are only opened, through
        :attr:`storage` and :attr:`relpath`)."""
        return None if self.storage is None else FileLocation(self.storage, self.relpath)


def _base_storage(root: Storage, path: str, is_dataset_root: bool) -> BaseStorage:
    if not path or "\x00" in path:
        problem = "the path is empty" if not path else "the path contains a NUL byte"
        return BaseStorage(None, is_dataset_root, FileStatus.BASE_INVALID, problem)
    try:
        storage = root.for_base(path)
        present = storage.root_is_dir()
    except LanceFormatError as exc:
        return BaseStorage(None, is_dataset_root, FileStatus.BASE_UNUSABLE, exc.problem)
    except (OSError, ValueError) as exc:
        return BaseStorage(None, is_dataset_root, FileStatus.BASE_UNUSABLE, f"not a usable path: {exc}")
    if not present:
        return BaseStorage(storage, is_dataset_root, FileStatus.BASE_MISSING, f"{storage.root} is not a directory")
    return BaseStorage(storage, is_dataset_root, FileStatus.OK)


def base_storages(view: VersionView) -> dict[int, BaseStorage]:
    """The declared bases of a version by id (the first entry of a repeated id
    wins, as in the reference reader); each directory is checked once per run."""
    found: dict[int, BaseStorage] = {}
    storage = view.dataset.storage
    for base in view.manifest.base_paths:
        if base.id in found:
            continue
        key = ("base-storage", base.path, bool(base.is_dataset_root))
        # memo, not cached: _base_storage reports problems in its result.
        found[base.id] = view.dataset.memo(key, _base_storage, storage, base.path, bool(base.is_dataset_root))
    return found


def check_file(storage: Storage, relpath: str) -> Located:
    try:
        full = storage.path_text(relpath)
    except PathEscapeError as exc:
        return Located(FileStatus.ESCAPES, problem=exc.problem)
    except (OSError, ValueError) as exc:
        return Located(FileStatus.ESCAPES, problem=f"the path cannot be resolved: {exc}")
    try:
        if storage.exists(relpath):
            return Located(FileStatus.OK, storage, relpath, full=full, key=str(FileLocation(storage, relpath)))
        if storage.has_entry(relpath):
            return Located(FileStatus.NOT_A_FILE, storage, relpath, f"{full} is not a regular file")
    except (LanceFormatError, OSError, ValueError) as exc:
        return Located(FileStatus.MISSING, storage, relpath, f"{full} cannot be examined: {exc}")
    return Located(FileStatus.MISSING, storage, relpath, f"{full} does not exist")


def is_absolute(path: str) -> bool:
    """An absolute path or URI in any of the forms a writer might store."""
    # The drive pattern needs a ':' second; testing that first spares a
    # regular expression match per data file.
    return path.startswith(("/", "\\")) or "://" in path or (path[1:2] == ":" and bool(WINDOWS_DRIVE.match(path)))


def locate(view: VersionView, data_file: DataFile, bases: dict[int, BaseStorage] | None = None) -> Located:
    """Where ``data_file`` is, and whether it is there (see the module docs)."""
    if data_file.base_id is None:
        storage, is_root = view.dataset.storage, True
    else:
        if bases is None:
            bases = base_storages(view)
        base = bases.get(data_file.base_id)
        if base is None:
            return Located(FileStatus.UNDECLARED_BASE, problem=f"base_id {data_file.base_id} is not declared")
        base_storage = base.usable_storage
        if base_storage is None:
            return Located(base.status, problem=base.problem)
        storage, is_root = base_storage, base.is_dataset_root
    path = data_file.path
    if not isinstance(path, str) or not path:
        return Located(FileStatus.ESCAPES, problem="the path is empty")
    if is_absolute(path):
        return Located(
            FileStatus.ESCAPES, problem="the path is absolute; data file paths are relative to the data directory"
        )
    relpath = f"data/{path}" if is_root else path
    root = str(storage.root)
    return view.dataset.memo(
        ("data-file", root, relpath), _find, view, storage, root, "data" if is_root else "", path, relpath
    )


def locate_many(view: VersionView, data_files: list[DataFile], bases: dict[int, BaseStorage]) -> list[Located]:
    """``[locate(view, data_file, bases) for data_file in data_files]``, the
    common case taken for the whole batch at once: a data file of the dataset
    root whose path is a plain name that the listing of ``data/`` shows as a
    regular file gets what :func:`_find`'s fast path gives it (:func:`_listed`), without a memo
    entry of its own (each distinct fragment is checked once per run, and a
    later :func:`locate` of the file gives the same answer from the same
    listing). Every other file goes through :func:`locate`, concurrently on
    an object store (:meth:`~conformance.validator.context.DatasetView.map_remote`)."""
    storage = view.dataset.storage
    listing = None
    if isinstance(storage, LocalStorage):
        root = str(storage.root)
        listing = view.dataset.memo(("data-dir", root, "data"), _listing, storage, "data")
    if not listing:
        return view.dataset.map_remote(lambda data_file: locate(view, data_file, bases), data_files)
    found: list[Located | None] = []
    others: list[int] = []
    append, is_file = found.append, listing.get
    for data_file in data_files:
        path = data_file.path
        # A listed name is a non-empty str holding no "/" or NUL and is
        # neither "." nor ".."; the other tests of locate() are whether it is
        # absolute, which a name can be only by starting with a backslash or
        # with a drive letter (a ":" second).
        if data_file.base_id is None and is_file(path) is True and path[1:2] != ":" and path[0] != "\\":
            append(_listed(storage, root, "data/" + path))
        else:
            others.append(len(found))
            append(None)
    if others:
        rest = view.dataset.map_remote(lambda index: locate(view, data_files[index], bases), others)
        for index, located in zip(others, rest, strict=True):
            found[index] = located
    return found  # type: ignore[return-value]  # every None was replaced


def _listing(storage: Storage, directory: str) -> dict[str, bool] | None:
    """``{name: is a regular file}`` for the entries of ``directory`` (relative
    to the storage root, "" for the root); a symlink is not followed, so it is
    never a regular file here. None when the directory cannot be listed or
    lies outside the root."""
    found: dict[str, bool] = {}
    if not isinstance(storage, LocalStorage):
        return None  # on an object store each file is examined on its own (check_file)
    try:
        full = storage.path(directory) if directory else storage.root
        with os.scandir(full) as entries:
            for entry in entries:
                if len(found) >= MAX_LISTED:
                    return None
                found[entry.name] = entry.is_file(follow_symlinks=False)
    except (LanceFormatError, OSError, ValueError):
        return None
    return found


def _find(view: VersionView, storage: Storage, root: str, directory: str, path: str, relpath: str) -> Located:
    """:func:`check_file` for ``relpath``, ``directory/path`` (``root`` is
    ``str(storage.root)``), with a fast path: a plain file name that one
    listing of its directory shows as a regular file (not a symlink) in a
    directory inside the root is there and inside the root, so the per-file
    ``realpath`` checks are skipped. Anything else takes the checked route."""
    if "/" not in path and path not in (".", "..") and "\x00" not in path:
        listing = view.dataset.memo(("data-dir", root, directory), _listing, storage, directory)
        if listing is not None and listing.get(path) is True:
            return _listed(storage, root, relpath)
    return check_file(storage, relpath)


def _listed(storage: Storage, root: str, relpath: str) -> Located:
    """A plain file name the listing of its directory shows as a regular
    file: there, and inside the root (``root`` is ``str(storage.root)``)."""
    # The text of str(storage.root / relpath) for a plain name
    # (FileLocation.__str__, the key check_file gives), as os.path.join
    # builds it, without building a Path.
    full = root + relpath if root.endswith("/") else f"{root}/{relpath}"
    return Located(FileStatus.OK, storage, relpath, "", full, full)


# -- what the file says ----------------------------------------------------------


class FileFacts(NamedTuple):
    """What a data file says (one per file read; a NamedTuple like Located)."""

    info: FileInfo
    #: Rows the file holds: from the footer for v2.x files, from the legacy
    #: metadata's batch offsets for legacy ones; None when unknown.
    num_rows: int | None
    #: For legacy files, the ids of the fields of the file's own schema, in
    #: its (depth-first, column) order; None when unknown or not legacy.
    legacy_field_ids: tuple[int, ...] | None = None


def _legacy_metadata(tail: FileTail) -> tuple[file_pb2.Metadata, int] | None:
    """A legacy file's ``Metadata`` message (a u32 length and the message at
    the position the footer names) and that position. None when the block
    does not have that shape: legacy layouts are not specified closely enough
    to call a file corrupt for it."""
    size = tail.size
    (position,) = struct.unpack("<q", tail.read(size - LEGACY_FOOTER_SIZE, 8))
    length = size - LEGACY_FOOTER_SIZE - position
    if not 4 <= length <= MAX_LEGACY_METADATA:
        return None
    block = tail.read(position, length)
    (message_length,) = struct.unpack_from("<I", block)
    if message_length > len(block) - 4:
        return None
    try:
        return file_pb2.Metadata.FromString(block[4 : 4 + message_length]), position
    except (DecodeError, RecursionError, ValueError):
        return None


def _legacy_rows(metadata: file_pb2.Metadata) -> int | None:
    """The row count of a legacy file: the last of its ``batch_offsets``."""
    offsets = list(metadata.batch_offsets)
    if not offsets or offsets[0] != 0 or any(b < a for a, b in pairwise(offsets)):
        return None
    return offsets[-1]


def _legacy_field_ids(tail: FileTail, metadata: file_pb2.Metadata, end: int) -> tuple[int, ...] | None:
    """The field ids of a legacy file's own schema: the fields of the
    ``Manifest`` message (a u32 length and the message) at the metadata's
    ``manifest_position``, which lies before the metadata block at ``end``."""
    position = metadata.manifest_position
    if not 0 <= position <= end - 4:
        return None
    (length,) = struct.unpack("<I", tail.read(position, 4))
    if length > min(MAX_LEGACY_METADATA, end - position - 4):
        return None
    try:
        schema = table_pb2.Manifest.FromString(tail.read(position + 4, length))
    except (DecodeError, RecursionError, ValueError):
        return None
    return tuple(f.id for f in schema.fields)


def checked_file_storage(located: Located) -> Storage:
    """The storage to read a file :func:`locate` found through: a
    :class:`CheckedFile` on a local disk, the file's own storage elsewhere."""
    storage = located.storage
    if storage is None or located.full is None:
        raise TypeError(f"only a data file locate() found can be read, not one that is {located.status.value}")
    if isinstance(storage, LocalStorage):
        return CheckedFile(storage, located.relpath, located.full)
    return storage


class CheckedFile(LocalStorage):
    """A read-only view of one data file whose path was already checked, for
    the reference reader (which reads through a Storage).

    Reading through the dataset's storage re-checks the path against the
    root (``realpath`` walks) and re-opens the file on every ranged read.
    Here the check is done once by :func:`locate`, the size is taken once,
    and ranges inside the file's last :data:`TAIL_BYTES` (footer, offsets
    tables and, for most files, the column metadata) are served from a
    single read. Any other path goes through the ordinary checks.
    """

    def __init__(self, storage: LocalStorage, relpath: str, full: str):
        # Not Storage.__init__: the root is already absolute.
        self.root, self.writable = storage.root, False
        self._relpath, self._full = relpath, full
        # os-level calls: a buffered file object costs more than the read
        # itself for the small files a validation opens by the thousand.
        fd = os.open(full, _OPEN_FLAGS)
        try:
            self._size = os.fstat(fd).st_size
            self._tail_start = max(0, self._size - TAIL_BYTES)
            self._tail = os.pread(fd, self._size - self._tail_start, self._tail_start)
        finally:
            os.close(fd)
        if len(self._tail) != self._size - self._tail_start:
            raise CorruptFileError(str(full), "the file changed while it was read")

    def path(self, relpath: str) -> Path:
        return Path(self._full) if relpath == self._relpath else super().path(relpath)

    def path_text(self, relpath: str) -> str:
        return self._full if relpath == self._relpath else super().path_text(relpath)

    def size(self, relpath: str) -> int:
        return self._size if relpath == self._relpath else super().size(relpath)

    def read(self, relpath: str, offset: int = 0, length: int | None = None) -> bytes:
        if relpath != self._relpath:
            return super().read(relpath, offset, length)
        if length is None:
            length = self._size - offset
        if offset < 0 or length < 0 or offset + length > self._size:
            raise CorruptFileError(
                str(self._full), f"byte range [{offset}, {offset + length}) is outside the file ({self._size} bytes)"
            )
        if offset >= self._tail_start:
            start = offset - self._tail_start
            return self._tail[start : start + length]
        return super().read(relpath, offset, length)


def _read_tail(located: Located) -> FileTail:
    """The tail of a data file :func:`locate` found: its path is checked
    already, so one open serves it (os-level calls: a buffered file object
    costs more than the read itself for the small files a validation opens
    by the thousand). Reads before the tail go to the file's storage."""
    full, storage, relpath = located.full, located.storage, located.relpath
    if full is None or storage is None:
        raise TypeError(f"only a data file locate() found has a tail to read, not one that is {located.status.value}")
    if not isinstance(storage, LocalStorage):
        # An object store: one ranged read of the tail, which says the size too.
        size, data = storage.read_tail(relpath, TAIL_BYTES)
        start = size - len(data)
        return FileTail(full, size, start, data, storage, relpath)
    fd = os.open(full, _OPEN_FLAGS)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - TAIL_BYTES)
        data = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    if len(data) != size - start:
        raise CorruptFileError(full, "the file changed while it was read")
    return FileTail(full, size, start, data, storage, relpath)


def _read_facts(located: Located) -> FileFacts:
    """What the file ``located`` says."""
    try:
        tail = _read_tail(located)
        info = inspect_file(tail, tail.relpath)
        if info.layout != LAYOUT_LEGACY:
            return FileFacts(info, info.num_rows)
        found = _legacy_metadata(tail)
        if found is None:
            return FileFacts(info, None)
        return FileFacts(info, _legacy_rows(found[0]), _legacy_field_ids(tail, *found))
    except LanceFormatError:
        raise
    except (OSError, ValueError, struct.error, DecodeError, RecursionError, MemoryError) as exc:
        raise CorruptFileError(located.key, f"cannot be read as a Lance file: {exc}") from None


def file_facts(view: VersionView, located: Located) -> Loaded[FileFacts]:
    """The footer facts of a file :func:`locate` found (``located.ok``)."""
    return view.dataset.cached(("footer", located.key), _read_facts, located)


def file_facts_each(view: VersionView, located_files: list[Located]) -> list[Loaded[FileFacts]]:
    """``[file_facts(view, located) for located in located_files]``, asked
    of the cache in one call (:meth:`~conformance.validator.context.DatasetView.cached_each`)."""
    keys = [("footer", located.key) for located in located_files]
    return view.dataset.cached_each(keys, _read_facts, located_files)


def prefetch_footers(view: VersionView, located_files: Iterable[Located]) -> None:
    """Read the footers of the files :func:`locate` found among
    ``located_files`` with the run's I/O threads, for :func:`file_facts` to
    find later (see :meth:`~conformance.validator.context.DatasetView.prefetch`)."""
    view.dataset.prefetch((("footer", located.key), _read_facts, located) for located in located_files if located.ok)


# -- iteration helpers -------------------------------------------------------------


# Each version's data files are listed once: the lists below are computed on
# first use and kept on the version view (VersionView.memo) for the rules
# that walk a whole version. The checks of one fragment at a time walk only
# the fragments new to the run (facts/fragment_checks.py), and the loads
# behind both (locate, file_facts) are cached for the whole run, so a data
# file that many versions list is resolved and read once.


def each_data_file(view: VersionView) -> list[tuple[tuple[int, int], Fragment, DataFile]]:
    """``(ref, fragment, data file)`` for every data file of the version; ``ref``
    becomes a finding location through :func:`at` (only when one is reported)."""
    return view.memo("data_files.each", lambda: _each_data_file(view))


def _each_data_file(view: VersionView) -> list[tuple[tuple[int, int], Fragment, DataFile]]:
    return [
        ((f_index, d_index), fragment, data_file)
        for f_index, fragment in enumerate(view.manifest.fragments)
        for d_index, data_file in enumerate(fragment.files)
    ]


def each_legacy(view: VersionView) -> list[tuple[tuple[int, int], Fragment, DataFile]]:
    """:func:`each_data_file` for the legacy (``is_legacy``) data files only,
    listed once per version for the rules on legacy files: most versions
    have none, and those rules then skip the walk."""
    return view.memo("data_files.legacy", lambda: [entry for entry in each_data_file(view) if entry[2].is_legacy])


def at(view: VersionView, ref: tuple[int, int]) -> str:
    return view.at(f"fragments[{ref[0]}].files[{ref[1]}]")


def data_file_name(data_file: DataFile) -> str:
    """A data file's path as a message shows it."""
    return printable(data_file.path)
