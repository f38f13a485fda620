"""Rules on data files (table format: data files, data evolution; file format:
footer and trailer).

Every rule here looks at ``DataFile`` entries of the manifest; those that need
the file itself share two cached loads, so that a data file listed by many
versions is resolved and read once per validation run:

* :func:`locate` resolves a data file against the dataset root or its declared
  base path and says whether it is there (memo key ``("data-file", root,
  relpath)``; it reports problems in its result, it never raises);
* :func:`file_facts` reads its footer with
  :func:`reference_impl.file_format.inspect_file`, plus, for legacy files, the
  row count kept in the legacy metadata (cache key ``("footer", location)``).

A file whose base is undeclared or missing is left to the base path rules, one
whose path escapes to ``data-file/path``, a missing one to ``data-file/exists``
and an unreadable one to ``data-file/readable``: the other rules skip it, so
that one defect is reported once.
"""

from __future__ import annotations

import os
import re
import struct
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple
from pathlib import Path

from google.protobuf.message import DecodeError

from reference_impl.dataset import FileLocation
from reference_impl.errors import CorruptFileError, LanceFormatError, PathEscapeError
from reference_impl.file_format import FileInfo, inspect_file
from reference_impl.file_format.footer import INSPECT_TAIL_BYTES, LAYOUT_LEGACY, LAYOUT_V2, LEGACY_FOOTER_SIZE, FileTail
from reference_impl.fragments import NO_COLUMN, TOMBSTONE_FIELD_ID, UNASSIGNED_FIELD_ID, DataFile, Fragment
from reference_impl.storage import Storage, local_path
from reference_impl.wire import file_pb2, table_pb2

from ..context import Loaded, VersionView
from ..registry import Severity, rule

#: How many examples a message lists before it says "...".
SHOWN = 5
#: Bytes read at once from the end of a data file; footer reads inside them
#: are served from memory. The same as inspect_file's own tail read.
TAIL_BYTES = INSPECT_TAIL_BYTES
#: Directory entries kept from one listing; a larger directory is checked file by file.
MAX_LISTED = 1 << 20
#: The largest legacy metadata block read to learn a legacy file's row count.
MAX_LEGACY_METADATA = 4 << 20
#: ``{24 binary digits}{26 hex digits}.lance`` (upstream layout.md, data files).
UUID_BASED_NAME = re.compile(r"^[01]{24}[0-9a-f]{26}\.lance$")
#: ``C:`` and the like: absolute on Windows.
WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")

# -- where a data file is ------------------------------------------------------

OK = "ok"
UNDECLARED_BASE = "undeclared-base"
BASE_UNUSABLE = "base-unusable"
BASE_MISSING = "base-missing"
BASE_INVALID = "base-invalid"
ESCAPES = "escapes"
MISSING = "missing"
NOT_A_FILE = "not-a-file"


@dataclass(frozen=True)
class BaseStorage:
    """A declared base path as the validator can use it."""

    storage: Storage | None
    is_dataset_root: bool
    status: str  # OK, BASE_UNUSABLE (not local: cannot check), BASE_INVALID or BASE_MISSING
    problem: str = ""


class Located(NamedTuple):
    """Where a data file resolved: ``status`` is OK or says why it is not
    usable (``problem`` tells more). A NamedTuple (immutable, and cheaper to
    build than a frozen dataclass): one is built for every data file."""

    status: str
    location: FileLocation | None = None
    problem: str = ""
    #: The checked local path of the file (when it exists), as text: building
    #: a Path for each of thousands of files costs more than reading them.
    full: str | None = None
    #: ``str(location)``, computed once (the footer cache key).
    key: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK


def shown(items, limit: int = SHOWN) -> str:
    items = list(items)
    text = ", ".join(str(i) for i in items[:limit])
    return text + (", ..." if len(items) > limit else "")


def _base_storage(root: Storage, path: str, is_dataset_root: bool) -> BaseStorage:
    if not path or "\x00" in path:
        problem = "the path is empty" if not path else "the path contains a NUL byte"
        return BaseStorage(None, is_dataset_root, BASE_INVALID, problem)
    try:
        local_path(path)
        storage = root.for_base(path)
        present = os.path.isdir(storage.root)
    except LanceFormatError as exc:
        return BaseStorage(None, is_dataset_root, BASE_UNUSABLE, exc.problem)
    except (OSError, ValueError) as exc:
        return BaseStorage(None, is_dataset_root, BASE_UNUSABLE, f"not a usable path: {exc}")
    if not present:
        return BaseStorage(storage, is_dataset_root, BASE_MISSING, f"{storage.root} is not a directory")
    return BaseStorage(storage, is_dataset_root, OK)


