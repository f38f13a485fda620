"""How a reader's error is classified (conformance/compat/outcomes.py): the
messages below are what pinned releases said reading newer releases' datasets
(measured with lance-conformance compat); and the #9454 note's logic
(conformance/compat/document.py) over a run's record."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from conformance.compat.document import issue_9454_note
from conformance.compat.outcomes import FailureKind, Outcome, classify_error
from conformance.compat.releases import Release, WriteReport
from conformance.compat.run import Cell, CompatRun


@pytest.mark.parametrize(
    "error_type, message, expected",
    [
        # 0.20.0 reading 2.2 data files: it names the version it does not know.
        (
            "refused OSError",
            "Io error: Execution error: Invalid user input: Unknown Lance storage version: 2.2, version.rs:49:27",
            (Outcome.REFUSED, None),
        ),
        # 0.15.0 reading 2.1 data files: its reader names the version it cannot read.
        (
            "refused OSError",
            "Io error: Execution error: LanceError(IO): Attempt to use the lance v0.2 reader to read a file with "
            "version 2.1, reader.rs:180:17",
            (Outcome.REFUSED, None),
        ),
        # 1.0.4 reading 2.2 data files: a panic in a decode task, surfaced as an IO error.
        (
            "refused OSError",
            'Io error: External error: Wrapped error: task 16 panicked with message "the offset + length of '
            'the sliced Buffer cannot exceed the existing length"',
            (Outcome.FAIL, FailureKind.PANIC),
        ),
        # 0.39.0 reading 2.2 data files: the aborted task is the panic's trace.
        ("refused ArrowInvalid", "External error: RuntimeError: Task was aborted", (Outcome.FAIL, FailureKind.PANIC)),
        # The worker's kind for a PanicException the binding raised.
        (
            "panic PanicException",
            "not implemented: v2 format has no concept of row groups",
            (Outcome.FAIL, FailureKind.PANIC),
        ),
        # 8.0.1 opening a version whose inline transaction holds a DataOverlay (lance-format/lance#9454).
        (
            "refused ValueError",
            "Encountered internal error. Please file a bug report. Transaction message did not contain an operation",
            (Outcome.FAIL, FailureKind.ERROR),
        ),
        # A panic that mentions a version is still a panic.
        ("refused OSError", "thread panicked: unsupported file version 9.9", (Outcome.FAIL, FailureKind.PANIC)),
    ],
)
def test_an_error_is_a_panic_a_clean_refusal_or_an_error(error_type, message, expected):
    assert classify_error(error_type, message) == expected


def test_only_pass_and_clean_refusal_are_accepted():
    assert {outcome for outcome in Outcome if outcome.accepted} == {Outcome.PASS, Outcome.REFUSED}


def _run_of(cells, releases, overlay_writers):
    """A run's record, as run_compat leaves it, for the note's logic alone."""
    writes = [
        WriteReport(name, datasets={"txn-data-overlay": Path(name)} if name in overlay_writers else {})
        for name in releases
    ]
    return CompatRun(
        [Release(name, Path("python"), "venv") for name in releases],
        ["txn-data-overlay"],
        writes,
        cells,
        {},
        datetime.now(timezone.utc),
        datetime.now(timezone.utc),
        0.0,
    )


def test_the_9454_note_names_the_failing_cells_or_what_the_run_lacks():
    broken = Cell(
        "12.0.0",
        "8.0.1",
        "txn-data-overlay",
        Outcome.FAIL,
        FailureKind.ERROR,
        "ValueError",
        "describe: Encountered internal error. Transaction message did not contain an operation",
    )
    passed = Cell("12.0.0", "0.39.0", "txn-data-overlay", Outcome.PASS)
    note = issue_9454_note(_run_of([broken, passed], ["0.39.0", "8.0.1", "12.0.0"], {"12.0.0"}))
    assert note["status"] == "reproduced"
    assert note["cells"] == [{"writer": "12.0.0", "reader": "8.0.1", "feature": "txn-data-overlay"}]
    assert "written by 12.0.0" in note["text"] and "opened by 8.0.1" in note["text"]

    note = issue_9454_note(_run_of([passed], ["0.39.0", "12.0.0"], {"12.0.0"}))
    assert note["status"] == "not-reproduced" and "between 1.0 and 8.x" in note["text"]
    assert "field 23" not in note["text"]  # 12.0.0 is a writer that could break them
    note = issue_9454_note(_run_of([], ["8.0.1", "14.0.2"], {"14.0.2"}))
    assert "field 23" in note["text"] and "between 1.0 and 8.x" not in note["text"]
