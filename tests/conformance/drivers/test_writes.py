"""The write vocabulary (conformance.drivers.writes) and both shipped drivers' write()."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.drivers import pylance_driver, reference, writes
from conformance.drivers.writes import (
    AddColumns,
    Alteration,
    AlterColumns,
    Append,
    Compact,
    Compare,
    Config,
    Create,
    CreateIndex,
    Delete,
    DropColumns,
    IsIn,
    NewColumn,
    Overwrite,
    Restore,
    Tag,
    Update,
    Upsert,
    WriteConflict,
    WriteKind,
    WriteNotSupported,
    WriteOpError,
    op_from_json,
    write_result,
)

ROWS = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "name": ["a", "b", None, "it's"]})

EVERY_KIND_ONCE = [
    # A version named, so that the JSON round trip carries one.
    Create(ROWS, data_storage_version="2.0", max_rows_per_file=2),
    Append(ROWS, read_version=3),
    Overwrite(ROWS),
    Delete(Compare("id", "<", 3)),
    Update((("name", "z"), ("id", 7)), where=IsIn("name", ("a", "it's"))),
    Upsert(ROWS, on="id"),
    AddColumns((NewColumn("twice", "id", 1),)),
    DropColumns("name"),
    AlterColumns((Alteration("id", rename="key", nullable=True, data_type="int32"),)),
    Compact(target_rows_per_fragment=10, materialize_deletions=False),
    CreateIndex("id", "BITMAP", name="ids"),
    Tag("first", 1),
    Restore(2, read_version=5),
    Config({"a": "1", "b": None}),
]


def test_every_kind_has_an_example():
    assert {op.kind for op in EVERY_KIND_ONCE} == set(WriteKind)


@pytest.mark.parametrize("op", EVERY_KIND_ONCE, ids=lambda op: op.kind.value)
def test_json_round_trip(op, tmp_path):
    """Every operation survives its JSON document, rows through an Arrow IPC file."""
    document = op.to_json(rows_dir=tmp_path)
    assert document["kind"] == op.kind.value
    import json

    again = type(op).from_json(json.loads(json.dumps(document)))
    assert (
        again == op
        if not hasattr(op, "rows")
        else (again.rows.equals(op.rows) and _without_rows(again) == _without_rows(op))
    )


@pytest.mark.parametrize("op", EVERY_KIND_ONCE, ids=lambda op: op.kind.value)
def test_json_documents_fit_the_schema(op, tmp_path):
    """What a worker receives is what conformance/schemas/write-operation.schema.json says."""
    from conformance.describe import schema_validator

    errors = list(schema_validator(writes.OPERATION_SCHEMA).iter_errors(op.to_json(rows_dir=tmp_path)))
    assert errors == []


@pytest.mark.parametrize(
    "document",
    [
        {"kind": "delete", "read_version": None},
        {"kind": "delete", "read_version": None, "where": {"column": "id", "op": "~", "value": 1}},
        {"kind": "tag", "read_version": None, "name": "t", "colour": "red"},
        {"kind": "update", "read_version": None, "values": [["id", [1]]]},
        {"kind": "alter-columns", "read_version": None, "alterations": [{"path": "id"}]},
    ],
)
def test_the_schema_refuses_malformed_documents(document):
    from conformance.describe import schema_validator

    assert list(schema_validator(writes.OPERATION_SCHEMA).iter_errors(document))


def _without_rows(op):
    return {name: value for name, value in vars(op).items() if name != "rows"}


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"kind": "truncate"},
        {"kind": "delete", "where": {"column": "id", "op": "~", "value": 1}},
        {"kind": "delete", "where": {"column": "id", "op": "in", "values": []}},
        {"kind": "delete", "where": {"column": "", "op": "=", "value": 1}},
        {"kind": "update", "values": [["id", [1]]]},
        {"kind": "append", "rows": "/nonexistent/rows.arrow"},
        {"kind": "tag", "name": "t", "colour": "red"},
        {"kind": "alter-columns", "alterations": [{"path": "id", "data_type": "no-such-type"}]},
        {"kind": "add-columns", "columns": [{"name": "a", "source": "id", "colour": 1}]},
        {"kind": "restore", "version": "3"},
        {"kind": "restore", "version": True},
        {"kind": "tag", "name": "t", "read_version": 1.5},
        {"kind": "compact", "materialize_deletions": 1},
    ],
)
def test_malformed_documents_raise_write_op_error(document):
    with pytest.raises(WriteOpError):
        op_from_json(document)


def test_from_json_of_another_kind_is_refused():
    with pytest.raises(WriteOpError, match="not a delete"):
        Delete.from_json(Tag("t").to_json())


@pytest.mark.parametrize(
    ("predicate", "sql", "lance", "selected"),
    [
        (Compare("id", "<", 3), '"id" < 3', "id < 3", [1, 2]),
        (Compare("id", "!=", 3), '"id" != 3', "id != 3", [1, 2, 4]),
        (Compare("name", "=", "it's"), "\"name\" = 'it''s'", "name = 'it''s'", [4]),
        (Compare("name", "=", None), '"name" = NULL', "name = NULL", []),
        (IsIn("name", ("a", "b")), "\"name\" IN ('a', 'b')", "name IN ('a', 'b')", [1, 2]),
        (Compare("odd name", ">=", 2.5), '"odd name" >= 2.5', "`odd name` >= 2.5", None),
        (Compare('say "hi"', "=", 1), '"say ""hi""" = 1', '`say "hi"` = 1', None),
    ],
)
def test_predicates_mean_the_same_in_sql_and_arrow(predicate, sql, lance, selected):
    """Standard SQL double-quotes every identifier (a double quote in it
    doubled); Lance's dialect, what pylance receives, leaves a plain one
    bare; the Arrow expression selects what SQL would (nulls select nothing)."""
    assert predicate.to_sql() == sql
    assert predicate.to_sql(writes.SqlDialect.LANCE) == lance
    if selected is not None:
        assert ROWS.filter(predicate.to_arrow())["id"].to_pylist() == selected