def base_storages(view: VersionView) -> dict[int, BaseStorage]:
    """The declared bases of a version by id (the first entry of a repeated id
    wins, as in the reference reader); each directory is checked once per run."""
    found: dict[int, BaseStorage] = {}
    storage = view.dataset.storage
    for base in view.manifest.base_paths:
        if base.id in found:
            continue
        key = ("base-storage", base.path, bool(base.is_dataset_root))
        loaded = view.dataset.cached(key, lambda b=base: _base_storage(storage, b.path, bool(b.is_dataset_root)))
        found[base.id] = loaded.value
    return found


def check_file(storage: Storage, relpath: str) -> Located:
    try:
        full = storage.path(relpath)
    except PathEscapeError as exc:
        return Located(ESCAPES, problem=exc.problem)
    except (OSError, ValueError) as exc:
        return Located(ESCAPES, problem=f"the path cannot be resolved: {exc}")
    location = FileLocation(storage, relpath)
    try:
        if full.is_file():
            return Located(OK, location, full=str(full), key=str(location))
        if full.exists():
            return Located(NOT_A_FILE, location, f"{full} is not a regular file")
    except (OSError, ValueError) as exc:
        return Located(MISSING, location, f"{full} cannot be examined: {exc}")
    return Located(MISSING, location, f"{full} does not exist")


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
            return Located(UNDECLARED_BASE, problem=f"base_id {data_file.base_id} is not declared")
        if base.status != OK:
            return Located(base.status, problem=base.problem)
        storage, is_root = base.storage, base.is_dataset_root
    path = data_file.path
    if not isinstance(path, str) or not path:
        return Located(ESCAPES, problem="the path is empty")
    if is_absolute(path):
        return Located(ESCAPES, problem="the path is absolute; data file paths are relative to the data directory")
    relpath = f"data/{path}" if is_root else path
    root = str(storage.root)
    return view.dataset.memo(
        ("data-file", root, relpath), _find, view, storage, root, "data" if is_root else "", path, relpath
    )


def _listing(storage: Storage, directory: str) -> dict[str, bool] | None:
    """``{name: is a regular file}`` for the entries of ``directory`` (relative
    to the storage root, "" for the root); a symlink is not followed, so it is
    never a regular file here. None when the directory cannot be listed or
    lies outside the root."""
    found: dict[str, bool] = {}
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
            # The text of str(storage.root / relpath) for a plain name
            # (FileLocation.__str__, the key check_file gives), as
            # os.path.join builds it, without building a Path.
            full = root + relpath if root.endswith("/") else f"{root}/{relpath}"
            return Located(OK, FileLocation(storage, relpath), "", full, full)
    return check_file(storage, relpath)


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
    if not offsets or offsets[0] != 0 or any(b < a for a, b in zip(offsets, offsets[1:])):
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


class _CheckedFile(Storage):
    """A read-only view of one data file whose path was already checked, for
    the reference reader (which reads through a Storage).

    Reading through the dataset's storage re-checks the path against the
    root (``realpath`` walks) and re-opens the file on every ranged read.
    Here the check is done once by :func:`locate`, the size is taken once,
    and ranges inside the file's last :data:`TAIL_BYTES` (footer, offsets
    tables and, for most files, the column metadata) are served from a
    single read. Any other path goes through the ordinary checks.
    """

    def __init__(self, storage: Storage, relpath: str, full: str):
        # Not Storage.__init__: the root is already absolute.
        self.root, self.writable = storage.root, False
        self._relpath, self._full = relpath, full
        # os-level calls: a buffered file object costs more than the read
        # itself for the small files a validation opens by the thousand.
        fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK)  # a pipe swapped in since the listing must not block
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
    full = located.full
    fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK)  # a pipe swapped in since the listing must not block
    try:
        # The size of a regular file is where its end is; seeking there is
        # cheaper than os.fstat, whose stat_result costs more to build than
        # the rest of the call.
        size = os.lseek(fd, 0, os.SEEK_END)
        start = max(0, size - TAIL_BYTES)
        data = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    if len(data) != size - start:
        raise CorruptFileError(full, "the file changed while it was read")
    return FileTail(full, size, start, data, located.location.storage, located.location.relpath)


