"""The commit loop (table format: committing datasets, "Conflict Resolution
Flow"; transaction page: "Commit Algorithm", "Rebase Mechanism").

A commit happens in the order the specification gives:

1. the writer writes every new data and deletion file (the caller);
2. it writes the transaction file ``_transactions/{read_version}-{uuid}.txn``;
3. it lists the versions committed since the version its transaction is
   based on, loads their transactions (``_transactions/`` or the copy inside
   the manifest) and decides, in version order, whether each one conflicts
   (:func:`~reference_impl.commit.conflicts.decide`); a conflict ends the
   commit with a typed error naming that version and its operation, a rebase
   rewrites the transaction (merged deletion files are written here);
4. it builds the manifest from the LATEST manifest with the pure
   :func:`~reference_impl.commit.build.build_manifest` (fresh fragment ids
   from its ``max_fragment_id``, fresh row ids from its ``next_row_id``) and
   writes it as the next version with put-if-not-exists; a writer that loses
   that race sleeps a random, growing while and goes back to step 3, at most
   ``max_attempts`` times in all.

With an external manifest store (``manifest_store``), step 4 commits through
the store instead (:mod:`.external_store`: stage, put-if-not-exists in the
store, copy, repoint), and step 3 first finalises the store's latest version
when it is still staged, as a reader does.

A crash at any point leaves every committed version as it was: the files
written so far are unreferenced, and step 4 never overwrites an existing
manifest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .. import entropy, feature_flags
from ..deletions import read_deletion_file, write_deletion_file
from ..errors import (
    CommitAttemptsExhaustedError,
    CommitConflictError,
    IncompatibleConflictError,
    LanceFormatError,
    RetryableConflictError,
    UnsupportedFeatureError,
)
from ..fragments import DeletionFile
from ..manifest import Manifest
from ..manifest_file import ManifestFile, ManifestHeader, encode_manifest_file_as, read_manifest_header
from ..naming import LATEST_HINT, VERSIONS_DIR, NamingScheme, list_versions, manifest_path
from ..storage import Storage
from ..transactions import (
    CreateIndex,
    Delete,
    Operation,
    Transaction,
    Update,
    read_transaction_file,
    write_transaction_file,
)
from .build import CommitSettings, build_manifest
from .conflicts import (
    Decision,
    Outcome,
    RowChanges,
    SingletonMergeError,
    decide,
    deletions_to_merge,
    modified_fragment_ids,
    operation_title,
    with_index_bitmaps_on,
    with_latest_data_files,
    with_merged_deletions,
    with_singleton_indices_merged,
)
from .external_store import ExternalManifestStore, commit_through_store, synchronize_latest

#: Attempts at the put-if-not-exists of the next manifest before giving up:
#: enough for two dozen processes appending to one table at once.
DEFAULT_MAX_ATTEMPTS = 100
#: Randomized backoff after a lost race: a uniform draw below
#: min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt).
BACKOFF_BASE_SECONDS = 0.005
BACKOFF_CAP_SECONDS = 0.25

#: The steps a commit goes through; ``on_step`` is called after each of the
#: first two, before the manifest is written, and after it is written (with
#: an external store: after each of its four steps instead,
#: ``external_store.STEP_*``). Tests stop the writer there to see what a
#: writer dying at that point leaves.
STEP_FILES_WRITTEN = "files-written"
STEP_TRANSACTION_WRITTEN = "transaction-written"
STEP_BEFORE_MANIFEST = "before-manifest"
STEP_MANIFEST_WRITTEN = "manifest-written"


@dataclass(frozen=True)
class CommitHooks:
    """Three steps of the loop a caller may replace; correct writers never
    do (the defaults are the loop's own). The concurrency harness's faulty
    writers (``conformance/harness/faulty.py``) each swap one to reproduce a
    known writer bug class and prove the history checker names it:
    ``decide`` (conflict detection), ``build_manifest`` (how the next
    manifest, fresh fragment ids included, is built) and ``merge_deleted``
    (the deletion mask a rebase writes: the offsets deleted in the latest
    version, and the offsets mine deletes)."""

    decide: Callable[..., Decision] = decide
    build_manifest: Callable[..., tuple] = build_manifest
    merge_deleted: Callable[[frozenset[int], frozenset[int]], frozenset[int]] = frozenset.union


DEFAULT_HOOKS = CommitHooks()


def new_transaction(read_version: int, operation: Operation, *, tag: str = "", properties=None) -> Transaction:
    return Transaction(
        read_version=read_version,
        uuid=str(entropy.current().uuid4()),
        operation=operation,
        tag=tag,
        properties=dict(properties or {}),
    )


def commit(
    storage: Storage,
    transaction: Transaction,
    *,
    read: ManifestFile | None,
    naming: NamingScheme,
    timestamp: tuple[int, int],
    stable_row_ids: bool = False,
    data_storage_version: str = "2.0",
    restore_source: ManifestFile | None = None,
    on_step: Callable[[str], None] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    manifest_store: ExternalManifestStore | None = None,
    hooks: CommitHooks = DEFAULT_HOOKS,
) -> ManifestFile:
    """Commit ``transaction`` (built on ``read``) as the next version of the
    table and return the manifest file committed. The caller has already
    written the transaction's data and deletion files.

    Raises :class:`~reference_impl.errors.IncompatibleConflictError` or
    :class:`~reference_impl.errors.RetryableConflictError` when a version
    committed since ``read`` conflicts (naming it and its operation),
    :class:`~reference_impl.errors.CommitAttemptsExhaustedError` after
    ``max_attempts`` lost races. Nothing committed is ever touched.
    ``on_step`` is called after the files and after the transaction file
    (once each), before every attempt at the manifest and after each step
    of writing it. With ``manifest_store`` the manifest is committed through
    that external store.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
    step = on_step or (lambda name: None)
    if read is not None:
        unknown = feature_flags.unknown_flags(read.manifest.writer_feature_flags)
        if unknown:
            raise UnsupportedFeatureError(
                read.path, f"writer feature flags 0x{unknown:x} are unknown; this writer must not write the dataset"
            )
    step(STEP_FILES_WRITTEN)
    transaction_file = write_transaction_file(storage, transaction)
    step(STEP_TRANSACTION_WRITTEN)
    if read is None:
        return _create(
            storage,
            transaction,
            transaction_file,
            naming,
            timestamp,
            stable_row_ids,
            data_storage_version,
            step,
            manifest_store,
        )

    state = _Rebase(
        storage,
        original=transaction,
        current=transaction,
        read=read,
        based_on=read,
        committed_manifests=_committed_lister(storage, manifest_store),
        hooks=hooks,
    )
    for attempt in range(1, max_attempts + 1):
        latest = state.catch_up()
        if state.current is not transaction and state.current.file_name() != transaction_file:
            transaction_file = write_transaction_file(storage, state.current)
        if attempt > 1:
            timestamp = _now_after(timestamp)
        settings = CommitSettings(
            timestamp=timestamp,
            transaction_file=transaction_file,
            data_storage_version=data_storage_version,
        )
        manifest, indices = hooks.build_manifest(
            latest.manifest, latest.indices or [], state.current, settings, restore_source=restore_source
        )
        relpath = manifest_path(manifest.version, naming)
        data, committed = encode_manifest_file_as(storage.path_text(relpath), manifest, indices or None, state.current)
        step(STEP_BEFORE_MANIFEST)
        try:
            _write_manifest(storage, manifest_store, manifest.version, relpath, data, step)
        except CommitConflictError:
            # Lost the race for this version: someone committed it first.
            # Back off, then check what they committed and try the next one.
            if attempt < max_attempts:
                time.sleep(backoff_delay(attempt))
            continue
        _write_hint(storage, manifest.version)
        return committed
    raise CommitAttemptsExhaustedError(
        str(storage.root),
        f"lost the race for the next version {max_attempts} times in a row "
        f"(last tried version {state.based_on.manifest.version + 1}); nothing conflicted, retrying may succeed",
        version=None,
        operation=None,
    )


def _committed_lister(storage: Storage, store: ExternalManifestStore | None) -> Callable[[], dict[int, str]]:
    """How the loop lists the committed manifests (version -> path): the
    object store's listing, after finalising the store's latest version."""
    if store is None:
        return lambda: list_versions(storage).manifests()
    return lambda: synchronize_latest(storage, store)


def _write_manifest(
    storage: Storage,
    store: ExternalManifestStore | None,
    version: int,
    relpath: str,
    data: bytes,
    step: Callable[[str], None],
) -> None:
    """Commit ``data`` as the manifest of ``version``: put-if-not-exists in
    the object store, or the external store's protocol. Raises
    :class:`CommitConflictError` when another writer committed the version."""
    if store is None:
        storage.put_if_not_exists(relpath, data)
        step(STEP_MANIFEST_WRITTEN)
    else:
        commit_through_store(storage, store, version, relpath, data, step)


def _create(
    storage, transaction, transaction_file, naming, timestamp, stable_row_ids, data_storage_version, step, store
):
    """Version 1: nothing to resolve against; if it exists, a table was
    created here meanwhile and this creation conflicts with it."""
    settings = CommitSettings(
        timestamp=timestamp,
        transaction_file=transaction_file,
        stable_row_ids=stable_row_ids,
        data_storage_version=data_storage_version,
    )
    manifest, indices = build_manifest(None, [], transaction, settings)
    relpath = manifest_path(manifest.version, naming)
    data, created = encode_manifest_file_as(storage.path_text(relpath), manifest, indices or None, transaction)
    step(STEP_BEFORE_MANIFEST)
    try:
        _write_manifest(storage, store, manifest.version, relpath, data, step)
    except CommitConflictError:
        committed = _load_committed(storage, 1, _committed_lister(storage, store)().get(1))
        raise IncompatibleConflictError(
            str(storage.root),
            "a dataset was created here meanwhile (version 1 exists)",
            version=1,
            operation=committed.operation_name,
        ) from None
    _write_hint(storage, manifest.version)
    return created


@dataclass
class _Committed:
    """A version committed since the read version, as the loop sees it: its
    transaction, and its manifest decoded only when a decision needs it."""

    version: int
    #: The version's manifest read without its fragments; None when there is
    #: no manifest of that version or it cannot be read.
    header: ManifestHeader | None
    #: None when the transaction is missing or cannot be read.
    transaction: Transaction | None
    _manifest_file: ManifestFile | None = field(default=None, init=False, repr=False)

    @property
    def operation_name(self) -> str | None:
        return self.transaction.operation_name if self.transaction is not None else None

    def manifest_file(self) -> ManifestFile | None:
        """The whole manifest, decoded on first use: the loop needs it for the
        latest version (to build on) and for the deletion files a same-rows
        check reads; None when it cannot be decoded."""
        if self._manifest_file is None and self.header is not None:
            try:
                self._manifest_file = self.header.decode()
            except LanceFormatError:
                return None
        return self._manifest_file


def _load_committed(storage: Storage, version: int, relpath: str | None) -> _Committed:
    """A committed version's transaction (from ``_transactions/``, or the
    copy the manifest embeds), read with the manifest's header only
    (:func:`~reference_impl.manifest_file.read_manifest_header`): deciding
    needs the transaction, not the fragments, so checking n newer versions
    stays linear in n whatever the table's size. ``relpath`` is None when
    there is no manifest of that version. What cannot be read is None: a
    missing transaction conflicts with everything (commit.conservative-conflicts)."""
    if relpath is None:
        return _Committed(version, None, None)
    try:
        header = read_manifest_header(storage, relpath)
    except LanceFormatError:
        return _Committed(version, None, None)
    if header.version != version:
        return _Committed(version, None, None)
    name = header.transaction_file
    transaction = header.transaction
    if name:
        embedded = (
            (header.transaction_bytes, header.transaction)
            if header.transaction is not None and header.transaction_bytes is not None
            else None
        )
        try:
            transaction = read_transaction_file(storage, name, embedded=embedded)
        except LanceFormatError:
            pass  # the embedded copy, when there is one, says the same
    return _Committed(version, header, transaction)


@dataclass
class _Rebase:
    """Mine as it stands between attempts: the transaction (possibly rebased),
    the manifest it is based on, and the versions already decided against."""

    storage: Storage
    original: Transaction
    current: Transaction
    #: The manifest the original transaction was built on.
    read: ManifestFile
    #: The manifest ``current`` is based on (``read``, or the version its
    #: deletion masks were merged with).
    based_on: ManifestFile
    #: Lists the committed manifests, version -> path (:func:`_committed_lister`).
    committed_manifests: Callable[[], dict[int, str]]
    hooks: CommitHooks = DEFAULT_HOOKS
    checked_through: int = -1
    #: Versions whose decision was a rebase, not yet carried out.
    pending: list[tuple[_Committed, Decision]] = field(default_factory=list)
    _affected: dict[int, frozenset[int]] | None = None

    def catch_up(self) -> ManifestFile:
        """Decide against every version committed since the last check, carry
        out the rebases, and return the latest manifest file."""
        checked = max(self.checked_through, self.read.manifest.version)
        # One listing per attempt, so checking n newer versions costs O(n).
        manifests = self.committed_manifests()
        newer = sorted(v for v in manifests if v > checked)
        if not newer:
            return self.based_on if self.based_on.manifest.version >= checked else self._latest_known
        last: _Committed | None = None
        for version in range(checked + 1, newer[-1] + 1):
            committed = _load_committed(self.storage, version, manifests.get(version))
            decision = self.hooks.decide(
                self.current,
                committed.transaction,
                read=self.based_on.manifest,
                rows=self._row_changes(committed),
            )
            self._enforce(committed, decision)
            if decision.outcome is Outcome.REBASE:
                self.pending.append((committed, decision))
            last = committed
        assert last is not None
        latest = last.manifest_file()
        if latest is None:  # unreadable (decide() refused a version without a transaction already)
            raise IncompatibleConflictError(str(self.storage.root), f"version {last.version} cannot be read")
        self.checked_through = last.version
        self._latest_known = latest
        self._finish(last, latest)
        return latest

    _latest_known: ManifestFile = field(init=False, repr=False)

    def _enforce(self, committed: _Committed, decision: Decision) -> None:
        mine = operation_title(self.current.operation)
        theirs = operation_title(committed.transaction.operation if committed.transaction else None)
        message = (
            f"this {mine} transaction (read version {self.original.read_version}) conflicts with version "
            f"{committed.version} ({theirs}): {decision.reason} [{', '.join(decision.requirement_ids)}]"
        )
        if decision.outcome is Outcome.INCOMPATIBLE:
            raise IncompatibleConflictError(
                str(self.storage.root),
                message + "; retrying would change what it does",
                version=committed.version,
                operation=committed.operation_name,
            )
        if decision.outcome is Outcome.RETRYABLE:
            raise RetryableConflictError(
                str(self.storage.root),
                message + "; run the operation again on the latest version",
                version=committed.version,
                operation=committed.operation_name,
            )

    # -- the rows a Delete or Update deletes (transaction page: affected rows) ----

    def _deleting(self) -> bool:
        return isinstance(self.original.operation, (Delete, Update))

    def affected(self) -> dict[int, frozenset[int]]:
        """Offsets mine deletes that were visible at its read version, per
        fragment it updates (its deletion file minus the one it read)."""
        if self._affected is None:
            operation = self.original.operation
            assert isinstance(operation, (Delete, Update))
            before = {f.id: f for f in self.read.manifest.fragments}
            affected = {}
            for fragment in operation.updated_fragments:
                now = self._deleted(self.read.manifest, fragment.id, fragment.deletion_file, fragment.physical_rows)
                old = before.get(fragment.id)
                was = (
                    self._deleted(self.read.manifest, old.id, old.deletion_file, old.physical_rows)
                    if old is not None
                    else frozenset()
                )
                affected[fragment.id] = now - was
            self._affected = affected
        return self._affected

    def _deleted(
        self, manifest: Manifest, fragment_id: int, deletion_file: DeletionFile | None, physical_rows: int
    ) -> frozenset[int]:
        if deletion_file is None:
            return frozenset()
        offsets = read_deletion_file(
            self.storage, fragment_id, deletion_file, base_paths=manifest.base_paths, physical_rows=physical_rows
        )
        return frozenset(offsets)

    def _row_changes(self, committed: _Committed) -> RowChanges | None:
        theirs = committed.transaction.operation if committed.transaction else None
        if not self._deleting() or not isinstance(theirs, (Delete, Update)):
            return None
        shared = modified_fragment_ids(self.current.operation) & {f.id for f in theirs.updated_fragments}
        if not shared:
            return None
        # Same fragments: the decision compares rows, so their deletion files
        # are read, with the base paths of the manifest that committed them.
        manifest_file = committed.manifest_file()
        if manifest_file is None:
            return None
        deleted = {
            f.id: self._deleted(manifest_file.manifest, f.id, f.deletion_file, f.physical_rows)
            for f in theirs.updated_fragments
            if f.id in shared
        }
        return RowChanges(mine=self.affected(), theirs=deleted)

    # -- carrying out the rebase ---------------------------------------------------

    def _finish(self, latest: _Committed, latest_file: ManifestFile) -> None:
        """Rewrite mine for the latest version (``latest``, whose manifest is
        ``latest_file``): merged deletion masks (new deletion files), index
        bitmaps on the fragments that still exist, singleton indices merged."""
        rebased = self.current
        if self._deleting():
            rebased = self._merge_deletions(latest, latest_file.manifest)
            rebased = with_latest_data_files(rebased, self.based_on.manifest, latest_file.manifest)
        elif isinstance(rebased.operation, CreateIndex):
            rebased = with_index_bitmaps_on(rebased, latest_file.manifest)
            if self.pending:
                try:
                    rebased = with_singleton_indices_merged(rebased, latest_file.indices or [])
                except SingletonMergeError as exc:
                    committed, _ = self.pending[-1]
                    raise RetryableConflictError(
                        str(self.storage.root),
                        f"version {committed.version} wrote the same singleton index and {exc}; "
                        "run the operation again",
                        version=committed.version,
                        operation=committed.operation_name,
                    ) from None
        self.pending.clear()
        if rebased != self.current:
            self.current = replace(rebased, read_version=latest.version)
            self.based_on = latest_file

    def _merge_deletions(self, latest: _Committed, manifest: Manifest) -> Transaction:
        to_merge = deletions_to_merge(self.current, self.based_on.manifest, manifest)
        if not to_merge:
            return self.current
        mine = self.affected()
        files: dict[int, DeletionFile | None] = {}
        for fragment_id, fragment in sorted(to_merge.items()):
            now = self._deleted(manifest, fragment_id, fragment.deletion_file, fragment.physical_rows)
            both = now & mine.get(fragment_id, frozenset())
            if both:
                committed = self.pending[-1][0] if self.pending else latest
                theirs_operation = committed.transaction.operation if committed.transaction else None
                raise RetryableConflictError(
                    str(self.storage.root),
                    f"version {committed.version} ({operation_title(theirs_operation)}) "
                    f"deleted rows {sorted(both)[:5]} of fragment {fragment_id} too (same rows); "
                    "run the operation again on the latest version",
                    version=committed.version,
                    operation=committed.operation_name,
                )
            merged = self.hooks.merge_deleted(now, mine.get(fragment_id, frozenset()))
            if len(merged) >= fragment.physical_rows:
                files[fragment_id] = None
            else:
                files[fragment_id] = write_deletion_file(self.storage, fragment_id, manifest.version, sorted(merged))
        return with_merged_deletions(self.current, files, rebased_on=manifest.version)


def backoff_delay(attempt: int) -> float:
    """A random delay (drawn from the writer's entropy source, so seeded runs
    stay reproducible) that grows with the number of lost races."""
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** min(attempt, 16))
    return ceiling * entropy.current().randbits(16) / 65536


def _now_after(previous: tuple[int, int]) -> tuple[int, int]:
    """The commit time of a later attempt: now, and never before the first."""
    nanos = max(entropy.current().time_ns(), previous[0] * 1_000_000_000 + previous[1])
    return nanos // 1_000_000_000, nanos % 1_000_000_000


def _write_hint(storage: Storage, version: int) -> None:
    """Best effort: the hint is never trusted, so failing to write it is harmless."""
    try:
        storage.put(f"{VERSIONS_DIR}/{LATEST_HINT}", json.dumps({"version": version}).encode())
    except OSError:
        pass
