"""How a lost race is told apart: pylance 14's exceptions and the reference's."""

from __future__ import annotations

from conformance.conflict_matrix.model import Outcome
from conformance.conflict_matrix.signals import pylance_outcome, reference_outcome


def test_pylance_commit_conflict_error_says_whether_it_is_retryable():
    from lance.commit import CommitConflictError  # pylance, lazily as the package does

    assert pylance_outcome(CommitConflictError("Retryable commit conflict for version 3: ...", retryable=True)) is (
        Outcome.RETRYABLE
    )
    assert pylance_outcome(CommitConflictError("conflict", retryable=False)) is Outcome.INCOMPATIBLE


def test_pylance_plain_os_errors_are_told_apart_by_their_message():
    assert pylance_outcome(OSError("Incompatible transaction: This Append transaction is ...")) is Outcome.INCOMPATIBLE
    assert pylance_outcome(OSError("Too many concurrent writers. Attempted 0 retries.")) is Outcome.RETRYABLE
    assert pylance_outcome(OSError("No such file or directory")) is None
    assert pylance_outcome(ValueError("Incompatible transaction")) is None


def test_the_reference_conflict_errors_say_whether_they_are_retryable():
    from reference_impl.errors import (
        CommitAttemptsExhaustedError,
        CorruptFileError,
        IncompatibleConflictError,
        RetryableConflictError,
    )

    assert reference_outcome(RetryableConflictError("x", "deleted twice", version=3)) is Outcome.RETRYABLE
    assert reference_outcome(IncompatibleConflictError("x", "after a restore", version=3)) is Outcome.INCOMPATIBLE
    assert reference_outcome(CommitAttemptsExhaustedError("x", "lost the race")) is Outcome.RETRYABLE
    assert reference_outcome(CorruptFileError("x", "truncated")) is None
