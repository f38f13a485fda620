"""What the validator knows about a fragment's deletion file (table format:
deletion files).

:func:`deletion_content` runs the reference reader's
:func:`~reference_impl.deletions.inspect_deletion_file` once per file and
validation run, and adds the manifest-level problems (an unknown kind, an
undeclared base) and a finding location. That reader never expands a file
beyond what the fragment can hold: a ``.bin`` file stays a Roaring bitmap, and
an ``.arrow`` file is only decoded once its metadata shows its row count and
the declared size of each buffer fit the fragment's physical rows (see
:mod:`reference_impl.deletions`).

A file that is larger than :data:`MAX_FILE_BYTES`, or an Arrow file with more
than :data:`MAX_ARROW_OFFSETS` offsets in a fragment that has that many rows,
is not read: its status is ``TOO_LARGE``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from pyroaring import BitMap

from reference_impl.deletions import MAX_FILE_BYTES as _READER_MAX_FILE_BYTES
from reference_impl.deletions import (
    DeletionFileContent,
    DeletionStatus,
    deletion_file_location,
    inspect_deletion_file,
)
from reference_impl.errors import LanceFormatError
from reference_impl.fragments import DeletionFile, DeletionFileType, Fragment
from reference_impl.storage import Storage

from ..context import VersionView


class DeletionLookup(str, Enum):
    """Why a deletion file was not read, found before reading it."""

    #: The file exists but cannot be read, or its path leads out of the dataset.
    UNREADABLE = "unreadable"
    #: A file_type that is neither ARROW_ARRAY nor BITMAP.
    UNKNOWN_KIND = "unknown-kind"
    #: A base_id the manifest does not declare (the base path rules report it).
    UNDECLARED_BASE = "undeclared-base"


#: Deletion files larger than this are not read (the reader's own limit,
#: passed to it on every read).
MAX_FILE_BYTES = _READER_MAX_FILE_BYTES
#: Arrow deletion files listing more offsets than this are not decoded.
MAX_ARROW_OFFSETS = 1 << 26


@dataclass
class DeletionContent:
    """What one deletion file holds, or why it could not be read.

    ``status`` is one of the reader's :class:`DeletionStatus` values (``OK``,
    ``MISSING``, ``KIND_MISMATCH``, ``ARROW_LAYOUT``, ``BITMAP_LAYOUT``,
    ``TOO_MANY``: the file lists more offsets than the fragment has rows, so
    some are repeated or out of range; ``TOO_LARGE``: not read, see the module
    docstring), or a :class:`DeletionLookup` value, found before the file is
    read.
    """

    status: DeletionStatus | DeletionLookup
    #: The fragment's record of the file, as the manifest holds it.
    deletion_file: DeletionFile
    location: str
    message: str = ""
    #: What the reference reader made of the file (None when it was not read).
    file: DeletionFileContent | None = None

    @property
    def ok(self) -> bool:
        return self.status is DeletionStatus.OK

    @property
    def offsets(self) -> BitMap:
        """The distinct non-negative offsets (status ok)."""
        return self.file.offsets if self.file is not None else BitMap()

    @property
    def entries(self) -> int:
        """How many values the file lists (an Arrow column may repeat one)."""
        return self.file.entries if self.file is not None else 0

    @property
    def repeated(self) -> int:
        """How many values repeat an earlier one (an Arrow column may)."""
        return self.file.repeated if self.file is not None else 0

    @property
    def negatives(self) -> int:
        """How many values are negative (only an int32 column can hold them)."""
        return self.file.negatives if self.file is not None else 0

    @property
    def distinct_negatives(self) -> int:
        return self.file.distinct_negatives if self.file is not None else 0

    @property
    def column_type(self) -> str | None:
        """The Arrow column type ("int32" or "uint32") of an ``.arrow`` file."""
        return self.file.column_type if self.file is not None else None


def deletion_location(storage: Storage, relpath: str, root: Storage) -> str:
    """A finding location: relative to the dataset root when the file is under it."""
    if storage.root == root.root:
        return relpath
    return f"{storage.root}/{relpath}"


def _positions(view: VersionView) -> dict[int, int]:
    """The index of each fragment object in the manifest, by ``id()`` (the
    first, should one object be listed twice); built once per version rather
    than scanning the fragments for each deletion file."""

    def compute() -> dict[int, int]:
        found: dict[int, int] = {}
        for index, fragment in enumerate(view.manifest.fragments):
            found.setdefault(id(fragment), index)
        return found

    return view.memo("deletions.positions", compute)


def deletion_content(view: VersionView, fragment: Fragment) -> DeletionContent | None:
    """The content of ``fragment``'s deletion file (None when it has none),
    read at most once per validation run."""
    if fragment.deletion_file is None:
        return None
    return deletion_file_content(view, fragment, fragment.deletion_file)


def deletion_file_content(view: VersionView, fragment: Fragment, deletion_file: DeletionFile) -> DeletionContent:
    """The content of ``deletion_file``, the deletion file of ``fragment``,
    read at most once per validation run. The first call on a version reads
    every deletion file the version lists, concurrently (:meth:`DatasetView.prefetch`)."""
    view.memo("deletions.prefetched", lambda: _prefetch(view))
    found = _resolve(view, fragment, deletion_file)
    if isinstance(found, DeletionContent):
        return found
    key, read, location = found
    loaded = view.dataset.cached(key, read)
    if not loaded.ok:
        return DeletionContent(DeletionLookup.UNREADABLE, deletion_file, location, loaded.error.problem)
    content = loaded.value
    return DeletionContent(content.status, deletion_file, location, content.problem, content)


def _prefetch(view: VersionView) -> bool:
    jobs = []
    for fragment in view.manifest.fragments:
        if fragment.deletion_file is not None:
            found = _resolve(view, fragment, fragment.deletion_file)
            if not isinstance(found, DeletionContent):
                jobs.append(found[:2])
    view.dataset.prefetch(jobs)
    return True


def _resolve(
    view: VersionView, fragment: Fragment, deletion_file: DeletionFile
) -> DeletionContent | tuple[tuple, Callable[[], DeletionFileContent], str]:
    """Why ``deletion_file`` cannot be read (a :class:`DeletionContent`), or
    the cache key it is read under, the read itself, and its finding location."""
    manifest = view.manifest
    position = _positions(view).get(id(fragment))
    in_manifest = view.at(f"fragments[{position}].deletion_file")
    kind = deletion_file.file_type
    if not isinstance(kind, DeletionFileType):
        return DeletionContent(
            DeletionLookup.UNKNOWN_KIND,
            deletion_file,
            in_manifest,
            f"file_type {deletion_file.file_type!r} is neither ARROW_ARRAY (0) nor BITMAP (1)",
        )
    if deletion_file.base_id is not None and manifest.base_path(deletion_file.base_id) is None:
        return DeletionContent(DeletionLookup.UNDECLARED_BASE, deletion_file, in_manifest)
    root = view.dataset.storage
    try:
        storage, relpath = deletion_file_location(root, fragment.id, deletion_file, manifest.base_paths)
    except LanceFormatError as exc:
        return DeletionContent(DeletionLookup.UNREADABLE, deletion_file, in_manifest, exc.problem)
    location = deletion_location(storage, relpath, root)
    limit = max(0, fragment.physical_rows)
    key = ("rules.deletions", str(storage.root), relpath, limit)

    def read() -> DeletionFileContent:
        return inspect_deletion_file(
            storage,
            relpath,
            kind,
            physical_rows=limit,
            max_offsets=MAX_ARROW_OFFSETS,
            max_bytes=MAX_FILE_BYTES,
        )

    return key, read, location
