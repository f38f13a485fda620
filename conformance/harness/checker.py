"""The history checker: a saved history plus every version of the dataset,
and the anomalies that prove committed work was lost.

Pure Python, independent of how the writers ran. :func:`check` reads the
dataset (:mod:`.observe`, :mod:`.effects`); :func:`analyze` is the pure,
linear part. It first attributes versions to operations from the
transaction files (:mod:`.attribution`: the writers' word is checked, never
trusted), then walks the versions once, keeping the visible rows, and asks of
each version whether its change is what the operations committed there do,
each judged on the read version its transaction records (a delete or update
touches the ids visible then, an append adds its ids, an overwrite or restore
sets the whole table). What remains unexplained is an anomaly
(:class:`~.anomalies.AnomalyKind`) with a minimal witness: each operation with
its role, the versions, a few row ids. The schema, config, index and tag
effects are judged by :mod:`.effects` on the same attribution.

An operation whose writer died, or whose versions were not found, is
accepted when its effect becomes visible once, from one version on; a failed
one must never become visible. A commit built on a newer version than the
one its operation was asked to build on is a rebase: the effects judged on
its recorded read version show whether it kept what came between; when they
do not, the anomalies are grouped under one *blind rebase*. Anomalies that
follow from an earlier one (the same operation's commit, the same rows) are
its consequences, so that one bug reads as one finding.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from conformance.drivers.writes import WriteKind, WriteOutcome
from conformance.validator.engine import validate
from conformance.validator.facts.pylance_departures import pylance_departure
from conformance.validator.registry import Severity

from .anomalies import Anomaly, AnomalyKind, Role, Witness, every_anomaly, grouped, merged
from .attribution import Attribution, attribute
from .effects import EffectObservations, effect_anomalies, observe_effects
from .history import Attempt
from .observe import Observations, VersionObservation, observe, pylance_disagreements
from .spec import RunSpec
from .visibility import HASH_MASK, Expected, Intervals, row_hash


@dataclass
class CheckReport:
    anomalies: list[Anomaly]
    versions: int
    attempts: list[Attempt] = field(default_factory=list)
    #: What pylance is known to do against the spec (not anomalies of the run).
    known_departures: list[Anomaly] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.anomalies

    def names(self) -> set[str]:
        """The kinds found, the consequences' included."""
        return {a.name for a in every_anomaly(self.anomalies)}

    def count(self) -> int:
        """Every anomaly, consequences included (what the reports count)."""
        return sum(a.count() for a in self.anomalies)


def check(
    history: list[Attempt], spec: RunSpec, *, validate: bool = True, cross_check: bool | None = None
) -> CheckReport:
    """Check ``history`` against every version of ``spec.uri``: the rows
    with the reference reader, the conflict rules, the validator on every
    version (``validate``) and, for pylance and the reference as writers,
    pylance's rows at every version (``cross_check``)."""
    observations = observe(spec.uri, spec.storage_options)
    effects = observe_effects(spec.uri, spec.storage_options)
    if validate:
        observations.validator_errors = _validator_errors(spec)
    if cross_check if cross_check is not None else spec.writer in ("pylance", "reference"):
        observations.disagreements = pylance_disagreements(spec.uri, spec.storage_options, observations)
    anomalies, known = split_known_departures(analyze(history, observations, effects))
    return CheckReport(anomalies, len(observations.versions), list(history), known)


def split_known_departures(anomalies: list[Anomaly]) -> tuple[list[Anomaly], list[Anomaly]]:
    """The anomalies, and apart from them the commits of pylance's over a
    conflict rule it is known to depart from
    (:mod:`conformance.validator.facts.pylance_departures`)."""
    known = [a for a in anomalies if _is_known_departure(a)]
    return [a for a in anomalies if a not in known], known


def _validator_errors(spec: RunSpec) -> list[tuple[int | None, str, str]]:
    report = validate(spec.uri, all_versions=True, storage_options=spec.storage_options or None)
    return [(f.version, f.rule, f.message) for f in report.findings if f.severity is Severity.ERROR]


# -- the pure, linear part ------------------------------------------------------------


_KNOWN_MARK = "known departure: "
#: The most versions an operation whose read version is unknown is tried on.
MAX_READ_WINDOW = 32


