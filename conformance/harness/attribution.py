"""Which versions each operation committed, found in the dataset itself.

A writer's word is not evidence: an engine may commit several versions for
one call (a compaction: ReserveFragments, then Rewrite), retry internally,
or not say what it committed at all. So the checker attributes versions to
operations from the transaction files, most trusted source first:

1. the token the writer recorded in the transaction's properties
   (``conformance.drivers.writes.TOKEN_PROPERTY``: the harness names every
   operation by its op id);
2. the versions the writer said it committed (``Attempt.versions``), for a
   version whose transaction carries no other operation's token;
3. for an acknowledged operation that left neither, the unclaimed version
   where its own effect first shows (a column, config value or index that
   only it names, :func:`_located`), else an unclaimed version whose
   transaction's operation is one its kind commits
   (:data:`TRANSACTION_OPERATIONS`) and whose manifest was written within
   the attempt (timestamps of one machine's clock; :data:`CLOCK_SLACK_SECONDS`).

What still has no version is *unresolved*: the row checker looks for its
effects as it does for an operation whose writer died. Where the sources
disagree the disagreement is an anomaly: a writer that said other versions
than its transactions show (*misreported versions*), and an operation that
failed or conflicted whose token is on a committed version (*phantom*).

Pure: the history and the observations in, the attribution out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.drivers.writes import NON_COMMITTING, WriteKind, WriteOutcome

from .anomalies import Anomaly, AnomalyKind, Role, Witness
from .effects import EffectObservations, VersionEffects
from .history import SETUP_WRITER, Attempt
from .observe import Observations, VersionObservation

#: The transaction operations (``Transaction.operation`` oneof names of the
#: upstream ``transaction.proto``) an operation of each kind may commit.
TRANSACTION_OPERATIONS: dict[WriteKind, frozenset[str]] = {
    WriteKind.CREATE: frozenset({"overwrite"}),
    WriteKind.APPEND: frozenset({"append"}),
    WriteKind.OVERWRITE: frozenset({"overwrite"}),
    WriteKind.DELETE: frozenset({"delete"}),
    WriteKind.UPDATE: frozenset({"update"}),
    WriteKind.UPSERT: frozenset({"update", "append"}),
    WriteKind.ADD_COLUMNS: frozenset({"merge", "data_replacement", "update"}),
    WriteKind.DROP_COLUMNS: frozenset({"project", "merge"}),
    WriteKind.ALTER_COLUMNS: frozenset({"project", "merge", "rewrite", "data_replacement"}),
    WriteKind.COMPACT: frozenset({"rewrite", "reserve_fragments"}),
    WriteKind.CREATE_INDEX: frozenset({"create_index"}),
    WriteKind.CONFIG: frozenset({"update_config"}),
    WriteKind.RESTORE: frozenset({"restore"}),
    WriteKind.TAG: frozenset(),
}
#: Kinds one call may commit more than one version of.
MULTI_VERSION_KINDS = frozenset({WriteKind.COMPACT})
#: How far a manifest's timestamp may lie outside its attempt's window.
CLOCK_SLACK_SECONDS = 0.5


@dataclass
class Attribution:
    #: Version -> the attempts that committed it.
    claims: dict[int, list[Attempt]] = field(default_factory=lambda: defaultdict(list))
    #: Op id -> the versions attributed to it.
    versions_of: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    #: Acknowledged attempts no version was found for (their effects decide).
    unresolved: list[Attempt] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)

    def claim(self, version: int, attempt: Attempt) -> None:
        if attempt not in self.claims[version]:
            self.claims[version].append(attempt)
            self.versions_of[attempt.op_id].append(version)


def attribute(
    history: Sequence[Attempt], observations: Observations, effects: EffectObservations | None = None
) -> Attribution:
    """Every attempt's versions (see the module docstring); ``effects``, when
    read, locates an operation by the column, config value or index it names."""
    found = Attribution()
    by_version = {o.version: o for o in observations.versions}
    tokened: dict[str, list[int]] = defaultdict(list)
    for observed in observations.versions:
        if observed.token is not None:
            tokened[observed.token].append(observed.version)
    pending: list[Attempt] = []
    for attempt in history:
        if attempt.kind in NON_COMMITTING:
            continue  # a tag names a version, it commits none
        if attempt.writer == SETUP_WRITER:
            for version in attempt.versions:
                found.claim(version, attempt)
            continue
        mine = tokened.get(attempt.op_id, [])
        if mine:
            _by_token(found, attempt, mine, by_version)
        elif attempt.outcome is WriteOutcome.ACKNOWLEDGED and attempt.versions:
            _by_word(found, attempt, by_version)
        elif attempt.outcome is WriteOutcome.ACKNOWLEDGED:
            pending.append(attempt)
    claimed = set(found.claims) | {v for versions in tokened.values() for v in versions}
    for attempt in sorted(pending, key=lambda a: (a.start, a.op_id)):
        located = _located(attempt, effects)
        if located is not None and located not in claimed:
            found.claim(located, attempt)
            claimed.add(located)
            continue
        candidates = [
            observed.version
            for observed in observations.versions
            if observed.version not in claimed and _fits(observed, attempt)
        ]
        if not candidates:
            found.unresolved.append(attempt)
            continue
        for version in candidates if attempt.kind in MULTI_VERSION_KINDS else candidates[:1]:
            found.claim(version, attempt)
            claimed.add(version)
    return found


#: Transactions a failed operation may leave committed: a compaction reserves
#: fragment ids in a version of its own before its rewrite, which may then lose
#: (upstream ``transaction.md``, ReserveFragments); nothing of it is visible.
EFFECTLESS_OPERATIONS = frozenset({"reserve_fragments"})


def _by_token(
    found: Attribution, attempt: Attempt, versions: list[int], by_version: dict[int, VersionObservation]
) -> None:
    for version in versions:
        found.claim(version, attempt)
    effective = [v for v in versions if by_version[v].operation not in EFFECTLESS_OPERATIONS]
    if effective and attempt.outcome in (WriteOutcome.CONFLICT, WriteOutcome.ERROR):
        found.anomalies.append(
            Anomaly(
                AnomalyKind.PHANTOM,
                Witness.of(
                    [(attempt.op_id, Role.FAILED)],
                    effective,
                    detail=f"{attempt.kind.value} ended in {attempt.outcome.value}, yet its transaction committed",
                ),
            )
        )
    elif attempt.outcome is WriteOutcome.ACKNOWLEDGED and attempt.versions and _contradicts(attempt.versions, versions):
        found.anomalies.append(_misreported(attempt, versions))


def _contradicts(said: Sequence[int], found: Sequence[int]) -> bool:
    """A writer's word contradicts its transactions when it names a version
    they do not, or another last version; naming only the last of several
    (a protocol-1 driver's one number) is short, not wrong."""
    return not set(said) <= set(found) or max(said) != max(found)


def _by_word(found: Attribution, attempt: Attempt, by_version: dict[int, VersionObservation]) -> None:
    """The writer's word, where no other operation's token contradicts it."""
    others = [v for v in attempt.versions if v in by_version and by_version[v].token not in (None, attempt.op_id)]
    if others:
        found.anomalies.append(_misreported(attempt, [], f"versions {others} carry other operations' tokens"))
    for version in attempt.versions:
        if version not in others:
            found.claim(version, attempt)
    if set(others) == set(attempt.versions):
        found.unresolved.append(attempt)  # no version of its own left: its effects decide


def _misreported(attempt: Attempt, versions: list[int], detail: str = "") -> Anomaly:
    said = list(attempt.versions)
    return Anomaly(
        AnomalyKind.MISREPORTED_VERSIONS,
        Witness.of(
            [(attempt.op_id, Role.MISREPORTED)],
            [*said, *versions],
            detail=detail or f"the writer said it committed {said}; the transaction files say {sorted(versions)}",
        ),
    )


def _fits(observed: VersionObservation, attempt: Attempt) -> bool:
    if observed.operation not in TRANSACTION_OPERATIONS.get(attempt.kind, frozenset()):
        return False
    if observed.timestamp is None:
        return False
    return attempt.start - CLOCK_SLACK_SECONDS <= observed.timestamp <= attempt.end + CLOCK_SLACK_SECONDS


def _located(attempt: Attempt, effects: EffectObservations | None) -> int | None:
    """The first version where what only ``attempt`` names appears: a
    column it adds, a config value it sets (values are the operation's own),
    an index it creates; None for other kinds, or when it never appears."""
    if effects is None:
        return None
    previous: VersionEffects | None = None
    for state in effects.versions:
        if _shows(attempt, state) and (previous is None or not _shows(attempt, previous)):
            return state.version
        previous = state
    return None


def _shows(attempt: Attempt, state: VersionEffects) -> bool:
    args = attempt.args
    if attempt.kind is WriteKind.ADD_COLUMNS:
        return bool(args.get("columns")) and set(args["columns"]) <= state.paths()
    if attempt.kind is WriteKind.CONFIG:
        values = [(key, value) for key, value in args.get("values", []) if value is not None]
        return bool(values) and all(state.config.get(key) == value for key, value in values)
    if attempt.kind is WriteKind.CREATE_INDEX:
        return args.get("name") in state.index_names()
    return False
