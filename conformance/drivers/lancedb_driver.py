"""The LanceDB for Python driver (``lancedb`` on PyPI): what LanceDB reads and
writes, through its own table API only.

LanceDB embeds its own build of Lance (a Rust crate compiled into its
extension module), independent of the project's pylance: it is a separate
implementation under test, and :func:`embedded_lance_version` reports which
Lance it carries, measured from the writer version of a dataset it writes
(``writer_version`` in the manifest, requirement ``manifest.writer-version``),
never guessed from the package version.

LanceDB opens tables by name inside a directory (``DIR/NAME.lance``). A
dataset whose directory is named ``NAME.lance`` opens from its parent; any
other directory (the golden cases keep theirs in ``dataset``) is reached
through a symbolic link ``NAME.lance`` in a scratch directory of this process,
so LanceDB reads the case's own bytes and nothing is copied or written there.

What LanceDB can and cannot do here (:func:`info`):

* it lists versions (``list_versions``) and reads any of them (``open_table``
  with ``version``): list-versions, read-latest, time-travel;
* it scans with row ids (``search().with_row_id(True)``): row-ids;
* it has no accessor for most manifest facts (fragment and file metadata,
  feature flags, field ids), so it cannot give the canonical description
  (:mod:`conformance.describe`): no describe capability, and :func:`describe`
  raises :class:`DescribeUnsupported`;
* blob columns: its scan returns descriptions, not values (see
  :func:`read_table`): no blobs capability;
* it writes (:func:`write`) every operation of the write vocabulary but
  ``config``, on the latest version only: write, no write-at-version;
* it answers every kind of index query (:func:`query`) through its query
  builders, through the index and by a scan (with a caveat for filters:
  see :func:`query`).

``lancedb`` is imported inside the functions, so ``conformance`` imports on a
machine without it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .lance_core_conflicts import conflict_from_message
from .lance_core_plans import plan_uses_index
from .protocol import Capability, DriverInfo, QueryKind, QueryNotSupported, WriteKind

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

    from ..describe import Description
    from .protocol import WriteConflict
    from .queries import Query, QueryAnswer

#: The driver's name, and the implementation it reports.
NAME = "lancedb"
#: The suffix LanceDB gives a table's directory.
TABLE_SUFFIX = ".lance"
#: Describe paths LanceDB cannot report: all of them (it has no describe),
#: which the describe capability says; the comparison skips nothing itself.
UNREPORTED: frozenset[str] = frozenset()


class DescribeUnsupported(NotImplementedError):
    """LanceDB exposes no canonical description of a version (the driver
    declares no describe capability)."""


# ---------------------------------------------------------------------------
# Opening a dataset as a LanceDB table
# ---------------------------------------------------------------------------


@cache
def _scratch() -> Path:
    """This process's directory of ``NAME.lance`` links (removed at exit)."""
    directory = tempfile.TemporaryDirectory(prefix="lance-conformance-lancedb-")
    _KEEP.append(directory)
    return Path(directory.name)


_KEEP: list[tempfile.TemporaryDirectory] = []


def table_location(uri: str | os.PathLike[str]) -> tuple[str, str]:
    """``(directory, table name)`` under which LanceDB finds the dataset at ``uri``.

    A local directory not named ``NAME.lance`` gets a link in the scratch
    directory, named after a hash of its absolute path (two datasets never
    share a link; the same dataset always gets the same one). A remote URI
    must end in ``NAME.lance``: there is nothing to link there."""
    text = os.fspath(uri)
    if "://" in text:
        parent, _, base = text.rstrip("/").rpartition("/")
        if not base.endswith(TABLE_SUFFIX) or len(base) == len(TABLE_SUFFIX):
            raise ValueError(f"LanceDB opens a remote dataset only as DIR/NAME{TABLE_SUFFIX}, not {text!r}")
        return parent, base[: -len(TABLE_SUFFIX)]
    path = Path(text).absolute()
    if path.name.endswith(TABLE_SUFFIX) and len(path.name) > len(TABLE_SUFFIX):
        return str(path.parent), path.name[: -len(TABLE_SUFFIX)]
    name = "t" + hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:24]
    link = _scratch() / f"{name}{TABLE_SUFFIX}"
    if not link.is_symlink():
        link.symlink_to(path, target_is_directory=True)
    return str(_scratch()), name


