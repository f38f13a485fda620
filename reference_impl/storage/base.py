"""The one interface every read and write of a dataset goes through (layout:
dataset directory, base paths).

A :class:`Storage` holds the files under one *root*: a local directory
(:mod:`.local`) or a key prefix in an object store bucket (:mod:`.object_store`).
Whatever the backend, a storage keeps the same promises:

* every path is relative to the root, and a path leading outside it (``..``,
  an absolute path, a symlink or key pointing elsewhere) is refused with
  :class:`~reference_impl.errors.PathEscapeError`;
* byte ranges are checked against the file's real size before anything is
  read or allocated (a hostile length is a
  :class:`~reference_impl.errors.CorruptFileError`, not a huge allocation);
* :meth:`Storage.put_if_not_exists` never replaces a file (the commit
  protocol's atomic step) and signals a taken name with
  :class:`~reference_impl.errors.CommitConflictError`;
* a failure of the operating system or the network is an
  :class:`~reference_impl.errors.UnreadablePathError` naming the file.

``Storage`` is abstract: a local directory is a
:class:`~reference_impl.storage.local.LocalStorage`, a bucket prefix an
:class:`~reference_impl.storage.object_store.S3Storage`, and
:func:`~reference_impl.storage.uri.open_storage` picks one for a URI.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar


class Storage(ABC):
    """Files under one root (see the module docs for the promises kept)."""

    #: The root: a local ``Path``, or the ``s3://bucket/prefix`` text of an
    #: object store root. ``str(root)`` names it in every message.
    root: Path | str
    #: False for declared base paths and for validation: writes are refused.
    writable: bool
    #: The pylance-style options the storage was opened with; base paths on
    #: an object store are opened with the same ones.
    storage_options: Mapping[str, str]
    #: Whether the files are on a local disk (where ``os`` calls may reach them).
    is_local: ClassVar[bool] = False

    # -- paths -------------------------------------------------------------

    @property
    def location(self) -> str:
        """The root as text: a local path, or ``s3://bucket/prefix``."""
        return str(self.root)

    @abstractmethod
    def join(self, relpath: str) -> str:
        """The text naming ``relpath`` under the root, for messages and cache
        keys only: nothing is checked (use :meth:`path_text` for that)."""
        raise NotImplementedError

    @abstractmethod
    def path(self, relpath: str) -> Path | str:
        """Where ``relpath`` is (a ``Path`` locally, a URI text on an object
        store), refusing anything outside the root."""
        raise NotImplementedError

    def path_text(self, relpath: str) -> str:
        """``str(self.path(relpath))``, checked the same way."""
        return str(self.path(relpath))

    @abstractmethod
    def for_base(self, base_path: str) -> Storage:
        """Read-only storage confined to a declared base path (a path or URI)."""
        raise NotImplementedError

    @abstractmethod
    def subtree(self, relpath: str, *, writable: bool | None = None) -> Storage:
        """Storage rooted at the directory ``relpath`` under this root (a
        branch's ``tree/NAME``), writable as this one unless told."""
        raise NotImplementedError

    @abstractmethod
    def above(self, parts: Sequence[str]) -> Storage | None:
        """The storage whose root is this one's without the trailing path
        segments ``parts`` (a branch's ``tree/NAME`` back to the dataset
        root); None when this root does not end with them."""
        raise NotImplementedError

    # -- reads ----------------------------------------------------------------

    @abstractmethod
    def exists(self, relpath: str) -> bool:
        """Whether ``relpath`` is a regular file inside the root."""
        raise NotImplementedError

    @abstractmethod
    def has_entry(self, relpath: str) -> bool:
        """Whether anything is at ``relpath`` (a file, a directory, or an entry
        :meth:`read` will refuse)."""
        raise NotImplementedError

    @abstractmethod
    def is_dir(self, relpath: str) -> bool:
        """Whether ``relpath`` is a directory (on an object store: whether any
        key lies under ``relpath/``)."""
        raise NotImplementedError

    @abstractmethod
    def root_is_dir(self) -> bool:
        """Whether the root itself is there (a directory; on an object store,
        any key under the prefix)."""
        raise NotImplementedError

    @abstractmethod
    def size(self, relpath: str) -> int:
        raise NotImplementedError

    @abstractmethod
    def read(self, relpath: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes ``[offset, offset + length)`` of a file; the whole file by
        default. A range running past the end is a ``CorruptFileError``."""
        raise NotImplementedError

    def read_tail(self, relpath: str, length: int) -> tuple[int, bytes]:
        """The file's size and its last ``length`` bytes (the whole file when
        it is shorter): what a footer reader needs. An object store answers in
        one request where :meth:`size` and :meth:`read` take two or more."""
        size = self.size(relpath)
        start = max(0, size - length)
        return size, self.read(relpath, start, size - start)

    @abstractmethod
    def list_dir(self, relpath: str) -> list[str]:
        """Names of the entries of a directory, sorted; empty when there is none."""
        raise NotImplementedError

    # -- writes ---------------------------------------------------------------

    @abstractmethod
    def put_if_not_exists(
        self, relpath: str, data: bytes | Sequence[bytes | memoryview], *, durable: bool = True
    ) -> None:
        """Write a new file atomically; ``CommitConflictError`` if the name is taken.

        With ``durable`` (the default) the bytes are on stable storage before
        the name appears, so a file a committed manifest refers to survives a
        power failure. False is for a file whose content a later durable
        write carries too (the transaction file, which the manifest embeds):
        after a power failure it may be missing or empty, and nothing is lost."""
        raise NotImplementedError

    @abstractmethod
    def put(self, relpath: str, data: bytes) -> None:
        """Write or replace a file atomically (for hints and refs, never manifests)."""
        raise NotImplementedError

    @abstractmethod
    def delete(self, relpath: str) -> None:
        raise NotImplementedError


def is_object_store_uri(text: str | os.PathLike) -> bool:
    """Whether ``text`` names a location in an object store (``s3://...``)."""
    return isinstance(text, str) and text.lower().startswith(("s3://", "s3+ddb://"))
