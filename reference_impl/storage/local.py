"""The local directory store (layout: dataset directory, base paths).

:class:`LocalStorage` resolves paths relative to the dataset root, refuses any
path that leads outside it (``..``, absolute paths, symlinks pointing
elsewhere) and checks byte ranges against the file's real size before reading,
so a hostile length field can never make it read past a file or allocate more
than the file holds.

Files may also live under a *declared base path* (``Manifest.base_paths``);
:meth:`LocalStorage.for_base` gives a read-only storage confined to that base,
on an object store when the base is an ``s3://`` URI.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..errors import CommitConflictError, CorruptFileError, LanceFormatError, PathEscapeError, UnreadablePathError
from .base import Storage, is_object_store_uri
from .object_store import S3Storage


def local_path(uri: str | os.PathLike) -> Path:
    """The local filesystem path of ``uri`` (a path or a ``file://`` URI)."""
    text = os.fspath(uri)
    if text.startswith("file://"):
        parsed = urlparse(text)
        return Path(unquote(parsed.path))
    if "://" in text:
        raise LanceFormatError(text, "only local paths and file:// URIs are supported")
    return Path(text)


class LocalStorage(Storage):
    """Files under one root directory."""

    root: Path
    is_local = True

    def __init__(
        self,
        root: str | os.PathLike,
        *,
        writable: bool = True,
        storage_options: Mapping[str, str] | None = None,
    ):
        self.root = local_path(root).absolute()
        self.writable = writable
        self.storage_options = dict(storage_options or {})
        self._real_root = os.path.realpath(self.root)

    def __repr__(self) -> str:
        return f"LocalStorage({str(self.root)!r})"

    def join(self, relpath: str) -> str:
        return str(self.root / relpath)

    # -- paths -------------------------------------------------------------

    def path(self, relpath: str) -> Path:
        """The absolute path of ``relpath``, refusing anything outside the root."""
        if not isinstance(relpath, str) or relpath == "":
            raise PathEscapeError(str(self.root), f"invalid relative path {relpath!r}")
        if "\x00" in relpath:
            raise PathEscapeError(str(self.root), f"path contains a NUL byte: {relpath!r}")
        candidate = Path(relpath)
        if candidate.is_absolute() or ".." in candidate.parts:
            raise PathEscapeError(relpath, f"path leads outside {self.root}")
        full = self.root / candidate
        if self._has_symlink(candidate.parts):
            real_root = self._real_root
            real = os.path.realpath(full)
            if real != real_root and not real.startswith(real_root + os.sep):
                raise PathEscapeError(str(full), f"resolves (through a symlink) outside {self.root}")
        return full

    def _has_symlink(self, parts: tuple[str, ...]) -> bool:
        """Whether an entry on the way from the root to ``parts`` might be a
        symlink, so that the path must be resolved to know where it leads.

        Resolving every path in full (``realpath``) examines every directory
        above the root too, on every access; a commit makes a dozen. Without
        a symlink below the root a path cannot lead outside it (``..`` is
        refused already), so one ``lstat`` per component below the root
        decides, and only a symlink (or an entry that cannot be examined)
        costs the full resolution. A missing entry is no symlink, and nothing
        lies beyond it."""
        current = str(self.root)
        for part in parts:
            current = os.path.join(current, part)
            try:
                mode = os.lstat(current).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return False
            except (OSError, ValueError):
                return True
            if stat.S_ISLNK(mode):
                return True
        return False

    def path_text(self, relpath: str) -> str:
        """``str(self.path(relpath))``, checked the same way. A storage that
        already holds the checked text (the validator's view of one data
        file) returns it without building a ``Path``, which costs more than
        reading a small file's footer."""
        return str(self.path(relpath))

    def for_base(self, base_path: str) -> Storage:
        """Read-only storage rooted at a declared base path.

        The spec asks for absolute base paths; a relative one (pylance stores
        what it was given) is taken relative to this root, never to the
        process's working directory. An ``s3://`` base is opened with this
        storage's options.
        """
        if is_object_store_uri(base_path):
            return S3Storage.at(base_path, self.storage_options, writable=False)
        path = local_path(base_path)
        if not path.is_absolute():
            path = self.root / path
        return LocalStorage(path, writable=False, storage_options=self.storage_options)

    def subtree(self, relpath: str, *, writable: bool | None = None) -> LocalStorage:
        return LocalStorage(
            self.path(relpath),
            writable=self.writable if writable is None else writable,
            storage_options=self.storage_options,
        )

    def above(self, parts: Sequence[str]) -> LocalStorage | None:
        if not parts or list(self.root.parts[-len(parts) :]) != list(parts):
            return None
        return LocalStorage(
            self.root.parents[len(parts) - 1], writable=self.writable, storage_options=self.storage_options
        )

    # -- reads ----------------------------------------------------------------
    #
    # Every entry is examined with stat before it is opened, and only a
    # regular file is opened (with O_NONBLOCK, and checked again with fstat,
    # in case it was swapped between the two calls): a named pipe in place of
    # a manifest would otherwise block the open until a writer appears, and a
    # device could do anything. Every OSError becomes an UnreadablePathError
    # naming the path, so no caller ever sees a bare OSError.

    @staticmethod
    def _stat(full: Path) -> os.stat_result | None:
        """The entry's status (symlinks followed); None when nothing is there."""
        try:
            return os.stat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise UnreadablePathError(str(full), f"cannot examine: {exc.strerror or exc}") from None
        except ValueError as exc:  # an embedded NUL byte, refused by path() already
            raise PathEscapeError(str(full), str(exc)) from None

    def exists(self, relpath: str) -> bool:
        """Whether ``relpath`` is a regular file (a path leading outside the
        root, a directory or a special file is not)."""
        try:
            full = self.path(relpath)
        except PathEscapeError:
            return False
        status = self._stat(full)
        return status is not None and stat.S_ISREG(status.st_mode)

    def has_entry(self, relpath: str) -> bool:
        """Whether anything is at ``relpath``: a file, a directory, or a
        special file that :meth:`read` will refuse (with a message saying
        what it is, where :meth:`exists` would only say it is not a file)."""
        try:
            full = self.path(relpath)
        except PathEscapeError:
            return False
        return self._stat(full) is not None

    def is_dir(self, relpath: str) -> bool:
        try:
            full = self.path(relpath)
        except PathEscapeError:
            return False
        status = self._stat(full)
        return status is not None and stat.S_ISDIR(status.st_mode)

    def root_is_dir(self) -> bool:
        status = self._stat(self.root)
        return status is not None and stat.S_ISDIR(status.st_mode)

    def size(self, relpath: str) -> int:
        return self._regular_file_status(self.path(relpath)).st_size

    @classmethod
    def _regular_file_status(cls, full: Path) -> os.stat_result:
        status = cls._stat(full)
        if status is None:
            raise LanceFormatError(str(full), "file does not exist")
        _require_regular(full, status.st_mode)
        return status

    @classmethod
    def _open_regular_file(cls, full: Path) -> tuple[int, int]:
        """A read-only descriptor of the regular file ``full``, and its size."""
        cls._regular_file_status(full)
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise UnreadablePathError(str(full), f"cannot open: {exc.strerror or exc}") from None
        try:
            status = os.fstat(fd)
            _require_regular(full, status.st_mode)
        except BaseException:
            os.close(fd)
            raise
        return fd, status.st_size

    def read(self, relpath: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes ``[offset, offset + length)`` of a file; the whole file by default.

        The range is checked against the file's size first: a range that runs
        past the end is a :class:`CorruptFileError`, not a short read.
        """
        full = self.path(relpath)
        fd, size = self._open_regular_file(full)
        try:
            if length is None:
                length = size - offset
            if offset < 0 or length < 0 or offset + length > size:
                raise CorruptFileError(
                    str(full), f"byte range [{offset}, {offset + length}) is outside the file ({size} bytes)"
                )
            data = _pread_exactly(fd, length, offset, full)
        finally:
            os.close(fd)
        if len(data) != length:
            raise CorruptFileError(str(full), f"short read: wanted {length} bytes at {offset}, got {len(data)}")
        return data

    def list_dir(self, relpath: str) -> list[str]:
        """Names of the entries of a directory; empty when it does not exist
        (or is not a directory)."""
        try:
            full = self.path(relpath)
        except PathEscapeError:
            return []
        try:
            return sorted(os.listdir(full))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise UnreadablePathError(str(full), f"cannot list: {exc.strerror or exc}") from None

    # -- writes ---------------------------------------------------------------

    def _check_writable(self, relpath: str) -> Path:
        if not self.writable:
            raise PathEscapeError(relpath, f"{self.root} is a read-only base path")
        full = self.path(relpath)
        full.parent.mkdir(parents=True, exist_ok=True)
        return full

    def put_if_not_exists(
        self, relpath: str, data: bytes | Sequence[bytes | memoryview], *, durable: bool = True
    ) -> None:
        """Write a new file atomically; fail if the name is already taken.

        ``data`` is the content, or a sequence of chunks written in order (so
        that large files need not be joined in memory first). The bytes go to
        a temporary file first and are linked into place, so a reader never
        sees a partial file and an existing file is never replaced (the commit
        protocol's put-if-not-exists on a local filesystem). With ``durable``
        the temporary file is fsynced before it is linked (see
        :meth:`Storage.put_if_not_exists`); a process killed at any point
        leaves the same files either way, only a power failure differs.
        """
        full = self._check_writable(relpath)
        tmp = full.with_name(f".{full.name}.{uuid.uuid4().hex}.tmp")
        chunks = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
        with open(tmp, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        try:
            os.link(tmp, full)
        except FileExistsError:
            raise CommitConflictError(str(full), "already exists") from None
        finally:
            tmp.unlink(missing_ok=True)

    def put(self, relpath: str, data: bytes) -> None:
        """Write or replace a file atomically (for hints and refs, never manifests)."""
        full = self._check_writable(relpath)
        tmp = full.with_name(f".{full.name}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.replace(tmp, full)
        finally:
            tmp.unlink(missing_ok=True)

    def delete(self, relpath: str) -> None:
        full = self._check_writable(relpath)
        full.unlink(missing_ok=True)


def _kind(mode: int) -> str:
    """What a non-regular entry is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "an entry of an unknown kind"


def _require_regular(full: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UnreadablePathError(str(full), f"is {_kind(mode)}, not a regular file; it is not opened")


#: The most one read(2) returns on Linux; larger ranges take several.
_READ_CHUNK = 0x7FFFF000


def _pread_exactly(fd: int, length: int, offset: int, full: Path) -> bytes:
    """``length`` bytes at ``offset`` (fewer only when the file ends first)."""
    try:
        if length <= _READ_CHUNK:
            return os.pread(fd, length, offset)
        parts = []
        while length > 0:
            part = os.pread(fd, min(length, _READ_CHUNK), offset)
            if not part:
                break
            parts.append(part)
            offset += len(part)
            length -= len(part)
        return b"".join(parts)
    except OSError as exc:
        raise UnreadablePathError(str(full), f"cannot read: {exc.strerror or exc}") from None
