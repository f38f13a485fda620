"""Writers with one known bug class each, shipped to prove the history
checker bites (``--writer faulty:NAME``; ``harness faulty`` lists them), and
the reference writer with a fault injected into its store
(``RunSpec.fault``).

Each is the reference driver (``conformance.drivers.reference``) with one
piece changed, never the reference's behaviour for correct writers: a step
of the commit loop swapped through ``reference_impl.commit.loop.CommitHooks``,
the read manifest it commits against, what it does when a commit fails, or
the store it writes to. Every one waits a little between reading and
committing (:data:`FAULTY_DELAY_SECONDS`), so that other writers commit in
between and a short run shows the bug.

| name | bug class | the anomaly the checker names |
| --- | --- | --- |
| ``skip-conflicts`` | skips conflict detection: every concurrent version judged compatible | incompatible commit |
| ``stale-read`` | builds on the first version it read, committed as the latest | blind rebase: resurrected delete |
| ``plain-put`` | put-if-not-exists replaced by a plain put (a concurrent manifest is overwritten) | lost append |
| ``restart-fragment-ids`` | fragment ids restart at 0 after an Overwrite (as pylance 0.20 did) | fragment-id reuse |
| ``wrong-rebase-merge`` | a rebase writes only its own deletions, dropping the concurrent ones | resurrected delete |
| ``upsert-no-key-check`` | upserts append keys not found when read, unchecked against concurrent inserts | duplicate |
| ``stale-retry`` | a conflicted commit retried with the fragment metadata built before | blind rebase: lost column |
| ``merge-twice`` | an upsert's commit retried after it had committed: its inserts applied twice | duplicate |
| ``late-read-update`` | an update whose read version is taken at commit time | lost update |
| ``partial-retry`` | a retried fragment write commits only what the retry wrote | lost append |
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from conformance.drivers import reference, writes
from conformance.drivers.protocol import DriverInfo
from conformance.drivers.writes import WriteKind, WriteResult
from reference_impl.arrow_schema import schema_to_arrow
from reference_impl.commit import Decision, Outcome
from reference_impl.commit.build import build_manifest
from reference_impl.commit.loop import DEFAULT_HOOKS, DEFAULT_MAX_ATTEMPTS, CommitHooks
from reference_impl.dataset import Dataset, dataset_storage
from reference_impl.errors import CommitConflictError
from reference_impl.fragment_writer import dataset_data_version, write_fragments
from reference_impl.naming import NamingScheme
from reference_impl.storage import LocalStorage, Storage
from reference_impl.transactions import Append, Overwrite, Update

from .anomalies import AnomalyKind
from .spec import FAULT_KILL_MID_COMMIT, FAULT_SLOW_STORE
from .workloads import KEY_COLUMN, VALUE_COLUMN, rows_table

#: How long a faulty writer waits between its read and its commit.
FAULTY_DELAY_SECONDS = 0.03
#: How long an upsert of ``upsert-no-key-check`` takes between finding which
#: keys are there and committing (a real upsert scans and joins meanwhile).
#: Racing upserts meet only when the others look for the keys before the
#: first commits; a window longer than a writer's scheduling delays on a busy
#: machine, and the same for every writer, keeps them in step.
UPSERT_WINDOW_SECONDS = 1.0
#: How long the slow store waits before each write (``RunSpec.fault``).
SLOW_STORE_SECONDS = 0.02
#: With the kill-mid-commit fault, writer 0 dies just after committing its
#: n-th manifest (the commit happened, unacknowledged) and writer 1 just
#: before writing it (nothing visible).
KILL_AT_MANIFEST = 3


class UnknownFaultyWriterError(ValueError):
    """``faulty:NAME`` names no shipped faulty writer."""


@dataclass(frozen=True)
class FaultyWriterInfo:
    name: str
    bug_class: str
    #: The anomaly the checker reports for it: the root, or one of its consequences.
    anomaly: AnomalyKind
    #: A workload that shows the bug in a short run (``conformance.harness.workloads``).
    workload: str


# -- the reference's dataset with one step changed ----------------------------------------


class _HookedDataset(Dataset):
    """The reference dataset, committing with ``hooks`` (and, when
    ``claim_latest_read`` names the operation, against the latest manifest
    instead of the one its operation was computed on)."""

    hooks: ClassVar[CommitHooks] = DEFAULT_HOOKS
    claim_latest_read: ClassVar[tuple[type, ...]] = ()

    def commit(self, operation, *, tag="", restore_source=None, on_step=None, max_attempts=DEFAULT_MAX_ATTEMPTS):
        read = self.manifest_file
        if isinstance(operation, self.claim_latest_read):
            read = Dataset.open(self.storage).manifest_file
        return self._commit_to(
            self.storage,
            read,
            self.naming_scheme or NamingScheme.V1,
            operation,
            tag=tag,
            restore_source=restore_source,
            on_step=on_step,
            max_attempts=max_attempts,
            manifest_store=self.manifest_store,
            hooks=self.hooks,
            properties=self.transaction_properties,
        )


def _always_compatible(*args, **kwargs) -> Decision:
    return Decision(Outcome.COMPATIBLE, (), "conflict detection skipped (faulty writer)")


def _ids_restarted_on_overwrite(read, read_indices, transaction, settings, **kwargs):
    if read is not None and isinstance(transaction.operation, Overwrite):
        read = replace(read, fragments=[], max_fragment_id=None)
    return build_manifest(read, read_indices, transaction, settings, **kwargs)


def _only_mine(theirs: frozenset[int], mine: frozenset[int]) -> frozenset[int]:
    return mine


class _SkipConflicts(_HookedDataset):
    hooks = CommitHooks(decide=_always_compatible)


class _ClaimsLatest(_HookedDataset):
    claim_latest_read = (object,)


class _RestartIds(_HookedDataset):
    hooks = CommitHooks(build_manifest=_ids_restarted_on_overwrite)


class _WrongMerge(_HookedDataset):
    hooks = CommitHooks(merge_deleted=_only_mine)


class _LateReadUpdate(_HookedDataset):
    claim_latest_read = (Update,)


class _StaleRetry(_HookedDataset):
    """A commit that lost to a concurrent one is retried as it was built: the
    same operation (its fragments, deletion files and schema as read), now
    claimed to be built on the latest version."""

    def commit(self, operation, **options):
        try:
            return super().commit(operation, **options)
        except CommitConflictError:
            latest = type(self).open(self.storage)
            latest.transaction_properties = self.transaction_properties
            return _HookedDataset.commit(latest, operation, **options)


class _PartialRetry(_HookedDataset):
    """An append written in two halves whose first half "failed" after its
    files were written; the retry writes the second half and commits it alone."""

    def append(self, table: pa.Table, *, max_rows_per_file: int | None = None) -> Dataset:
        schema = self.schema
        half = max(1, table.num_rows // 2)
        version = dataset_data_version(self.manifest)
        write_fragments(self.storage, table.slice(0, half), schema, version=version)  # written, then lost
        retried = write_fragments(self.storage, table.slice(half), schema, version=version)
        return self.commit(Append(fragments=retried))


class _UpsertByAppend(_HookedDataset):
    """Commits an update with extra new fragments: the rows of an upsert's
    keys that were not found at the version read (``inserts``)."""

    inserts: pa.Table | None = None

    def commit(self, operation, **options):
        if isinstance(operation, Update) and self.inserts is not None and self.inserts.num_rows:
            added = write_fragments(
                self.storage, self.inserts, self.schema, version=dataset_data_version(self.manifest)
            )
            operation = replace(operation, new_fragments=[*operation.new_fragments, *added])
        return super().commit(operation, **options)


class _MergeTwice(_UpsertByAppend):
    """After its upsert committed, commits its inserts again: the retry of a
    commit whose answer was lost, re-run on what is now the latest version."""

    def commit(self, operation, **options):
        committed = super().commit(operation, **options)
        if not isinstance(operation, Update) or self.inserts is None or not self.inserts.num_rows:
            return committed
        again = write_fragments(self.storage, self.inserts, self.schema, version=dataset_data_version(self.manifest))
        latest = Dataset.open(self.storage)
        latest.transaction_properties = self.transaction_properties
        return latest.commit(Append(fragments=again))


# -- stores with one fault --------------------------------------------------------------


class PlainPutStorage(LocalStorage):
    """A local directory whose put-if-not-exists is a plain put: the second
    writer of a manifest replaces the first. A manifest put takes
    :data:`FAULTY_DELAY_SECONDS`, as on an object store, so writers that
    listed the same latest version meet in a short run whatever runs them
    (a local disk's put is over before another writer has listed)."""

    def put_if_not_exists(
        self, relpath: str, data: bytes | Sequence[bytes | memoryview], *, durable: bool = True
    ) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            data = b"".join(bytes(chunk) for chunk in data)
        if relpath.startswith("_versions/"):
            time.sleep(FAULTY_DELAY_SECONDS)
        self.put(relpath, bytes(data))


class SlowLocalStorage(LocalStorage):
    """A local directory that waits before every write: a slow store."""

    def put_if_not_exists(
        self, relpath: str, data: bytes | Sequence[bytes | memoryview], *, durable: bool = True
    ) -> None:
        time.sleep(SLOW_STORE_SECONDS)
        super().put_if_not_exists(relpath, data, durable=durable)

    def put(self, relpath, data):
        time.sleep(SLOW_STORE_SECONDS)
        super().put(relpath, data)


class KillingLocalStorage(LocalStorage):
    """A local directory whose writer process SIGKILLs itself around its
    ``n``-th manifest write: ``"before"`` it (nothing of that commit is
    visible) or ``"after"`` it (committed, never acknowledged)."""

    def __init__(self, root, n: int, when: str):
        super().__init__(root)
        self.remaining, self.when = n, when

    def put_if_not_exists(
        self, relpath: str, data: bytes | Sequence[bytes | memoryview], *, durable: bool = True
    ) -> None:
        if not relpath.startswith("_versions/"):
            super().put_if_not_exists(relpath, data, durable=durable)
        elif self.when == "before":
            self.remaining -= 1
            if self.remaining == 0:
                kill_self()
            super().put_if_not_exists(relpath, data, durable=durable)
        else:
            super().put_if_not_exists(relpath, data, durable=durable)  # a lost race raises: not a commit
            self.remaining -= 1
            if self.remaining == 0:
                kill_self()


def kill_self() -> None:
    """Die at once, as a killed executor does (no clean-up, no flush)."""
    os.kill(os.getpid(), signal.SIGKILL)


# -- the writers --------------------------------------------------------------------------


StorageWrapper = Callable[[Storage], Storage]


def _local_only(make: Callable[[LocalStorage], Storage]) -> StorageWrapper:
    """A wrapper for local directories; other stores are kept as they are."""

    def wrap(storage: Storage) -> Storage:
        return make(storage) if isinstance(storage, LocalStorage) else storage

    return wrap


class ReferenceWithFault:
    """A writing driver: the reference driver, its dataset class and store
    chosen here. ``stale``: every operation is built on the first version
    this writer read. ``delay``: seconds between reading and committing."""

    def __init__(
        self,
        label: str,
        dataset_class: type[Dataset] = Dataset,
        *,
        storage: StorageWrapper | None = None,
        stale: bool = False,
        delay: float = FAULTY_DELAY_SECONDS,
        upserts: bool = False,
    ):
        self.label = label
        self.dataset_class = dataset_class
        self.wrap_storage = storage
        self.stale = stale
        self.delay = delay
        self.upserts = upserts
        self._storage: dict[str, Storage] = {}
        self._first: Dataset | None = None

    #: It reads as the reference does, index queries included (its info() declares them).
    query = staticmethod(reference.query)

    def info(self) -> DriverInfo:
        declared = reference.info()
        performed = declared.write_operations | ({WriteKind.UPSERT.value} if self.upserts else set())
        return replace(declared, name=self.label, implementation=self.label, write_operations=frozenset(performed))

    def storage(self, uri: str, storage_options: Mapping[str, str] | None) -> Storage:
        if uri not in self._storage:
            storage = dataset_storage(uri, storage_options)
            self._storage[uri] = self.wrap_storage(storage) if self.wrap_storage else storage
        return self._storage[uri]

    def write(self, uri: str, op: Any, *, storage_options: Mapping[str, str] | None = None) -> WriteResult:
        if self.stale and self._first is not None:
            dataset = self._first  # never refreshed: the version first read
        else:
            dataset = self.dataset_class.open(self.storage(str(uri), storage_options), op.read_version)
            self._first = self._first or dataset
        return reference.write_on(dataset, op, commit=self._commit)

    def _commit(self, dataset: Dataset, op: Any) -> Dataset:
        time.sleep(self.delay)
        if isinstance(op, writes.Upsert) and self.upserts:
            return _upsert_without_key_check(dataset, op)
        return reference.perform(dataset, op)


def _upsert_without_key_check(dataset: Dataset, op: writes.Upsert) -> Dataset:
    """One Update built on the version read: the keys found there updated, the
    others appended as new rows. Nothing checks that another writer inserted
    the same keys meanwhile, and two Updates that only add fragments never
    conflict, so racing upserts of a new key both insert it."""
    assert isinstance(dataset, _UpsertByAppend), "an upserting writer's dataset class adds its inserts"
    keys = op.rows.column(KEY_COLUMN).to_pylist()
    value = op.rows.column(VALUE_COLUMN)[0].as_py()
    present = set(dataset.to_table()[KEY_COLUMN].to_pylist()) & set(keys)
    fresh = [k for k in keys if k not in present]
    dataset.inserts = rows_table(fresh, value, schema_to_arrow(dataset.schema))
    time.sleep(UPSERT_WINDOW_SECONDS)
    return dataset.update(
        {VALUE_COLUMN: pa.scalar(value, pa.int64())}, where=pc.field(KEY_COLUMN).isin(sorted(present))
    )


FAULTY_WRITERS: dict[str, FaultyWriterInfo] = {
    info.name: info
    for info in (
        FaultyWriterInfo(
            "skip-conflicts",
            "skips conflict detection",
            AnomalyKind.INCOMPATIBLE_COMMIT,
            "delete:3,compact:1,update:1,append:1",
        ),
        FaultyWriterInfo(
            "stale-read", "builds on a stale read version", AnomalyKind.RESURRECTED_DELETE, "delete:3,append:1"
        ),
        FaultyWriterInfo("plain-put", "replaces put-if-not-exists with a plain put", AnomalyKind.LOST_APPEND, "append"),
        FaultyWriterInfo(
            "restart-fragment-ids",
            "restarts fragment ids after an Overwrite",
            AnomalyKind.FRAGMENT_ID_REUSE,
            "append:3,overwrite:1",
        ),
        FaultyWriterInfo(
            "wrong-rebase-merge", "merges deletion files wrongly on rebase", AnomalyKind.RESURRECTED_DELETE, "delete"
        ),
        FaultyWriterInfo(
            "upsert-no-key-check",
            "upserts without checking for concurrent inserts of the same new keys",
            AnomalyKind.DUPLICATE,
            "upsert/shared-keys",
        ),
        FaultyWriterInfo(
            "stale-retry",
            "retries a conflicted commit with the fragment metadata it built before",
            AnomalyKind.LOST_COLUMN,
            "add-columns:3,delete:1",
        ),
        FaultyWriterInfo(
            "merge-twice",
            "applies an upsert's inserts again after a retried commit",
            AnomalyKind.DUPLICATE,
            "upsert,append",
        ),
        FaultyWriterInfo(
            "late-read-update",
            "takes an update's read version at commit time",
            AnomalyKind.LOST_UPDATE,
            "update",
        ),
        FaultyWriterInfo(
            "partial-retry",
            "commits only what a retried fragment write wrote",
            AnomalyKind.LOST_APPEND,
            "append",
        ),
    )
}


def create(name: str, fault: str | None = None, writer_index: int = 0) -> ReferenceWithFault:
    """The faulty writer ``name`` (:data:`FAULTY_WRITERS`), for writer
    ``writer_index`` of a run with ``fault`` injected into its store (as
    into the reference's: :func:`with_fault`)."""
    info = FAULTY_WRITERS.get(name)
    if info is None:
        raise UnknownFaultyWriterError(f"no faulty writer {name!r}; shipped: {', '.join(sorted(FAULTY_WRITERS))}")
    label = f"faulty:{name}"
    store = _store_fault(fault, writer_index)
    if name == "skip-conflicts":
        return ReferenceWithFault(label, _SkipConflicts, storage=store)
    if name == "stale-read":
        return ReferenceWithFault(label, _ClaimsLatest, stale=True, storage=store)
    if name == "plain-put":
        return ReferenceWithFault(label, storage=_local_only(lambda s: PlainPutStorage(s.root)))
    if name == "restart-fragment-ids":
        return ReferenceWithFault(label, _RestartIds, storage=store)
    if name == "upsert-no-key-check":
        return ReferenceWithFault(label, _UpsertByAppend, upserts=True, storage=store)
    if name == "stale-retry":
        return ReferenceWithFault(label, _StaleRetry, storage=store)
    if name == "merge-twice":
        return ReferenceWithFault(label, _MergeTwice, upserts=True, storage=store)
    if name == "late-read-update":
        return ReferenceWithFault(label, _LateReadUpdate, storage=store)
    if name == "partial-retry":
        return ReferenceWithFault(label, _PartialRetry, storage=store)
    return ReferenceWithFault(label, _WrongMerge, storage=store)


def _store_fault(fault: str | None, writer_index: int) -> StorageWrapper | None:
    """The store ``fault`` gives writer ``writer_index``: a slow one, or
    (writers 0 and 1) one that kills its process around the
    :data:`KILL_AT_MANIFEST`-th manifest write, after it for writer 0 and
    before it for writer 1; None for no fault."""
    if fault == FAULT_SLOW_STORE:
        return _local_only(lambda s: SlowLocalStorage(s.root))
    if fault == FAULT_KILL_MID_COMMIT and writer_index <= 1:
        when = "after" if writer_index == 0 else "before"
        return _local_only(lambda s: KillingLocalStorage(s.root, KILL_AT_MANIFEST, when))
    return None


def with_fault(fault: str, writer_index: int) -> ReferenceWithFault:
    """The reference writer with ``fault`` (``RunSpec.fault``) injected into its store."""
    return ReferenceWithFault("reference", storage=_store_fault(fault, writer_index), delay=0.0)