def test_an_operator_prints_as_its_sql_text():
    """A comparison's operator is its SQL text in an f-string, str() and .sql."""
    predicate = Compare("id", writes.Comparison.LE, 3)
    assert f"{predicate.op}" == str(predicate.op) == predicate.op.sql == "<="
    assert f"{predicate.column} {predicate.op} {predicate.value}" == "id <= 3"
    assert f"[{writes.Comparison.LT:>3}]" == "[  <]"


_ODD_ROWS = pa.table({"a b": pa.array([1, 2, 3, 4], pa.int64()), 'say "hi"': pa.array([4, 3, 2, 1], pa.int64())})
_odd_predicates = st.one_of(
    st.builds(
        writes.Compare,
        st.sampled_from(_ODD_ROWS.column_names),
        st.sampled_from(list(writes.Comparison)),
        st.integers(0, 5),
    ),
    st.builds(
        writes.IsIn,
        st.sampled_from(_ODD_ROWS.column_names),
        st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple),
    ),
)


@given(_odd_predicates)
def test_standard_sql_selects_in_a_sql_engine_what_arrow_selects(predicate):
    """Property: SQLite (a standard SQL engine, double-quoted identifiers)
    selects with ``to_sql()`` the rows the Arrow expression selects, for
    column names with a space and with double quotes."""
    import sqlite3

    connection = sqlite3.connect(":memory:")
    try:
        connection.execute('CREATE TABLE t ("a b" INTEGER, "say ""hi""" INTEGER)')
        connection.executemany("INSERT INTO t VALUES (?, ?)", zip(*_ODD_ROWS.to_pydict().values(), strict=True))
        selected = [row[0] for row in connection.execute(f'SELECT "a b" FROM t WHERE {predicate.to_sql()} ORDER BY 1')]
    finally:
        connection.close()
    assert selected == _ODD_ROWS.filter(predicate.to_arrow())["a b"].to_pylist()


def test_pylance_reads_the_lance_dialect_as_arrow_does(tmp_path):
    """pylance (its filter language) selects with the Lance dialect what
    Arrow selects, odd names included; it reads standard SQL's double-quoted
    name as a string, which is why the pylance driver renders Lance's dialect."""
    lance = pytest.importorskip("lance")
    dataset = lance.write_dataset(_ODD_ROWS, str(tmp_path / "odd.lance"))
    for column in _ODD_ROWS.column_names:
        for predicate in (writes.Compare(column, "<", 3), writes.IsIn(column, (1, 4))):
            got = dataset.to_table(filter=predicate.to_sql(writes.SqlDialect.LANCE))["a b"].to_pylist()
            assert sorted(got) == _ODD_ROWS.filter(predicate.to_arrow())["a b"].to_pylist()
    with pytest.raises(ValueError, match="Cannot cast string"):
        dataset.to_table(filter=writes.Compare("a b", "<", 3).to_sql())


# -- the drivers' write() ----------------------------------------------------------


def _script(uri: str, driver) -> list[int]:
    def write(uri, op):
        """The version ``op`` committed (a tag: the version tagged), checked
        against what the driver said when it says (pylance leaves unsaid what
        its handle cannot vouch for)."""
        said = write_result(driver.write(uri, op)).version
        if isinstance(op, Tag):
            return said
        latest = reference.versions(uri)[-1]
        assert said in (None, latest), f"{op.kind.value}: said {said}, committed {latest}"
        return latest

    versions = [
        write(uri, Create(ROWS)),
        write(uri, Append(ROWS)),
        write(uri, Delete(Compare("id", "=", 1))),
        write(uri, Update((("name", "u"),), where=Compare("id", "=", 2))),
        write(uri, AddColumns((NewColumn("next", "id", 1),))),
        write(uri, DropColumns(("name",))),
        write(uri, AlterColumns((Alteration("next", rename="following"),))),
        write(uri, CreateIndex("id", name="id_idx")),
        write(uri, Config((("k", "v"),))),
    ]
    versions.append(write(uri, Tag("t", versions[-1])))
    versions.append(write(uri, Compact()))
    versions.append(write(uri, Restore(1)))
    return versions


