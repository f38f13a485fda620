"""pylance's own distributed write pattern as a driver (``pylance-distributed``):
workers do the heavy part in processes of their own, one coordinator commits.

What each operation runs (the worker processes are a
``concurrent.futures.ProcessPoolExecutor`` of :data:`WORKERS` spawned
processes, kept for the life of the driver process and stopped by
:func:`close`):

* create, append, overwrite: each worker writes a contiguous slice of the
  rows with ``lance.fragment.write_fragments``; the coordinator commits all
  their fragments in one ``LanceDataset.commit`` of a ``lance.Transaction``
  (``LanceOperation.Overwrite`` for create and overwrite,
  ``LanceOperation.Append``) on the version it read;
* delete: each worker deletes on its share of the fragments
  (``LanceFragment.delete(predicate)`` on the version read); the coordinator
  commits ``LanceOperation.Delete(updated_fragments, deleted_fragment_ids,
  predicate)``;
* add-columns: each worker adds the columns to its share of the fragments
  (``LanceFragment.merge_columns`` with the SQL expressions); the coordinator
  commits ``LanceOperation.Merge(fragments, schema)``;
* compact: ``lance.optimize.Compaction.plan`` on the coordinator, each task's
  ``execute`` in a worker, one ``Compaction.commit``.

What the driver learns (:class:`~conformance.drivers.writes.WriteResult`):
``LanceDataset.commit`` returns the dataset at the version it committed, and
the read version is the one the coordinator passed (``op.read_version``, or
the latest when it opened the dataset). pylance's commit may still rebase on
a newer version (its own retries, 20 by default, as a user runs it): the
transaction file of the committed version records the version it was really
built on. The token (``op.token``) is recorded in the transaction
properties of every commit but compaction's, whose ``Compaction.commit``
takes none.

Compaction commits two versions when it has work: a ReserveFragments (new
fragment ids) then the Rewrite. ``Compaction.commit`` moves the dataset
object it is given to the Rewrite's version, which is reported; it returns
metrics only, so the ReserveFragments version is not learned (the versions
listed before and after would be racy), and ``detail`` says so: the harness
finds it in the transaction files. A plan with no task commits nothing and
reports no version.

``read_version`` is honoured by every operation (write-at-version).
``lance`` is imported inside the functions; the module imports without it.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from ..protocol import DriverInfo, WriteKind, WriteNotSupported
from .common import conflict_from, engine_info, slices, token_properties

if TYPE_CHECKING:  # pragma: no cover - typing only
    from concurrent.futures import ProcessPoolExecutor

    import pyarrow as pa


NAME = "pylance-distributed"
#: Worker processes (spawned, so that no Rust runtime state is forked).
WORKERS = 2
#: The write kinds :func:`write` performs; private: it builds info()'s
#: write_operations, the one declaration the suite reads.
_WRITE_OPERATIONS: tuple[WriteKind, ...] = (
    WriteKind.CREATE,
    WriteKind.APPEND,
    WriteKind.OVERWRITE,
    WriteKind.DELETE,
    WriteKind.ADD_COLUMNS,
    WriteKind.COMPACT,
)
#: What :func:`write` says about a compaction's ReserveFragments commit.
RESERVE_NOT_REPORTED = (
    "Compaction.commit commits ReserveFragments before the Rewrite and reports neither; "
    "the Rewrite's version is the dataset's after the commit, the ReserveFragments version is not learned"
)


def info() -> DriverInfo:
    return engine_info(NAME, "pylance", _WRITE_OPERATIONS, at_version=True)


# -- the worker processes -------------------------------------------------------------------

_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> ProcessPoolExecutor:
    """The worker processes, started on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=WORKERS, mp_context=multiprocessing.get_context("spawn"))
        return _pool