def _read_facts(located: Located) -> FileFacts:
    try:
        tail = _read_tail(located)
        info = inspect_file(tail, tail.relpath)
        rows, legacy_ids = info.num_rows, None
        if info.layout == LAYOUT_LEGACY:
            found = _legacy_metadata(tail)
            rows = None if found is None else _legacy_rows(found[0])
            legacy_ids = None if found is None else _legacy_field_ids(tail, *found)
    except LanceFormatError:
        raise
    except (OSError, ValueError, struct.error, DecodeError, RecursionError, MemoryError) as exc:
        raise CorruptFileError(str(located.location), f"cannot be read as a Lance file: {exc}") from None
    return FileFacts(info, rows, legacy_ids)


def file_facts(view: VersionView, located: Located) -> Loaded[FileFacts]:
    """The footer facts of a file :func:`locate` found (``located.ok``)."""
    return view.dataset.cached(("footer", located.key), _read_facts, located)


# -- iteration helpers -------------------------------------------------------------


# Each version's data files are walked once: the lists below are computed on
# first use and kept on the version view (VersionView.memo), and every rule
# iterates them. The loads behind them (locate, file_facts) are cached for the
# whole run, so a data file that many versions list is resolved and read once.


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


def each_located(view: VersionView) -> list[tuple[tuple[int, int], Fragment, DataFile, Located]]:
    """:func:`each_data_file` with where each file resolved (:func:`locate`)."""

    def compute():
        bases = base_storages(view)
        return [
            (ref, fragment, data_file, locate(view, data_file, bases))
            for ref, fragment, data_file in each_data_file(view)
        ]

    return view.memo("data_files.located", compute)


def each_inspected(view: VersionView) -> list[tuple[tuple[int, int], Fragment, DataFile, Loaded[FileFacts]]]:
    """``(ref, fragment, data file, loaded facts)`` for the files that exist."""

    def compute():
        return [
            (ref, fragment, data_file, file_facts(view, located))
            for ref, fragment, data_file, located in each_located(view)
            if located.ok
        ]

    return view.memo("data_files.inspected", compute)


def each_legacy(view: VersionView) -> list[tuple[tuple[int, int], Fragment, DataFile]]:
    """:func:`each_data_file` for the legacy (``is_legacy``) data files only,
    listed once per version for the rules on legacy files: most versions
    have none, and those rules then skip the walk."""
    return view.memo(
        "data_files.legacy", lambda: [entry for entry in each_data_file(view) if entry[2].is_legacy]
    )


def at(view: VersionView, ref: tuple[int, int]) -> str:
    return view.at(f"fragments[{ref[0]}].files[{ref[1]}]")


def each_readable(view: VersionView) -> list[tuple[tuple[int, int], Fragment, DataFile, FileFacts]]:
    """Like :func:`each_data_file`, for the files that exist and whose footer reads."""

    def compute():
        return [
            (ref, fragment, data_file, facts.value)
            for ref, fragment, data_file, facts in each_inspected(view)
            if facts.ok
        ]

    return view.memo("data_files.readable", compute)


def printable(text: str, limit: int = 120) -> str:
    """``text`` for a message: control characters escaped, long text cut."""
    if not isinstance(text, str):
        text = repr(text)
    elif not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def uses(count: int) -> str:
    """``"1 file uses"`` / ``"3 files use"``."""
    return f"{plural(count, 'file')} {'uses' if count == 1 else 'use'}"


def _name(data_file: DataFile) -> str:
    return printable(data_file.path)


# -- rules: where the file is ---------------------------------------------------------


@rule(
    "data-file/path",
    severity=Severity.ERROR,
    requirements=("data-file.path-relative", "data-file.path-stays-inside"),
    summary="A data file's path is relative and stays inside the data directory of its root or base",
)
def path(view: VersionView):
    for ref, fragment, data_file, located in each_located(view):
        if located.status == ESCAPES:
            yield f"fragment {fragment.id}: data file '{_name(data_file)}': {located.problem}", at(view, ref)


