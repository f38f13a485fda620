"""The worker protocol's typed errors and how a Python implementation's
exceptions map onto them.

Standard library only: the server side runs inside an old pylance release's
own environment too (:mod:`conformance.drivers.release`).
"""

from __future__ import annotations

from enum import Enum


class ErrorKind(str, Enum):
    """What went wrong with one request (``error.kind`` in a response)."""

    #: The request is malformed: not JSON, an unknown request, a missing or mistyped field.
    BAD_REQUEST = "bad-request"
    #: The implementation cannot do what was asked (a capability, an encoding, a write
    #: operation it lacks); the suite reports it as not applicable or declined.
    UNSUPPORTED = "unsupported"
    #: The implementation refuses the dataset or the operation (its own error on this input).
    REFUSED = "refused"
    #: A write lost a commit race with another writer.
    CONFLICT = "conflict"
    #: The implementation panicked and its binding caught it (a Rust panic surfaced
    #: as ``PanicException``); the worker keeps serving.
    PANIC = "panic"
    #: The worker itself failed outside the implementation (e.g. writing the rows' file).
    INTERNAL = "internal"


#: Exception class names (anywhere in an exception's class hierarchy) and the
#: kind they answer with; the first match in this order wins. Names, not
#: classes: the server must not import the reference implementation or the
#: write vocabulary to classify an old release's errors.
KIND_BY_CLASS_NAME: tuple[tuple[str, ErrorKind], ...] = (
    ("PanicException", ErrorKind.PANIC),
    ("WriteConflict", ErrorKind.CONFLICT),
    ("CommitConflictError", ErrorKind.CONFLICT),
    ("UnsupportedFeatureError", ErrorKind.UNSUPPORTED),
    ("WriteNotSupported", ErrorKind.UNSUPPORTED),
    ("QueryNotSupported", ErrorKind.UNSUPPORTED),
    ("NotImplementedError", ErrorKind.UNSUPPORTED),
)


def error_kind(exc: BaseException) -> ErrorKind:
    """The protocol's kind for an exception an implementation raised: a
    refusal unless its class says otherwise (:data:`KIND_BY_CLASS_NAME`)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    for name, kind in KIND_BY_CLASS_NAME:
        if name in names:
            return kind
    return ErrorKind.REFUSED


def is_implementation_failure(exc: BaseException) -> bool:
    """Any ``Exception``, and a Rust panic surfaced by PyO3 (a ``BaseException``);
    never ``KeyboardInterrupt``, ``SystemExit`` or ``GeneratorExit``."""
    return isinstance(exc, Exception) or any(
        cls.__name__ == "PanicException" and cls.__module__ == "pyo3_runtime" for cls in type(exc).__mro__
    )