def close() -> None:
    """Stop the worker processes (and wait for them); the next write starts new ones."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(close)


def _run_in_workers(function: Any, tasks: list[tuple]) -> list[Any]:
    """``function(*task)`` for each task in the worker processes, results in
    task order; a broken pool is dropped so that the next write starts anew."""
    try:
        pool = _workers()
        futures = [pool.submit(function, *task) for task in tasks]
        return [future.result() for future in futures]
    except BrokenProcessPool:
        close()
        raise


# What the workers run (module-level, so that a spawned process imports them).


def _write_slice(
    uri: str, rows: pa.Table, mode: str, options: dict[str, Any], storage_options: dict[str, str] | None
) -> list:
    # lazy: pylance loads only when a write runs (driver modules import light)
    from lance.fragment import write_fragments

    return write_fragments(rows, uri, schema=rows.schema, mode=mode, storage_options=storage_options, **options)


def _delete_on_fragments(
    uri: str, version: int, fragment_ids: list[int], predicate: str, storage_options: dict[str, str] | None
) -> list[tuple[int, Any]]:
    """Each fragment's metadata after the delete: None when every row went, the
    same metadata when none did."""
    import lance  # lazy: pylance loads only when a write runs (driver modules import light)

    dataset = lance.dataset(uri, version=version, storage_options=storage_options)
    return [(fragment_id, _fragment(dataset, fragment_id).delete(predicate)) for fragment_id in fragment_ids]


def _merge_on_fragments(
    uri: str, version: int, fragment_ids: list[int], expressions: dict[str, str], storage_options: dict[str, str] | None
) -> list[tuple[Any, Any]]:
    import lance  # lazy: pylance loads only when a write runs (driver modules import light)

    dataset = lance.dataset(uri, version=version, storage_options=storage_options)
    return [_fragment(dataset, fragment_id).merge_columns(expressions) for fragment_id in fragment_ids]


def _fragment(dataset: Any, fragment_id: int) -> Any:
    fragment = dataset.get_fragment(fragment_id)
    if fragment is None:  # the coordinator listed it in this very version
        raise LookupError(f"fragment {fragment_id} is not in version {dataset.version}")
    return fragment


def _execute_compaction(uri: str, version: int, task: Any, storage_options: dict[str, str] | None) -> Any:
    import lance  # lazy: pylance loads only when a write runs (driver modules import light)

    return task.execute(lance.dataset(uri, version=version, storage_options=storage_options))


# -- writing ----------------------------------------------------------------------------------


def write(uri: str | os.PathLike[str], op: Any, *, storage_options: dict[str, str] | None = None) -> Any:
    """Perform ``op`` in the pattern of its kind (module docstring) and say
    what was committed; a commit conflict raises
    :class:`~conformance.drivers.protocol.WriteConflict`."""
    from .. import writes  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

    target = os.fspath(uri)
    options = dict(storage_options) if storage_options else None
    try:
        import lance  # lazy: pylance loads only when a write runs (driver modules import light)

        if isinstance(op, writes.Create):
            _refuse_existing(lance, target, options)
            return _write_rows(target, op, None, options)

        dataset = lance.dataset(target, version=op.read_version, storage_options=options)
        if isinstance(op, (writes.Append, writes.Overwrite)):
            return _write_rows(target, op, dataset, options)
        if isinstance(op, writes.Delete):
            return _delete(target, op, dataset, options)
        if isinstance(op, writes.AddColumns):
            return _add_columns(target, op, dataset, options)
        if isinstance(op, writes.Compact):
            return _compact(target, op, dataset, options)
    except Exception as exc:
        conflict = conflict_from(exc)
        if conflict is not None:
            raise conflict from exc
        raise
    raise WriteNotSupported(f"the {NAME} driver does not perform {op.kind.value}")


def _refuse_existing(lance: Any, uri: str, options: dict[str, str] | None) -> None:
    """Raise when a dataset exists at ``uri``: an Overwrite committed on
    version 0 would replace it, where create must fail. (Two creates racing
    may both pass this check; the commit then decides.)"""
    try:
        existing = lance.dataset(uri, storage_options=options)
    except (OSError, ValueError):  # nothing there: create it
        return
    raise FileExistsError(f"a dataset already exists at {uri} (version {existing.version})")


def _per_worker(items: list[int]) -> list[list[int]]:
    """``items`` dealt to the workers, none given an empty share."""
    shares = [items[worker::WORKERS] for worker in range(WORKERS)]
    return [share for share in shares if share]


def _commit(uri: str, operation: Any, read_version: int, op: Any, options: dict[str, str] | None, **extra: Any):
    import lance  # lazy: pylance loads only when a write runs (driver modules import light)

    transaction = lance.Transaction(read_version, operation, transaction_properties=token_properties(op) or {})
    return lance.LanceDataset.commit(uri, transaction, storage_options=options, **extra)


def _write_rows(uri: str, op: Any, dataset: Any, options: dict[str, str] | None) -> Any:
    # lazy: pylance and writes (pyarrow) load only when a write runs (driver modules import light)
    import lance

    from .. import writes

    write_options: dict[str, Any] = {}
    if op.max_rows_per_file is not None:
        write_options["max_rows_per_file"] = op.max_rows_per_file
    creating = isinstance(op, writes.Create)
    if creating:
        write_options["enable_stable_row_ids"] = op.stable_row_ids
        if op.data_storage_version is not None:
            write_options["data_storage_version"] = op.data_storage_version
    elif dataset is not None and isinstance(op, writes.Append):
        # Fragments in the dataset's own file version (write_fragments takes
        # the default otherwise, which a 2.0 dataset cannot hold).
        write_options["data_storage_version"] = dataset.data_storage_version
    mode = "append" if isinstance(op, writes.Append) else "overwrite"
    tasks = [(uri, part, mode, write_options, options) for part in slices(op.rows, WORKERS)]
    fragments = [fragment for written in _run_in_workers(_write_slice, tasks) for fragment in written]
    operation: Any
    if isinstance(op, writes.Append):
        operation = lance.LanceOperation.Append(fragments)
    else:
        operation = lance.LanceOperation.Overwrite(op.rows.schema, fragments)
    read_version = 0 if dataset is None else dataset.version
    extra = {"enable_stable_row_ids": op.stable_row_ids} if creating else {}
    committed = _commit(uri, operation, read_version, op, options, **extra)
    return writes.WriteResult(versions=(committed.version,), read_versions=() if creating else (read_version,))


def _delete(uri: str, op: Any, dataset: Any, options: dict[str, str] | None) -> Any:
    # lazy: pylance and writes (pyarrow) load only when a write runs (driver modules import light)
    import lance

    from .. import writes

    predicate = op.where.to_sql(writes.SqlDialect.LANCE)
    before = {fragment.fragment_id: fragment.metadata for fragment in dataset.get_fragments()}
    tasks = [(uri, dataset.version, share, predicate, options) for share in _per_worker(sorted(before))]
    results = [pair for done in _run_in_workers(_delete_on_fragments, tasks) for pair in done]
    updated = [after for fragment_id, after in results if after is not None and after != before[fragment_id]]
    removed = [fragment_id for fragment_id, after in results if after is None]
    operation = lance.LanceOperation.Delete(updated, removed, predicate)
    committed = _commit(uri, operation, dataset.version, op, options)
    return writes.WriteResult(versions=(committed.version,), read_versions=(dataset.version,))


def _add_columns(uri: str, op: Any, dataset: Any, options: dict[str, str] | None) -> Any:
    # lazy: pylance and writes (pyarrow) load only when a write runs (driver modules import light)
    import lance

    from .. import writes

    expressions = {column.name: column.to_sql(writes.SqlDialect.LANCE) for column in op.columns}
    fragment_ids = sorted(fragment.fragment_id for fragment in dataset.get_fragments())
    if not fragment_ids:
        raise WriteNotSupported(f"the {NAME} driver adds columns fragment by fragment: the dataset has none")
    tasks = [(uri, dataset.version, share, expressions, options) for share in _per_worker(fragment_ids)]
    merged = [pair for done in _run_in_workers(_merge_on_fragments, tasks) for pair in done]
    schema = merged[0][1]
    operation = lance.LanceOperation.Merge([fragment for fragment, _ in merged], schema)
    committed = _commit(uri, operation, dataset.version, op, options)
    return writes.WriteResult(versions=(committed.version,), read_versions=(dataset.version,))


def _compact(uri: str, op: Any, dataset: Any, options: dict[str, str] | None) -> Any:
    # lazy: pylance and writes (pyarrow) load only when a write runs (driver modules import light)
    from lance.optimize import Compaction

    from .. import writes

    plan = Compaction.plan(
        dataset,
        {"target_rows_per_fragment": op.target_rows_per_fragment, "materialize_deletions": op.materialize_deletions},
    )
    read_version = dataset.version
    if plan.num_tasks() == 0:
        return writes.WriteResult(read_versions=(read_version,), detail={"compaction": "nothing to compact"})
    tasks = [(uri, read_version, task, options) for task in plan.tasks]
    rewrites = _run_in_workers(_execute_compaction, tasks)
    Compaction.commit(dataset, rewrites)
    return writes.WriteResult(
        versions=(dataset.version,), read_versions=(read_version,), detail={"reserve_fragments": RESERVE_NOT_REPORTED}
    )
