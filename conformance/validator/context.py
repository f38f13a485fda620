"""What rules look at: a dataset and its versions, loaded defensively.

Every load goes through :data:`Loaded`, which holds either a value or the
:class:`~reference_impl.errors.LanceFormatError` that prevented it. Rules never
see a half-decoded object, and a file that cannot be read becomes a finding of
the rule responsible for it, not an exception. All file access goes through
:class:`reference_impl.storage.Storage`, so nothing outside the dataset root
or a declared base path is ever read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import cached_property
from typing import Generic, Literal, TypeVar, Union

from reference_impl.commit.external_store import ExternalManifestStore, StoreRecord, inspect_store
from reference_impl.dataset import Dataset, FileLocation
from reference_impl.errors import LanceFormatError, ManifestStoreError
from reference_impl.fragments import Fragment
from reference_impl.manifest import Manifest
from reference_impl.manifest_file import ManifestFile, read_manifest_file
from reference_impl.naming import VersionListing, list_versions, parse_manifest_name
from reference_impl.storage import Storage
from reference_impl.wire import table_pb2

from ..spec_revisions import NEWEST, SpecRevision

T = TypeVar("T")
A = TypeVar("A")


# Slotted and not frozen: a run builds one of these for every file it reads
# (a frozen dataclass sets each field through object.__setattr__, four times
# the cost); nothing assigns to them after.
@dataclass(slots=True)
class Ok(Generic[T]):
    """A load that succeeded."""

    value: T
    #: Literal, so that testing ``ok`` tells a type checker which of the two
    #: a :data:`Loaded` is (and ``value`` or ``error`` is known to be there).
    ok: Literal[True] = True
    error: None = None


@dataclass(slots=True)
class Failed:
    """A load that a :class:`LanceFormatError` prevented."""

    error: LanceFormatError
    ok: Literal[False] = False
    value: None = None


#: Either the value or the error that prevented it.
Loaded = Union[Ok[T], Failed]


def load(action: Callable[..., T], *args) -> Loaded[T]:
    try:
        return Ok(action(*args))
    except LanceFormatError as exc:
        return Failed(exc)


_MISSING = object()

#: Concurrent reads for a dataset on a local disk: one. A footer read from
#: the page cache is a system call or two and then Python decoding under the
#: interpreter lock, and threads only contend for that lock: on 2 cores,
#: validating 10,000 local fragments took 0.83 s serially, 1.10 s with 2
#: threads and 1.47 s with 4 (benchmarks/README.md). ``io_threads`` raises it
#: for a slow network file system.
LOCAL_IO_THREADS = 1
#: Concurrent reads for a dataset on an object store, where each request
#: waits tens of milliseconds for the network rather than for a core.
OBJECT_STORE_IO_THREADS = 32
#: Loads handed to the pool at a time, so that a table of hundreds of
#: thousands of files never holds that many pending futures at once.
_PREFETCH_BATCH = 4096


def default_io_threads(storage: Storage) -> int:
    """How many reads run at once by default on ``storage``."""
    return LOCAL_IO_THREADS if storage.is_local else OBJECT_STORE_IO_THREADS


@dataclass
class DatasetView:
    """The whole dataset: its listing, and every manifest on demand."""

    storage: Storage
    #: The versions this run validates (dataset-scoped rules look at these).
    selected_versions: list[int] = dc_field(default_factory=list)
    #: The ids of the rules this run runs (None: every rule); work that only
    #: other rules need is not done (facts/fragment_checks.py).
    selected_rules: frozenset[str] | None = None
    #: The format revision this run checks conformance to.
    spec_revision: SpecRevision = NEWEST
    #: Whether this run decodes data pages (``validate --deep``): the deep
    #: rules run, and the rules that read values take them from the pages
    #: decoded for it (facts/data_pages.py).
    deep: bool = False
    #: The external manifest store the dataset is committed through, when the
    #: user names one: read, never written (nothing is finalised).
    manifest_store: ExternalManifestStore | None = None
    #: Why the external store could not be read, when it could not.
    store_error: ManifestStoreError | None = None
    _manifests: dict[int, Loaded[ManifestFile]] = dc_field(default_factory=dict)
    #: VersionView.memo's values, by version: shared by every view of a
    #: version. (Kept here rather than the views themselves, so that the
    #: run's objects form no reference cycle and are freed as it ends.)
    _version_memos: dict[int, dict] = dc_field(default_factory=dict)
    _cache: dict = dc_field(default_factory=dict)
    #: Reads run at once by :meth:`prefetch`; 1 reads every file when a rule
    #: first asks for it, one after another.
    io_threads: int = 1
    #: Runs :meth:`prefetch`'s loads elsewhere (on Spark executors:
    #: :mod:`conformance.validator.spark`): given ``(action, args)`` pairs, each
    #: one's :func:`load` result in order, or None for one to be run here.
    loader: Callable[[list[tuple[Callable, tuple]]], list[Loaded | None]] | None = None
    #: Every fragment decoded in this run, by its message bytes less the id
    #: (:func:`_without_id`): a fragment that many manifests list unchanged
    #: is decoded once and is one object in all of them (facts/fragment_checks.py
    #: checks it once).
    _fragments: dict[bytes, Fragment] = dc_field(default_factory=dict)

    @cached_property
    def listing(self) -> VersionListing:
        return list_versions(self.storage)

    def manifest_paths(self) -> dict[int, str]:
        """Committed manifests by version (both schemes, even when mixed).
        With an external store, its latest version counts as committed even
        while only its staged manifest exists (the commit point is the
        store's put), and is read from the staged manifest."""
        return self._manifest_paths

    @cached_property
    def _manifest_paths(self) -> dict[int, str]:
        paths = self.listing.manifests()
        for version, record in self.store_records.items():
            if version not in paths and record.staged and record.present and record.relpath is not None:
                paths[version] = record.relpath
        return paths

    @cached_property
    def store_records(self) -> dict[int, StoreRecord]:
        """What the external store records for each listed version and its
        latest one (empty without a store)."""
        if self.manifest_store is None:
            return {}
        try:
            return inspect_store(self.storage, self.manifest_store, sorted(self.listing.manifests()))
        except ManifestStoreError as exc:
            self.store_error = exc
            return {}

    def manifest_file(self, version: int) -> Loaded[ManifestFile]:
        if version not in self._manifests:
            relpath = self.manifest_paths().get(version)
            if relpath is None:
                self._manifests[version] = Failed(
                    LanceFormatError(str(self.storage.root), f"version {version} has no manifest")
                )
            else:
                self._manifests[version] = load(lambda: read_manifest_file(self.storage, relpath, self._fragment))
        return self._manifests[version]

    def _fragment(self, message) -> Fragment:
        """The fragment ``message`` (a ``DataFragment``) holds, decoded once
        per run: a message listed again unchanged gives the same object. One
        listed again under another id (a transaction records its new
        fragments before the commit gives them ids: an Overwrite of pylance
        lists every fragment of the version again, with id 0) is an object of
        its own that shares the decoded data files and deletion file of the
        first."""
        fragment_id = message.id
        content = _without_id(message)
        first = self._fragments.get(content)
        if first is None:
            first = self._fragments[content] = Fragment.from_proto(message)
            return first
        # Equal content and equal ids: the same message.
        return first if first.id == fragment_id else _with_id(first, fragment_id)

    def version_view(self, version: int) -> VersionView | None:
        loaded = self.manifest_file(version)
        if not loaded.ok:
            return None
        return VersionView(self, version, self.manifest_paths()[version], loaded.value)

    def cached(self, key, action: Callable[..., T], *args) -> Loaded[T]:
        """Load ``action(*args)`` once per validation run (data file footers,
        deletion files...)."""
        loaded = self._cache.get(key, _MISSING)
        if loaded is _MISSING:
            loaded = self._cache[key] = load(action, *args)
        return loaded

    def cached_each(self, keys: list, action: Callable[[A], T], items: list[A]) -> list[Loaded[T]]:
        """``[self.cached(key, action, item) for key, item in zip(keys, items)]``
        in one loop, :func:`load` written out in it: for the footers of a
        batch of data files, where a call per file through :meth:`cached`
        and :func:`load` costs a tenth of reading and decoding the footer
        itself."""
        cache = self._cache
        found: list[Loaded[T]] = []
        append = found.append
        for key, item in zip(keys, items, strict=True):
            loaded = cache.get(key, _MISSING)
            if loaded is _MISSING:
                try:
                    loaded = Ok(action(item))
                except LanceFormatError as exc:
                    loaded = Failed(exc)
                cache[key] = loaded
            append(loaded)
        return found

    def prefetch(self, jobs: Iterable[tuple]) -> None:
        """Run the loads ``(key, action, *args)`` that :meth:`cached` would
        run later, up to :attr:`io_threads` at a time, and keep what they
        load under their keys. Each key is loaded once (a file many versions
        share included). The loads are independent reads of files, so their
        results do not depend on the order they ran in; rules then find them
        in the cache in their own (serial) order, and the report is the one a
        serial run gives. A load that raises something other than a format
        error is not kept: the rule that asks for it runs it again and meets
        the error where the engine reports it."""
        if self.io_threads <= 1 and self.loader is None:
            return
        pending: dict = {}
        for key, action, *args in jobs:
            if key not in pending and key not in self._cache:
                pending[key] = (action, args)
        if len(pending) < 2:
            return
        items = list(pending.items())
        if self.loader is not None:
            loaded_elsewhere = self.loader([(action, tuple(args)) for _, (action, args) in items])
            for (key, _), loaded in zip(items, loaded_elsewhere, strict=True):
                if loaded is not None:
                    self._cache[key] = loaded
            return
        with ThreadPoolExecutor(min(self.io_threads, len(items)), thread_name_prefix="validator-io") as pool:
            for start in range(0, len(items), _PREFETCH_BATCH):
                batch = items[start : start + _PREFETCH_BATCH]
                futures = [pool.submit(load, action, *args) for _, (action, args) in batch]
                for (key, _), future in zip(batch, futures, strict=True):
                    try:
                        self._cache[key] = future.result()
                    except Exception:  # re-run by the rule that asks it (see the docstring)
                        continue

    def map_remote(self, action: Callable[[A], T], items: list[A]) -> list[T]:
        """``[action(item) for item in items]``, in that order, up to
        :attr:`io_threads` calls at once: for calls that wait on requests (a
        file's existence or size on an object store). With the default of
        one thread on a local disk they run in this thread. ``action`` may use
        :meth:`memo`: two threads that meet on one key both compute the same
        value, and either is kept."""
        if self.io_threads <= 1 or len(items) < 2:
            return [action(item) for item in items]
        with ThreadPoolExecutor(min(self.io_threads, len(items)), thread_name_prefix="validator-io") as pool:
            return list(pool.map(action, items))

    def memo(self, key, compute: Callable[..., T], *args) -> T:
        """``compute(*args)`` once per validation run, for a computation that
        reports problems in its result instead of raising (where each data
        file is): no Loaded wrapper around each of thousands of values. An
        exception is not kept. Keys share one space with :meth:`cached`.
        (``args`` rather than a closure: a closure per call costs more than
        the lookup, for thousands of files that are mostly found.)"""
        value = self._cache.get(key, _MISSING)
        if value is _MISSING:
            value = self._cache[key] = compute(*args)
        return value


@dataclass
class VersionView:
    """One version whose manifest decoded."""

    dataset: DatasetView
    version: int
    manifest_path: str
    manifest_file: ManifestFile

    def memo(self, key, compute: Callable[[], T]) -> T:
        """``compute()``, once per version and run: per-version facts that
        many rules iterate (each data file with its location and footer...),
        shared with the views other rules open on this version. An exception
        is not kept, so every rule that asks sees it."""
        memos = self.dataset._version_memos.setdefault(self.version, {})
        if key not in memos:
            memos[key] = compute()
        return memos[key]

    @property
    def manifest(self) -> Manifest:
        return self.manifest_file.manifest

    @cached_property
    def reader(self) -> Dataset:
        """The reference reader over this manifest (feature flags not enforced,
        so that rules can report on them)."""
        parsed = parse_manifest_name(self.manifest_path.rsplit("/", 1)[-1])
        return Dataset(self.dataset.storage, self.manifest_file, parsed[1] if parsed else None)

    @property
    def writer(self) -> str:
        """Who wrote this version, as its writer_version records it (library
        and version, e.g. ``lance 14.0.2``): messages that put a departure
        down to the writer name it rather than assume one."""
        recorded = self.manifest.writer_version
        if recorded is None or not (recorded.library or recorded.version):
            return "an unrecorded writer"
        return f"{recorded.library or 'an unnamed library'} {recorded.full_version()}".strip()

    def at(self, detail: str) -> str:
        """A finding location inside this version's manifest."""
        return f"{self.manifest_path}#{detail}"

    def data_file_location(self, fragment: Fragment, index: int) -> Loaded[FileLocation]:
        return load(lambda: self.reader.data_file_location(fragment.files[index]))

    def deleted_offsets(self, fragment: Fragment) -> Loaded[list[int]]:
        key = ("deletions", fragment.id, repr(fragment.deletion_file))
        return self.dataset.cached(key, lambda: self.reader.deleted_offsets(fragment))

    def row_ids(self, fragment: Fragment) -> Loaded[list[int] | None]:
        key = ("row_ids", self.version, fragment.id)
        return self.dataset.cached(key, lambda: self.reader.row_ids(fragment))


def _with_id(fragment: Fragment, fragment_id: int) -> Fragment:
    """``dataclasses.replace(fragment, id=fragment_id)`` written out (a
    fifth of its cost; it runs for every fragment a transaction lists again).
    The other fields are shared, not copied: the validator never changes a
    decoded fragment."""
    return Fragment(
        fragment_id,
        fragment.files,
        fragment.physical_rows,
        fragment.deletion_file,
        fragment.row_id_sequence,
        fragment.last_updated_at_version_sequence,
        fragment.created_at_version_sequence,
    )


def _without_id(message: table_pb2.DataFragment) -> bytes:
    """The serialized bytes of the fragment ``message`` less its id: the same
    bytes for the same fragment listed under any id."""
    content = table_pb2.DataFragment()
    content.CopyFrom(message)
    content.ClearField("id")
    return content.SerializeToString(deterministic=True)
