"""lance-ray (``lance-ray`` on PyPI, on Ray) as a write-only driver: ``lance-ray``.

What each operation calls (lance-ray's public API; the Ray tasks and actors
do the work, lance-ray's own coordinator code commits):

* create, append, overwrite: ``lance_ray.write_lance`` of a Ray dataset of
  the rows cut in two blocks (two write tasks), mode ``create`` /
  ``append`` / ``overwrite``;
* add-columns: ``lance_ray.add_columns_from`` (Ray Data reads the source
  columns with their row addresses, the new columns are computed by a batch
  UDF and merged fragment by fragment in ``map_groups`` tasks; one ``Merge``
  commit, retried by lance-ray itself on failure);
* compact: ``lance_ray.compact_files`` (plan on the coordinator, tasks in a
  Ray pool, one ``Compaction.commit``);
* create-index: ``lance_ray.create_scalar_index`` (index segments built in a
  Ray pool, one ``CreateIndex`` commit).

lance-ray has no delete, update, upsert, drop, alter, tag, restore or config
call: those raise ``WriteNotSupported``.

What the driver learns (:class:`~conformance.drivers.writes.WriteResult`):
``write_lance``, ``add_columns_from`` and ``compact_files`` return no version
(``compact_files`` returns compaction metrics), so ``versions`` is empty and
the harness finds the versions in the transaction files; lance-ray records
no transaction properties, so ``op.token`` cannot be recorded either.
``create_scalar_index`` returns the dataset its commit produced: its version
is reported. The read version is known only where the driver hands it over:
add-columns is given the version to read (``op.read_version``, else the
latest, opened just before), which lance-ray uses for its first commit; a
commit it retries is built on a newer version lance-ray does not report
(the transaction file records it). Only add-columns takes a read version:
the others raise ``WriteNotSupported`` for an ``op.read_version``, and the
driver declares no write-at-version.

Ray on loopback. Ray replaces 127.0.0.1 by the machine's routable address
unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (its single-machine mode), set
here before Ray is imported; its servers then listen on 127.0.0.1 only.
Ray reads that setting when it is imported: a process that imported Ray
before its first write is refused (:class:`RayOffLoopback`) rather than let
onto the network. A writer process joins the Ray whose address
``RAY_ADDRESS`` names, else
starts one of its own in-process (``ray.init`` on 127.0.0.1, no
dashboard), stopped by :func:`close` (``ray.shutdown``) or at exit.

The session hook: :func:`engine_session` is a context manager that starts one
Ray head for a whole run (``ray start --head --block`` on 127.0.0.1, its pid
kept) and exports ``RAY_ADDRESS`` (and the loopback setting) to the writer
processes started inside it; leaving it stops the head by its pid. The
harness runner enters a driver module's ``engine_session()`` around a run
when the module defines one.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ..protocol import DriverInfo, WriteKind, WriteNotSupported
from .common import conflict_from, engine_info
from .ray_head import engine_session, keep_ray_on_loopback

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa


__all__ = ["engine_session", "info", "write", "close"]

NAME = "lance-ray"
#: Ray tasks a write is cut into, and workers of compaction and indexing.
PARALLELISM = 2
# Private: it builds info()'s write_operations, the one declaration the suite reads.
_WRITE_OPERATIONS: tuple[WriteKind, ...] = (
    WriteKind.CREATE,
    WriteKind.APPEND,
    WriteKind.OVERWRITE,
    WriteKind.ADD_COLUMNS,
    WriteKind.COMPACT,
    WriteKind.CREATE_INDEX,
)


def info() -> DriverInfo:
    return engine_info(NAME, "lance-ray", _WRITE_OPERATIONS)


# -- Ray ----------------------------------------------------------------------------------------


class RayOffLoopback(RuntimeError):
    """Ray in this process would not keep to loopback (it was imported before
    the loopback setting)."""


def _ray() -> Any:
    """Ray, joined or started on loopback (module docstring)."""
    keep_ray_on_loopback()
    import ray  # lazy: after the loopback setting, which Ray reads at import

    if getattr(ray._private.ray_constants, "ENABLE_RAY_CLUSTER", False):
        raise RayOffLoopback(
            "Ray was imported before RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 was set: it would take the "
            "machine's routable address instead of 127.0.0.1; set it before importing ray or lance_ray"
        )
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        else:
            ray.init(
                # "local": a new Ray of this process, never one found running.
                address="local",
                _node_ip_address="127.0.0.1",
                include_dashboard=False,
                num_cpus=PARALLELISM,
                log_to_driver=False,
                configure_logging=False,
            )
        ray.data.DataContext.get_current().enable_progress_bars = False
    return ray


def close() -> None:
    """Leave Ray (stopping it when this process started it)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


# -- writing ----------------------------------------------------------------------------------


