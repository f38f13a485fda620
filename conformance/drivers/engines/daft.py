"""Daft with daft-lance as a write-only driver: ``daft``.

What each operation calls (daft-lance's public API, on Daft's default
native runner: the work runs in this process's Daft threads; with Daft's
Ray runner the same calls run on Ray):

* create, append, overwrite: ``daft_lance.write_lance`` of a Daft DataFrame
  of the rows, mode ``create`` / ``append`` / ``overwrite`` (fragments
  written by the sink's tasks, one commit in its finalize);
* add-columns: ``daft_lance.merge_columns`` with the new columns as SQL
  expressions (each fragment merged by a Daft UDF, one ``Merge`` commit on
  the version the dataset was opened at);
* compact: ``daft_lance.compact_files`` (plan on the driver, tasks in a Daft
  UDF, one ``Compaction.commit``).

Daft has no delete, update, upsert, drop, alter, index (its scalar index
call returns the latest dataset after its commit, not the version it
committed), tag, restore or config write here: those raise
``WriteNotSupported``.

What the driver learns (:class:`~conformance.drivers.writes.WriteResult`):
``write_lance`` returns one row of statistics whose ``version`` is the
dataset's after its commit (the version it committed); ``merge_columns``
returns the dataset its commit produced. ``compact_files`` returns metrics
only: no version (and a compaction commits two, ReserveFragments then
Rewrite). Add-columns and compaction are given the version to read
(``op.read_version``, else the latest, opened just before), which daft-lance
pins and commits on, so their read version is reported (and ``read_version``
is honoured for them); ``write_lance`` reads the latest version itself (an
``op.read_version`` raises ``WriteNotSupported``; no write-at-version).
daft-lance records no transaction properties of the caller's, so
``op.token`` is not recorded.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..protocol import DriverInfo, WriteKind, WriteNotSupported
from .common import conflict_from, engine_info
from .ray_head import keep_ray_on_loopback

if TYPE_CHECKING:  # pragma: no cover - typing only
    pass

NAME = "daft"
# Private: it builds info()'s write_operations, the one declaration the suite reads.
_WRITE_OPERATIONS: tuple[WriteKind, ...] = (
    WriteKind.CREATE,
    WriteKind.APPEND,
    WriteKind.OVERWRITE,
    WriteKind.ADD_COLUMNS,
    WriteKind.COMPACT,
)


def info() -> DriverInfo:
    return engine_info(NAME, "daft-lance", _WRITE_OPERATIONS)


def write(uri: str | os.PathLike[str], op: Any, *, storage_options: dict[str, str] | None = None) -> Any:
    """Perform ``op`` through daft-lance (module docstring); a commit conflict
    raises :class:`~conformance.drivers.protocol.WriteConflict`."""
    from .. import writes  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

    target = os.fspath(uri)
    options = dict(storage_options) if storage_options else None
    if not isinstance(op, (writes.Create, writes.Append, writes.Overwrite, writes.AddColumns, writes.Compact)):
        raise WriteNotSupported(f"the daft driver does not perform {op.kind.value}")
    if op.read_version is not None and isinstance(op, (writes.Append, writes.Overwrite)):
        raise WriteNotSupported(f"daft's write_lance reads the latest version itself, not version {op.read_version}")
    # Daft imports Ray when it runs: Ray must keep to loopback in this process too.
    keep_ray_on_loopback()
    import daft_lance  # lazy: daft-lance is optional (the engines extra), and Ray must be kept on loopback first

    try:
        if isinstance(op, (writes.Create, writes.Append, writes.Overwrite)):
            return _write_rows(daft_lance, target, op, options)
        import lance  # lazy: pylance loads only when a write runs (driver modules import light)

        read_version = lance.dataset(target, version=op.read_version, storage_options=options).version
        if isinstance(op, writes.AddColumns):
            merged = daft_lance.merge_columns(
                target,
                transform={column.name: column.to_sql(writes.SqlDialect.LANCE) for column in op.columns},
                read_columns=sorted({column.source for column in op.columns}),
                version=read_version,
                storage_options=options,
            )
            return writes.WriteResult(versions=(merged.version,), read_versions=(read_version,))
        daft_lance.compact_files(
            target,
            version=read_version,
            storage_options=options,
            compaction_options={
                "target_rows_per_fragment": op.target_rows_per_fragment,
                "materialize_deletions": op.materialize_deletions,
            },
        )
        return writes.WriteResult(read_versions=(read_version,))
    except Exception as exc:
        conflict = conflict_from(exc)
        if conflict is not None:
            raise conflict from exc
        raise


def _write_rows(daft_lance: Any, uri: str, op: Any, options: dict[str, str] | None) -> Any:
    # lazy: daft is optional (the engines extra); writes pulls pyarrow (driver modules import light)
    import daft

    from .. import writes

    extra: dict[str, Any] = {}
    if op.max_rows_per_file is not None:
        extra["max_rows_per_file"] = op.max_rows_per_file
    if isinstance(op, writes.Create):
        extra["enable_stable_row_ids"] = op.stable_row_ids
        if op.data_storage_version is not None:
            extra["data_storage_version"] = op.data_storage_version
    mode = {writes.Create: "create", writes.Append: "append", writes.Overwrite: "overwrite"}[type(op)]
    frame = daft.from_arrow(op.rows)
    statistics = daft_lance.write_lance(
        frame, uri, mode=mode, schema=op.rows.schema, storage_options=options, **extra
    ).to_pydict()
    return writes.WriteResult(versions=tuple(int(v) for v in statistics["version"]))
