"""Writes through pylance's public API (the write half of
:mod:`conformance.drivers.pylance_driver`): :func:`write` performs one
operation of :mod:`conformance.drivers.writes`, :func:`conflict_from` reads
pylance's commit conflict signal, :func:`writes_supported` feature-detects
the calls the writes use.

``lance`` and the write vocabulary are imported inside the functions (lazy:
the module stays importable without pylance, and inside an old release's own
environment, where only the standard library and the driver are loaded).
"""

from __future__ import annotations

import inspect
import os
from functools import cache
from typing import Any, cast

from .lance_core_conflicts import conflict_from_message
from .protocol import WriteConflict


@cache
def writes_supported() -> bool:
    """Whether the installed release has what :func:`write` calls: the
    ``conflict_retries`` keyword of ``delete`` (pylance's own retries are
    turned off so that a write is committed on the version it read), merge
    insert and the tag API. Feature-detected, as every accessor here."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance

    dataset = lance.LanceDataset
    try:
        delete_takes_retries = "conflict_retries" in inspect.signature(dataset.delete).parameters
    except (TypeError, ValueError):  # a signature the release does not expose
        return False
    return delete_takes_retries and all(hasattr(dataset, name) for name in ("merge_insert", "tags", "update_config"))


def warm_up(uri: str | os.PathLike[str], *, storage_options: dict[str, str] | None = None) -> None:
    """Import pylance and open the dataset once, so that a writer's first
    operation does not carry the second an import takes (the concurrency
    harness calls it before its writers' start barrier)."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance

    lance.dataset(str(uri), storage_options=dict(storage_options) if storage_options else None)


def write(uri: str | os.PathLike[str], op: Any, *, storage_options: dict[str, str] | None = None) -> Any:
    """Perform ``op`` (a :data:`conformance.drivers.writes.WriteOp`) through
    pylance's public API: a :class:`~conformance.drivers.writes.WriteResult`
    with the version it committed (a tag: the version tagged) and, where
    pylance's own conflict retries are off, the version it was built on.
    ``op.read_version`` is honoured (the dataset is opened at that version and
    the operation committed from it); a commit conflict raises
    :class:`~conformance.drivers.writes.WriteConflict`. ``op.token`` is
    recorded in the transaction's properties where pylance's API takes them
    (``write_dataset``: create, append, overwrite). ``lance`` and the
    vocabulary are imported here, so the module stays importable without
    either."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance

    from . import writes  # lazy: the vocabulary needs pyarrow; this module imports without it

    options = dict(storage_options) if storage_options else None
    try:
        if isinstance(op, writes.Create):
            created = lance.write_dataset(
                op.rows,
                str(uri),
                mode="create",
                # A plain string: pylance's annotation lists the versions it knows.
                data_storage_version=cast(Any, op.data_storage_version),
                max_rows_per_file=op.max_rows_per_file or 1024 * 1024,
                enable_stable_row_ids=op.stable_row_ids,
                storage_options=options,
                transaction_properties=_token_properties(writes, op),
            )
            return writes.WriteResult(versions=(created.version,))
        dataset = lance.dataset(str(uri), version=op.read_version, storage_options=options)
        opened = dataset.version
        version = _perform_write(lance, writes, dataset, op, options)
        if version == opened and not isinstance(op, writes.Tag):
            # Nothing committed (a delete matching no row, a compaction with
            # nothing to do): the handle is still at the version opened.
            return writes.WriteResult()
        # Delete, update and upsert run with pylance's own retries off: computed on the version opened.
        read = (opened,) if isinstance(op, (writes.Delete, writes.Update, writes.Upsert)) else ()
        return writes.WriteResult(versions=(version,), read_versions=read)
    except OSError as exc:
        conflict = conflict_from(exc)
        if conflict is not None:
            raise conflict from exc
        raise


def conflict_from(error: BaseException) -> WriteConflict | None:
    """The commit conflict ``error`` (raised by pylance) signals, as a
    :class:`~conformance.drivers.protocol.WriteConflict` saying whether it is
    retryable; None when it is not a conflict. The one place pylance's
    conflict signal is read (the write driver, the conflict matrix and the
    concurrency harness all ask here).

    Measured with pylance 14 (nothing is documented upstream beyond the
    exception class): ``LanceDataset.commit(uri, operation, read_version=v)``
    raises ``lance.commit.CommitConflictError``, an ``OSError`` whose
    ``retryable`` attribute is True for a retryable conflict, False for an
    incompatible one. The high-level calls raise a plain ``OSError`` whose
    message is the Lance core's ("Incompatible transaction: ...";
    ``delete``/``update``/``merge_insert`` re-run themselves on a retryable
    conflict, ``conflict_retries`` times, then say "Too many concurrent
    writers. Attempted N retries.", retryable): those are told apart by the
    message (:mod:`.lance_core_conflicts`)."""
    if not isinstance(error, OSError):
        return None
    retryable = getattr(error, "retryable", None)
    if isinstance(retryable, bool):
        return WriteConflict(str(error), retryable=retryable)
    return conflict_from_message(str(error))


def _perform_write(lance: Any, writes: Any, dataset: Any, op: Any, options: dict[str, str] | None) -> int:
    if isinstance(op, (writes.Append, writes.Overwrite)):
        mode = "append" if isinstance(op, writes.Append) else "overwrite"
        extra = {} if op.max_rows_per_file is None else {"max_rows_per_file": op.max_rows_per_file}
        return lance.write_dataset(
            op.rows,
            dataset,
            mode=mode,
            storage_options=options,
            transaction_properties=_token_properties(writes, op),
            **extra,
        ).version
    if isinstance(op, writes.Delete):
        dataset.delete(op.where.to_sql(writes.SqlDialect.LANCE), conflict_retries=0)
    elif isinstance(op, writes.Update):
        values = {column: writes.sql_literal(value) for column, value in op.values}
        where = None if op.where is None else op.where.to_sql(writes.SqlDialect.LANCE)
        dataset.update(values, where=where, conflict_retries=0)
    elif isinstance(op, writes.Upsert):
        (
            dataset.merge_insert(list(op.on))
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .conflict_retries(0)
            .execute(op.rows)
        )
    elif isinstance(op, writes.AddColumns):
        dataset.add_columns({column.name: column.to_sql(writes.SqlDialect.LANCE) for column in op.columns})
    elif isinstance(op, writes.DropColumns):
        dataset.drop_columns(list(op.columns))
    elif isinstance(op, writes.AlterColumns):
        dataset.alter_columns(*(alteration.as_change() for alteration in op.alterations))
    elif isinstance(op, writes.Compact):
        dataset.optimize.compact_files(
            target_rows_per_fragment=op.target_rows_per_fragment,
            materialize_deletions=op.materialize_deletions,
            num_threads=1,
        )
    elif isinstance(op, writes.CreateIndex):
        dataset.create_scalar_index(op.column, op.index_type, name=op.name)
    elif isinstance(op, writes.Tag):
        version = dataset.version if op.version is None else op.version
        dataset.tags.create(op.name, version)
        return version
    elif isinstance(op, writes.Restore):
        target = dataset.checkout_version(op.version)
        target.restore()
        return target.version
    elif isinstance(op, writes.Config):
        updates = {key: value for key, value in op.values if value is not None}
        removed = [key for key, value in op.values if value is None]
        if updates and removed:
            raise writes.WriteNotSupported("pylance sets and removes config keys in separate commits")
        if updates:
            dataset.update_config(updates)
        else:
            dataset.delete_config_keys(removed)
    else:
        raise writes.WriteNotSupported(f"the pylance driver does not perform {op.kind.value}")
    return dataset.version


def _token_properties(writes: Any, op: Any) -> dict[str, str] | None:
    """The transaction properties naming ``op`` (its token), None without one."""
    return None if op.token is None else {writes.TOKEN_PROPERTY: op.token}
