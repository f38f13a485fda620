"""Access to the files of one dataset (layout: dataset directory, base paths).

Every read and write of the reference implementation goes through a
:class:`Storage`. It resolves paths relative to the dataset root, refuses any
path that leads outside it (``..``, absolute paths, symlinks pointing
elsewhere) and checks byte ranges against the file's real size before reading,
so a hostile length field can never make it read past a file or allocate more
than the file holds.

Files may also live under a *declared base path* (``Manifest.base_paths``);
:meth:`Storage.for_base` gives a read-only storage confined to that base.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Sequence
from urllib.parse import unquote, urlparse

from .errors import CommitConflictError, CorruptFileError, LanceFormatError, PathEscapeError


def local_path(uri: str | os.PathLike) -> Path:
    """The local filesystem path of ``uri`` (a path or a ``file://`` URI)."""
    text = os.fspath(uri)
    if text.startswith("file://"):
        parsed = urlparse(text)
        return Path(unquote(parsed.path))
    if "://" in text:
        raise LanceFormatError(text, "only local paths and file:// URIs are supported")
    return Path(text)


class Storage:
    """Files under one root directory."""

    def __init__(self, root: str | os.PathLike, *, writable: bool = True):
        self.root = local_path(root).absolute()
        self.writable = writable
        self._real_root = os.path.realpath(self.root)

    def __repr__(self) -> str:
        return f"Storage({str(self.root)!r})"

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
        real_root = self._real_root
        real = os.path.realpath(full)
        if real != real_root and not real.startswith(real_root + os.sep):
            raise PathEscapeError(str(full), f"resolves (through a symlink) outside {self.root}")
        return full

    def path_text(self, relpath: str) -> str:
        """``str(self.path(relpath))``, checked the same way. A storage that
        already holds the checked text (the validator's view of one data
        file) returns it without building a ``Path``, which costs more than
        reading a small file's footer."""
        return str(self.path(relpath))

    def for_base(self, base_path: str) -> "Storage":
        """Read-only storage rooted at a declared base path.

        The spec asks for absolute base paths; a relative one (pylance stores
        what it was given) is taken relative to this root, never to the
        process's working directory.
        """
        path = local_path(base_path)
        if not path.is_absolute():
            path = self.root / path
        return Storage(path, writable=False)

    # -- reads ----------------------------------------------------------------

    def exists(self, relpath: str) -> bool:
        try:
            return self.path(relpath).is_file()
        except PathEscapeError:
            return False

    def is_dir(self, relpath: str) -> bool:
        try:
            return self.path(relpath).is_dir()
        except PathEscapeError:
            return False

    def size(self, relpath: str) -> int:
        return self._size(self.path(relpath))

    @staticmethod
    def _size(full: Path) -> int:
        try:
            return full.stat().st_size
        except FileNotFoundError:
            raise LanceFormatError(str(full), "file does not exist") from None
        except OSError as exc:
            raise LanceFormatError(str(full), f"cannot stat: {exc.strerror}") from None

    def read(self, relpath: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes ``[offset, offset + length)`` of a file; the whole file by default.

        The range is checked against the file's size first: a range that runs
        past the end is a :class:`CorruptFileError`, not a short read.
        """
        full = self.path(relpath)
        size = self._size(full)
        if length is None:
            length = size - offset
        if offset < 0 or length < 0 or offset + length > size:
            raise CorruptFileError(
                str(full), f"byte range [{offset}, {offset + length}) is outside the file ({size} bytes)"
            )
        try:
            with open(full, "rb") as handle:
                handle.seek(offset)
                data = handle.read(length)
        except OSError as exc:
            raise LanceFormatError(str(full), f"cannot read: {exc.strerror}") from None
        if len(data) != length:
            raise CorruptFileError(str(full), f"short read: wanted {length} bytes at {offset}, got {len(data)}")
        return data

    def list_dir(self, relpath: str) -> list[str]:
        """Names of the entries of a directory; empty when it does not exist."""
        try:
            full = self.path(relpath)
        except PathEscapeError:
            return []
        try:
            return sorted(os.listdir(full))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise LanceFormatError(str(full), f"cannot list: {exc.strerror}") from None

    # -- writes ---------------------------------------------------------------

    def _check_writable(self, relpath: str) -> Path:
        if not self.writable:
            raise PathEscapeError(relpath, f"{self.root} is a read-only base path")
        full = self.path(relpath)
        full.parent.mkdir(parents=True, exist_ok=True)
        return full

    def put_if_not_exists(self, relpath: str, data: bytes | Sequence[bytes | memoryview]) -> None:
        """Write a new file atomically; fail if the name is already taken.

        ``data`` is the content, or a sequence of chunks written in order (so
        that large files need not be joined in memory first). The bytes go to
        a temporary file first and are linked into place, so a reader never
        sees a partial file and an existing file is never replaced (the commit
        protocol's put-if-not-exists on a local filesystem).
        """
        full = self._check_writable(relpath)
        tmp = full.with_name(f".{full.name}.{uuid.uuid4().hex}.tmp")
        chunks = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
        with open(tmp, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
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