@rule(
    "data-file/exists",
    severity=Severity.ERROR,
    requirements=("data-file.exists",),
    summary="Every data file the manifest lists exists where its path resolves",
)
def exists(view: VersionView):
    for ref, fragment, data_file, located in each_located(view):
        if located.status in (MISSING, NOT_A_FILE):
            yield f"fragment {fragment.id}: data file '{_name(data_file)}': {located.problem}", at(view, ref)


@rule(
    "data-file/extension",
    severity=Severity.ERROR,
    requirements=("data-file.in-data-dir",),
    summary="Data file names end with .lance",
)
def extension(view: VersionView):
    for ref, fragment, data_file in each_data_file(view):
        if isinstance(data_file.path, str) and data_file.path and not data_file.path.endswith(".lance"):
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' does not have the .lance extension",
                at(view, ref),
            )


@rule(
    "data-file/uuid-based-name",
    severity=Severity.INFO,
    requirements=("data-file.uuid-based-name",),
    summary="Data file names follow the current UUID-based pattern (24 binary and 26 hex digits)",
)
def uuid_based_name(view: VersionView):
    others = [
        _name(data_file)
        for _, _, data_file in each_data_file(view)
        if isinstance(data_file.path, str) and not UUID_BASED_NAME.match(data_file.path.rsplit("/", 1)[-1])
    ]
    if others:
        yield (
            f"data file names that do not follow the {{24 binary}}{{26 hex}}.lance pattern (older writers used "
            f"plain UUIDs): {len(others)}, e.g. {shown(others, 3)}",
            view.at("fragments"),
        )


# -- rules: what the file is ----------------------------------------------------------


@rule(
    "data-file/readable",
    severity=Severity.ERROR,
    requirements=("data-file.lance-trailer",),
    summary="Every data file is a Lance file: its trailer and footer read",
)
def readable(view: VersionView):
    for ref, fragment, data_file, facts in each_inspected(view):
        if not facts.ok:
            yield f"fragment {fragment.id}: data file '{_name(data_file)}': {facts.error.problem}", at(view, ref)


#: Symptom of data-file/size: a legacy file recorded as smaller than it is.
LEGACY_SIZE_UNDERSTATED = "legacy-file-understated"


@rule(
    "data-file/size",
    severity=Severity.ERROR,
    requirements=("data-file.size-matches",),
    summary="A non-zero file_size_bytes equals the data file's real size",
    symptoms={LEGACY_SIZE_UNDERSTATED: "a legacy (v0.x) data file is recorded as smaller than it is"},
)
def size(view: VersionView):
    for ref, fragment, data_file, facts in each_readable(view):
        if data_file.file_size_bytes and data_file.file_size_bytes != facts.info.size:
            legacy = facts.info.layout == LAYOUT_LEGACY
            understated = legacy and data_file.file_size_bytes < facts.info.size
            yield (
                f"fragment {fragment.id}: {'legacy ' if legacy else ''}data file '{_name(data_file)}' has "
                f"file_size_bytes {data_file.file_size_bytes} but is {facts.info.size} bytes",
                at(view, ref),
                LEGACY_SIZE_UNDERSTATED if understated else None,
            )


def _recorded_matches(data_file: DataFile, info: FileInfo) -> bool:
    major, minor = data_file.file_major_version, data_file.file_minor_version
    if info.layout == LAYOUT_LEGACY:
        # 0.0 is table.proto's marker for any legacy file; pylance records the
        # trailer's own 0.2 (docs/spec-discrepancies.md).
        return major == 0 and minor in (0, info.footer_minor)
    return (major, minor) == (info.major, info.minor)


#: Symptom of data-file/version-matches-file: a file is recorded with the
#: version number of its own trailer (0.3) where the table format records the
#: version that number stands for (2.0).
TRAILER_NUMBER_RECORDED = "trailer-number-recorded"


