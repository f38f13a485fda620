"""The ``daft`` driver (daft with daft-lance, native runner): its writes read
back with the reference and validated, what it refuses, and daft-lance's
known defect reproduced (a strict xfail).

Marked ``engines`` (tox -e engines / engine-daft)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.drivers import writes
from conformance.drivers.protocol import Capability, WriteConflict, WriteNotSupported
from conformance.drivers.writes import WriteKind

from .helpers import columns, id_rows, ids, latest_version, rows_by_id, transaction_of, validation_errors

pytestmark = pytest.mark.engines

pytest.importorskip("daft_lance")
from conformance.drivers.engines import daft as driver  # noqa: E402


@pytest.fixture
def uri(tmp_path) -> str:
    return str(tmp_path / "table.lance")


def test_info_declares_the_kinds_it_performs_and_no_reading():
    info = driver.info()
    assert info.capabilities == {Capability.WRITE}
    assert {WriteKind(k) for k in info.write_operations} == {
        WriteKind.CREATE,
        WriteKind.APPEND,
        WriteKind.OVERWRITE,
        WriteKind.ADD_COLUMNS,
        WriteKind.COMPACT,
    }
    # Write-only: no read capability declared, and no read member asked of it.
    assert not any(hasattr(driver, member) for member in ("versions", "describe", "read_table"))


def test_each_kind_commits_what_it_says(uri):
    assert driver.write(uri, writes.Create(id_rows(0, 10), max_rows_per_file=4, token="t")).versions == (1,)
    assert ids(uri) == list(range(10))
    assert writes.TOKEN_PROPERTY not in transaction_of(uri, 1).properties  # daft-lance records none of ours
    assert driver.write(uri, writes.Append(id_rows(10, 12))).versions == (2,)
    added = driver.write(uri, writes.AddColumns((writes.NewColumn("next", "id", 1),)))
    assert added.versions == (3,) and added.read_versions == (2,)
    table = rows_by_id(uri)
    assert table["next"] == [i + 1 for i in table["id"]]
    compacted = driver.write(uri, writes.Compact(target_rows_per_fragment=100))
    # ReserveFragments then Rewrite, neither reported by compact_files.
    assert compacted.versions == () and compacted.read_versions == (3,)
    assert transaction_of(uri, latest_version(uri)).operation_name == "rewrite"
    assert ids(uri) == list(range(12))
    same_schema = pa.table({**id_rows(50, 52).to_pydict(), "next": pa.array([51, 52], pa.int64())})
    replaced = driver.write(uri, writes.Overwrite(same_schema))
    assert replaced.versions == (latest_version(uri),) and ids(uri) == [50, 51]
    assert validation_errors(uri) == []


def test_add_columns_on_a_version_an_append_followed_is_a_retryable_conflict(uri):
    """daft-lance commits its Merge on the version it read, and pylance's
    conflict reaches the caller as a WriteConflict (no blind retry)."""
    driver.write(uri, writes.Create(id_rows(0, 4)))
    driver.write(uri, writes.Append(id_rows(4, 6)))
    with pytest.raises(WriteConflict) as raised:
        driver.write(uri, writes.AddColumns((writes.NewColumn("copy", "id"),), read_version=1))
    assert raised.value.retryable is True
    assert latest_version(uri) == 2 and columns(uri) == ["id", "name"]


def test_create_refuses_an_existing_dataset(uri):
    driver.write(uri, writes.Create(id_rows(0, 3)))
    with pytest.raises(ValueError, match="already exists"):
        driver.write(uri, writes.Create(id_rows(9, 10)))
    assert latest_version(uri) == 1


@pytest.mark.parametrize(
    "op",
    [
        writes.Delete(writes.Compare("id", "=", 1)),
        writes.CreateIndex("id"),
        writes.Append(id_rows(5, 6), read_version=1),
    ],
    ids=["delete", "create-index", "append-at-version"],
)
def test_what_daft_has_no_call_for_is_refused(uri, op):
    driver.write(uri, writes.Create(id_rows(0, 2)))
    with pytest.raises(WriteNotSupported):
        driver.write(uri, op)
    assert latest_version(uri) == 1


@pytest.mark.xfail(strict=True, reason="daft-lance 0.6.0: overwrite refuses a new schema its documentation allows")
def test_overwrite_replaces_the_schema(uri):
    driver.write(uri, writes.Create(id_rows(0, 3)))
    driver.write(uri, writes.Overwrite(pa.table({"key": pa.array([7], pa.int32())})))
    assert columns(uri) == ["key"]
