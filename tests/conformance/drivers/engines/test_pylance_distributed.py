"""The ``pylance-distributed`` driver: pylance's distributed pattern (worker
processes write, delete, merge or compact; one commit on the coordinator),
each write read back with the reference and validated.

Real processes: the driver's two spawned workers, stopped by ``close()`` at
the end of the module (and checked gone). Tables are a few rows, so the
module runs in a few seconds."""

from __future__ import annotations

import os

import pytest

from conformance.drivers import load_driver, writes
from conformance.drivers.engines import pylance_distributed as driver
from conformance.drivers.protocol import Capability, WriteConflict, WriteNotSupported
from conformance.drivers.writes import Compare, WriteKind

from .helpers import columns, fragments, id_rows, ids, latest_version, rows_by_id, transaction_of, validation_errors

pytest.importorskip("lance")


@pytest.fixture(scope="module", autouse=True)
def workers():
    """The driver's worker processes, stopped (and checked gone) after the module."""
    yield
    pool = driver._pool
    processes = list(pool._processes.values()) if pool is not None else []
    driver.close()
    assert driver._pool is None
    assert all(not process.is_alive() for process in processes)


@pytest.fixture
def uri(tmp_path) -> str:
    return str(tmp_path / "table.lance")


def _created(uri: str, rows: int = 10, **fields) -> None:
    driver.write(uri, writes.Create(id_rows(0, rows), **fields))


def test_info_declares_the_kinds_it_performs_and_no_reading():
    info = driver.info()
    assert info.name == "pylance-distributed"
    assert info.capabilities == {Capability.WRITE, Capability.WRITE_AT_VERSION}
    assert {WriteKind(kind) for kind in info.write_operations} == {
        WriteKind.CREATE,
        WriteKind.APPEND,
        WriteKind.OVERWRITE,
        WriteKind.DELETE,
        WriteKind.ADD_COLUMNS,
        WriteKind.COMPACT,
    }
    assert load_driver("pylance-distributed") is driver
    # Write-only: no read capability declared, and no read member asked of it.
    assert not any(hasattr(driver, member) for member in ("versions", "describe", "read_table"))


def test_create_append_overwrite_commit_every_worker_slice_with_the_token(uri):
    created = driver.write(uri, writes.Create(id_rows(0, 10), max_rows_per_file=3, token="create-1"))
    assert created.versions == (1,) and created.read_versions == ()
    assert ids(uri) == list(range(10))
    appended = driver.write(uri, writes.Append(id_rows(10, 15), token="append-1"))
    assert appended.versions == (2,) and appended.read_versions == (1,)
    assert ids(uri) == list(range(15))
    replaced = driver.write(uri, writes.Overwrite(id_rows(100, 103), token="overwrite-1"))
    assert replaced.versions == (3,) and ids(uri) == [100, 101, 102]
    tokens = {v: transaction_of(uri, v).properties.get(writes.TOKEN_PROPERTY) for v in (1, 2, 3)}
    assert tokens == {1: "create-1", 2: "append-1", 3: "overwrite-1"}
    # Each worker wrote its own fragments: ten rows of three per file from two slices.
    assert len(transaction_of(uri, 1).operation.fragments) >= 4
    assert validation_errors(uri) == []


def test_create_refuses_an_existing_dataset(uri):
    _created(uri)
    with pytest.raises(FileExistsError):
        driver.write(uri, writes.Create(id_rows(0, 1)))
    assert latest_version(uri) == 1


def test_append_keeps_the_dataset_file_version(uri):
    _created(uri, data_storage_version="2.0")
    driver.write(uri, writes.Append(id_rows(10, 12)))
    assert ids(uri) == list(range(12))
    assert validation_errors(uri) == []


def test_distributed_delete_updates_and_removes_fragments(uri):
    # Two workers' slices of four rows, two a file: fragments [0, 1], [2, 3], [4, 5], [6, 7].
    _created(uri, rows=8, max_rows_per_file=2)
    result = driver.write(uri, writes.Delete(Compare("id", ">=", 5), token="delete-1"))
    assert result.versions == (2,) and result.read_versions == (1,)
    assert ids(uri) == list(range(5))
    transaction = transaction_of(uri, 2)
    assert transaction.properties == {writes.TOKEN_PROPERTY: "delete-1"}
    assert transaction.operation.deleted_fragment_ids == [3]
    assert [fragment.id for fragment in transaction.operation.updated_fragments] == [2]
    assert validation_errors(uri) == []


def test_distributed_add_columns_merges_every_fragment(uri):
    _created(uri, max_rows_per_file=4)
    result = driver.write(uri, writes.AddColumns((writes.NewColumn("next", "id", 1),), token="merge-1"))
    assert result.versions == (2,)
    table = rows_by_id(uri)
    assert table["next"] == [i + 1 for i in table["id"]]
    assert transaction_of(uri, 2).properties == {writes.TOKEN_PROPERTY: "merge-1"}
    assert validation_errors(uri) == []


def test_distributed_compaction_reports_the_rewrite_and_says_what_it_could_not_learn(uri):
    _created(uri, max_rows_per_file=2)
    driver.write(uri, writes.Delete(Compare("id", "=", 3)))
    result = driver.write(uri, writes.Compact(target_rows_per_fragment=100))
    # ReserveFragments then Rewrite: the Rewrite is the version reported.
    assert result.read_versions == (2,)
    assert result.versions == (latest_version(uri),) == (4,)
    assert transaction_of(uri, 4).operation_name == "rewrite"
    assert transaction_of(uri, 3).operation_name == "reserve_fragments"
    assert "ReserveFragments" in result.detail["reserve_fragments"]
    assert ids(uri) == [i for i in range(10) if i != 3]
    assert len(fragments(uri)) == 1
    assert validation_errors(uri) == []
    nothing = driver.write(uri, writes.Compact(target_rows_per_fragment=100))
    assert nothing.versions == () and latest_version(uri) == 4


def test_read_version_is_honoured(uri):
    _created(uri)
    driver.write(uri, writes.Append(id_rows(10, 11)))
    result = driver.write(uri, writes.Append(id_rows(20, 21), read_version=1))
    assert result.read_versions == (1,) and result.versions == (3,)
    assert transaction_of(uri, 3).read_version == 1
    assert ids(uri) == [*range(11), 20]


def test_a_delete_built_on_a_version_an_overwrite_replaced_is_a_conflict(uri):
    _created(uri)
    driver.write(uri, writes.Overwrite(id_rows(50, 55)))
    with pytest.raises(WriteConflict) as raised:
        driver.write(uri, writes.Delete(Compare("id", "<", 5), read_version=1))
    assert raised.value.retryable is False
    assert latest_version(uri) == 2 and ids(uri) == list(range(50, 55))


@pytest.mark.parametrize(
    "op",
    [
        writes.Update((("name", "x"),)),
        writes.Upsert(id_rows(0, 1), on=("id",)),
        writes.DropColumns(("name",)),
        writes.Tag("t"),
        writes.Restore(1),
        writes.Config((("k", "v"),)),
        writes.CreateIndex("id"),
    ],
    ids=lambda op: op.kind.value,
)
def test_other_kinds_are_not_performed(uri, op):
    _created(uri, rows=2)
    with pytest.raises(WriteNotSupported):
        driver.write(uri, op)
    assert latest_version(uri) == 1


def test_workers_are_other_processes(uri):
    _created(uri, rows=4)
    pool = driver._pool
    assert pool is not None
    pids = {process.pid for process in pool._processes.values()}
    assert len(pids) == driver.WORKERS and os.getpid() not in pids
    assert columns(uri) == ["id", "name"]
