"""Files held in memory, read through the :class:`~.base.Storage` interface.

Some Lance files travel inside other files (a MemWAL index's inline region
snapshots are whole Lance files in its details). :class:`MemoryStorage` lets
the ordinary readers decode them without a disk: it holds a fixed set of
named files, keeps the interface's promises (a name it does not hold is
refused with :class:`~reference_impl.errors.PathEscapeError`, a byte range is
checked against the file's length), and refuses every write as a read-only
base path does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from ..errors import CorruptFileError, PathEscapeError
from .base import Storage


class MemoryStorage(Storage):
    """Read-only files ``{relpath: bytes}``; ``label`` names them in messages."""

    def __init__(self, files: Mapping[str, bytes], label: str):
        self._files = dict(files)
        self.root = label
        self.writable = False
        self.storage_options = {}

    def join(self, relpath: str) -> str:
        return f"{self.root}/{relpath}"

    def path(self, relpath: str) -> str:
        if relpath not in self._files:
            raise PathEscapeError(str(self.root), f"no file {relpath!r} is held here")
        return self.join(relpath)

    def for_base(self, base_path: str) -> Storage:
        raise PathEscapeError(str(self.root), f"files held in memory have no base path {base_path!r}")

    def subtree(self, relpath: str, *, writable: bool | None = None) -> Storage:
        raise PathEscapeError(str(self.root), f"files held in memory have no directory {relpath!r}")

    def above(self, parts: Sequence[str]) -> Storage | None:
        return None

    def exists(self, relpath: str) -> bool:
        return relpath in self._files

    def has_entry(self, relpath: str) -> bool:
        return self.exists(relpath) or self.is_dir(relpath)

    def is_dir(self, relpath: str) -> bool:
        return any(PurePosixPath(name).is_relative_to(relpath) and name != relpath for name in self._files)

    def root_is_dir(self) -> bool:
        return True

    def size(self, relpath: str) -> int:
        self.path(relpath)
        return len(self._files[relpath])

    def read(self, relpath: str, offset: int = 0, length: int | None = None) -> bytes:
        self.path(relpath)
        data = self._files[relpath]
        if length is None:
            length = len(data) - offset
        if offset < 0 or length < 0 or offset + length > len(data):
            raise CorruptFileError(
                self.join(relpath), f"byte range [{offset}, {offset + length}) is outside the {len(data)} bytes"
            )
        return data[offset : offset + length]

    def list_dir(self, relpath: str) -> list[str]:
        prefix = PurePosixPath(relpath)
        return sorted(
            {
                PurePosixPath(name).relative_to(prefix).parts[0]
                for name in self._files
                if PurePosixPath(name).is_relative_to(prefix) and name != relpath
            }
        )

    def put_if_not_exists(
        self, relpath: str, data: bytes | Sequence[bytes | memoryview], *, durable: bool = True
    ) -> None:
        raise PathEscapeError(relpath, f"{self.root} holds files in memory, read only")

    def put(self, relpath: str, data: bytes) -> None:
        raise PathEscapeError(relpath, f"{self.root} holds files in memory, read only")

    def delete(self, relpath: str) -> None:
        raise PathEscapeError(relpath, f"{self.root} holds files in memory, read only")
