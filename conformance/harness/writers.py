"""The writer interface of the harness, and its two shipped writers.

A writer is anything with the four members of :class:`Writer`: it opens a
dataset by URI and storage options, takes a read version, performs one
planned operation on it, and says which workload kinds it supports and
whether an error means "another writer's commit conflicts". ``pylance`` and
``reference`` ship here, ``faulty:NAME`` in :mod:`.faulty`; any other name is
the module path of a writer plugged in from outside: that module defines
``create_writer(writer_index: int) -> Writer``.

How the implementations signal a conflict from Python is what
``conformance/conflict_matrix/signals.py`` measured for pylance 14 and the
reference (restated here: the harness sits below the conflict matrix).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.arrow_schema import schema_to_arrow
from reference_impl.dataset import Dataset, dataset_storage
from reference_impl.errors import CommitConflictError
from reference_impl.storage import LocalStorage, Storage

from . import workloads as w
from .workloads import PlannedOp

#: Rows per fragment compaction aims at (small tables: everything merges).
COMPACT_TARGET_ROWS = 100_000
#: How long the slow store waits before each write (``RunSpec.fault``).
SLOW_STORE_SECONDS = 0.02
_PYLANCE_CONFLICT_PREFIXES = (
    "Retryable commit conflict",
    "Too many concurrent writers",
    "Incompatible transaction",
    "Commit conflict for version",
)


class WriterLoadError(ValueError):
    """A ``--writer`` name that names no writer."""


@dataclass(frozen=True)
class Performed:
    """What one acknowledged operation committed: the version, and arguments
    known only once it ran (a restore's target version)."""

    version: int
    args: dict = field(default_factory=dict)


@runtime_checkable
class Writer(Protocol):
    """What the harness needs of a writer."""

    #: Workload kinds (``conformance.harness.workloads.KINDS``) it can perform.
    supported_kinds: frozenset[str]

    def open(self, uri: str, storage_options: Mapping[str, str]) -> None:
        """Remember the dataset (it exists: the runner created it)."""

    def read_version(self) -> int:
        """Take the version the next operation is built on, and return it."""

    def perform(self, op: PlannedOp) -> Performed:
        """Perform ``op`` on the version read, commit it, return what committed."""

    def is_conflict(self, error: BaseException) -> bool:
        """Whether ``error`` (raised by :meth:`perform`) says another writer's
        commit conflicts (then the attempt is a conflict, not an error)."""


def rows_table(ids: list[int], value: int, schema: pa.Schema) -> pa.Table:
    """Rows ``(id, value)`` with every other column of ``schema`` filled (the
    harness's added columns are ``id * 2``), so appends follow schema changes."""
    columns = []
    for f in schema:
        if f.name == "id":
            columns.append(pa.array(ids, f.type))
        elif f.name == "value":
            columns.append(pa.array([value] * len(ids), f.type))
        elif pa.types.is_integer(f.type):
            columns.append(pa.array([i * 2 for i in ids], f.type))
        else:
            columns.append(pa.nulls(len(ids), f.type))
    return pa.Table.from_arrays(columns, schema=schema)


INITIAL_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("value", pa.int64())])
#: Field metadata declaring a column part of the unenforced primary key (table
#: overview page, "Unenforced Primary Key").
PRIMARY_KEY_METADATA = {"lance-schema:unenforced-primary-key": "true"}


def initial_schema(primary_key: bool) -> pa.Schema:
    """The schema a run's dataset starts with; with ``primary_key``, ``id`` is
    the unenforced primary key (and so not nullable, as a key must be)."""
    if not primary_key:
        return INITIAL_SCHEMA
    return pa.schema(
        [pa.field("id", pa.int64(), nullable=False, metadata=PRIMARY_KEY_METADATA), INITIAL_SCHEMA.field("value")]
    )


def overwrite_schema(current: pa.Schema) -> pa.Schema:
    """The schema an overwrite writes: the initial columns, ``id`` as the
    table has it now (a declared primary key must not be removed)."""
    return pa.schema([current.field("id"), INITIAL_SCHEMA.field("value")])


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


