"""Writers with one known bug class each, shipped to prove the history
checker bites (``--writer faulty:NAME``; ``harness faulty`` lists them).

Each is the reference writer with one piece changed, never the reference's
behaviour for correct writers: a step of the commit loop swapped through
``reference_impl.commit.loop.CommitHooks``, the read manifest it commits
against, or the store it writes to. Every one waits a little between
reading and committing (:data:`FAULTY_DELAY_SECONDS`), so that other
writers commit in between and a short run shows the bug.

| name | bug class | the anomaly the checker names |
| --- | --- | --- |
| ``skip-conflicts`` | skips conflict detection: every concurrent version is judged compatible | incompatible commit |
| ``stale-read`` | builds on a stale read version (the first one read, committed as the latest) | resurrected delete |
| ``plain-put`` | put-if-not-exists replaced by a plain put (a concurrent manifest is overwritten) | lost append |
| ``restart-fragment-ids`` | fragment ids restart at 0 after an Overwrite (as pylance 0.20 did) | fragment-id reuse |
| ``wrong-rebase-merge`` | a rebase writes only its own deletions, dropping the concurrent ones | resurrected delete |
| ``upsert-no-key-check`` | upserts append keys not found when read, unchecked against concurrent inserts | duplicate |
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.arrow_schema import schema_to_arrow
from reference_impl.commit import Decision, Outcome
from reference_impl.commit.build import build_manifest
from reference_impl.commit.loop import DEFAULT_HOOKS, DEFAULT_MAX_ATTEMPTS, CommitHooks
from reference_impl.dataset import Dataset
from reference_impl.fragment_writer import write_fragments
from reference_impl.naming import NamingScheme
from reference_impl.storage import LocalStorage
from reference_impl.transactions import Overwrite, Update

from .workloads import KINDS, UPSERT_KINDS, PlannedOp
from .writers import Performed, ReferenceWriter, Writer, rows_table

#: How long a faulty writer waits between its read and its commit.
FAULTY_DELAY_SECONDS = 0.03
#: How long an upsert of ``upsert-no-key-check`` takes between finding which
#: keys are there and committing (a real upsert scans and joins meanwhile).
#: Racing upserts meet only when the others look for the keys before the
#: first commits; a window longer than a writer's scheduling delays on a busy
#: machine, and the same for every writer, keeps them in step.
UPSERT_WINDOW_SECONDS = 1.0


class UnknownFaultyWriterError(ValueError):
    """``faulty:NAME`` names no shipped faulty writer."""


@dataclass(frozen=True)
class FaultyWriterInfo:
    name: str
    bug_class: str
    #: The anomaly name the checker reports for it.
    anomaly: str
    #: A workload that shows the bug in a short run.
    workload: str


class _HookedDataset(Dataset):
    """The reference dataset, committing with ``hooks`` (and, when
    ``claim_latest_read``, against the latest manifest instead of the one
    its operation was computed on)."""

    hooks: ClassVar[CommitHooks] = DEFAULT_HOOKS
    claim_latest_read: ClassVar[bool] = False

    def commit(self, operation, *, tag="", restore_source=None, on_step=None, max_attempts=DEFAULT_MAX_ATTEMPTS):
        read = self.manifest_file
        if self.claim_latest_read:
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


class _StaleRead(_HookedDataset):
    claim_latest_read = True


class _RestartIds(_HookedDataset):
    hooks = CommitHooks(build_manifest=_ids_restarted_on_overwrite)


class _WrongMerge(_HookedDataset):
    hooks = CommitHooks(merge_deleted=_only_mine)


class _UpsertByAppend(_HookedDataset):
    """Commits an update with extra new fragments: the rows of an upsert's
    keys that were not found at the version read (``inserts``)."""

    inserts: pa.Table | None = None

    def commit(self, operation, **options):
        if isinstance(operation, Update) and self.inserts is not None and self.inserts.num_rows:
            added = write_fragments(self.storage, self.inserts, self.schema)
            operation = replace(operation, new_fragments=[*operation.new_fragments, *added])
        return super().commit(operation, **options)


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


class FaultyWriter(ReferenceWriter):
    """The reference writer with one fault (see the module table)."""

    def __init__(
        self, info: FaultyWriterInfo, dataset_class: type[Dataset], *, stale: bool = False, plain_put: bool = False
    ):
        super().__init__()
        self.info = info
        self.dataset_class = dataset_class
        self.stale = stale
        self.plain_put = plain_put

    def open(self, uri, storage_options) -> None:
        super().open(uri, storage_options)
        if self.plain_put and isinstance(self.storage, LocalStorage):
            self.storage = PlainPutStorage(self.storage.root)

    def open_dataset(self, version: int | None = None) -> Dataset:
        return self.dataset_class.open(self.storage, version)

    def read_version(self) -> int:
        if self.stale and self.dataset is not None:
            return self.dataset.version  # never refreshed: the version first read
        return super().read_version()

    def perform(self, op: PlannedOp) -> Performed:
        kept = self.dataset
        time.sleep(FAULTY_DELAY_SECONDS)
        performed = super().perform(op)
        if self.stale:
            self.dataset = kept
        return performed


class UpsertWithoutKeyCheck(FaultyWriter):
    """Upserts as one Update built on the version read: the keys found there
    updated, the others appended as new rows. Nothing checks that another
    writer inserted the same keys meanwhile, and two Updates that only add
    fragments never conflict, so racing upserts of a new key both insert it."""

    supported_kinds = frozenset(KINDS)

    def perform(self, op: PlannedOp) -> Performed:
        if op.kind not in UPSERT_KINDS:
            return super().perform(op)
        ds = self.dataset
        assert isinstance(ds, _UpsertByAppend), "read_version() first"
        keys = list(op.args["ids"])
        present = set(ds.to_table()["id"].to_pylist()) & set(keys)
        fresh = [k for k in keys if k not in present]
        ds.inserts = rows_table(fresh, op.args["value"], schema_to_arrow(ds.schema))
        time.sleep(UPSERT_WINDOW_SECONDS)
        value = pa.scalar(op.args["value"], pa.int64())
        self.dataset = ds.update({"value": value}, where=pc.field("id").isin(sorted(present)))
        return Performed(self.dataset.version)


FAULTY_WRITERS: dict[str, FaultyWriterInfo] = {
    info.name: info
    for info in (
        FaultyWriterInfo(
            "skip-conflicts", "skips conflict detection", "incompatible commit", "delete:3,compact:1,update:1,append:1"
        ),
        FaultyWriterInfo("stale-read", "builds on a stale read version", "resurrected delete", "delete:3,append:1"),
        FaultyWriterInfo("plain-put", "replaces put-if-not-exists with a plain put", "lost append", "append"),
        FaultyWriterInfo(
            "restart-fragment-ids",
            "restarts fragment ids after an Overwrite",
            "fragment-id reuse",
            "append:3,overwrite:1",
        ),
        FaultyWriterInfo(
            "wrong-rebase-merge", "merges deletion files wrongly on rebase", "resurrected delete", "delete"
        ),
        FaultyWriterInfo(
            "upsert-no-key-check",
            "upserts without checking for concurrent inserts of the same new keys",
            "duplicate",
            "upsert_race",
        ),
    )
}


def create(name: str) -> Writer:
    """The faulty writer ``name`` (:data:`FAULTY_WRITERS`)."""
    info = FAULTY_WRITERS.get(name)
    if info is None:
        raise UnknownFaultyWriterError(f"no faulty writer {name!r}; shipped: {', '.join(sorted(FAULTY_WRITERS))}")
    if name == "skip-conflicts":
        return FaultyWriter(info, _SkipConflicts)
    if name == "stale-read":
        return FaultyWriter(info, _StaleRead, stale=True)
    if name == "plain-put":
        return FaultyWriter(info, Dataset, plain_put=True)
    if name == "restart-fragment-ids":
        return FaultyWriter(info, _RestartIds)
    if name == "upsert-no-key-check":
        return UpsertWithoutKeyCheck(info, _UpsertByAppend)
    return FaultyWriter(info, _WrongMerge)