class _Analysis:
    def __init__(self, history: list[Attempt], observations: Observations, attribution: Attribution):
        self.observations = observations
        self.anomalies: list[Anomaly] = []
        #: The row ids of each anomaly, all of them (its witness keeps a few): what grouping follows.
        self.full_rows: list[frozenset[int]] = []
        self.claims: dict[int, list[Attempt]] = attribution.claims
        #: Acknowledged attempts whose versions were not found: their effects decide.
        self.unresolved: set[str] = {a.op_id for a in attribution.unresolved}
        #: (op id, version) -> the version its operation was to build on and the one its commit records.
        self.rebases: dict[tuple[str, int], tuple[int, int]] = {}
        self.unsure_whole: list[Attempt] = []
        self._pending_actual: Counter = Counter()
        self.origin_of_id: dict[int, Attempt] = {}
        self.origin_of_value: dict[int, Attempt] = {}
        #: id -> indeterminate or failed delete/update/upsert attempts naming it.
        self.unsure_touching: dict[int, list[Attempt]] = defaultdict(list)
        for attempt in history:
            if attempt.kind in (WriteKind.APPEND, WriteKind.OVERWRITE, WriteKind.CREATE):
                for row_id in attempt.args.get("ids", []):
                    self.origin_of_id[row_id] = attempt
            if attempt.kind is WriteKind.UPSERT:
                for row_id in attempt.args.get("new_ids", []):
                    self.origin_of_id[row_id] = attempt
            if _updates(attempt.kind) and "value" in attempt.args:
                self.origin_of_value[attempt.args["value"]] = attempt
            if self.unsure(attempt) and attempt.kind in (WriteKind.OVERWRITE, WriteKind.RESTORE):
                self.unsure_whole.append(attempt)
            if (self.unsure(attempt) or attempt.outcome is not WriteOutcome.ACKNOWLEDGED) and (
                attempt.kind is WriteKind.DELETE or _updates(attempt.kind)
            ):
                for row_id in attempt.args.get("ids", []):
                    self.unsure_touching[row_id].append(attempt)
        self.count: Counter = Counter()  # id -> visible copies
        self.value: dict[int, int] = {}
        #: id -> the values its visible copies hold, with their counts.
        self.copies: dict[int, Counter] = defaultdict(Counter)
        self.rows: Counter = Counter()  # (id, value) -> copies
        self.row_id_count: Counter = Counter()
        self.intervals = Intervals()
        self.value_intervals: dict[tuple[int, int], list[list]] = defaultdict(list)
        self.deleted_by: dict[int, Attempt] = {}
        self.absorbed: set[str] = set()
        #: Keys already reported as visible more than once in this version.
        self.duplicates_reported: set[int] = set()
        #: Key -> the index in ``anomalies`` of its duplicate anomaly.
        self.duplicate_anomaly: dict[int, int] = {}
        self.fragment_signature: dict[int, tuple[str, int]] = {}
        #: The multiset hash of the visible rows, now and after each version.
        self.hash = 0
        self.hashes: list[int] = []

    def unsure(self, attempt: Attempt) -> bool:
        """Whether ``attempt`` may have committed a version not yet known:
        its writer died, or its versions were not found."""
        return attempt.outcome is WriteOutcome.UNKNOWN or attempt.op_id in self.unresolved

    def report(
        self,
        kind: AnomalyKind,
        roles: Iterable[tuple[Attempt | None, Role]],
        versions: Iterable[int],
        rows: Iterable[int],
        detail: str = "",
    ) -> None:
        rows = frozenset(rows)
        named = [(attempt.op_id, role) for attempt, role in roles if attempt is not None]
        self.anomalies.append(Anomaly(kind, Witness.of(named, versions, rows, detail)))
        self.full_rows.append(rows)

    def committed_by(self, claimers: Iterable[Attempt]) -> list[tuple[Attempt | None, Role]]:
        return [(attempt, Role.COMMITTED) for attempt in claimers]

    # -- expectations ------------------------------------------------------------

    def _expect(self, expected: Expected, attempt: Attempt, read: int | None) -> None:
        """What ``attempt`` committed at this version changes, judged on ``read``."""
        args = attempt.args
        kind = attempt.kind
        if kind is WriteKind.APPEND:
            for row_id in args.get("ids", []):
                expected.delta[(row_id, 0)] += 1
                expected.adds[(row_id, 0)] = attempt
        elif kind is WriteKind.DELETE or _updates(kind):
            new_value = args.get("value")
            for row_id in args.get("ids", []):
                if self.intervals.visible_at(row_id, read) and self.count[row_id] > 0:
                    # Every visible copy of the id is deleted or updated.
                    for old_value, copies in self.copies[row_id].items():
                        old = (row_id, old_value)
                        expected.delta[old] -= copies
                        expected.removes[old] = attempt
                        if kind is not WriteKind.DELETE:
                            expected.delta[(row_id, new_value)] += copies
                            expected.adds[(row_id, new_value)] = attempt
                elif kind is WriteKind.UPSERT and not self.intervals.visible_at(row_id, read):
                    expected.delta[(row_id, new_value)] += 1
                    expected.adds[(row_id, new_value)] = attempt
        elif kind in (WriteKind.OVERWRITE, WriteKind.CREATE):
            expected.whole = (Counter({(row_id, 0): 1 for row_id in args.get("ids", [])}), attempt)
            expected.whole_hash = sum(row_hash(key) for key in expected.whole[0]) & HASH_MASK
        elif kind is WriteKind.RESTORE and "version" in args and 0 < args["version"] <= len(self.hashes):
            target = args["version"]
            expected.whole_hash = self.hashes[target - 1]
            expected.whole_later = (lambda: self._state_at(target), attempt)

    def _state_at(self, version: int) -> Counter:
        """The rows visible at ``version`` (for a restore: rare, so a pass
        over every row ever seen is affordable)."""
        state: Counter = Counter()
        for key, spans in self.value_intervals.items():
            for start, end in spans:
                if start <= version and (end is None or version < end):
                    state[key] += 1
        return state

    # -- one version --------------------------------------------------------------

    def version(self, observed: VersionObservation) -> None:
        v = observed.version
        self.duplicates_reported = set()
        actual: Counter = Counter()
        for row_id, value, _ in observed.added:
            actual[(row_id, value)] += 1
        for row_id, value, _ in observed.removed:
            actual[(row_id, value)] -= 1
        actual = Counter({k: n for k, n in actual.items() if n})
        claimers = list(self.claims.get(v, []))
        candidates = {attempt.op_id: self._reads_of(attempt, observed) for attempt in claimers}
        reads = {op_id: options[0] for op_id, options in candidates.items()}
        expected = self._expected(claimers, reads)
        unexplained = self._unexplained(actual, expected)
        # An operation whose read version is not known is judged on the one
        # of its possible reads that explains the version, if any does.
        for op_id, options in candidates.items():
            for read in options[1:] if unexplained else ():
                trial = self._expected(claimers, {**reads, op_id: read})
                if not self._unexplained(actual, trial):
                    reads[op_id], expected, unexplained = read, trial, Counter()
                    break
        self._pending_actual = actual
        if unexplained:
            # Operations whose writer died or whose versions were not found
            # may have committed here, once: taken as having done so when
            # that explains more of the version than without them.
            for attempt in self._candidates(unexplained, v):
                trial_reads = {**reads, attempt.op_id: self._reads_of(attempt, observed)[0]}
                trial = self._expected([*claimers, attempt], trial_reads)
                remaining = self._unexplained(actual, trial)
                if sum(map(abs, remaining.values())) < sum(map(abs, unexplained.values())):
                    self.absorbed.add(attempt.op_id)
                    claimers.append(attempt)
                    self.claims.setdefault(v, []).append(attempt)
                    reads, expected, unexplained = trial_reads, trial, remaining
        for key, surplus in sorted(unexplained.items()):
            self._classify(key, surplus, expected, claimers, v)
        copies_before = {row_id: self.count.get(row_id, 0) for row_id, _, _ in observed.added}
        self._apply(observed, claimers)
        self._fragments(observed, claimers)
        self._duplicates(copies_before, claimers, v)

    def _reads_of(self, attempt: Attempt, observed: VersionObservation) -> list[int | None]:
        """The versions ``attempt``'s commit at ``observed`` may have been
        computed on, the likeliest first: the last read version its
        implementation reported, or the one it was asked to build on; else
        (an engine that reads for itself and does not say) each version from
        the one the harness saw before the call to the one the transaction
        records. A transaction recording a newer read version than the one
        the operation was computed on is a rebase, noted for the grouping of
        anomalies."""
        recorded = observed.read_version
        known = max(attempt.engine_read_versions, default=None)
        if known is None and attempt.read_asked:
            known = attempt.read_version
        if known is not None:
            if recorded is not None and recorded > known:
                self.rebases[(attempt.op_id, observed.version)] = (known, recorded)
            return [known]
        seen = attempt.read_version
        if seen is None or recorded is None or recorded <= seen:
            return [seen if seen is not None else recorded]
        return list(range(seen, min(recorded, seen + MAX_READ_WINDOW) + 1))

    def _expected(self, claimers: list[Attempt], reads: Mapping[str, int | None]) -> Expected:
        expected = Expected()
        for attempt in claimers:
            self._expect(expected, attempt, reads[attempt.op_id])
        return expected

    def _duplicates(self, copies_before: Mapping[int, int], claimers: list[Attempt], v: int) -> None:
        """A key visible more than once, where this version added a copy
        (concurrent upserts of the same new key, an append seen twice): one
        anomaly per key, its witness every operation whose row is visible
        under it and the versions those rows appeared in."""
        for row_id, before in sorted(copies_before.items()):
            now = self.count.get(row_id, 0)
            if now <= 1 or now <= before or row_id in self.duplicates_reported:
                continue
            origins: list[Attempt | None] = []
            since = [v]
            for value in self.copies.get(row_id, {}):
                origins.append(self.origin_of_value.get(value) if value else self.origin_of_id.get(row_id))
                spans = self.value_intervals.get((row_id, value))
                if spans:
                    since.append(spans[-1][0])
            adders = [a for a in claimers if row_id in a.args.get("ids", [])]
            earlier = self.duplicate_anomaly.get(row_id)
            roles = [(a, Role.WROTE_COPY) for a in [*origins, *adders]]
            self.report(AnomalyKind.DUPLICATE, roles, since, [row_id], f"key {row_id} visible {now} times")
            if earlier is not None:
                # One anomaly per key: the latest witness holds every copy.
                self.anomalies[earlier] = self.anomalies.pop()
                self.full_rows[earlier] = self.full_rows.pop()
            else:
                self.duplicate_anomaly[row_id] = len(self.anomalies) - 1

    def _unexplained(self, actual: Counter, expected: Expected) -> Counter:
        if expected.whole_hash is not None:
            hashed = (self.hash + sum(row_hash(key) * n for key, n in actual.items())) & HASH_MASK
            if hashed == expected.whole_hash:
                return Counter()
            if expected.whole is None and expected.whole_later is not None:
                build, attempt = expected.whole_later
                expected.whole = (build(), attempt)  # type: ignore[operator]
        if expected.whole is not None:
            target, _ = expected.whole
            after = self.rows.copy()
            after.update(actual)
            difference = Counter(after)
            difference.subtract(target)
        else:
            difference = Counter(actual)
            difference.subtract(expected.delta)
        return Counter({k: n for k, n in difference.items() if n})

    def _candidates(self, unexplained: Counter, version: int) -> list[Attempt]:
        """Indeterminate operations that may have committed ``version`` (read
        before it, not seen yet): the origins of rows that appeared, else the
        latest-read one touching each row that vanished."""
        found: dict[str, Attempt] = {}

        def possible(attempt: Attempt | None) -> bool:
            return (
                attempt is not None
                and self.unsure(attempt)
                and attempt.op_id not in self.absorbed
                and (attempt.read_version or 0) < version
            )

        for (row_id, value), n in unexplained.items():
            if n > 0:
                origin = self.origin_of_value.get(value) if value else self.origin_of_id.get(row_id)
                if origin is not None and possible(origin):
                    found[origin.op_id] = origin
        if found:
            return list(found.values())
        for (row_id, _), n in unexplained.items():
            if n < 0:
                options = [a for a in self.unsure_touching.get(row_id, []) if possible(a)]
                if options:
                    latest = max(options, key=lambda a: a.read_version or 0)
                    found[latest.op_id] = latest
        if found:
            return list(found.values())
        # An overwrite or a restore whose writer died: does it explain the whole table?
        for attempt in self.unsure_whole:
            if possible(attempt):
                trial = Expected()
                self._expect(trial, attempt, attempt.read_version)
                if not self._unexplained(self._pending_actual, trial):
                    return [attempt]
        return []

    def _classify(self, key: tuple[int, int], n: int, expected: Expected, claimers, v: int) -> None:
        row_id, value = key
        committed = self.committed_by(claimers)
        if n < 0:  # a row expected but missing, or gone without cause
            op = expected.adds.get(key)
            if op is not None:
                kind = AnomalyKind.LOST_UPDATE if _updates(op.kind) and value else AnomalyKind.LOST_APPEND
                self.report(kind, [(op, Role.LOST)], [v, *op.versions], [row_id], "its row is missing from its version")
                return
            failed = [a for a in self.unsure_touching.get(row_id, []) if a.outcome is not WriteOutcome.UNKNOWN]
            failed = [a for a in failed if a.outcome is not WriteOutcome.ACKNOWLEDGED]
            if failed:
                roles = [*((a, Role.FAILED) for a in failed), *committed]
                self.report(AnomalyKind.PHANTOM, roles, [v], [row_id], "a failed delete or update took effect")
                return
            origin = self.origin_of_value.get(value) if value else self.origin_of_id.get(row_id)
            updated = origin is not None and _updates(origin.kind) and value
            kind = AnomalyKind.LOST_UPDATE if updated else AnomalyKind.LOST_APPEND
            self.report(kind, [(origin, Role.LOST), *committed], [v], [row_id], f"row ({row_id}, {value}) vanished")
            return
        # n > 0: a row present that should not be
        remover = expected.removes.get(key)
        if remover is not None:
            kind = AnomalyKind.LOST_DELETE if remover.kind is WriteKind.DELETE else AnomalyKind.LOST_UPDATE
            self.report(kind, [(remover, Role.LOST)], [v], [row_id], f"row ({row_id}, {value}) is still visible")
            return
        if expected.whole is not None and self.rows[key] + n > 0 and key not in expected.whole[0]:
            if row_id in self.deleted_by or self.count[row_id] > 0:
                whole_op = expected.whole[1]
                roles = [(self.deleted_by.get(row_id), Role.DELETED), (whole_op, Role.COMMITTED)]
                detail = f"{whole_op.kind.value} left row ({row_id}, {value})"
                self.report(AnomalyKind.RESURRECTED_DELETE, roles, [v], [row_id], detail)
                return
        origin = self.origin_of_value.get(value) if value else self.origin_of_id.get(row_id)
        if origin is not None and origin.outcome in (WriteOutcome.CONFLICT, WriteOutcome.ERROR):
            detail = f"{origin.kind.value} {origin.outcome.value} yet visible"
            self.report(AnomalyKind.PHANTOM, [(origin, Role.FAILED), *committed], [v], [row_id], detail)
        elif self.count[row_id] + n > 1 or (self.count[row_id] > 0 and value == self.value.get(row_id)):
            self.duplicates_reported.add(row_id)
            roles = [(origin, Role.WROTE_COPY), *committed]
            self.report(AnomalyKind.DUPLICATE, roles, [v], [row_id], f"id {row_id} visible more than once")
        elif row_id in self.deleted_by and self.count[row_id] == 0:
            roles = [(self.deleted_by[row_id], Role.DELETED), *committed]
            self.report(AnomalyKind.RESURRECTED_DELETE, roles, [v], [row_id], f"row ({row_id}, {value}) came back")
        elif origin is not None and origin.op_id in self.absorbed:
            self.duplicates_reported.add(row_id)
            roles = [(origin, Role.WROTE_COPY), *committed]
            self.report(AnomalyKind.DUPLICATE, roles, [v], [row_id], "an unacknowledged operation seen twice")
        elif origin is not None and _updates(origin.kind) and value:
            roles = [(origin, Role.ORIGIN), *committed]
            self.report(AnomalyKind.LOST_UPDATE, roles, [v], [row_id], f"value {value} came back")
        else:
            roles = [(origin, Role.ORIGIN), *committed]
            self.report(AnomalyKind.UNEXPLAINED, roles, [v], [row_id], f"row ({row_id}, {value}) appeared")

    def _apply(self, observed: VersionObservation, claimers: list[Attempt]) -> None:
        v = observed.version
        for row_id, value, _ in observed.added:
            self.hash += row_hash((row_id, value))
        for row_id, value, _ in observed.removed:
            self.hash -= row_hash((row_id, value))
        self.hash &= HASH_MASK
        self.hashes.extend([self.hash] * (v - len(self.hashes)))
        deleting = {a.op_id: a for a in claimers if a.kind is WriteKind.DELETE}
        for row_id, value, stable in observed.removed:
            self.rows[(row_id, value)] -= 1
            if self.rows[(row_id, value)] <= 0:
                del self.rows[(row_id, value)]
                spans = self.value_intervals[(row_id, value)]
                if spans and spans[-1][1] is None:
                    spans[-1][1] = v
            self.count[row_id] -= 1
            copies = self.copies[row_id]
            copies[value] -= 1
            if copies[value] <= 0:
                del copies[value]
            if not copies:
                del self.copies[row_id]
            if stable is not None:
                self.row_id_count[stable] -= 1
        for row_id, value, stable in observed.added:
            if self.rows[(row_id, value)] == 0:
                self.value_intervals[(row_id, value)].append([v, None])
            self.rows[(row_id, value)] += 1
            self.count[row_id] += 1
            self.copies[row_id][value] += 1
            self.value[row_id] = value
            if stable is not None:
                self.row_id_count[stable] += 1
                if self.row_id_count[stable] == 2:
                    self.report(
                        AnomalyKind.ROW_ID_NOT_UNIQUE,
                        self.committed_by(claimers),
                        [v],
                        [row_id],
                        f"stable row id {stable}",
                    )
        touched = {r[0] for r in observed.removed} | {r[0] for r in observed.added}
        for row_id in touched:
            now = self.count[row_id]
            was_visible = self.intervals.ends.get(row_id, [0])[-1] is None and bool(self.intervals.starts.get(row_id))
            if now <= 0 and was_visible:
                self.intervals.disappear(row_id, v)
                for attempt in deleting.values():
                    if row_id in attempt.args.get("ids", []):
                        self.deleted_by[row_id] = attempt
            elif now > 0:
                if not was_visible:
                    self.intervals.appear(row_id, v)
                self.deleted_by.pop(row_id, None)
            if now <= 0:
                self.count.pop(row_id, None)
                self.value.pop(row_id, None)

    def _fragments(self, observed: VersionObservation, claimers: list[Attempt]) -> None:
        for fragment_id, signature in observed.new_fragments:
            seen = self.fragment_signature.get(fragment_id)
            if seen is None:
                self.fragment_signature[fragment_id] = (signature, observed.version)
            elif seen[0] != signature:
                self.report(
                    AnomalyKind.FRAGMENT_ID_REUSE,
                    self.committed_by(claimers),
                    [seen[1], observed.version],
                    [],
                    f"fragment id {fragment_id} holds other rows than at version {seen[1]}",
                )