@pytest.mark.parametrize("driver", [reference, pylance_driver], ids=["reference", "pylance"])
def test_drivers_perform_the_vocabulary(driver, tmp_path):
    """Each operation commits the version returned, with the rows it should
    leave (read back by the reference reader)."""
    pytest.importorskip("lance")
    uri = str(tmp_path / "ds")
    versions = _script(uri, driver)
    assert versions[:9] == list(range(1, 10))
    assert versions[9] == 9, "a tag commits nothing and returns the version tagged"
    assert versions[-1] == reference.versions(uri)[-1]
    rows_at = {v: reference.read_table(uri, v) for v in (4, 7, versions[-2], versions[-1])}
    assert sorted(rows_at[4].to_pylist(), key=str) == sorted(
        [{"id": i, "name": n} for i, n in [(2, "u"), (3, None), (4, "it's")] * 2],
        key=str,
    )
    assert rows_at[7].column_names == ["id", "following"]
    assert sorted(rows_at[versions[-2]]["following"].to_pylist()) == [3, 3, 4, 4, 5, 5]
    assert rows_at[versions[-1]].equals(ROWS)
    assert reference.describe(uri)["tags"] == [{"name": "t", "version": 9, "branch": None}]


def test_upsert_is_not_supported_by_the_reference(tmp_path):
    uri = str(tmp_path / "ds")
    reference.write(uri, Create(ROWS))
    assert "upsert" not in reference.info().write_operations
    with pytest.raises(WriteNotSupported):
        reference.write(uri, Upsert(ROWS, on=("id",)))


def test_pylance_upsert(tmp_path):
    pytest.importorskip("lance")
    uri = str(tmp_path / "ds")
    pylance_driver.write(uri, Create(ROWS))
    new = pa.table({"id": pa.array([4, 5], pa.int64()), "name": ["four", "five"]})
    assert pylance_driver.write(uri, Upsert(new, on=("id",))).versions == (2,)
    assert sorted(reference.read_table(uri)["name"].to_pylist(), key=str) == sorted(
        ["a", "b", None, "four", "five"], key=str
    )


@pytest.mark.parametrize("driver", [reference, pylance_driver], ids=["reference", "pylance"])
def test_a_stale_read_version_conflicts(driver, tmp_path):
    """An update built on version 1, after an update of the same rows
    committed version 2, conflicts in both implementations."""
    pytest.importorskip("lance")
    uri = str(tmp_path / "ds")
    driver.write(uri, Create(ROWS))
    driver.write(uri, Update((("name", "x"),), where=Compare("id", "=", 1)))
    with pytest.raises(WriteConflict):
        driver.write(uri, Update((("name", "y"),), where=Compare("id", "=", 1), read_version=1))


def test_write_module_exports():
    assert set(writes.OPERATIONS) == set(WriteKind)


# -- properties ------------------------------------------------------------------------


_columns = st.text(alphabet="abcxyz_ `'", min_size=1, max_size=8)
_literals = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_predicates = st.one_of(
    st.builds(writes.Compare, _columns, st.sampled_from(list(writes.Comparison)), _literals),
    st.builds(writes.IsIn, _columns, st.lists(st.integers(-5, 5), min_size=1, max_size=4).map(tuple)),
)
_versions = st.one_of(st.none(), st.integers(1, 2**31))
_operations = st.one_of(
    st.builds(Delete, _predicates, read_version=_versions),
    st.builds(
        Update,
        st.lists(st.tuples(_columns, _literals), min_size=1, max_size=3).map(tuple),
        st.one_of(st.none(), _predicates),
        read_version=_versions,
    ),
    st.builds(Config, st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.text(max_size=5))), min_size=1)),
    st.builds(DropColumns, st.lists(_columns, min_size=1, max_size=3).map(tuple), read_version=_versions),
    st.builds(
        AddColumns, st.lists(st.builds(NewColumn, _columns, _columns, st.integers(-3, 3)), min_size=1, max_size=2)
    ),
    st.builds(Tag, st.text(min_size=1, max_size=5), _versions, read_version=_versions),
    st.builds(Restore, st.integers(1, 2**31), read_version=_versions),
    st.builds(Compact, st.integers(1, 10**6), st.booleans()),
    st.builds(CreateIndex, _columns, st.sampled_from(["BTREE", "BITMAP"]), st.one_of(st.none(), _columns)),
)


@given(_operations)
def test_every_operation_survives_its_json_document(op):
    """Property: any operation without rows reads back equal from its JSON
    text (literals of every JSON type, odd column names, absent or present
    read versions), and the document fits the operation schema."""
    import json

    from conformance.describe import schema_validator

    document = json.loads(json.dumps(op.to_json()))
    assert op_from_json(document) == op
    assert list(schema_validator(writes.OPERATION_SCHEMA).iter_errors(document)) == []