def _connect(directory: str, storage_options: dict[str, str] | None = None):
    import lancedb  # lazy: lancedb is optional (the test extra): conformance imports without it

    return lancedb.connect(directory, storage_options=storage_options)


def open_table(uri: str | os.PathLike[str], version: int | None = None, *, storage_options=None):
    """The LanceDB table at ``uri``, checked out at ``version`` (latest by default)."""
    directory, name = table_location(uri)
    return _connect(directory, storage_options).open_table(name, version=version)


# ---------------------------------------------------------------------------
# Public driver API
# ---------------------------------------------------------------------------


def versions(uri: str | os.PathLike[str]) -> list[int]:
    """Every version LanceDB lists for the dataset, ascending."""
    return sorted(int(entry["version"]) for entry in open_table(uri).list_versions())


def read_table(
    uri: str | os.PathLike[str],
    version: int | None = None,
    *,
    schema: pa.Schema | None = None,
    with_row_ids: bool = False,
) -> pa.Table:
    """The visible rows of one version as LanceDB scans them.

    The scan is LanceDB's native query (never its pylance-backed paths:
    ``to_pandas`` and ``compact_files`` hand the dataset to an installed
    pylance, which would test pylance instead). It reads the table as its
    manifest defines it (``use_lsm(False)``): LanceDB otherwise routes a
    table with a MemWAL index through its LSM scanner, which refuses any
    version but the latest and adds rows not yet merged into the table.
    Blob columns come back as each blob's (position, size) description:
    LanceDB materialises legacy blob values only through pylance, so the
    driver declares no blobs capability.

    ``schema`` (the expected Arrow schema the suite hands every driver) is
    not used: LanceDB's rows are what is compared. With ``with_row_ids`` the
    rows carry ``_rowid`` as LanceDB reports it."""
    del schema  # LanceDB returns its own Arrow view; the suite compares by meaning
    query = open_table(uri, version).search().limit(None).use_lsm(False)
    return query.with_row_id(True).to_arrow() if with_row_ids else query.to_arrow()


def describe(uri: str | os.PathLike[str], version: int | None = None) -> Description:
    """LanceDB has no canonical description (see the module docstring)."""
    raise DescribeUnsupported(f"LanceDB for Python cannot describe {os.fspath(uri)!r}: it exposes no manifest facts")


# ---------------------------------------------------------------------------
# Versions under test and capabilities
# ---------------------------------------------------------------------------


def package_version() -> str:
    import lancedb  # lazy: lancedb is optional (the test extra): conformance imports without it

    return str(lancedb.__version__)


@cache
def embedded_lance_version() -> str:
    """The Lance inside the installed LanceDB: the writer version it records
    in the manifest of a one-row table it writes in a scratch directory."""
    # lazy: driver modules import without pyarrow (installed_drivers imports each one)
    import pyarrow as pa

    from .reference import describe as reference_describe

    with tempfile.TemporaryDirectory(prefix="lance-conformance-lancedb-probe-") as scratch:
        _connect(scratch).create_table("probe", pa.table({"x": pa.array([1], pa.int64())}))
        writer = reference_describe(str(Path(scratch) / f"probe{TABLE_SUFFIX}"))["writer_version"]
    if writer is None or writer["library"] != "lance":
        raise RuntimeError(f"LanceDB wrote a manifest whose writer is {writer!r}, not Lance")
    return str(writer["version"])


def info() -> Any:
    """The driver's :class:`~conformance.drivers.protocol.DriverInfo`."""
    return DriverInfo(
        name=NAME,
        implementation=NAME,
        version=package_version(),
        lance_version=embedded_lance_version(),
        capabilities=frozenset(
            {
                Capability.LIST_VERSIONS,
                Capability.READ_LATEST,
                Capability.TIME_TRAVEL,
                Capability.ROW_IDS,
                Capability.WRITE,
                Capability.QUERY,
            }
        ),
        write_operations=_WRITE_OPERATIONS,
        query_kinds=QUERY_KINDS,
        indexed_query_kinds=QUERY_KINDS,
        data_storage_versions=WRITE_DATA_STORAGE_VERSIONS,
    )


# ---------------------------------------------------------------------------
# Index queries (conformance.drivers.queries)
# ---------------------------------------------------------------------------

#: The index query kinds LanceDB answers, through an index and by a scan.
QUERY_KINDS: frozenset[str] = frozenset(kind.value for kind in QueryKind)


