"""What one cell of the compatibility matrix can be, and how a reader's error
is classified: the one place that decides whether an error is a clean
refusal or a failure.

A cell is (writer release, reader release, feature). Its outcome:

* ``pass``: the reader opened the dataset and returned the writer's rows
  and description (compared with what the writer itself reads back);
* ``refused``: the reader declined cleanly, naming a version or a feature
  it does not know (a data storage version, a reader feature flag, a
  manifest it cannot follow). The spec asks readers to refuse what they
  cannot read (``docs/requirements.md``: feature flags, file versions), so
  a clean refusal counts as a pass;
* ``fail``: anything else, with a :class:`FailureKind`: an error that is
  not a refusal, a Rust panic (``PanicException``, or a message that says a
  task panicked or was aborted), the worker process crashing or hanging past
  its timeout, or rows or a description that differ from the writer's;
* ``not-applicable``: the reader read something, but the writer could not
  read its own dataset back, so there was nothing to compare with.

A few differences between two releases' descriptions of the same dataset are
the readers' own views of facts the dataset does not store, and are noted on
the cell rather than failing it: :data:`TOLERATED_DIFFERENCES`.

The classification goes by the error's text because that is all a release
reports (its exception types are ``OSError``, ``ValueError``, ... for every
meaning). A panic is looked for first: a panic whose message mentions an
unsupported version is still a panic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class Outcome(str, Enum):
    PASS = "pass"
    REFUSED = "refused"
    FAIL = "fail"
    NOT_APPLICABLE = "not-applicable"

    @property
    def accepted(self) -> bool:
        """Whether the cell counts as a pass (a clean refusal does)."""
        return self in (Outcome.PASS, Outcome.REFUSED)


class FailureKind(str, Enum):
    #: The reader raised an error that is no clean refusal.
    ERROR = "error"
    #: A Rust panic (surfaced as ``PanicException`` or named in the message).
    PANIC = "panic"
    #: The worker process died (a signal, an abort) during the read.
    CRASH = "crash"
    #: The worker did not answer within its timeout and was killed.
    HANG = "hang"
    #: The reader returned rows that differ from the writer's.
    WRONG_ROWS = "wrong-rows"
    #: The reader's canonical description differs from the writer's.
    WRONG_DESCRIPTION = "wrong-description"


#: Messages of a clean refusal: the reader names something newer than it
#: knows. Matched case-insensitively anywhere in the error's text.
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"unknown lance storage version",
    r"reader to read a file with version",
    r"unsupported (lance )?(file|storage|data storage|manifest|format) version",
    r"(file|storage) version .* (is )?not supported",
    r"reader feature flags?",
    r"feature flags? .*not supported",
    r"does not support (the )?(feature|flag)",
    r"unknown (feature|reader) flag",
    r"newer version of lance",
    r"written by a newer",
    r"please upgrade",
)
#: Messages of a panic that the binding turned into an ordinary error (a
#: panic in a spawned task reaches Python as "task ... panicked" or as an
#: aborted task).
PANIC_PATTERNS: tuple[str, ...] = (
    r"panicked",
    r"panicexception",
    r"task was aborted",
)


def _matches(patterns: tuple[str, ...], text: str) -> bool:
    return any(re.search(pattern, text, re.IGNORECASE) for pattern in patterns)


def classify_error(error_type: str, message: str) -> tuple[Outcome, FailureKind | None]:
    """The outcome of a read that raised ``error_type: message``: a panic,
    a clean refusal, or an error."""
    text = f"{error_type}: {message}"
    if _matches(PANIC_PATTERNS, text):
        return Outcome.FAIL, FailureKind.PANIC
    if _matches(REFUSAL_PATTERNS, text):
        return Outcome.REFUSED, None
    return Outcome.FAIL, FailureKind.ERROR


@dataclass(frozen=True)
class ToleratedDifference:
    """A description path (``[]`` for any index, as :func:`conformance.describe.differences`
    writes them) where two releases may differ without either misreading
    the dataset, and why; ``writers_before`` limits it to datasets of
    releases older than that version."""

    path: str
    reason: str
    writers_before: tuple[int, ...] | None = None


TOLERATED_DIFFERENCES: tuple[ToleratedDifference, ...] = (
    ToleratedDifference(
        "data_format",
        "releases before 0.16 record no data storage format in the manifest, so each reader infers one "
        "(0.15 itself says 0.1 of the 2.0 files it wrote, newer readers 2.0)",
        writers_before=(0, 16),
    ),
    ToleratedDifference(
        "indices[].type_url",
        "releases name the vector index details message differently (lance.table.VectorIndexDetails in the "
        "older ones, lance.index.pb.VectorIndexDetails in the newer): the reader's name for the same index",
    ),
)


def _on_path(pattern: str, difference: str) -> bool:
    """Whether a difference (``path: ...`` or ``path[3].field: ...``) lies on ``pattern`` or below it."""
    regex = "^" + re.escape(pattern).replace(r"\[\]", r"\[\d+\]") + r"[.\[:]"
    return re.match(regex, difference) is not None


def tolerated(difference: str, writer_version: tuple[int, ...]) -> ToleratedDifference | None:
    """The entry of :data:`TOLERATED_DIFFERENCES` a description difference falls under, if any."""
    for entry in TOLERATED_DIFFERENCES:
        if entry.writers_before is not None and writer_version >= entry.writers_before:
            continue
        if _on_path(entry.path, difference):
            return entry
    return None
