"""Writer conformance: the shipped writers pass, faulty writers fail at the
step that is at fault, and the report is what its schema says."""

from __future__ import annotations

import json

import pytest

from conformance.expectations import Expectation, Expectations
from conformance.writer_conformance import SCRIPT, StepStatus, run_writer_conformance, to_text
from conformance.writer_conformance.report import check_report_document

from . import faulty_writers

READERS = ["reference"]


def _statuses(report) -> dict[str, StepStatus]:
    return {step.id: step.status for step in report.steps}


@pytest.fixture(scope="module")
def reference_report():
    return run_writer_conformance("reference")


def test_the_reference_writer_passes(reference_report):
    """Every step passes but upsert, which the reference does not perform, and
    every version is checked by the validator and by every installed reader."""
    report = reference_report
    assert report.passed, to_text(report)
    statuses = _statuses(report)
    assert statuses.pop("upsert") is StepStatus.NOT_APPLICABLE
    assert set(statuses.values()) == {StepStatus.PASS}
    for step in report.steps:
        if step.status is not StepStatus.PASS or step.id == "tag":  # a tag commits nothing
            continue
        # Each step has a table of its own: its versions follow those the preparation committed.
        assert step.versions and step.returned_version == step.versions[-1], step.id
        checked = {(check.version, check.check) for check in step.checks}
        for version in step.versions:
            assert (version, "validator") in checked
            for reader in report.readers:
                assert (version, f"rows:{reader}") in checked
    assert report.step("create").versions == (1,)
    # delete-in's table: the reference created it and appended (v1, v2); the step committed v3.
    assert report.step("delete-in").versions == (3,)


def test_compaction_checks_the_version_committed_on_the_way(reference_report):
    """Compaction commits ReserveFragments, then Rewrite: both are checked,
    the first against the rows before compaction."""
    compact = reference_report.step("compact")
    assert len(compact.versions) == 2 and compact.returned_version == compact.versions[-1]
    assert {check.version for check in compact.checks} == set(compact.versions)


def test_the_report_fits_its_schema(reference_report):
    document = json.loads(json.dumps(reference_report.to_json()))
    check_report_document(document)
    assert document["report_format"] == 1
    assert [step["id"] for step in document["steps"]] == [step.id for step in SCRIPT]


def test_pylance_14_passes():
    """pylance 14 through its public API, tables created as 2.0 (the
    script's default): every step, upsert included."""
    pytest.importorskip("lance")
    report = run_writer_conformance("pylance")
    assert report.passed, to_text(report)
    assert set(_statuses(report).values()) == {StepStatus.PASS}


def test_a_dropped_deletion_fails_the_delete_step_alone():
    """A writer that commits a version for a delete but deletes nothing fails
    at that step; the steps that need a deletion (compaction, a tag of its
    version) have theirs made by the reference, and pass."""
    report = run_writer_conformance("drops-deletions", driver=faulty_writers.DropsDeletions(), readers=READERS)
    assert not report.passed
    failed = [step.id for step in report.steps if step.status is StepStatus.FAIL]
    assert failed == ["delete"], to_text(report)
    messages = report.step("delete").messages()
    assert any("rows:reference" in message and "expected 7 rows, got 10" in message for message in messages)
    assert _statuses(report)["compact"] is StepStatus.PASS


def test_a_manifest_that_breaks_a_requirement_fails_its_step():
    """A writer whose append leaves a manifest the validator rejects fails at
    the append, with the rule that caught it."""
    report = run_writer_conformance("misnamed-txn", driver=faulty_writers.MisnamesItsTransaction(), readers=READERS)
    failed = [step.id for step in report.steps if step.status is StepStatus.FAIL]
    assert failed == ["append"], to_text(report)
    validator = [check for check in report.step("append").checks if check.check == "validator"]
    assert validator[0].status.value == "fail"
    assert any(problem.startswith("transaction/file-name:") for problem in validator[0].problems)


def test_a_wrong_returned_version_fails_its_step():
    report = run_writer_conformance("lies", driver=faulty_writers.LiesAboutItsVersion(), readers=READERS)
    assert [step.id for step in report.steps if step.status is StepStatus.FAIL] == ["update"]
    assert any("returned version" in problem for problem in report.step("update").problems)


def test_a_crash_fails_its_step_and_hides_no_other():
    """The run goes on after a writer raises; the tag of the version
    compaction committed still runs, on a table the reference compacted."""
    report = run_writer_conformance("crashes", driver=faulty_writers.CrashesOnCompaction(), readers=READERS)
    statuses = _statuses(report)
    assert statuses.pop("compact") is StepStatus.FAIL
    assert statuses.pop("upsert") is StepStatus.NOT_APPLICABLE
    assert set(statuses.values()) == {StepStatus.PASS}, to_text(report)
    assert "RuntimeError: compaction exploded" in report.step("compact").problems[0]
    assert not report.history_problems


