"""The pylance driver: what pylance itself believes a Lance dataset contains,
and writes performed through its public API.

The driver module that ``DRIVERS`` and users name, composed of two halves:

* :mod:`.pylance_describe`, the canonical describe document of a version as
  pylance sees it (every fact from pylance's own API, scans or debug
  rendering, never from our decoding), with the keys a release cannot show
  (:data:`UNREPORTED`, computed from the installed release on first use);
* :mod:`.pylance_writes`, the write operations and pylance's conflict signal;
* :mod:`.pylance_queries`, the index queries, through an index and by a scan.

This module holds what the driver declares (:func:`info`: name,
capabilities, write operations) and its reads: the versions pylance lists
and the rows it scans (:func:`read_table`, blob columns as their values).

``lance`` is imported inside the functions (lazy: ``conformance`` imports on
a machine without pylance). One driver for every release: each accessor is
feature-detected, never chosen by version number; the module imports only
the standard library and ``conformance.describe`` (itself standard library
only), so it runs inside an old release's own environment too
(:mod:`conformance.drivers.release`).
"""

from __future__ import annotations

import inspect
import os
import tempfile
from functools import cache
from typing import TYPE_CHECKING

from .protocol import Capability, DriverInfo, WriteKind
from .pylance_describe import FROM_DEBUG_RENDERING, describe, unreported_keys
from .pylance_queries import INDEXED_KINDS, SCAN_KINDS, queries_supported, query
from .pylance_writes import conflict_from, warm_up, write, writes_supported

# The parser of pylance's debug rendering stays importable from this module,
# where it lived before it had a module of its own (.rust_debug).
from .rust_debug import DebugStruct, DebugTuple, DebugUnit, parse_rust_debug

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

__all__ = [
    "CAPABILITIES",
    "FROM_DEBUG_RENDERING",
    "NAME",
    "UNREPORTED",
    "WRITE_CAPABILITIES",
    "WRITE_DATA_STORAGE_VERSIONS",
    "DebugStruct",
    "DebugTuple",
    "DebugUnit",
    "conflict_from",
    "describe",
    "info",
    "lance_core_version",
    "parse_rust_debug",
    "query",
    "read_table",
    "unreported_keys",
    "versions",
    "warm_up",
    "write",
    "writes_supported",
]

#: ``UNREPORTED`` (keys of the describe document this driver cannot see
#: through the installed pylance; a comparison against another driver skips
#: exactly these) is computed on first access by :func:`unreported_keys`.
#: Paths use ``.`` for nesting and ``[]`` for "every element of a list". It is
#: empty for pylance 14, which exposes every key, some of them only through
#: ``lance.debug`` (:data:`FROM_DEBUG_RENDERING`).
#: Declared here for type checkers (a declaration without a value binds no
#: name, so the module ``__getattr__`` below still computes it).
UNREPORTED: frozenset[str]


def __getattr__(name: str):
    if name == "UNREPORTED":
        return unreported_keys()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------
# Public driver API
# ---------------------------------------------------------------------------


NAME = "pylance"
CAPABILITIES = frozenset(
    {Capability.LIST_VERSIONS, Capability.READ_LATEST, Capability.TIME_TRAVEL, Capability.DESCRIBE, Capability.BLOBS}
)