@rule(
    "data-file/version-matches-file",
    severity=Severity.ERROR,
    requirements=("data-file.version-matches-file", "data-file.zero-version-is-legacy"),
    summary="file_major_version/file_minor_version agree with the version in the file's trailer",
    symptoms={
        TRAILER_NUMBER_RECORDED: "a 2.0 file is recorded as 0.3, the number in its trailer, instead of 2.0",
    },
)
def version_matches_file(view: VersionView):
    for ref, fragment, data_file, facts in each_readable(view):
        info = facts.info
        if _recorded_matches(data_file, info):
            continue
        recorded = f"{data_file.file_major_version}.{data_file.file_minor_version}"
        trailer = f"{info.footer_major}.{info.footer_minor}"
        if (data_file.file_major_version, data_file.file_minor_version) == (info.footer_major, info.footer_minor):
            # Only possible where the trailer number and the table format's
            # number differ: a 2.0 file, whose trailer says 0.3.
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' is recorded as version {recorded}, the "
                f"number in its trailer; the table format records a file with that trailer as version {info.version}",
                at(view, ref),
                TRAILER_NUMBER_RECORDED,
            )
            continue
        meaning = "a legacy file" if info.layout == LAYOUT_LEGACY else f"version {info.version}"
        yield (
            f"fragment {fragment.id}: data file '{_name(data_file)}' is recorded as version {recorded}, but its "
            f"trailer says {trailer} ({meaning})",
            at(view, ref),
        )


def _version_key(major: int, minor: int) -> str:
    return "legacy (0.x)" if major == 0 else f"{major}.{minor}"


def _format_key(version: str) -> str:
    return "legacy (0.x)" if version.startswith("0.") or version == "legacy" else version


@rule(
    "data-file/same-format-version",
    severity=Severity.ERROR,
    requirements=("data-file.same-format-version",),
    summary="All data files of a version share one file version, the one data_format names",
)
def same_format_version(view: VersionView):
    # Count (major, minor) pairs first: one key per pair, not per file.
    # By the version each record means: a 2.0 file recorded as 0.3 is a 2.0
    # file (data-file/version-matches-file reports the record itself).
    pairs = Counter(d.format_version for _, _, d in each_data_file(view))
    counts: Counter = Counter()
    for (major, minor), n in pairs.items():
        counts[_version_key(major, minor)] += n
    if len(counts) > 1:
        listed = ", ".join(f"{key}: {plural(n, 'file')}" for key, n in sorted(counts.items()))
        yield f"data files of several file versions in one version ({listed})", view.at("fragments")
        return
    data_format = view.manifest.data_format
    if counts and data_format is not None and data_format.version:
        (key,) = counts
        if _format_key(data_format.version) != key:
            yield (
                f"data_format.version is '{data_format.version}' but the data files are version {key}",
                view.at("data_format"),
            )


@rule(
    "data-file/legacy-version-recorded",
    severity=Severity.INFO,
    requirements=("data-file.zero-version-is-legacy", "data-file.same-format-version"),
    summary="Legacy data files are recorded as version 0.0, matching data_format '0.1'",
)
def legacy_version_recorded(view: VersionView):
    recorded = Counter(
        f"{d.file_major_version}.{d.file_minor_version}" for _, _, d in each_legacy(view) if d.file_minor_version != 0
    )
    if recorded:
        data_format = view.manifest.data_format
        listed = ", ".join(f"{n} as {key}" for key, n in sorted(recorded.items()))
        said = f" while data_format.version is '{data_format.version}'" if data_format else ""
        yield (
            f"legacy data files are recorded with a non-zero minor version ({listed}){said}; the seed marks "
            f"legacy files 0.0 (a tolerated departure of {view.writer}, see docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


# -- rules: field ids ---------------------------------------------------------------


@rule(
    "data-file/field-id-values",
    severity=Severity.ERROR,
    requirements=("data-file.no-unassigned-field-id", "data-file.no-other-negative-ids"),
    summary="Data file field ids are non-negative or the -2 tombstone; -1 is never stored",
)
def field_id_values(view: VersionView):
    for ref, fragment, data_file in each_data_file(view):
        if not data_file.fields or min(data_file.fields) >= 0:
            continue  # no negative id, nothing to report: the common case, tested cheaply
        unassigned = sum(1 for i in data_file.fields if i == UNASSIGNED_FIELD_ID)
        negative = sorted({i for i in data_file.fields if i < 0 and i not in (UNASSIGNED_FIELD_ID, TOMBSTONE_FIELD_ID)})
        if unassigned:
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' stores the unassigned field id -1"
                + ("" if unassigned == 1 else f" ({unassigned} times)"),
                at(view, ref),
            )
        if negative:
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' stores negative field ids "
                f"{shown(negative)} (only -2, the tombstone, is allowed)",
                at(view, ref),
            )