def write(uri: str | os.PathLike[str], op: Any, *, storage_options: dict[str, str] | None = None) -> Any:
    """Perform ``op`` through lance-ray (module docstring); a commit conflict
    raises :class:`~conformance.drivers.protocol.WriteConflict`."""
    from .. import writes  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

    target = os.fspath(uri)
    options = dict(storage_options) if storage_options else None
    if not isinstance(
        op, (writes.Create, writes.Append, writes.Overwrite, writes.AddColumns, writes.Compact, writes.CreateIndex)
    ):
        raise WriteNotSupported(f"lance-ray has no call that performs {op.kind.value}")
    if op.read_version is not None and not isinstance(op, writes.AddColumns):
        raise WriteNotSupported(f"lance-ray's {op.kind.value} reads the latest version itself")
    ray = _ray()
    import lance_ray  # lazy: lance-ray is optional (the engines extra), and pulls Ray (kept on loopback first)

    try:
        if isinstance(op, (writes.Create, writes.Append, writes.Overwrite)):
            return _write_rows(ray, lance_ray, target, op, options)
        if isinstance(op, writes.AddColumns):
            return _add_columns(lance_ray, target, op, options)
        if isinstance(op, writes.Compact):
            lance_ray.compact_files(
                target,
                compaction_options={
                    "target_rows_per_fragment": op.target_rows_per_fragment,
                    "materialize_deletions": op.materialize_deletions,
                },
                num_workers=PARALLELISM,
                storage_options=options,
            )
            return writes.WriteResult()
        indexed = lance_ray.create_scalar_index(
            target,
            column=op.column,
            index_type=op.index_type,
            name=op.name,
            num_workers=PARALLELISM,
            storage_options=options,
        )
        return writes.WriteResult(versions=(indexed.version,))
    except Exception as exc:
        conflict = conflict_from(exc)
        if conflict is not None:
            raise conflict from exc
        raise


def _write_rows(ray: Any, lance_ray: Any, uri: str, op: Any, options: dict[str, str] | None) -> Any:
    from .. import writes  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

    blocks = ray.data.from_arrow(op.rows).repartition(PARALLELISM)
    extra: dict[str, Any] = {}
    if op.max_rows_per_file is not None:
        extra["max_rows_per_file"] = op.max_rows_per_file
        # lance-ray asks for fewer rows buffered per file than a file holds.
        extra["min_rows_per_file"] = min(1024 * 1024, op.max_rows_per_file - 1)
    if isinstance(op, writes.Create):
        extra["enable_stable_row_ids"] = op.stable_row_ids
        if op.data_storage_version is not None:
            extra["data_storage_version"] = op.data_storage_version
    mode = {writes.Create: "create", writes.Append: "append", writes.Overwrite: "overwrite"}[type(op)]
    lance_ray.write_lance(blocks, uri, schema=op.rows.schema, mode=mode, storage_options=options, **extra)
    return writes.WriteResult()


def _add_columns(lance_ray: Any, uri: str, op: Any, options: dict[str, str] | None) -> Any:
    # lazy: pylance and writes (pyarrow) load only when a write runs (driver modules import light)
    import lance
    from lance.udf import BatchUDF

    from .. import writes

    dataset = lance.dataset(uri, version=op.read_version, storage_options=options)
    sources = sorted({column.source for column in op.columns})
    compute = NewColumns(op.columns)
    transform = BatchUDF(compute, output_schema=compute.output_schema(dataset.schema))
    lance_ray.add_columns_from(
        uri, transform=transform, read_columns=sources, read_version=dataset.version, storage_options=options
    )
    return writes.WriteResult(read_versions=(dataset.version,))


class NewColumns:
    """The batch UDF of an add-columns: each new column from its source
    (``NewColumn.to_arrow``: the source, plus the offset when there is one),
    computed with pyarrow on the rows of one batch. A plain class, so that
    Ray ships it to its workers by reference to this module."""

    def __init__(self, columns: Any):
        self.columns = tuple(columns)

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        import pyarrow as pa  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

        table = pa.Table.from_batches([batch])
        arrays = [self._compute(table.column(column.source), column) for column in self.columns]
        return pa.RecordBatch.from_arrays(
            [array.combine_chunks() if hasattr(array, "combine_chunks") else array for array in arrays],
            names=[column.name for column in self.columns],
        )

    @staticmethod
    def _compute(source: Any, column: Any) -> Any:
        import pyarrow.compute as pc  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

        return source if column.offset == 0 else pc.add(source, column.offset)

    def output_schema(self, schema: pa.Schema) -> pa.Schema:
        """The new columns' schema, given the dataset's."""
        import pyarrow as pa  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

        fields = []
        for column in self.columns:
            empty = pa.chunked_array([], type=schema.field(column.source).type)
            fields.append(pa.field(column.name, self._compute(empty, column).type))
        return pa.schema(fields)