def info() -> DriverInfo:
    """The installed pylance: its package version and the Lance core version
    it records as writer (:func:`lance_core_version`). It writes
    (:func:`write`) when the release has the calls the writes use
    (:func:`writes_supported`), and answers index queries (:func:`query`)
    when it has the calls they use (:func:`queries_supported`)."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance

    writes = writes_supported()
    queries = queries_supported()
    return DriverInfo(
        name=NAME,
        implementation=NAME,
        version=lance.__version__,
        lance_version=lance_core_version(),
        capabilities=CAPABILITIES
        | (WRITE_CAPABILITIES if writes else frozenset())
        | ({Capability.QUERY} if queries else frozenset()),
        write_operations=_WRITE_OPERATIONS if writes else frozenset(),
        query_kinds=SCAN_KINDS if queries else frozenset(),
        indexed_query_kinds=INDEXED_KINDS if queries else frozenset(),
        data_storage_versions=WRITE_DATA_STORAGE_VERSIONS if writes else (),
        unreported=unreported_keys(),
    )


@cache
def lance_core_version() -> str | None:
    """The version of the Lance Rust core inside the installed pylance.

    pylance has no accessor for it, but the core records itself as the
    writer of every manifest it commits (library ``lance``): a one-row
    dataset is written to a temporary directory and its writer version read
    back. None when the release does not show it."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance
    import pyarrow as pa

    try:
        with tempfile.TemporaryDirectory(prefix="lance-conformance-core-version-") as scratch:
            path = os.path.join(scratch, "probe")
            lance.write_dataset(pa.table({"probe": pa.array([1], pa.int64())}), path)
            writer = describe(path).get("writer_version")
    except Exception:  # an old release that cannot describe it: the version stays unknown
        return None
    if not writer or writer.get("library") != "lance":
        return None
    return writer.get("version")


def versions(uri: str | os.PathLike[str]) -> list[int]:
    """Every version pylance lists for the dataset, ascending."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance

    return sorted(int(entry["version"]) for entry in lance.dataset(str(uri)).versions())


def read_table(uri: str | os.PathLike[str], version: int | None = None, *, schema: pa.Schema | None = None) -> pa.Table:
    """The visible rows of one version as pylance scans them (in the
    dataset's own Arrow schema: the expected ``schema`` is not needed).

    Blob columns are read as their values (``blob_handling="all_binary"``):
    by default pylance returns each blob's (position, size) description in
    the data file instead, which is not the column's content.
    """
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import lance

    dataset = lance.dataset(str(uri), version=version)
    if "blob_handling" in inspect.signature(dataset.to_table).parameters:
        return dataset.to_table(blob_handling="all_binary")
    blob_columns = [field.name for field in dataset.schema if (field.metadata or {}).get(BLOB_KEY) == b"true"]
    if not blob_columns:
        return dataset.to_table()
    return _with_blob_values(dataset, blob_columns)


#: Field metadata marking a blob column.
BLOB_KEY = b"lance-encoding:blob"


def _with_blob_values(dataset, blob_columns: list[str]) -> pa.Table:
    """Rows of a release without ``blob_handling``: its scan returns each
    blob's (position, size) description, so the values are fetched with
    ``take_blobs`` by row id and put in the column's place, typed as the
    dataset's schema says."""
    # lazy: pylance and pyarrow are optional; installed_drivers imports every driver module
    import pyarrow as pa

    table = dataset.to_table(with_row_id=True)
    row_ids = table.column("_rowid").to_pylist()
    table = table.drop_columns(["_rowid"])
    for name in blob_columns:
        values = [blob.readall() for blob in _take_blobs(dataset, row_ids, name)] if row_ids else []
        position = table.schema.get_field_index(name)
        field = dataset.schema.field(name)
        table = table.set_column(position, field, pa.array(values, field.type))
    return table


def _take_blobs(dataset, row_ids: list[int], column: str) -> list:
    """``take_blobs`` by row id: releases up to 0.26 take ``(row_ids, column)``;
    from 0.27 the column comes first and the row ids are the ``ids`` keyword."""

    parameters = list(inspect.signature(dataset.take_blobs).parameters)
    if parameters and parameters[0] == "blob_column":
        return dataset.take_blobs(column, ids=row_ids)
    return dataset.take_blobs(row_ids, column)


# -- writing (conformance.drivers.writes) ---------------------------------------------

# Private: it builds info()'s write_operations, the one declaration the suite reads.
#: The write operations :func:`write` performs through pylance's public API: every kind.
_WRITE_OPERATIONS: frozenset[str] = frozenset(kind.value for kind in WriteKind)
#: The data storage versions pylance 14 writes (``data_storage_version``; 2.2 by default).
WRITE_DATA_STORAGE_VERSIONS: tuple[str, ...] = ("2.0", "2.1", "2.2")
WRITE_CAPABILITIES = frozenset({Capability.WRITE, Capability.WRITE_AT_VERSION})