@rule(
    "data-file/distinct-field-ids",
    severity=Severity.WARNING,
    requirements=("data-file.distinct-field-ids",),
    summary="Within a fragment no field id (other than the -2 tombstone) is stored twice",
)
def distinct_field_ids(view: VersionView):
    for f_index, fragment in enumerate(view.manifest.fragments):
        files = fragment.files
        if len(files) == 1 and len(set(files[0].fields)) == len(files[0].fields):
            continue  # one data file whose ids are all distinct: the common case, tested cheaply
        ids = [i for data_file in files for i in data_file.fields if i >= 0]
        if len(set(ids)) == len(ids):
            continue  # nothing repeated, without a Counter per fragment
        counts = Counter(ids)
        repeated = sorted(i for i, n in counts.items() if n > 1)
        if repeated:
            yield (
                f"fragment {fragment.id}: field ids {shown(repeated)} are stored more than once among its data "
                "files; a reader cannot tell which copy holds the column",
                view.at(f"fragments[{f_index}]"),
            )


@rule(
    "data-file/unknown-field-ids",
    severity=Severity.INFO,
    # Not data-file.tombstone-allowed: the tombstone is what this rule does
    # not report (tests/validator/test_layout_rules.py checks it is accepted).
    requirements=("data-file.no-other-negative-ids",),
    summary="Data file field ids name schema fields (stale ids of dropped or replaced fields are tolerated)",
)
def unknown_field_ids(view: VersionView):
    schema_ids = {f.id for f in view.manifest.schema.fields} if view.manifest.schema else set()
    stale: set[int] = set()
    files = 0
    for _, _, data_file in each_data_file(view):
        if schema_ids.issuperset(data_file.fields):
            continue  # every id is a schema field's: the common case, tested in one call
        unknown = {i for i in data_file.fields if i >= 0 and i not in schema_ids}
        if unknown:
            stale |= unknown
            files += 1
    if stale:
        yield (
            f"field ids {shown(sorted(stale))}, stored in {plural(files, 'data file')}, are not in the schema and "
            f"not the -2 tombstone ({view.writer} left the ids of dropped or replaced fields; readers ignore them, "
            "see docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


@rule(
    "data-file/legacy-field-ids-sorted",
    severity=Severity.ERROR,
    requirements=("data-file.v1-field-ids-sorted",),
    summary="A legacy data file lists its field ids in ascending order",
)
def legacy_field_ids_sorted(view: VersionView):
    for ref, fragment, data_file in each_legacy(view):
        ids = [i for i in data_file.fields if i != TOMBSTONE_FIELD_ID]
        if any(b < a for a, b in zip(ids, ids[1:])):
            yield (
                f"fragment {fragment.id}: legacy data file '{_name(data_file)}' lists field ids out of order: "
                f"{shown(data_file.fields, 12)}",
                at(view, ref),
            )


def _legacy_listing(view: VersionView) -> list:
    """(ref, fragment, data file, listed ids, ids of the file's own schema) for
    every readable legacy data file whose schema block reads (listed once per
    version for the two rules that compare them)."""
    return view.memo(
        "data_files.legacy-listing",
        lambda: [
            (ref, fragment, data_file, list(data_file.fields), list(facts.legacy_field_ids))
            for ref, fragment, data_file, facts in each_readable(view)
            if facts.info.layout == LAYOUT_LEGACY and facts.legacy_field_ids is not None
        ],
    )


@rule(
    "data-file/legacy-every-field",
    severity=Severity.ERROR,
    requirements=("data-file.v1-every-nested-field",),
    summary="A legacy data file lists one field id per field it stores, nested fields included",
)
def legacy_every_field(view: VersionView):
    for ref, fragment, data_file, listed, stored in _legacy_listing(view):
        if len(listed) != len(stored):
            unlisted = [i for i in stored if i not in set(listed)]
            yield (
                f"fragment {fragment.id}: legacy data file '{_name(data_file)}' lists {len(listed)} field ids but "
                f"stores {len(stored)} fields (its own schema: {shown(stored, 12)})"
                + (f"; not listed: {shown(unlisted)}" if unlisted else ""),
                at(view, ref),
            )


@rule(
    "data-file/legacy-ids-follow-columns",
    severity=Severity.ERROR,
    requirements=("data-file.v1-ids-follow-columns",),
    summary="A legacy data file lists its field ids in the order of its columns (the -2 tombstone aside)",
)
def legacy_ids_follow_columns(view: VersionView):
    for ref, fragment, data_file, listed, stored in _legacy_listing(view):
        if len(listed) != len(stored):
            continue  # data-file/legacy-every-field reports it
        ordered = [i for i in listed if i != TOMBSTONE_FIELD_ID]
        if any(b < a for a, b in zip(ordered, ordered[1:])):
            continue  # data-file/legacy-field-ids-sorted reports it
        wrong = [
            (position, have, want)
            for position, (have, want) in enumerate(zip(listed, stored))
            if have != want and have != TOMBSTONE_FIELD_ID
        ]
        if wrong:
            yield (
                f"fragment {fragment.id}: legacy data file '{_name(data_file)}' lists field ids that do not follow "
                "its columns: "
                + ", ".join(f"column {p} holds field {w} but {h} is listed" for p, h, w in wrong[:SHOWN])
                + (" ..." if len(wrong) > SHOWN else ""),
                at(view, ref),
            )


# -- rules: column indices -------------------------------------------------------------


@rule(
    "data-file/legacy-column-indices",
    severity=Severity.ERROR,
    requirements=("data-file.v1-no-column-indices",),
    summary="A legacy data file has no column_indices",
)
def legacy_column_indices(view: VersionView):
    for ref, fragment, data_file in each_legacy(view):
        if data_file.column_indices:
            yield (
                f"fragment {fragment.id}: legacy data file '{_name(data_file)}' has "
                f"{len(data_file.column_indices)} column_indices entries; legacy files have none",
                at(view, ref),
            )


@rule(
    "data-file/column-indices-per-field",
    severity=Severity.ERROR,
    requirements=("data-file.column-indices-per-field",),
    summary="A v2.x data file has one column_indices entry per field id",
)
def column_indices_per_field(view: VersionView):
    for ref, fragment, data_file in each_data_file(view):
        if len(data_file.column_indices) != len(data_file.fields) and not data_file.is_legacy:
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' lists {len(data_file.fields)} field ids "
                f"but {len(data_file.column_indices)} column_indices",
                at(view, ref),
            )


