"""What the history checker reports: the kinds of anomaly, the roles the
operations of a witness play, and the findings themselves.

Every kind is defined here once (:class:`AnomalyKind`); the checker of row
effects (:mod:`.checker`), the checker of schema, config, index and tag
effects (:mod:`.effects`), the reports and the faulty writers' table all
import it. An :class:`Anomaly` names its kind, a minimal :class:`Witness`
(each operation with its :class:`Role`, the versions where it shows, a few
row ids) and the anomalies that follow from it (``consequences``), so that
one bug reads as one finding with its effects under it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

#: Rows kept in one witness: enough to find them, few enough to read.
WITNESS_ROWS = 5


class AnomalyKind(str, enum.Enum):
    """Each way a history can prove that committed work went wrong."""

    # -- rows
    LOST_APPEND = "lost append"
    LOST_DELETE = "lost delete"
    RESURRECTED_DELETE = "resurrected delete"
    LOST_UPDATE = "lost update"
    DUPLICATE = "duplicate"
    PHANTOM = "phantom from a failed commit"
    UNEXPLAINED = "unexplained change"
    ROW_ID_NOT_UNIQUE = "stable row id not unique"
    # -- the schema, config, indices and tags
    LOST_COLUMN = "lost column"
    RESURRECTED_COLUMN = "resurrected column"
    LOST_ALTERATION = "lost alteration"
    LOST_CONFIG = "lost config"
    LOST_INDEX = "lost index"
    INDEX_BEYOND_FRAGMENTS = "index over missing fragments"
    LOST_TAG = "lost tag"
    # -- commits
    BLIND_REBASE = "blind rebase"
    INCOMPATIBLE_COMMIT = "incompatible commit"
    LOST_COMMIT = "lost commit"
    MISREPORTED_VERSIONS = "misreported versions"
    FRAGMENT_ID_REUSE = "fragment-id reuse"
    NON_LINEAR_VERSIONS = "versions not gapless and linear"
    # -- the dataset as readers see it
    VALIDATOR_NOT_CLEAN = "validator not clean"
    READER_DISAGREEMENT = "readers disagree"


class Role(str, enum.Enum):
    """What an operation did in the story an anomaly tells."""

    #: Its acknowledged effect is missing (the victim).
    LOST = "lost"
    #: It committed the version where the effect went missing or came back.
    COMMITTED = "committed the version where it shows"
    #: It deleted the row (or dropped the column) that came back.
    DELETED = "deleted"
    #: It failed or conflicted, yet its effect is visible.
    FAILED = "failed, yet visible"
    #: It wrote one of the copies of a duplicated key.
    WROTE_COPY = "wrote a copy"
    #: It committed on a read version newer than it started from, and undid what came between.
    REBASED = "rebased blindly"
    #: It committed a version the conflict rules forbid.
    CONFLICTING = "committed over a conflict"
    #: It wrote the value or row seen.
    ORIGIN = "wrote it"
    #: Its writer said one thing, the transaction files another.
    MISREPORTED = "misreported"


@dataclass(frozen=True)
class Witness:
    """The least that shows an anomaly: the operations with their roles, the
    versions where it shows, a few row ids and one sentence of detail."""

    roles: Mapping[str, Role]
    versions: tuple[int, ...]
    rows: tuple[int, ...] = ()
    detail: str = ""

    @classmethod
    def of(
        cls,
        roles: Iterable[tuple[str, Role]],
        versions: Iterable[int],
        rows: Iterable[int] = (),
        detail: str = "",
    ) -> Witness:
        """A witness with its parts in order: the first role named for an
        operation stands, versions ascending, at most :data:`WITNESS_ROWS` rows."""
        ordered: dict[str, Role] = {}
        for op_id, role in roles:
            ordered.setdefault(op_id, role)
        return cls(
            dict(sorted(ordered.items())), tuple(sorted(set(versions))), tuple(sorted(set(rows)))[:WITNESS_ROWS], detail
        )

    @property
    def op_ids(self) -> list[str]:
        return list(self.roles)

    def to_json(self) -> dict:
        return {
            "op_ids": self.op_ids,
            "roles": {op_id: role.value for op_id, role in self.roles.items()},
            "versions": list(self.versions),
            "rows": list(self.rows),
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Anomaly:
    kind: AnomalyKind
    witness: Witness
    #: Anomalies that follow from this one (the same operation's commit, the rows it touched).
    consequences: tuple[Anomaly, ...] = field(default=())

    @property
    def name(self) -> str:
        """The kind's name, as reports print it."""
        return self.kind.value

    def with_consequences(self, more: Iterable[Anomaly]) -> Anomaly:
        return Anomaly(self.kind, self.witness, (*self.consequences, *more))

    def count(self) -> int:
        """This anomaly and every consequence under it."""
        return 1 + sum(c.count() for c in self.consequences)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "witness": self.witness.to_json(),
            "sentence": sentence(self),
            "consequences": [c.to_json() for c in self.consequences],
        }


