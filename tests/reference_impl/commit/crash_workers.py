"""What the writer processes of the crash tests run (kept apart from the
tests so that a forkserver child imports only this, the reference
implementation and pyarrow). A writer that reaches its fatal step sends
itself SIGKILL: nothing after that point runs, no ``finally``, no flush."""

from __future__ import annotations

import os
import signal

import pyarrow as pa

from reference_impl.commit.external_store import SqliteManifestStore
from reference_impl.dataset import Dataset
from reference_impl.fragment_writer import write_fragments
from reference_impl.transactions import Append


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def append_and_die_at(path: str, store_path: str | None, step: str, first_id: int, count: int) -> None:
    """Append ``count`` rows from ``first_id`` to the latest version, and be
    killed (SIGKILL, by this very process) right after commit step ``step``."""
    store = SqliteManifestStore(store_path) if store_path else None

    def die_at(name: str) -> None:
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)

    ds = Dataset.open(path, manifest_store=store)
    ds.commit(Append(fragments=write_fragments(ds.storage, rows(first_id, count), ds.schema)), on_step=die_at)


def append_to_uri_and_die_at(uri: str, options: dict, step: str, first_id: int, count: int) -> None:
    """As :func:`append_and_die_at`, for a dataset named by a URI with
    storage options (``s3+ddb://`` brings its DynamoDB store)."""

    def die_at(name: str) -> None:
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)

    ds = Dataset.open(uri, storage_options=options)
    ds.commit(Append(fragments=write_fragments(ds.storage, rows(first_id, count), ds.schema)), on_step=die_at)


def append_through_store(path: str, store_path: str, first_id: int, count: int, start, results) -> None:
    """Wait for every writer at ``start`` (a barrier), then append through
    the SQLite store; puts (first_id, committed version, error text) on
    ``results``."""
    try:
        store = SqliteManifestStore(store_path)
        ds = Dataset.open(path, manifest_store=store)
        operation = Append(fragments=write_fragments(ds.storage, rows(first_id, count), ds.schema))
        start.wait(timeout=120)
        committed = ds.commit(operation)
        results.put((first_id, committed.version, None))
    except Exception as exc:  # reported to the parent, which fails the test
        results.put((first_id, None, f"{type(exc).__name__}: {exc}"))
