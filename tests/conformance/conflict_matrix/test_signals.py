"""How a lost race is told apart: each driver's ``conflict_from`` (the one
place its implementation's conflict signal is read), and the matrix's outcome
of a WriteConflict."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.conflict_matrix.model import Implementation, Outcome
from conformance.conflict_matrix.signals import conflict_outcome, outcome_of
from conformance.drivers import lancedb_driver, pylance_driver
from conformance.drivers import reference as reference_driver
from conformance.drivers.protocol import WriteConflict


def test_pylance_commit_conflict_error_says_whether_it_is_retryable():
    from lance.commit import CommitConflictError  # pylance, lazily as the package does

    retryable = pylance_driver.conflict_from(
        CommitConflictError("Retryable commit conflict for version 3", retryable=True)
    )
    assert retryable is not None and retryable.retryable is True
    # The attribute wins over the message.
    incompatible = pylance_driver.conflict_from(CommitConflictError("Retryable commit conflict", retryable=False))
    assert incompatible is not None and incompatible.retryable is False


def test_pylance_plain_os_errors_are_told_apart_by_their_message():
    incompatible = pylance_driver.conflict_from(OSError("Incompatible transaction: This Append transaction is ..."))
    assert incompatible is not None and incompatible.retryable is False
    exhausted = pylance_driver.conflict_from(OSError("Too many concurrent writers. Attempted 0 retries."))
    assert exhausted is not None and exhausted.retryable is True
    assert pylance_driver.conflict_from(OSError("No such file or directory")) is None
    assert pylance_driver.conflict_from(ValueError("Incompatible transaction")) is None


def test_a_real_pylance_race_reads_as_an_incompatible_conflict(tmp_path):
    """An append built on a version a concurrent overwrite replaced."""
    import lance

    uri = str(tmp_path / "table")
    lance.write_dataset(pa.table({"id": [1, 2]}), uri)
    stale = lance.dataset(uri, version=1)
    lance.write_dataset(pa.table({"id": [3]}), uri, mode="overwrite")
    with pytest.raises(OSError) as raised:
        lance.write_dataset(pa.table({"id": [4]}), stale, mode="append")
    conflict = pylance_driver.conflict_from(raised.value)
    assert conflict is not None and conflict.retryable is False
    assert outcome_of(Implementation.PYLANCE, raised.value) is Outcome.INCOMPATIBLE


def test_the_reference_conflict_errors_say_whether_they_are_retryable():
    from reference_impl.errors import (
        CommitAttemptsExhaustedError,
        CorruptFileError,
        IncompatibleConflictError,
        RetryableConflictError,
    )

    def kind(error: BaseException) -> bool | None:
        conflict = reference_driver.conflict_from(error)
        assert conflict is not None and str(conflict) == str(error)
        return conflict.retryable

    assert kind(RetryableConflictError("x", "deleted twice", version=3)) is True
    assert kind(IncompatibleConflictError("x", "after a restore", version=3)) is False
    assert kind(CommitAttemptsExhaustedError("x", "lost the race")) is True
    assert reference_driver.conflict_from(CorruptFileError("x", "truncated")) is None
    assert outcome_of(Implementation.REFERENCE, IncompatibleConflictError("x", "y", version=3)) is Outcome.INCOMPATIBLE


def test_lancedb_messages_carry_the_lance_core_wording_behind_its_prefix():
    retryable = lancedb_driver.conflict_from(
        RuntimeError("lance error: Retryable commit conflict for version 4: This Merge transaction was preempted")
    )
    assert retryable is not None and retryable.retryable is True
    assert lancedb_driver.conflict_from(RuntimeError("lance error: Not found: table.lance")) is None
    assert lancedb_driver.conflict_from(KeyError("Incompatible transaction")) is None


def test_a_real_lancedb_race_reads_as_an_incompatible_conflict(tmp_path):
    """Two handles on one table: the second appends after the first
    overwrote (LanceDB writes on the version a handle loaded)."""
    import lancedb

    db = lancedb.connect(str(tmp_path))
    db.create_table("t", pa.table({"id": [1, 2]}))
    first, second = db.open_table("t"), db.open_table("t")
    first.add(pa.table({"id": [3]}), mode="overwrite")
    with pytest.raises(RuntimeError) as raised:
        second.add(pa.table({"id": [4]}))
    conflict = lancedb_driver.conflict_from(raised.value)
    assert conflict is not None and conflict.retryable is False


def test_a_conflict_is_an_outcome_only_when_it_says_its_kind():
    assert conflict_outcome(WriteConflict("lost", retryable=True)) is Outcome.RETRYABLE
    assert conflict_outcome(WriteConflict("lost", retryable=False)) is Outcome.INCOMPATIBLE
    assert conflict_outcome(WriteConflict("lost")) is None
