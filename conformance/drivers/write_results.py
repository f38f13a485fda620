"""What one write did: its outcome and the versions it committed.

The other half of the write vocabulary (:mod:`conformance.drivers.writes`
holds the operations and re-exports these names): a driver's ``write``
returns a :class:`WriteResult` (or a bare version number, protocol 1), and
whoever ran the write records a :class:`WriteOutcome`. A write that could
not say which versions it committed leaves them to be found in the
transaction files, where a driver records the operation's token under
:data:`TOKEN_PROPERTY` when its implementation lets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .write_predicates import WriteOpError


class WriteOutcome(str, Enum):
    """How one write ended, as whoever ran it saw it."""

    #: The implementation said it committed.
    ACKNOWLEDGED = "acknowledged"
    #: Refused: a concurrent commit conflicts (:class:`WriteConflict`).
    CONFLICT = "conflict"
    #: Failed for any other reason: nothing of it may become visible.
    ERROR = "error"
    #: It may or may not have committed: the writer died, timed out, or its
    #: implementation cannot tell (a dataset reader decides).
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class WriteResult:
    """What one acknowledged write says it did.

    ``versions``: every version it committed, ascending (a compaction may
    commit two: ReserveFragments, then Rewrite); empty when the
    implementation does not say (the harness then finds them in the
    transaction files). ``read_versions``: the version(s) the implementation
    itself built its commits on, when it knows them (an engine that retried
    internally read more than one). ``detail``: JSON-able facts known only
    once the write ran. A driver's ``write`` returns one of these, or a bare
    version number (protocol 1: one commit, its read version unknown)."""

    versions: tuple[int, ...] = ()
    read_versions: tuple[int, ...] = ()
    outcome: WriteOutcome = WriteOutcome.ACKNOWLEDGED
    detail: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("versions", "read_versions"):
            values = tuple(getattr(self, name))
            if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
                raise WriteOpError(f"write result: {name} must be version numbers, not {values!r}")
            object.__setattr__(self, name, tuple(sorted(set(values))))
        object.__setattr__(self, "outcome", WriteOutcome(self.outcome))
        object.__setattr__(self, "detail", dict(self.detail))

    @property
    def version(self) -> int | None:
        """The last version it committed, None when it did not say."""
        return self.versions[-1] if self.versions else None

    def to_json(self) -> dict[str, Any]:
        return {
            "versions": list(self.versions),
            "read_versions": list(self.read_versions),
            "outcome": self.outcome.value,
            "detail": dict(self.detail),
        }

    @classmethod
    def from_json(cls, document: object) -> WriteResult:
        """The result a worker sent: ``{"version": N}`` (protocol 1) or this
        class's :meth:`to_json` document; :class:`WriteOpError` when neither."""
        if not isinstance(document, Mapping):
            raise WriteOpError(f"a write result is an object, not {type(document).__name__}")
        if "versions" not in document and "version" in document:
            return write_result(document["version"])
        try:
            return cls(
                versions=tuple(document.get("versions", ())),
                read_versions=tuple(document.get("read_versions", ())),
                outcome=WriteOutcome(document.get("outcome", WriteOutcome.ACKNOWLEDGED.value)),
                detail=dict(document.get("detail", {})),
            )
        except (TypeError, ValueError) as exc:
            raise WriteOpError(f"write result {dict(document)!r}: {exc}") from None


def write_result(returned: object) -> WriteResult:
    """What a driver's ``write`` returned, as a :class:`WriteResult`: a bare
    version number is one commit of that version; None says nothing."""
    if isinstance(returned, WriteResult):
        return returned
    if returned is None:
        return WriteResult()
    if isinstance(returned, bool) or not isinstance(returned, int):
        raise WriteOpError(f"write returned {returned!r}: a version number or a WriteResult")
    return WriteResult(versions=(returned,))


#: The transaction property under which a driver records an operation's
#: ``token`` (:class:`_Operation`), when its implementation lets a write
#: record properties.
TOKEN_PROPERTY = "lance-conformance.token"