def test_a_step_whose_table_cannot_be_prepared_is_skipped_naming_the_step_it_needs():
    """A step needing an operation the reference does not perform (upsert)
    is skipped, "needs step upsert", with the reason in its notes; the
    writers grid says so in place of n/a."""
    from conformance.ecosystem.writers import writers_grid
    from conformance.report.html import grid_view
    from conformance.report.text import render_grid
    from conformance.writer_conformance.script import Step

    by_id = {step.id: step for step in SCRIPT}
    after_upsert = Step(
        "after-upsert", by_id["config"].kind, "config after an upsert", by_id["config"].make, needs=("create", "upsert")
    )
    steps = (by_id["create"], by_id["delete"], by_id["upsert"], after_upsert)
    report = run_writer_conformance("reference", readers=READERS, steps=steps)
    skipped = report.step("after-upsert")
    assert skipped.status is StepStatus.SKIPPED and skipped.reason == "needs step upsert"
    assert skipped.notes[0].startswith("the reference driver could not prepare step upsert: WriteNotSupported")
    assert not skipped.checks
    assert report.passed and _statuses(report)["create"] is StepStatus.PASS
    grid = writers_grid([("reference", report)])
    assert grid.cell("reference", "after-upsert").outcomes[0].skipped == "needs step upsert"
    assert "skipped: needs step upsert" in render_grid(grid)
    page_labels = {view.cell.column: view.label for view in grid_view(grid).cells}
    assert page_labels["after-upsert"] == "skipped: needs step upsert"


def test_expectations_turn_a_failure_expected_and_a_pass_fixed():
    """A listed failure is an expected failure; a listed step that passes is
    reported fixed and fails the run (a strict xfail)."""
    expectations = Expectations(
        "drops-deletions",
        (
            Expectation("writers", "delete", "deletion.readers-filter", "deletes nothing", reproducer="the script"),
            Expectation("writers", "append", "transaction.append-keeps-existing", "stale entry", reproducer="-"),
        ),
    )
    report = run_writer_conformance(
        "drops-deletions", driver=faulty_writers.DropsDeletions(), readers=READERS, expectations=expectations
    )
    statuses = _statuses(report)
    assert statuses["delete"] is StepStatus.EXPECTED_FAILURE
    assert statuses["append"] is StepStatus.FIXED
    assert not report.passed
    assert report.step("delete").expectation["reason"] == "deletes nothing"


def test_a_reader_without_time_travel_reads_each_step_as_the_latest(monkeypatch):
    """A reader that reads only the latest version is still checked on every
    step's result (checked right after the step), and a version committed on
    the way (compaction's ReserveFragments) is not applicable to it."""
    from conformance import drivers

    monkeypatch.setitem(drivers.DRIVERS, "latest-only", "tests.conformance.writer_conformance.latest_only_reader")
    report = run_writer_conformance("reference", readers=["reference", "latest-only"])
    step_checks = {step.id: step.checks for step in report.steps}
    compact = report.step("compact")
    reserve, rewrite = compact.versions
    by_name = {(c.version, c.check): c for c in step_checks["compact"]}
    assert by_name[(reserve, "rows:latest-only")].status.value == "not-applicable"
    assert "time-travel" in by_name[(reserve, "rows:latest-only")].notes[0]
    assert by_name[(rewrite, "rows:latest-only")].status.value == "pass"
    assert by_name[(rewrite, "describe:latest-only")].status.value == "pass"
    # It declares no version listing, so the history check does not ask it.
    assert report.passed, to_text(report)


def test_pylance_default_files_are_compared_by_the_reference_too():
    """With pylance's default data storage version (2.2), the reference reads
    the rows (its reader decodes 2.1 and 2.2 files) as pylance does, both
    compared with the expected content."""
    pytest.importorskip("lance")
    report = run_writer_conformance("pylance", data_storage_version=None)
    assert report.passed, to_text(report)
    append = {check.check: check for check in report.step("append").checks}
    assert append["rows:reference"].status.value == "pass"
    assert append["rows:pylance"].status.value == "pass"
    assert append["validator"].status.value == "pass"


def test_a_wrong_add_columns_hides_neither_the_rename_nor_the_drop():
    """A writer that adds a column under another name fails add-columns; the
    rename and the drop of that column run on tables where the reference
    added it, and pass: one failure does not hide the next steps' coverage."""
    report = run_writer_conformance("misnames", driver=faulty_writers.AddsUnderAnotherName(), readers=READERS)
    statuses = _statuses(report)
    assert statuses["add-columns"] is StepStatus.FAIL
    assert statuses["alter-columns"] is StepStatus.PASS and statuses["drop-columns"] is StepStatus.PASS
    assert statuses["restore"] is StepStatus.PASS, to_text(report)


def test_the_reference_writer_at_2_1_passes_the_script_read_by_pylance():
    """The reference writes 2.1 data files (its simplest form) through every
    step of the script; pylance 14 and the reference read each version's rows."""
    pytest.importorskip("lance")
    report = run_writer_conformance("reference", data_storage_version="2.1", readers=["reference", "pylance"])
    assert report.passed, to_text(report)
    append = {check.check: check for check in report.step("append").checks}
    assert append["rows:pylance"].status.value == "pass"
    assert append["rows:reference"].status.value == "pass"