def query(uri: str | os.PathLike[str], query: Query, *, use_index: bool) -> QueryAnswer:
    """The row ids LanceDB answers ``query`` with on the latest version,
    through its query builders (``use_lsm(False)`` as for :func:`read_table`):

    * filter kinds: ``search().where(filter)``; LanceDB has no switch to
      plan a filter past a scalar index, so asked to scan a column that has
      one it refuses (:class:`~.protocol.QueryNotSupported`) rather than
      answer through the index;
    * full-text: ``search(word, query_type="fts")`` through the INVERTED
      index, ``where(contains_tokens(...))`` by a scan; its limit is the
      table's row count (LanceDB otherwise returns the first ten);
    * nearest: ``search(vector)`` by L2 with ``nprobes`` the row count (at
      least every partition: exhaustive), or ``bypass_vector_index()``.

    Whether the plan went through an index is read from ``explain_plan``."""
    from .queries import QueryAnswer  # lazy: the vocabulary needs pyarrow

    table = open_table(uri)
    rows = max(1, table.count_rows())
    if query.kind is QueryKind.NEAREST:
        builder = table.search(list(query.vector), vector_column_name=query.column)  # type: ignore[union-attr]
        builder = builder.distance_type("l2").limit(query.k)  # type: ignore[union-attr]
        builder = builder.nprobes(rows) if use_index else builder.bypass_vector_index()
    elif query.kind is QueryKind.FULL_TEXT and use_index:
        builder = table.search(query.word, query_type="fts", fts_columns=query.column).limit(rows)  # type: ignore[union-attr]
    else:
        builder = table.search().where(query.to_sql()).limit(None)  # type: ignore[union-attr]
    builder = builder.use_lsm(False).with_row_id(True)
    plan = builder.explain_plan(True)
    used_index = plan_uses_index(plan)
    if used_index and not use_index:
        raise QueryNotSupported(
            f"LanceDB plans {query.to_sql()!r} through the column's index and has no switch to scan instead"  # type: ignore[union-attr]
        )
    row_ids = builder.to_arrow().column("_rowid").to_pylist()
    return QueryAnswer(tuple(int(row_id) for row_id in row_ids), used_index, plan)


# ---------------------------------------------------------------------------
# Writing (conformance.drivers.writes)
# ---------------------------------------------------------------------------

# Private: it builds info()'s write_operations, the one declaration the suite reads.
#: The write operations :func:`write` performs through LanceDB's native table
#: API. Not ``config``: LanceDB has no call that sets table config keys.
_WRITE_OPERATIONS: frozenset[str] = frozenset(kind.value for kind in WriteKind) - {WriteKind.CONFIG.value}
#: The data storage versions LanceDB writes (``create_table(data_storage_version=...)``).
WRITE_DATA_STORAGE_VERSIONS: tuple[str, ...] = ("2.0", "2.1", "2.2")
#: What LanceDB puts in front of its embedded Lance's error messages (measured with 0.40).
LANCE_ERROR_PREFIX = "lance error: "
#: The connection option that gives a new table stable row ids.
STABLE_ROW_IDS_OPTION = "new_table_enable_stable_row_ids"
#: The connection option that picks a new table's data storage version.
DATA_STORAGE_VERSION_OPTION = "new_table_data_storage_version"
#: LanceDB's index configurations by the index type names of the vocabulary.
INDEX_CONFIGS = {"BTREE": "BTree", "BITMAP": "Bitmap", "LABEL_LIST": "LabelList"}


def write(uri: str | os.PathLike[str], op: Any, *, storage_options: dict[str, str] | None = None) -> int:
    """Perform ``op`` (a :data:`conformance.drivers.writes.WriteOp`) through
    LanceDB's table API and return the version it committed (a tag: the
    version tagged).

    LanceDB writes only on the latest version (a table checked out at an
    older one is read-only), so an ``op.read_version`` other than the latest
    raises :class:`~conformance.drivers.writes.WriteNotSupported` (no
    write-at-version capability). ``max_rows_per_file`` is a layout hint
    LanceDB's create and add calls do not take; the rows are the same
    without it. Compaction is ``optimize()`` (LanceDB's own; its
    ``compact_files`` hands the dataset to pylance), which also brings
    indices up to date and prunes nothing newer than a week."""
    from . import writes  # lazy: driver modules import without pyarrow (installed_drivers imports each one)

    options = dict(storage_options) if storage_options else None
    try:
        if isinstance(op, writes.Create):
            return _create(uri, op, options)
        table = open_table(uri, storage_options=options)
        latest = int(table.version)
        if op.read_version is not None and op.read_version != latest:
            raise writes.WriteNotSupported(
                f"LanceDB writes on the latest version ({latest}) only, not on version {op.read_version}"
            )
        return _perform_write(writes, table, op)
    except (OSError, RuntimeError, ValueError) as exc:
        conflict = conflict_from(exc)
        if conflict is not None:
            raise conflict from exc
        raise