def sentence(anomaly: Anomaly) -> str:
    """One sentence a person reads: the kind, who did what, where it shows."""
    w = anomaly.witness
    parts = [f"{anomaly.name.capitalize()}"]
    if w.roles:
        parts.append(": " + "; ".join(f"{op_id} {role.value}" for op_id, role in w.roles.items()))
    if w.versions:
        label = "version" if len(w.versions) == 1 else "versions"
        parts.append(f" (at {label} {', '.join(str(v) for v in w.versions)})")
    if w.rows:
        parts.append(f"; rows {', '.join(str(r) for r in w.rows)}")
    if w.detail:
        parts.append(f"; {w.detail}")
    return "".join(parts) + "."


def every_anomaly(anomalies: Iterable[Anomaly]) -> Iterator[Anomaly]:
    """Each anomaly, then its consequences, depth first."""
    for anomaly in anomalies:
        yield anomaly
        yield from every_anomaly(anomaly.consequences)


# -- one bug, one finding ----------------------------------------------------------------


def merged(found: list[tuple[Anomaly, frozenset[int]]]) -> list[tuple[Anomaly, frozenset[int]]]:
    """One anomaly per kind, operations and versions, its rows together
    (the witness stays minimal), each with every row id it concerns."""
    merged: dict[tuple, tuple[Anomaly, frozenset[int]]] = {}
    for anomaly, its_rows in found:
        w = anomaly.witness
        key = (anomaly.kind, tuple(w.roles.items()), w.versions)
        seen = merged.get(key)
        if seen is None:
            merged[key] = (anomaly, its_rows)
        else:
            all_rows = seen[1] | its_rows
            witness = Witness.of(w.roles.items(), w.versions, all_rows, seen[0].witness.detail)
            merged[key] = (Anomaly(anomaly.kind, witness), all_rows)
    return list(merged.values())


def grouped(
    found: list[tuple[Anomaly, frozenset[int]]], rebases: Mapping[tuple[str, int], tuple[int, int]]
) -> list[Anomaly]:
    """The root anomalies, each with its consequences.

    In version order, an anomaly follows from an earlier root when it shares
    a row with the root or its consequences, or when the same operation
    committed the version both show at. A root whose committing operation
    rebased blindly at that version (its commit records a newer read version
    than it was to build on) becomes the consequence of one *blind rebase*
    anomaly naming it."""
    ordered = sorted(found, key=lambda item: (min(item[0].witness.versions, default=0), item[0].kind.value))
    roots: list[list] = []  # [anomaly, rows, committers at versions, consequences, the root's own committers]
    for anomaly, rows in ordered:
        committers = {
            (op_id, version)
            for op_id, role in anomaly.witness.roles.items()
            if role in (Role.COMMITTED, Role.CONFLICTING)
            for version in anomaly.witness.versions
        }
        parent = next((root for root in roots if (rows and rows & root[1]) or committers & root[2]), None)
        if parent is None:
            roots.append([anomaly, set(rows), set(committers), [], committers])
        else:
            parent[1] |= rows
            parent[2] |= committers
            parent[3].append(anomaly)
    result = []
    for anomaly, _, _, consequences, own_committers in roots:
        root = anomaly.with_consequences(consequences)
        rebased = sorted((key, rebases[key]) for key in own_committers if key in rebases)
        if rebased:
            (op_id, version), (started, recorded) = rebased[0]
            detail = (
                f"{op_id} was to build on version {started}; its commit at version {version} records read version "
                f"{recorded}, and did not keep what came between"
            )
            witness = Witness.of([(op_id, Role.REBASED)], [started, recorded, version], (), detail)
            root = Anomaly(AnomalyKind.BLIND_REBASE, witness, (root,))
        result.append(root)
    return result
