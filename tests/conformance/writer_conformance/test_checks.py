"""The checks of one version and the model of expected rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.drivers import pylance_driver, reference, writes
from conformance.writer_conformance import model
from conformance.writer_conformance.checks import CheckStatus, agreement_checks, compare_content

TABLE = pa.table({"id": pa.array([3, 1, 2], pa.int64()), "name": ["c", None, "b"]})


def test_row_order_is_not_content():
    problems, notes = compare_content(TABLE, TABLE.take([2, 0, 1]))
    assert problems == [] and notes == []


def test_nested_columns_are_put_in_order_too():
    nested = pa.table({"tags": pa.array([[2], [1, 1], None], pa.list_(pa.int32()))})
    assert compare_content(nested, nested.take([1, 2, 0])) == ([], [])


def test_a_changed_value_fails_and_a_wider_representation_is_a_note():
    changed = TABLE.set_column(1, "name", pa.array(["c", "a", "b"]))
    assert compare_content(TABLE, changed)[0]
    wider = TABLE.set_column(1, "name", pa.array(["c", None, "b"], pa.large_string()))
    problems, notes = compare_content(TABLE, wider)
    assert problems == [] and any("offset-width" in note for note in notes)


def test_a_missing_row_fails():
    assert compare_content(TABLE, TABLE.slice(1)) == (["expected 3 rows, got 2"], [])


@pytest.mark.parametrize(
    ("op", "ids"),
    [
        (writes.Delete(writes.Compare("name", "=", "b")), [3, 1]),  # a null name is not deleted
        (writes.Delete(writes.Compare("name", "!=", "b")), [1, 2]),
        (writes.Delete(writes.IsIn("id", (1, 3))), [2]),
    ],
)
def test_the_model_deletes_what_sql_would(op, ids):
    """A predicate that is null on a row does not select it."""
    assert model.apply(TABLE, op, {})["id"].to_pylist() == ids


def test_the_model_updates_upserts_and_restores():
    updated = model.apply(TABLE, writes.Update((("name", "z"),), where=writes.Compare("id", ">", 1)), {})
    assert updated["name"].to_pylist() == ["z", None, "z"]
    upserted = model.apply(TABLE, writes.Upsert(pa.table({"id": [1, 9], "name": ["one", "nine"]}), on="id"), {})
    assert sorted(upserted.to_pylist(), key=lambda row: row["id"]) == [
        {"id": 1, "name": "one"},
        {"id": 2, "name": "b"},
        {"id": 3, "name": "c"},
        {"id": 9, "name": "nine"},
    ]
    assert model.apply(updated, writes.Restore(4), {4: TABLE}) is TABLE
    with pytest.raises(model.ModelError):
        model.apply(TABLE, writes.DropColumns(("absent",)), {})


def test_agreement_checks_on_a_written_dataset(tmp_path):
    """pylance reads what the reference wrote the same way, and the rows
    check fails when a reader's rows differ (a reader that drops a row)."""
    pytest.importorskip("lance")
    uri = str(tmp_path / "ds")
    reference.write(uri, writes.Create(TABLE))
    reference.write(uri, writes.Delete(writes.Compare("id", "=", 2)))
    checks = agreement_checks(uri, {"pylance": pylance_driver})
    assert {check.check for check in checks} == {"validator", "describe:reference", "rows:pylance", "describe:pylance"}
    assert all(check.status is CheckStatus.PASS for check in checks), checks

    class DropsARow:
        UNREPORTED = frozenset()
        versions = staticmethod(reference.versions)
        describe = staticmethod(reference.describe)

        @staticmethod
        def read_table(uri, version=None):
            return reference.read_table(uri, version).slice(1)

    failing = [c for c in agreement_checks(uri, {"dropper": DropsARow()}) if c.status is CheckStatus.FAIL]
    assert [(c.version, c.check) for c in failing] == [(1, "rows:dropper"), (2, "rows:dropper")]