@rule(
    "data-file/column-indices-distinct",
    severity=Severity.ERROR,
    requirements=("data-file.column-indices-distinct",),
    summary="column_indices repeats no value other than -1",
)
def column_indices_distinct(view: VersionView):
    for ref, fragment, data_file in each_data_file(view):
        if len(set(data_file.column_indices)) == len(data_file.column_indices):
            continue  # all distinct, -1 included: the common case, tested cheaply
        indices = [c for c in data_file.column_indices if c != NO_COLUMN]
        if len(set(indices)) == len(indices):
            continue  # only -1 repeats
        counts = Counter(indices)
        repeated = sorted(c for c, n in counts.items() if n > 1)
        if repeated:
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' repeats column indices {shown(repeated)}",
                at(view, ref),
            )


@rule(
    "data-file/column-indices-in-file",
    severity=Severity.ERROR,
    requirements=("data-file.column-indices-values",),
    summary="Each column_indices entry is -1 or a top-level column the file has",
)
def column_indices_in_file(view: VersionView):
    flagged = set()
    for ref, fragment, data_file in each_data_file(view):
        # Only a value below -1 is reported; min() tells cheaply when there is none.
        if not data_file.column_indices or min(data_file.column_indices) >= NO_COLUMN or data_file.is_legacy:
            continue
        negative = sorted({c for c in data_file.column_indices if c < 0 and c != NO_COLUMN})
        if negative:
            flagged.add(ref)
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' has negative column indices "
                f"{shown(negative)} (only -1 means 'no column')",
                at(view, ref),
            )
    for ref, fragment, data_file, facts in each_readable(view):
        info, indices = facts.info, data_file.column_indices
        if not indices or info.num_columns is None or max(indices) < info.num_columns:
            continue  # nothing beyond the file's columns (the common case, tested first)
        if data_file.is_legacy or ref in flagged or info.layout != LAYOUT_V2:
            continue
        beyond = sorted({c for c in data_file.column_indices if c >= info.num_columns})
        if beyond:
            yield (
                f"fragment {fragment.id}: data file '{_name(data_file)}' has {info.num_columns} columns but "
                f"column_indices name columns {shown(beyond)}",
                at(view, ref),
            )
