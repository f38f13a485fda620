"""The LanceDB for Python driver on the golden corpus and on tables it writes.

Rows are compared with the reference reader's (the cases' expected content)
on cases the reference pins, every version of each (LanceDB time travel).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from conformance.comparison import compare_tables
from conformance.drivers import lancedb_driver, reference
from conformance.fixtures.expected import load_expected

lancedb = pytest.importorskip("lancedb")

CASES = Path(__file__).resolve().parents[3] / "fixtures" / "cases"
#: Cases whose rows the reference pins, across schema kinds, deletions, time
#: travel and restores: 2.0 data files (reference and pylance 0.20 writers),
#: the reference's 2.1 and pylance 14's 2.2 (pylance-encodings-2-1 is left
#: out: LanceDB hands its blob column over as blob descriptions).
READ_CASES = (
    "ref-file-format-2-1",
    "pylance-encodings-2-2",
    "pylance-map-2-2",
    "ref-tags",
    "ref-types-nested",
    "ref-types-temporal",
    "ref-types-strings-binary-decimal",
    "ref-deletion-bitmap",
    "ref-deletion-arrow",
    "ref-restore",
    "ref-drop-rename-columns",
    "ref-stable-row-ids",
    "old-schema-evolution",
    "old-appends-deletes",
    "old-nested-types",
)


def content_problems(expected: pa.Table, actual: pa.Table) -> list[str]:
    """Value differences, and representation differences too: LanceDB returns
    the very Arrow types the reference does, so the comparison here is strict."""
    comparison = compare_tables(expected, actual)
    return [*comparison.differences, *(str(observation) for observation in comparison.observations)]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", READ_CASES)
def test_rows_of_every_version_equal_the_references(case):
    dataset = CASES / case / "dataset"
    expected = [v for v in load_expected(CASES / case) if v.outcome == "read"]
    assert expected and all(v.content is not None for v in expected), "the case must pin its rows"
    before = _files(dataset)
    assert lancedb_driver.versions(dataset) == [v.version for v in expected]
    for version in expected:
        assert version.content is not None
        problems = content_problems(version.content, lancedb_driver.read_table(str(dataset), version.version))
        assert problems == [], f"v{version.version}: {problems}"
    assert _files(dataset) == before, "reading through LanceDB changed the case's files"


def test_latest_is_read_without_a_version():
    dataset = CASES / "ref-tags" / "dataset"
    latest = load_expected(CASES / "ref-tags")[-1]
    assert latest.content is not None
    assert content_problems(latest.content, lancedb_driver.read_table(dataset)) == []


def test_row_ids_come_with_the_rows():
    dataset = str(CASES / "ref-stable-row-ids" / "dataset")
    plain = lancedb_driver.read_table(dataset)
    with_ids = lancedb_driver.read_table(dataset, with_row_ids=True)
    assert with_ids.column_names == [*plain.column_names, "_rowid"]
    assert with_ids.drop_columns(["_rowid"]).equals(plain)
    assert with_ids.column("_rowid").type == pa.uint64()
    assert len(set(with_ids.column("_rowid").to_pylist())) == with_ids.num_rows


def test_a_directory_named_like_a_table_opens_in_place(tmp_path):
    directory = tmp_path / "people.lance"
    lancedb.connect(str(tmp_path)).create_table("people", pa.table({"id": pa.array([1, 2], pa.int64())}))
    assert lancedb_driver.table_location(directory) == (str(tmp_path), "people")
    assert lancedb_driver.read_table(str(directory)).column("id").to_pylist() == [1, 2]


def test_two_datasets_get_two_links_and_one_dataset_one():
    first = lancedb_driver.table_location(CASES / "ref-tags" / "dataset")
    second = lancedb_driver.table_location(CASES / "ref-restore" / "dataset")
    assert first != second
    assert lancedb_driver.table_location(str(CASES / "ref-tags" / "dataset")) == first


def test_a_remote_uri_must_name_a_table_directory():
    assert lancedb_driver.table_location("s3://bucket/tables/people.lance") == ("s3://bucket/tables", "people")
    with pytest.raises(ValueError, match="NAME.lance"):
        lancedb_driver.table_location("s3://bucket/tables/dataset")


def test_describe_is_refused_as_unsupported():
    with pytest.raises(lancedb_driver.DescribeUnsupported, match="cannot describe"):
        lancedb_driver.describe(str(CASES / "ref-tags" / "dataset"))


def test_the_embedded_lance_version_is_what_lancedb_writes(tmp_path):
    embedded = lancedb_driver.embedded_lance_version()
    lancedb.connect(str(tmp_path)).create_table("t", pa.table({"x": [1]}))
    writer = reference.describe(str(tmp_path / "t.lance"))["writer_version"]
    assert writer is not None and writer["version"] == embedded
    assert embedded.count(".") == 2 and embedded != lancedb_driver.package_version()


# -- writing -------------------------------------------------------------------------

ROWS = pa.table({"id": pa.array(range(8), pa.int64()), "v": pa.array([float(i) for i in range(8)])})


def _script() -> list:
    from conformance.drivers import writes as w

    more = pa.table({"id": pa.array([8, 9], pa.int64()), "v": pa.array([8.0, 9.0])})
    return [
        w.Create(ROWS),
        w.Append(more),
        w.Delete(w.Compare("id", "<", 2)),
        w.Update((("v", -1.0),), w.IsIn("id", (4, 5))),
        w.Upsert(pa.table({"id": pa.array([5, 20], pa.int64()), "v": pa.array([55.0, 20.0])}), ("id",)),
        w.AddColumns((w.NewColumn("w", "id", 1),)),
        w.AlterColumns((w.Alteration("w", rename="w2"),)),
        w.DropColumns(("w2",)),
        w.Compact(),
        w.CreateIndex("id"),
        w.Tag("indexed"),
        w.Restore(2),
        w.Overwrite(ROWS.slice(0, 3)),
    ]


def _by_id(table: pa.Table) -> pa.Table:
    return table.sort_by("id")


def test_every_write_is_read_alike_by_the_reference_and_accepted_by_the_validator(tmp_path):
    from conformance.validator.engine import validate
    from conformance.validator.registry import Severity

    uri = str(tmp_path / "dataset")
    committed = []
    for op in _script():
        version = lancedb_driver.write(uri, op)
        committed.append(version)
        ours, theirs = reference.read_table(uri, version), lancedb_driver.read_table(uri, version)
        assert content_problems(_by_id(ours), _by_id(theirs)) == [], op.kind.value
    assert committed == sorted(committed) and committed[0] == 1
    assert reference.versions(uri) == lancedb_driver.versions(uri)
    tags = reference.describe(uri)["tags"]
    assert [(tag["name"], tag["version"]) for tag in tags] == [("indexed", committed[-4])]
    assert reference.read_table(uri, committed[-2]).num_rows == ROWS.num_rows + 2  # restored version 2
    report = validate(uri, all_versions=True)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert errors == [] and report.versions == reference.versions(uri)


@pytest.mark.parametrize("storage", ["2.0", "2.1", "2.2"])
def test_create_writes_the_data_storage_version_asked(tmp_path, storage):
    from conformance.drivers import writes

    uri = str(tmp_path / "dataset")
    assert lancedb_driver.write(uri, writes.Create(ROWS, data_storage_version=storage)) == 1
    assert reference.describe(uri)["data_format"]["version"] == storage


def test_create_with_stable_row_ids_sets_the_feature_flag(tmp_path):
    from conformance.drivers import writes

    uri = str(tmp_path / "dataset")
    lancedb_driver.write(uri, writes.Create(ROWS, stable_row_ids=True))
    assert reference.describe(uri)["reader_feature_flags"] & 2


def test_a_write_on_an_older_version_is_refused_as_unsupported(tmp_path):
    from conformance.drivers import writes

    uri = str(tmp_path / "dataset")
    lancedb_driver.write(uri, writes.Create(ROWS))
    lancedb_driver.write(uri, writes.Append(ROWS))
    with pytest.raises(writes.WriteNotSupported, match="latest version"):
        lancedb_driver.write(uri, writes.Delete(writes.Compare("id", "=", 1), read_version=1))
    assert lancedb_driver.write(uri, writes.Delete(writes.Compare("id", "=", 1), read_version=2)) == 3


def test_config_is_not_a_lancedb_write(tmp_path):
    from conformance.drivers import writes

    uri = str(tmp_path / "dataset")
    lancedb_driver.write(uri, writes.Create(ROWS))
    with pytest.raises(writes.WriteNotSupported, match="config"):
        lancedb_driver.write(uri, writes.Config((("k", "v"),)))
    assert "config" not in lancedb_driver.info().write_operations


# -- what the driver declares ---------------------------------------------------------


def test_info_declares_versions_and_capabilities_honestly():
    from conformance.drivers import writes
    from conformance.drivers.protocol import Capability, driver_info

    info = driver_info(lancedb_driver, "lancedb")
    assert (info.name, info.implementation, info.version) == ("lancedb", "lancedb", lancedb.__version__)
    assert info.lance_version == lancedb_driver.embedded_lance_version()
    assert Capability.DESCRIBE not in info.capabilities and Capability.BLOBS not in info.capabilities
    assert Capability.WRITE_AT_VERSION not in info.capabilities
    assert {Capability.TIME_TRAVEL, Capability.ROW_IDS, Capability.WRITE} <= info.capabilities
    assert info.write_operations == {kind.value for kind in writes.WriteKind} - {"config"}
    assert info.data_storage_versions == ("2.0", "2.1", "2.2")


def test_served_in_a_worker_it_speaks_the_worker_protocol():
    """``worker:lancedb``: the Python driver behind the worker protocol passes its check."""
    from conformance.drivers.worker import python_worker_command
    from conformance.drivers.worker.protocol_check import check_worker

    assert check_worker(python_worker_command("lancedb"), CASES / "ref-tags" / "dataset") == []


# -- the shipped expectations file --------------------------------------------------


def _fails_somewhere(driver, case: str) -> bool:
    """Whether the driver fails to list or read some version the case expects to read."""
    dataset = str(CASES / case / "dataset")
    expected = [v for v in load_expected(CASES / case) if v.outcome == "read"]
    try:
        if driver.versions(dataset) != [v.version for v in expected]:
            return True
        for version in expected:
            table = driver.read_table(dataset, version.version)
            if version.content is not None and content_problems(version.content, table):
                return True
    except Exception:
        return True
    return False


def check_shipped_expectations(driver, implementation: str) -> None:
    """Every readers entry of the implementation's shipped file names a
    requirement of the catalog and a case the driver fails today."""
    import json

    from conformance.expectations import shipped_expectations

    expectations = shipped_expectations(implementation)
    assert expectations.entries, f"{implementation} ships its expectations"
    catalog = json.loads((CASES.parents[1] / "conformance" / "data" / "requirements.json").read_text())
    known = {entry["id"] for entry in (catalog["requirements"] if isinstance(catalog, dict) else catalog)}
    for entry in expectations.entries:
        assert entry.requirement in known, entry
    # Readers entries are checked here against the corpus; entries of the
    # properties suite are checked by that suite's own run (tests/conformance/suite).
    readers = [entry for entry in expectations.entries if entry.suite == "readers"]
    assert readers, f"{implementation} ships readers expectations"
    for entry in readers:
        assert _fails_somewhere(driver, entry.case), entry.case


def test_the_shipped_expectations_are_failures_of_today():
    check_shipped_expectations(lancedb_driver, "lancedb")


def check_corpus_matches_expectations(driver_name: str, driver=None) -> None:
    """The golden corpus verified with the driver: every case is accepted, and
    the expected failures are exactly the shipped file's readers entries."""
    from conformance.expectations import shipped_expectations
    from conformance.fixtures.verify import ACCEPTED, EXPECTED_FAILURE, NOT_APPLICABLE, verify_corpus

    results = verify_corpus(CASES.parent, driver_name, driver=driver)
    assert len(results) == len([case for case in CASES.iterdir() if (case / "case.json").is_file()])
    assert [(r.case, r.status, r.problems[:2]) for r in results if r.status not in ACCEPTED] == []
    expected = {e.case for e in shipped_expectations(driver_name).entries if e.suite == "readers"}
    assert {r.case for r in results if r.status == EXPECTED_FAILURE} == expected
    # Cases with a blob column only: the one capability the LanceDB drivers lack.
    blob_cases = {
        case.name
        for case in CASES.iterdir()
        if (case / "case.json").is_file() and "type.blob" in json.loads((case / "case.json").read_text())["features"]
    }
    assert "ref-types-blob" in blob_cases
    assert {r.case for r in results if r.status == NOT_APPLICABLE} == blob_cases


def test_the_golden_corpus_fails_exactly_the_expectations():
    check_corpus_matches_expectations("lancedb")
