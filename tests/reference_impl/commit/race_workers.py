"""What each writer process of the race tests runs (kept apart from the
tests so that a forkserver child imports only this, the reference
implementation and pyarrow)."""

from __future__ import annotations

import pyarrow as pa

from reference_impl.dataset import Dataset
from reference_impl.fragment_writer import write_fragments
from reference_impl.transactions import Append


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def append_at_once(path: str, read_version: int, first_id: int, count: int, start, results) -> None:
    """Write ``count`` rows from ``first_id`` as a fragment, wait for every
    writer at ``start`` (a barrier), then commit the Append built on
    ``read_version``. Puts (first_id, committed version, error text) on
    ``results``."""
    try:
        ds = Dataset.open(path, read_version)
        operation = Append(fragments=write_fragments(ds.storage, rows(first_id, count), ds.schema))
        start.wait(timeout=120)
        results.put((first_id, ds.commit(operation).version, None))
    except Exception as exc:  # reported to the parent, which fails the test
        results.put((first_id, None, f"{type(exc).__name__}: {exc}"))
