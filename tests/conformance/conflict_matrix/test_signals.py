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


def test_a_reference_error_that_is_not_a_decided_conflict_is_not_classified():
    from reference_impl.errors import CommitConflictError, CorruptFileError

    assert reference_outcome(CorruptFileError("x", "truncated")) is None
    # A conflict error without ``retryable`` (what the reference raised before
    # it decided conflicts) says nothing about retrying.
    assert reference_outcome(CommitConflictError("x", "already exists")) is None
