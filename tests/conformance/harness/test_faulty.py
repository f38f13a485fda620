"""Proof that the harness bites: each shipped faulty writer, raced by real
processes in a short run, is caught with its anomaly's name; correct
writers under injected faults (killed mid-commit, a slow store) are not."""

from __future__ import annotations

import pytest

from conformance.drivers.writes import WriteOutcome
from conformance.harness.anomalies import every_anomaly
from conformance.harness.executors import ProcessExecutor
from conformance.harness.faulty import FAULTY_WRITERS, UnknownFaultyWriterError, create
from conformance.harness.runner import run
from conformance.harness.spec import FAULT_KILL_MID_COMMIT, FAULT_SLOW_STORE, RunSpec
from conformance.harness.workloads import parse_workload, workload_to_json
from reference_impl.dataset import Dataset


def _spec(tmp_path, writer: str, workload: str, **changes) -> RunSpec:
    options = dict(
        uri=str(tmp_path / "t.lance"),
        storage_options={},
        writer=writer,
        writers=4,
        operations=8,
        workloads=workload_to_json(parse_workload(workload)),
        seed=3,
        stable_row_ids=True,
        naming="v2",
    )
    options.update(changes)
    return RunSpec(**options)


@pytest.mark.parametrize("name", sorted(FAULTY_WRITERS))
def test_each_faulty_writer_is_caught_by_name(tmp_path, name):
    info = FAULTY_WRITERS[name]
    result = run(_spec(tmp_path, f"faulty:{name}", info.workload), ProcessExecutor(), tmp_path / "out", validate=False)
    names = result.report.names()
    assert info.anomaly.value in names, f"{name}: expected {info.anomaly.value!r}, found {sorted(names)}"
    witness = next(a.witness for a in every_anomaly(result.report.anomalies) if a.kind is info.anomaly)
    assert witness.versions and (witness.op_ids or witness.rows)


# The upserts of merge-twice scan and join: a dozen seconds, run nightly.
@pytest.mark.parametrize("name", ["partial-retry", pytest.param("merge-twice", marks=pytest.mark.slow)])
def test_a_faulty_writer_writes_its_files_in_the_dataset_version(tmp_path, name):
    """The faults are in what is committed, not in the files: the fragments a
    faulty writer writes itself take the dataset's version (requirement
    data-file.same-format-version), here 2.2, not the reference's default."""
    info = FAULTY_WRITERS[name]
    spec = _spec(tmp_path, f"faulty:{name}", info.workload, data_storage_version="2.2")
    run(spec, ProcessExecutor(), tmp_path / "out", validate=False)
    latest = Dataset.open(spec.uri)
    versions = {(f.file_major_version, f.file_minor_version) for g in latest.fragments for f in g.files}
    assert versions == {(2, 2)}


def test_an_unknown_faulty_writer_is_refused():
    with pytest.raises(UnknownFaultyWriterError, match="no faulty writer 'nope'"):
        create("nope")


def test_writers_killed_mid_commit_leave_indeterminate_operations_the_checker_accepts(tmp_path):
    spec = _spec(tmp_path, "reference", "rows", writers=3, operations=6, fault=FAULT_KILL_MID_COMMIT)
    result = run(spec, ProcessExecutor(), tmp_path / "out", validate=False)
    unsure = [a for a in result.history if a.outcome is WriteOutcome.UNKNOWN]
    # Writer 0 died just after its manifest was written, writer 1 just before.
    assert sorted(a.writer for a in unsure) == [0, 1]
    assert all(a.read_version is not None and a.version is None for a in unsure)
    assert max(a.op_id for a in result.history if a.writer == 0) == next(a.op_id for a in unsure if a.writer == 0)
    # Writer 0's last commit is there, unacknowledged: one version more than acknowledged commits.
    acknowledged = [a for a in result.history if a.outcome is WriteOutcome.ACKNOWLEDGED]
    assert result.report.versions == len(acknowledged) + 1
    assert result.report.anomalies == []


def test_a_slow_store_shows_no_anomaly(tmp_path):
    spec = _spec(tmp_path, "reference", "rows", writers=4, operations=5, fault=FAULT_SLOW_STORE)
    result = run(spec, ProcessExecutor(), tmp_path / "out", validate=False)
    assert result.report.anomalies == []
    assert any(a.outcome is WriteOutcome.ACKNOWLEDGED for a in result.history if a.writer >= 0)


@pytest.mark.parametrize("primary_key", [False, True])
def test_pylance_upserts_racing_on_new_keys_duplicate_them_unless_the_key_is_declared(tmp_path, primary_key):
    """A measured fact of pylance 14 (docs/spec-discrepancies.md, "Concurrent
    upserts of the same new keys"): merge_insert on ``id`` by writers racing
    on the same new keys commits every insert, so the checker names a
    duplicate; with ``id`` declared the unenforced primary key, the later
    inserts are refused as conflicts and the run is clean."""
    spec = _spec(tmp_path, "pylance", "upsert/shared-keys", operations=3, primary_key=primary_key)
    result = run(spec, ProcessExecutor(), tmp_path / "out", validate=False)
    if primary_key:
        assert result.report.anomalies == []
        assert any(a.outcome is WriteOutcome.CONFLICT for a in result.history)
    else:
        duplicates = [a for a in every_anomaly(result.report.anomalies) if a.name == "duplicate"]
        assert duplicates, result.report.anomalies
        assert all(len(a.witness.op_ids) >= 2 and a.witness.rows for a in duplicates)
