"""The ``lance-ray`` driver on a real Ray (one head started on 127.0.0.1 for
the module by ``engine_session``, stopped by its pid), its writes read back
with the reference and validated, and lance-ray's known defects reproduced
(strict xfails: a fixed release turns them into failures to update).

Marked ``engines`` (tox -e engines / engine-lance-ray): Ray takes seconds to
start and each write is a Ray job."""

from __future__ import annotations

import importlib.util
import os

import pytest

from conformance.drivers import writes
from conformance.drivers.protocol import Capability, WriteNotSupported
from conformance.drivers.writes import WriteKind

from .helpers import columns, id_rows, ids, latest_version, rows_by_id, transaction_of, validation_errors

pytestmark = pytest.mark.engines

# Not imported here: Ray must see the loopback setting the driver makes before its import.
if importlib.util.find_spec("lance_ray") is None:
    pytest.skip("lance-ray is not installed (the engines extra)", allow_module_level=True)
from conformance.drivers.engines import lance_ray as driver  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def ray_head():
    with driver.engine_session() as head:
        yield head
        driver.close()
    with pytest.raises(ProcessLookupError):
        os.kill(head.pid, 0)


@pytest.fixture
def uri(tmp_path) -> str:
    return str(tmp_path / "table.lance")


def test_the_head_listens_on_loopback_and_writers_join_it(ray_head):
    assert ray_head.address.startswith("127.0.0.1:")
    assert os.environ["RAY_ADDRESS"] == ray_head.address
    ray = driver._ray()
    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}


def test_info_declares_the_kinds_it_performs_and_no_reading():
    info = driver.info()
    assert info.capabilities == {Capability.WRITE}
    assert {WriteKind(k) for k in info.write_operations} == {
        WriteKind.CREATE,
        WriteKind.APPEND,
        WriteKind.OVERWRITE,
        WriteKind.ADD_COLUMNS,
        WriteKind.COMPACT,
        WriteKind.CREATE_INDEX,
    }
    # Write-only: no read capability declared, and no read member asked of it.
    assert not any(hasattr(driver, member) for member in ("versions", "describe", "read_table"))


def test_each_kind_commits_what_it_says(uri):
    assert driver.write(uri, writes.Create(id_rows(0, 10), max_rows_per_file=4, token="t1")).versions == ()
    assert ids(uri) == list(range(10)) and latest_version(uri) == 1
    # lance-ray records no transaction properties: the token cannot be there.
    assert writes.TOKEN_PROPERTY not in transaction_of(uri, 1).properties
    driver.write(uri, writes.Append(id_rows(10, 12)))
    assert ids(uri) == list(range(12))
    added = driver.write(uri, writes.AddColumns((writes.NewColumn("next", "id", 1),)))
    assert added.read_versions == (2,) and added.versions == ()
    table = rows_by_id(uri)
    assert table["next"] == [i + 1 for i in table["id"]]
    driver.write(uri, writes.Compact(target_rows_per_fragment=100))
    assert transaction_of(uri, latest_version(uri)).operation_name == "rewrite"
    indexed = driver.write(uri, writes.CreateIndex("id"))
    assert indexed.versions == (latest_version(uri),)
    assert transaction_of(uri, indexed.versions[0]).operation_name == "create_index"
    assert ids(uri) == list(range(12)) and columns(uri) == ["id", "name", "next"]
    assert validation_errors(uri) == []


@pytest.mark.xfail(
    strict=True, reason="lance-ray 0.5.0: write_lance(mode='overwrite') commits on read version 0 (read_version=None)"
)
def test_overwrite_records_the_version_it_replaced(uri):
    driver.write(uri, writes.Create(id_rows(0, 3)))
    driver.write(uri, writes.Append(id_rows(3, 4)))
    driver.write(uri, writes.Overwrite(id_rows(50, 52)))
    assert ids(uri) == [50, 51]
    assert transaction_of(uri, 3).read_version == 2
    assert validation_errors(uri) == []


@pytest.mark.parametrize(
    "op",
    [
        writes.Delete(writes.Compare("id", "=", 1)),
        writes.Update((("name", "x"),)),
        writes.Tag("t"),
        writes.Append(id_rows(5, 6), read_version=1),
    ],
    ids=["delete", "update", "tag", "append-at-version"],
)
def test_what_lance_ray_has_no_call_for_is_refused(uri, op):
    driver.write(uri, writes.Create(id_rows(0, 2)))
    with pytest.raises(WriteNotSupported):
        driver.write(uri, op)
    assert latest_version(uri) == 1


@pytest.mark.xfail(strict=True, reason="lance-ray 0.5.0: write_lance(mode='create') overwrites an existing dataset")
def test_create_refuses_an_existing_dataset(uri):
    driver.write(uri, writes.Create(id_rows(0, 3)))
    with pytest.raises(Exception):  # noqa: B017 - any refusal will do
        driver.write(uri, writes.Create(id_rows(100, 101)))
    assert ids(uri) == [0, 1, 2]


@pytest.mark.xfail(
    strict=True,
    reason="lance-ray 0.5.0: add_columns_from retries its Merge on the latest version with stale fragments and schema",
)
def test_add_columns_from_keeps_what_a_concurrent_writer_committed(uri, tmp_path):
    """docs/spec-discrepancies.md, "lance-ray add_columns_from": another writer
    deletes rows and adds a column while lance-ray computes its column."""
    import lance
    import lance_ray

    lance.write_dataset(id_rows(0, 10), uri, max_rows_per_file=5)
    transform = ConcurrentWriterTransform(uri, str(tmp_path / "other-writer-done"))
    lance_ray.add_columns_from(uri, transform=transform, read_columns=["id"], read_version=1)
    assert latest_version(uri) == 4  # the delete, the other column, lance-ray's Merge
    assert "other" in columns(uri)
    assert ids(uri) == list(range(3, 10))


class ConcurrentWriterTransform:
    """lance-ray's UDF (doubles ``id``) that, the first time any task runs it,
    commits as another writer: deletes ``id < 3``, adds the column ``other``."""

    def __init__(self, uri: str, marker: str):
        self.uri, self.marker = uri, marker

    def __call__(self, batch: dict) -> dict:
        import lance

        try:
            os.mkdir(self.marker)
        except FileExistsError:
            pass
        else:
            other = lance.dataset(self.uri)
            other.delete("id < 3")
            other.add_columns({"other": "id * 10"})
        return {"doubled": [2 * value for value in batch["id"]]}
