"""Races drawn by ``commit_schedules()`` and run through a driver's
``write`` (the reference driver, whose commit loop is the executable spec):
one writer after another, in threads, and (in the ``races`` tox env) in
processes; and schedules run through pylance, judged by the same model.

The property every run must have (checked by :func:`check_race`):

* the final table (columns, rows by key, the ``key.*`` config) equals the
  serial application of the acknowledged writes in the order of the versions
  they committed (``ScheduleRun.serial()``): no acknowledged write is lost or
  applied twice, and none sees less than what was committed before it;
* every rejection was required by conflict resolution: the writer failed with
  a ``WriteConflict``, some version committed after the one it read is one
  over which ``decide`` (its transaction, that version's transaction, the
  manifest it read) refuses it, and the first such is retryable or
  incompatible as the conflict's ``retryable`` says;
* ``validate --all-versions`` finds no error and no warning in the history.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import strategies
from conformance.drivers import reference, writes
from conformance.drivers.writes import WriteOutcome
from conformance.strategies import ScheduledOutcome, ScheduleRun, TableState
from conformance.validator import Severity, validate
from reference_impl.commit import new_transaction
from reference_impl.commit.conflicts import Decision, Outcome, decide
from reference_impl.dataset import Dataset
from reference_impl.naming import LATEST_HINT, list_versions
from reference_impl.storage import LocalStorage
from reference_impl.transactions import Operation, read_transaction_file
from tests.hypothesis_budget import examples
from tests.race_checks import rows_both_delete

_RACES = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


def check_race(run: ScheduleRun) -> None:
    """Assert the property of the module docstring on a finished run."""
    final = TableState.read(reference, run.path)
    expected = run.serial()
    assert final == expected, f"the table is not the serial application of the acknowledged writes:\n{run.outcomes}"

    for outcome in run.outcomes:
        if outcome.acknowledged:
            continue
        assert outcome.outcome is WriteOutcome.CONFLICT, (
            f"writer {outcome.writer} failed with {outcome.error_type}: {outcome.message}"
        )
        _check_rejection(run, outcome)

    problems = [
        f"v{f.version} {f.rule}: {f.message}"
        for f in validate(run.path, all_versions=True).findings
        if f.severity in (Severity.ERROR, Severity.WARNING)
    ]
    assert not problems, "\n".join(problems)


def _asked_commits(path: str, op: writes.WriteOp, scratch: Path) -> list[tuple[int, Operation]]:
    """The commits the reference asks for when it performs ``op`` on the
    version ``op`` read, uncontested, each as ``(version asked on,
    operation)``: found by performing it again on a copy of the dataset (in
    ``scratch``) whose later versions are removed, through a handle that
    records each commit it asks for (a compaction asks two: the reservation,
    then the Rewrite, both on the version it read)."""
    copy = scratch / "copy"
    shutil.copytree(path, copy)
    for version, name in list_versions(LocalStorage(copy)).manifests().items():
        if version > op.read_version:
            (copy / name).unlink()
    (copy / LATEST_HINT).unlink(missing_ok=True)
    asked: list[tuple[int, Operation]] = []

    class RecordingDataset(Dataset):
        def commit(self, operation, **options):
            asked.append((self.version, operation))
            return super().commit(operation, **options)

    # The reference driver's own dispatch: the calls its write makes.
    reference.perform(RecordingDataset.open(copy, op.read_version), op)
    assert asked, f"performing {op.kind.value} asks for no commit"
    return asked


def _first_refusal(run: ScheduleRun, copy: Path, asked_on: int, mine: Operation) -> tuple[int, Decision] | None:
    """The first version committed after ``asked_on`` over which ``decide``
    refuses ``mine`` (retryable or incompatible), with its decision."""
    read = Dataset.open(copy, asked_on)  # the copy: where mine's own files are
    for version in range(asked_on + 1, reference.versions(run.path)[-1] + 1):
        theirs = Dataset.open(run.path, version)
        other = read_transaction_file(theirs.storage, theirs.manifest.transaction_file)
        decision = decide(
            new_transaction(asked_on, mine), other, read=read.manifest, rows=rows_both_delete(read, mine, theirs)
        )
        if decision.outcome in (Outcome.RETRYABLE, Outcome.INCOMPATIBLE):
            return version, decision
    return None


def _check_rejection(run: ScheduleRun, outcome: ScheduledOutcome) -> None:
    """The rejection was one ``decide`` requires (the module docstring): of
    the commits the writer asks for, one is refused by ``decide`` over a
    version committed since the one it was asked on, as retryable as the
    conflict says (a compaction may be refused at its reservation or at its
    Rewrite)."""
    op = run.operations[outcome.writer]
    with tempfile.TemporaryDirectory(prefix="race-copy-") as scratch:
        asked = _asked_commits(run.path, op, Path(scratch))
        refusals = [_first_refusal(run, Path(scratch) / "copy", asked_on, mine) for asked_on, mine in asked]
    found = [
        f"{type(mine).__name__} on version {asked_on}: "
        + (
            "allowed over every later version"
            if r is None
            else f"{r[1].outcome.value} over version {r[0]} ({r[1].reason})"
        )
        for (asked_on, mine), r in zip(asked, refusals, strict=True)
    ]
    assert any(r is not None and outcome.retryable == (r[1].outcome is Outcome.RETRYABLE) for r in refusals), (
        f"writer {outcome.writer} ({op.kind.value}) was rejected with retryable={outcome.retryable} "
        f"({outcome.message}), but decide says: {'; '.join(found)}"
    )


def _race(schedule, how) -> None:
    with tempfile.TemporaryDirectory(prefix="race-") as directory:
        check_race(schedule.run(Path(directory) / "ds", how))


def _stale_compaction(other: writes.WriteOp) -> strategies.CommitSchedule:
    """Two rows in two fragments; ``other`` commits, then a compaction that
    read the same version (one fragment of two rows)."""
    return strategies.CommitSchedule(
        first_rows=2,
        stable_row_ids=False,
        naming=strategies.ManifestNaming.V2,
        max_rows_per_file=1,
        base_steps=[],
        writers=[
            strategies.ScheduledWriter(1, other),
            strategies.ScheduledWriter(1, writes.Compact(target_rows_per_fragment=2)),
        ],
        order=[0, 1],
    )


def _schedules(**sizes) -> st.SearchStrategy[strategies.CommitSchedule]:
    return strategies.commit_schedules(**sizes)


@pytest.mark.requirements(
    "history.serial-history",
    "transaction.conflict-errors",
    "transaction.rebase-keeps-intent",
    "commit.retry-after-lost-race",
    "commit.retry-only-if-compatible",
)
@settings(max_examples=examples(1 / 5), **_RACES)
@given(_schedules())
def test_writers_one_after_another_commit_a_serial_history(schedule):
    """Writers holding stale handles commit one after another in the drawn
    order: the property of the module docstring holds."""
    _race(schedule, "serial")


@pytest.mark.requirements(
    "history.serial-history",
    "transaction.conflict-errors",
    "transaction.rebase-keeps-intent",
    "commit.retry-after-lost-race",
    "commit.retry-only-if-compatible",
)
@settings(max_examples=examples(1 / 10), **_RACES)
@given(_schedules())
def test_writers_in_threads_commit_a_serial_history(schedule):
    """The same writers started at once in threads (each a little after the
    one before it in the order): the property holds whatever the real
    interleaving was."""
    _race(schedule, "threads")


@pytest.mark.requirements(
    "history.serial-history",
    "transaction.conflict-errors",
    "transaction.rebase-keeps-intent",
    "commit.retry-after-lost-race",
    "commit.retry-only-if-compatible",
)
@pytest.mark.races
@settings(max_examples=examples(1 / 5), **_RACES)
@given(_schedules(min_writers=3, max_writers=6))
def test_writers_in_processes_commit_a_serial_history(schedule):
    """The same in one process per writer (spawned; the ``races`` tox env):
    the property holds whatever the real interleaving was."""
    _race(schedule, "processes")


def _rejected_as_retryable(run: ScheduleRun) -> None:
    compaction = run.outcomes[1]
    assert compaction.outcome is WriteOutcome.CONFLICT and compaction.retryable, compaction


def test_a_stale_compaction_over_a_compaction(tmp_path):
    """Two compactions planned on the same version: the second must fail
    (retryable: its fragments were rewritten), not rewrite them again."""
    run = _stale_compaction(writes.Compact(target_rows_per_fragment=2)).run(tmp_path / "ds")
    check_race(run)
    _rejected_as_retryable(run)


def test_a_stale_compaction_over_an_added_column(tmp_path):
    """A compaction planned before a column was added must fail with a
    retryable conflict (a Rewrite after a Merge), not write the new schema's
    fragments from rows that lack the column."""
    run = _stale_compaction(writes.AddColumns((writes.NewColumn("c0", "id", 1),))).run(tmp_path / "ds")
    check_race(run)
    _rejected_as_retryable(run)


# -- the same schedules through another driver ------------------------------------------------


@settings(max_examples=examples(1 / 10), **_RACES)
@given(strategies.commit_schedules())
def test_writers_through_pylance_leave_what_the_serial_model_predicts(schedule):
    """The strategies are not tied to the reference: the same schedules,
    written one after another through the pylance driver (real pylance, each
    write built on the version its writer read), leave the table that the
    acknowledged writes give applied in the order of their versions, as
    pylance reads it; a writer pylance refuses is refused with a conflict."""
    pytest.importorskip("lance")
    from conformance.drivers import pylance_driver

    with tempfile.TemporaryDirectory(prefix="race-pylance-") as directory:
        run = schedule.run(Path(directory) / "ds", driver=pylance_driver)
        final = TableState.read(pylance_driver, run.path)
    assert final == run.serial(), run.outcomes
    refused = [o for o in run.outcomes if o.outcome is not WriteOutcome.ACKNOWLEDGED]
    assert all(o.outcome is WriteOutcome.CONFLICT for o in refused), refused