class ReferenceWriter:
    """The reference implementation (``reference_impl.dataset.Dataset``). It
    has no upsert."""

    supported_kinds = frozenset(w.KINDS) - w.UPSERT_KINDS

    def __init__(self, *, slow_store: bool = False):
        self.slow_store = slow_store
        self.dataset: Dataset | None = None
        #: (n, "before" | "after"): die around the n-th manifest write (fault injection).
        self.kill_at_manifest: tuple[int, str] | None = None

    def open(self, uri: str, storage_options: Mapping[str, str]) -> None:
        self.storage: Storage = dataset_storage(uri, storage_options)
        if isinstance(self.storage, LocalStorage):
            if self.kill_at_manifest is not None:
                self.storage = KillingLocalStorage(self.storage.root, *self.kill_at_manifest)
            elif self.slow_store:
                self.storage = SlowLocalStorage(self.storage.root)

    def open_dataset(self, version: int | None = None) -> Dataset:
        return Dataset.open(self.storage, version)

    def read_version(self) -> int:
        self.dataset = self.open_dataset()
        return self.dataset.version

    def perform(self, op: PlannedOp) -> Performed:
        ds = self.dataset
        assert ds is not None, "read_version() first"
        args = op.args
        ids = pc.field("id").isin(args.get("ids", []))
        extra: dict = {}
        if op.kind == w.APPEND:
            ds = ds.append(rows_table(args["ids"], 0, schema_to_arrow(ds.schema)))
        elif op.kind == w.DELETE:
            ds = ds.delete(ids)
        elif op.kind == w.UPDATE:
            ds = ds.update({"value": pa.scalar(args["value"], pa.int64())}, where=ids)
        elif op.kind == w.COMPACT:
            ds = ds.compact(target_rows_per_fragment=COMPACT_TARGET_ROWS)
        elif op.kind == w.CREATE_INDEX:
            ds = ds.create_index(["id"], name=args["name"])
        elif op.kind == w.CONFIG:
            ds = ds.update_metadata(config={args["key"]: args["value"]})
        elif op.kind == w.ADD_COLUMN:
            ds = ds.add_columns({args["name"]: pc.multiply(pc.field("id"), 2)})
        elif op.kind == w.OVERWRITE:
            ds = ds.overwrite(rows_table(args["ids"], 0, overwrite_schema(schema_to_arrow(ds.schema))))
        elif op.kind == w.RESTORE:
            extra["version"] = max(1, ds.version - args["back"])
            ds = ds.restore(extra["version"])
        else:
            raise ValueError(f"the reference writer cannot perform {op.kind!r}")
        self.dataset = ds
        return Performed(ds.version, extra)

    def is_conflict(self, error: BaseException) -> bool:
        return isinstance(error, CommitConflictError)


def _sql_ids(ids: list[int]) -> str:
    return f"id IN ({', '.join(str(int(i)) for i in ids)})" if ids else "false"


class PylanceWriter:
    """pylance (``lance``), its public API. Its own retries are turned off
    (``conflict_retries=0``): an operation it re-ran on a newer version would
    no longer be the one recorded with its read version."""

    supported_kinds = frozenset(w.KINDS)

    def open(self, uri: str, storage_options: Mapping[str, str]) -> None:
        # Imported here, before the executor's start barrier: importing
        # pylance takes a second, and a writer that does it in its first
        # operation starts that long after the others (no race at all).
        import lance  # noqa: F401  # lazy: only the processes that write with pylance load it

        self.uri = uri
        self.storage_options = dict(storage_options) or None
        self.dataset: Any = None  # a lance.LanceDataset once read

    def read_version(self) -> int:
        import lance  # lazy: pylance loads only in the processes that write with it

        self.dataset = lance.dataset(self.uri, storage_options=self.storage_options)
        return self.dataset.version

    def perform(self, op: PlannedOp) -> Performed:
        import lance  # lazy, as above

        ds = self.dataset
        assert ds is not None, "read_version() first"
        args = op.args
        extra: dict = {}
        if op.kind == w.APPEND:
            ds = lance.write_dataset(
                rows_table(args["ids"], 0, ds.schema), ds, mode="append", storage_options=self.storage_options
            )
        elif op.kind == w.DELETE:
            ds.delete(_sql_ids(args["ids"]), conflict_retries=0)
        elif op.kind == w.UPDATE:
            ds.update({"value": str(int(args["value"]))}, where=_sql_ids(args["ids"]), conflict_retries=0)
        elif op.kind in w.UPSERT_KINDS:
            table = rows_table(args["ids"], args["value"], ds.schema)
            (
                ds.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .conflict_retries(0)
                .execute(table)
            )
        elif op.kind == w.COMPACT:
            ds.optimize.compact_files(target_rows_per_fragment=COMPACT_TARGET_ROWS)
        elif op.kind == w.CREATE_INDEX:
            ds.create_scalar_index("id", "BTREE", name=args["name"])
        elif op.kind == w.CONFIG:
            ds.update_config({args["key"]: args["value"]})
        elif op.kind == w.ADD_COLUMN:
            ds.add_columns({args["name"]: "id * 2"})
        elif op.kind == w.OVERWRITE:
            ds = lance.write_dataset(
                rows_table(args["ids"], 0, overwrite_schema(ds.schema)),
                ds,
                mode="overwrite",
                storage_options=self.storage_options,
            )
        elif op.kind == w.RESTORE:
            extra["version"] = max(1, ds.version - args["back"])
            target = ds.checkout_version(extra["version"])
            target.restore()
            ds = target
        else:
            raise ValueError(f"pylance cannot perform {op.kind!r} here")
        self.dataset = ds
        return Performed(ds.version, extra)

    def is_conflict(self, error: BaseException) -> bool:
        retryable = getattr(error, "retryable", None)
        if isinstance(retryable, bool) and isinstance(error, OSError):
            return True
        return isinstance(error, OSError) and str(error).startswith(_PYLANCE_CONFLICT_PREFIXES)