def _updates(kind: WriteKind) -> bool:
    """Whether ``kind`` writes new values of existing keys (an update, an upsert)."""
    return kind in (WriteKind.UPDATE, WriteKind.UPSERT)


#: What an acknowledged operation lost when none of its versions exists.
_LOST_WHEN_MISSING = {WriteKind.APPEND: AnomalyKind.LOST_APPEND, WriteKind.DELETE: AnomalyKind.LOST_DELETE}


def analyze(
    history: list[Attempt], observations: Observations, effects: EffectObservations | None = None
) -> list[Anomaly]:
    """The anomalies of ``history`` given what every version holds (pure;
    one pass over the versions, each costing what it changed), and, with
    ``effects``, of its schema, config, index and tag effects; grouped: each
    root anomaly with the anomalies that follow from it."""
    attribution = attribute(history, observations, effects)
    analysis = _Analysis(history, observations, attribution)
    observed_versions = [o.version for o in observations.versions]
    expected_versions = list(range(1, len(observed_versions) + 1))
    if observed_versions != expected_versions or observations.unreadable:
        missing = sorted(set(range(1, max(observed_versions, default=0) + 1)) - set(observed_versions))
        analysis.report(
            AnomalyKind.NON_LINEAR_VERSIONS,
            [],
            missing + [v for v, _ in observations.unreadable],
            [],
            "; ".join(m for _, m in observations.unreadable)[:300],
        )
    for observed in observations.versions:
        analysis.version(observed)
    last = observed_versions[-1] if observed_versions else 0
    present = set(observed_versions)
    for version, attempts in sorted(analysis.claims.items()):
        if version > last or version not in present:
            for attempt in attempts:
                kind = _LOST_WHEN_MISSING.get(
                    attempt.kind, AnomalyKind.LOST_UPDATE if _updates(attempt.kind) else AnomalyKind.LOST_COMMIT
                )
                detail = "acknowledged version missing"
                analysis.report(kind, [(attempt, Role.LOST)], [version], attempt.args.get("ids", []), detail)
    for attempt in history:
        if attempt.op_id in analysis.unresolved and attempt.op_id not in analysis.absorbed and _adds_rows(attempt):
            detail = "acknowledged, but no version holds its rows"
            versions = attempt.versions or [v for v in observed_versions if v > (attempt.read_version or 0)][:1]
            analysis.report(AnomalyKind.LOST_APPEND, [(attempt, Role.LOST)], versions, _added_ids(attempt), detail)
    for conflict in observations.conflicts:
        departure = pylance_departure(conflict.requirement_ids, conflict.writer_library)
        mark = (
            f'{_KNOWN_MARK}{departure.behaviour} (docs/spec-discrepancies.md, Conflict matrix, "{departure.entry}"); '
            if departure
            else ""
        )
        roles = [
            *((a, Role.CONFLICTING) for a in analysis.claims.get(conflict.version, [])),
            *((a, Role.COMMITTED) for a in analysis.claims.get(conflict.other, [])),
        ]
        detail = f"{mark}{conflict.outcome}: {conflict.reason}"
        analysis.report(AnomalyKind.INCOMPATIBLE_COMMIT, roles, [conflict.other, conflict.version], [], detail)
    for found_in, rule, message in observations.validator_errors:
        analysis.report(
            AnomalyKind.VALIDATOR_NOT_CLEAN,
            analysis.committed_by(analysis.claims.get(found_in or 0, [])),
            [found_in] if found_in else [],
            [],
            f"{rule}: {message}"[:300],
        )
    for version, detail in observations.disagreements:
        committed = analysis.committed_by(analysis.claims.get(version, []))
        analysis.report(AnomalyKind.READER_DISAGREEMENT, committed, [version], [], detail)
    judged = effect_anomalies(history, effects, analysis.claims) if effects is not None else []
    found = [*attribution.anomalies, *analysis.anomalies, *judged]
    rows = [*(frozenset() for _ in attribution.anomalies), *analysis.full_rows, *(frozenset() for _ in judged)]
    # pylance's known departures stay findings of their own (split off by check), never grouped.
    known = [i for i, a in enumerate(found) if _is_known_departure(a)]
    rest = [(a, r) for i, (a, r) in enumerate(zip(found, rows, strict=True)) if i not in known]
    return [*grouped(merged(rest), analysis.rebases), *(found[i] for i in known)]


def _is_known_departure(anomaly: Anomaly) -> bool:
    return anomaly.kind is AnomalyKind.INCOMPATIBLE_COMMIT and anomaly.witness.detail.startswith(_KNOWN_MARK)


def _adds_rows(attempt: Attempt) -> bool:
    return attempt.kind in (WriteKind.APPEND, WriteKind.OVERWRITE) or (
        attempt.kind is WriteKind.UPSERT and bool(attempt.args.get("new_ids"))
    )


def _added_ids(attempt: Attempt) -> list[int]:
    return list(attempt.args.get("new_ids" if attempt.kind is WriteKind.UPSERT else "ids", []))


def summary_counts(history: Iterable[Attempt]) -> Mapping[str, int]:
    counts = Counter(a.outcome.value for a in history if a.writer >= 0)
    return {outcome.value: counts.get(outcome.value, 0) for outcome in WriteOutcome}