def conflict_from(error: BaseException) -> WriteConflict | None:
    """The commit conflict ``error`` (raised by LanceDB) signals, as a
    :class:`~conformance.drivers.protocol.WriteConflict` saying whether it is
    retryable, or None when it is not a conflict. The one place LanceDB's
    conflict signal is read.

    Measured with LanceDB 0.40: a lost race surfaces as a ``RuntimeError``
    (no typed error, no ``retryable`` attribute) whose message is
    :data:`LANCE_ERROR_PREFIX` and the embedded Lance core's own ("lance
    error: Retryable commit conflict for version 4: ...", "lance error:
    Incompatible transaction: ..."), which
    :func:`~conformance.drivers.lance_core_conflicts.conflict_from_message`
    reads. Its ``delete`` and ``update`` retry a retryable conflict
    themselves; when they give up the message says so ("Too many concurrent
    writers")."""
    if not isinstance(error, (OSError, RuntimeError, ValueError)):
        return None
    return conflict_from_message(str(error).removeprefix(LANCE_ERROR_PREFIX))


def _create(uri: str | os.PathLike[str], op: Any, options: dict[str, str] | None) -> int:
    text = os.fspath(uri)
    if "://" not in text:
        # The link in the scratch directory needs its target to exist.
        Path(text).mkdir(parents=True, exist_ok=True)
    directory, name = table_location(uri)
    # The options LanceDB reads when it creates a table (its documented
    # replacements for create_table's deprecated keywords).
    table_options = dict(options or {})
    if op.stable_row_ids:
        table_options[STABLE_ROW_IDS_OPTION] = "true"
    if op.data_storage_version is not None:
        table_options[DATA_STORAGE_VERSION_OPTION] = op.data_storage_version
    table = _connect(directory, table_options or None).create_table(name, op.rows, mode="create")
    return int(table.version)


def _perform_write(writes: Any, table: Any, op: Any) -> int:
    if isinstance(op, (writes.Append, writes.Overwrite)):
        table.add(op.rows, mode="append" if isinstance(op, writes.Append) else "overwrite")
    elif isinstance(op, writes.Delete):
        table.delete(op.where.to_sql(writes.SqlDialect.LANCE))
    elif isinstance(op, writes.Update):
        values = {column: writes.sql_literal(value) for column, value in op.values}
        table.update(where=None if op.where is None else op.where.to_sql(writes.SqlDialect.LANCE), values_sql=values)
    elif isinstance(op, writes.Upsert):
        table.merge_insert(list(op.on)).when_matched_update_all().when_not_matched_insert_all().execute(op.rows)
    elif isinstance(op, writes.AddColumns):
        table.add_columns({column.name: column.to_sql(writes.SqlDialect.LANCE) for column in op.columns})
    elif isinstance(op, writes.DropColumns):
        table.drop_columns(list(op.columns))
    elif isinstance(op, writes.AlterColumns):
        table.alter_columns(*(alteration.as_change(rename_key="rename") for alteration in op.alterations))
    elif isinstance(op, writes.Compact):
        table.optimize()
    elif isinstance(op, writes.CreateIndex):
        import lancedb.index  # lazy: lancedb is optional (the test extra): conformance imports without it

        config_name = INDEX_CONFIGS.get(op.index_type.upper())
        if config_name is None:
            raise writes.WriteNotSupported(
                f"LanceDB has no scalar index {op.index_type!r} ({', '.join(INDEX_CONFIGS)})"
            )
        table.create_index(op.column, config=getattr(lancedb.index, config_name)(), name=op.name)
    elif isinstance(op, writes.Tag):
        version = int(table.version) if op.version is None else op.version
        table.tags.create(op.name, version)
        return version
    elif isinstance(op, writes.Restore):
        table.checkout(op.version)
        table.restore()
    else:
        raise writes.WriteNotSupported(f"the LanceDB driver does not perform {op.kind.value}")
    return int(table.version)
