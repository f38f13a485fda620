"""The effects of a write beside its rows: the schema, the table config, the
indices and the tags, observed at every version and judged against the
operations that committed each version.

:func:`observe_effects` reads every version's manifest with the reference
reader (no data file is opened): each field (id, dotted path, logical type,
nullability), ``Manifest.config``, each index segment (name, uuid, field ids,
fragment bitmap, ``dataset_version``) and the fragment ids; then the tags.
:func:`effect_anomalies` is pure: it walks the versions in order, keeping the
effects acknowledged operations committed as facts that must hold from the
version an operation committed until a version claimed by an operation that
legitimately changes them. A fact that breaks is reported once, with the
roles of the operations (:mod:`.anomalies`), and then forgotten.

What changes a fact legitimately (measured on pylance 14.0.2 and the
reference writer, which agree):

- an added or renamed column stays (else: lost column, lost alteration) until
  a drop of it, a rename of it (the fact follows the new name), an overwrite
  or a restore;
- a dropped column stays away (else: resurrected column) until an add or a
  rename brings the name back, an overwrite or a restore;
- a config key keeps the value set, or stays removed (else: lost config),
  until a config write of that key or a restore; an overwrite keeps the
  config (requirement ``transaction.overwrite-replaces-table``);
- an index of that name stays (else: lost index) until an overwrite, a drop
  of a column it indexes, or a restore;
- a tag names the version it was made on (else: lost tag): the vocabulary
  deletes no tag.

Upstream ``docs/src/format/table/schema.md`` ("Field IDs", "Schema
Evolution"): a rename keeps the field id, so a column is followed by its id;
a dropped id "may be reused", so a dropped column is followed by its path. A
restore brings back the facts that held at the version it restores (and
the version's content: ``transaction.restore-earlier-state``). Appends,
deletes, updates, upserts and compactions change none of these facts.

Index bitmaps. Upstream ``docs/src/format/index/index.md`` ("Handling
deleted and invalidated rows") lets a bitmap name a fragment the version no
longer has (a fragment deleted whole: readers detect it by its absence);
pylance 14 keeps such ids (after a delete, and through a compaction's
remap), the reference drops them (docs/spec-discrepancies.md, "Compaction,
restore, indices, branches and clones" item 6). Neither is an anomaly. What is one
(index over missing fragments: the index claims rows it never indexed): a
segment, when it first appears, naming a fragment that was not a fragment
of its ``dataset_version`` (table.proto ``IndexMetadata.fragment_bitmap``;
requirement ``index.fragment-bitmap-from-dataset-version``), or a segment
gaining fragments while keeping its uuid. A compaction is exempt from both:
it remaps segments onto the fragments it wrote (pylance without moving
``dataset_version``: docs/spec-discrepancies.md, "Deletion, row id, index
and refs rules" item 2), as is a restore (it brings back old segments).

Who explains what. A version's claimers (``claims``: the attempts that
committed it, found by the caller from the transaction files) change facts
legitimately, whatever their outcome, except a claimer that failed or
conflicted: its effects must not show, and those of its effects that do
(a column added, renamed or dropped, a config value, an index, a tag) are
reported as phantoms (role ``failed``) when no other claimer explains them.
Facts come from acknowledged attempts only, from the last version each
claims; an acknowledged attempt no version claims is the caller's lost
commit, not judged here. A version no attempt claims changes nothing
legitimately.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from conformance.drivers.writes import WriteKind
from reference_impl.dataset import Dataset, dataset_storage
from reference_impl.errors import LanceFormatError
from reference_impl.naming import list_versions
from reference_impl.schema import TOP_LEVEL_PARENT, Schema

from .anomalies import Anomaly, AnomalyKind, Role, Witness
from .history import Attempt

# -- what every version holds -------------------------------------------------------


@dataclass(frozen=True)
class FieldState:
    """One field of a version's schema: its id, dotted path, logical type and nullability."""

    id: int
    path: str
    logical_type: str
    nullable: bool


@dataclass(frozen=True)
class IndexState:
    """One index entry (segment) of a version: ``fragment_ids`` None when the
    manifest records no bitmap."""

    name: str
    uuid: str
    field_ids: tuple[int, ...]
    fragment_ids: tuple[int, ...] | None
    dataset_version: int


@dataclass(frozen=True)
class VersionEffects:
    """What one version holds beside its rows."""

    version: int
    fields: tuple[FieldState, ...] = ()
    config: Mapping[str, str] = field(default_factory=dict)
    indices: tuple[IndexState, ...] = ()
    fragment_ids: frozenset[int] = frozenset()

    def field_at(self, path: str) -> FieldState | None:
        return next((f for f in self.fields if f.path == path), None)

    def field_with_id(self, field_id: int) -> FieldState | None:
        return next((f for f in self.fields if f.id == field_id), None)

    def paths(self) -> frozenset[str]:
        return frozenset(f.path for f in self.fields)

    def index_names(self) -> frozenset[str]:
        return frozenset(i.name for i in self.indices)


@dataclass
class EffectObservations:
    """Every readable version's :class:`VersionEffects`, ascending; the tags
    at the end (name -> version); what could not be read."""

    versions: list[VersionEffects] = field(default_factory=list)
    tags: dict[str, int] = field(default_factory=dict)
    #: Versions the reference reader could not open: (version, message).
    unreadable: list[tuple[int, str]] = field(default_factory=list)
    #: Why the tags could not be listed, None when they were.
    tags_unreadable: str | None = None


def _dotted_paths(schema: Schema) -> dict[int, str]:
    by_id = {f.id: f for f in schema.fields}
    paths: dict[int, str] = {}

    def path_of(field_id: int, depth: int = 0) -> str:
        if field_id in paths:
            return paths[field_id]
        f = by_id[field_id]
        parent = by_id.get(f.parent_id)
        # A dangling parent or a cycle (bounded by the depth) leaves the name alone.
        if f.parent_id == TOP_LEVEL_PARENT or parent is None or depth > len(by_id):
            paths[field_id] = f.name
        else:
            paths[field_id] = f"{path_of(parent.id, depth + 1)}.{f.name}"
        return paths[field_id]

    for f in schema.fields:
        path_of(f.id)
    return paths


def version_effects(dataset: Dataset) -> VersionEffects:
    """The non-row state of one opened version."""
    schema = dataset.schema
    paths = _dotted_paths(schema)
    fields = tuple(FieldState(f.id, paths[f.id], f.logical_type, f.nullable) for f in schema.fields)
    indices = tuple(
        IndexState(
            index.name,
            index.uuid,
            tuple(index.fields),
            None if (ids := index.fragment_ids()) is None else tuple(sorted(ids)),
            index.dataset_version,
        )
        for index in dataset.indices
    )
    return VersionEffects(
        dataset.version,
        fields,
        dict(dataset.manifest.config),
        indices,
        frozenset(f.id for f in dataset.fragments),
    )


def observe_effects(uri: str, storage_options: Mapping[str, str] | None = None) -> EffectObservations:
    """Read the schema, config, indices and fragment ids of every version of
    the dataset at ``uri`` (manifests only: no data file is opened), and its
    tags. A version the reference reader cannot open is skipped and named in
    ``unreadable`` (version 0: the versions could not be listed, or there are none)."""
    result = EffectObservations()
    try:
        storage = dataset_storage(uri, storage_options, writable=False)
        versions = sorted(list_versions(storage).manifests())
    except (LanceFormatError, OSError, ValueError) as exc:
        result.unreadable.append((0, f"the versions cannot be listed: {exc}"))
        return result
    if not versions:
        result.unreadable.append((0, f"{uri}: no manifest under _versions/"))
    latest: Dataset | None = None
    for version in versions:
        try:
            # Feature flags unknown to the reference do not hide what the manifest says.
            dataset = Dataset.open(storage, version, check_features=False, with_transaction=False)
            result.versions.append(version_effects(dataset))
        except (LanceFormatError, OSError, ValueError) as exc:
            result.unreadable.append((version, str(exc)))
            continue
        latest = dataset
    if latest is not None:
        try:
            result.tags = {name: tag.version for name, tag in sorted(latest.tags().items())}
        except (LanceFormatError, OSError, ValueError) as exc:
            result.tags_unreadable = str(exc)
    return result


# -- the pure judgement --------------------------------------------------------------

#: Outcome values of an attempt that failed: nothing of it may show.
_FAILED_OUTCOMES = frozenset({"conflict", "error"})
#: The columns an overwrite of the harness leaves (its rows' columns).
OVERWRITE_COLUMNS = ("id", "value")
#: Kinds that remap or bring back index segments.
_REMAPS_INDICES = frozenset({WriteKind.COMPACT, WriteKind.RESTORE})


def _kind(attempt: Attempt) -> WriteKind | None:
    """The attempt's kind in the write vocabulary; None for a kind it does not
    name (a writer's own kind: it changes nothing legitimately here)."""
    try:
        return WriteKind(attempt.kind)
    except ValueError:
        return None


def _failed(attempt: Attempt) -> bool:
    return attempt.outcome.value in _FAILED_OUTCOMES


def _acknowledged(attempt: Attempt) -> bool:
    return attempt.outcome.value == "acknowledged"


def _under(path: str, root: str) -> bool:
    """``path`` is ``root`` or one of its nested fields."""
    return path == root or path.startswith(root + ".")


def _renamed_path(old: str, new: str) -> str:
    """The path of ``old`` after a rename to ``new`` (a new leaf name keeps
    the parent of a nested field; a dotted ``new`` is taken whole)."""
    parent, dot, _ = old.rpartition(".")
    return f"{parent}.{new}" if dot and "." not in new else new


def _renames(attempt: Attempt) -> list[tuple[str, str]]:
    """(old path, new path) of each rename an alter-columns attempt makes."""
    pairs = []
    for pair in attempt.args.get("renames", []) or []:
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(p, str) for p in pair):
            pairs.append((pair[0], _renamed_path(pair[0], pair[1])))
    return pairs


def _schema_moves(attempt: Attempt) -> tuple[list[str], list[str]]:
    """The paths an attempt brings into the schema and takes out of it."""
    kind = _kind(attempt)
    if kind is WriteKind.ADD_COLUMNS:
        return _strings(attempt, "columns"), []
    if kind is WriteKind.DROP_COLUMNS:
        return [], _strings(attempt, "columns")
    if kind is WriteKind.ALTER_COLUMNS:
        renames = _renames(attempt)
        return [new for _, new in renames], [old for old, _ in renames]
    return [], []


def _strings(attempt: Attempt, key: str) -> list[str]:
    value = attempt.args.get(key) or []
    return [value] if isinstance(value, str) else [c for c in value if isinstance(c, str)]


def _config_values(attempt: Attempt) -> list[tuple[str, str | None]]:
    pairs = []
    for pair in attempt.args.get("values", []) or []:
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str):
            pairs.append((pair[0], None if pair[1] is None else str(pair[1])))
    return pairs


@dataclass(frozen=True)
class _Column:
    """A column an acknowledged add or rename put there: it must stay."""

    ident: str
    path: str
    field_id: int | None
    adders: tuple[str, ...] = ()
    renamers: tuple[str, ...] = ()
    #: The paths it had before the renames of ``renamers``.
    former: tuple[str, ...] = ()
    since: int = 0


@dataclass(frozen=True)
class _Dropped:
    ident: str
    path: str
    dropper: str
    since: int


@dataclass(frozen=True)
class _ConfigKey:
    ident: str
    key: str
    value: str | None
    writer: str
    since: int


@dataclass(frozen=True)
class _Index:
    ident: str
    name: str
    column: str
    field_ids: frozenset[int]
    creator: str
    since: int


@dataclass
class _Facts:
    """Every fact in force, by its ident (one per effect of one attempt)."""

    columns: dict[str, _Column] = field(default_factory=dict)
    dropped: dict[str, _Dropped] = field(default_factory=dict)
    config: dict[str, _ConfigKey] = field(default_factory=dict)
    indices: dict[str, _Index] = field(default_factory=dict)

    def copy(self) -> _Facts:
        return _Facts(dict(self.columns), dict(self.dropped), dict(self.config), dict(self.indices))


class _Judge:
    def __init__(self, history: Sequence[Attempt], observations: EffectObservations, claims):
        self.history = list(history)
        self.claims: dict[int, list[Attempt]] = {v: list(a) for v, a in claims.items()}
        #: The last version each attempt claims: where its effects must show from.
        self.effect_version: dict[str, int] = {}
        for version, attempts in sorted(self.claims.items()):
            for attempt in attempts:
                self.effect_version[attempt.op_id] = version
        self.states = {state.version: state for state in observations.versions}
        self.numbers = sorted(set(self.states) | {v for v, _ in observations.unreadable if v > 0})
        self.facts = _Facts()
        self.snapshots: dict[int, _Facts] = {}
        self.reported: set[str] = set()
        self.seen_segments: set[str] = set()
        self.anomalies: list[Anomaly] = []

    def report(self, ident: str, kind: AnomalyKind, roles, version: int, detail: str) -> None:
        if ident in self.reported:
            return
        self.reported.add(ident)
        claimers = self.claims.get(version, [])
        committers = [(a.op_id, Role.FAILED if _failed(a) else Role.COMMITTED) for a in claimers]
        if not claimers:
            detail += f"; no operation claims version {version}"
        self.anomalies.append(Anomaly(kind, Witness.of([*roles, *committers], [version], detail=detail)))

    # -- one version ----------------------------------------------------------------

    def version(self, v: int) -> None:
        state, prev = self.states.get(v), self.states.get(v - 1)
        claimers = self.claims.get(v, [])
        for attempt in claimers:
            if not _failed(attempt):
                self.change(attempt, prev)
        for attempt in claimers:
            if _acknowledged(attempt) and self.effect_version.get(attempt.op_id) == v:
                self.establish(attempt, v, state)
        if state is not None:
            self.check(v, state)
            self.segments(v, state, prev, claimers)
            if prev is not None:
                self.phantoms(v, state, prev, claimers)
        self.snapshots[v] = self.facts.copy()

    def change(self, attempt: Attempt, prev: VersionEffects | None) -> None:
        """What a claimer legitimately changes."""
        kind, facts = _kind(attempt), self.facts
        if kind is WriteKind.OVERWRITE:
            facts.columns.clear()
            facts.dropped.clear()
            facts.indices.clear()
        elif kind is WriteKind.RESTORE:
            target = attempt.args.get("version")
            known = self.snapshots.get(target) if isinstance(target, int) else None
            self.facts = known.copy() if known is not None else _Facts()
        elif kind is WriteKind.DROP_COLUMNS:
            gone = _strings(attempt, "columns")
            ids = {f.id for f in (prev.fields if prev else ()) if any(_under(f.path, c) for c in gone)}
            for ident, column in list(facts.columns.items()):
                if any(_under(column.path, c) for c in gone):
                    ids.update([column.field_id] if column.field_id is not None else [])
                    del facts.columns[ident]
            for ident, index in list(facts.indices.items()):
                if index.field_ids & ids or any(_under(index.column, c) for c in gone):
                    del facts.indices[ident]
        elif kind is WriteKind.ALTER_COLUMNS:
            for old, new in _renames(attempt):
                for ident, column in list(facts.columns.items()):
                    if _under(column.path, old):
                        facts.columns[ident] = replace(
                            column,
                            path=new + column.path[len(old) :],
                            renamers=(*column.renamers, attempt.op_id),
                            former=(*column.former, column.path),
                        )
                for ident, index in list(facts.indices.items()):
                    if _under(index.column, old):
                        facts.indices[ident] = replace(index, column=new + index.column[len(old) :])
                for ident, dropped in list(facts.dropped.items()):
                    if _under(dropped.path, new):
                        del facts.dropped[ident]
        elif kind is WriteKind.ADD_COLUMNS:
            added = _strings(attempt, "columns")
            for ident, dropped in list(facts.dropped.items()):
                if any(_under(dropped.path, name) for name in added):
                    del facts.dropped[ident]
        elif kind is WriteKind.CONFIG:
            keys = {key for key, _ in _config_values(attempt)}
            for ident, fact in list(facts.config.items()):
                if fact.key in keys:
                    del facts.config[ident]

    def establish(self, attempt: Attempt, v: int, state: VersionEffects | None) -> None:
        """The facts an acknowledged attempt's effects make, from version ``v``."""
        kind, op, facts = _kind(attempt), attempt.op_id, self.facts

        def field_id(*paths: str) -> int | None:
            for path in paths:
                found = state.field_at(path) if state is not None else None
                if found is not None:
                    return found.id
            return None

        if kind is WriteKind.ADD_COLUMNS:
            for name in _strings(attempt, "columns"):
                facts.columns[f"{op}:add:{name}"] = _Column(f"{op}:add:{name}", name, field_id(name), (op,), since=v)
        elif kind is WriteKind.DROP_COLUMNS:
            for name in _strings(attempt, "columns"):
                facts.dropped[f"{op}:drop:{name}"] = _Dropped(f"{op}:drop:{name}", name, op, v)
        elif kind is WriteKind.ALTER_COLUMNS:
            for old, new in _renames(attempt):
                if any(op in column.renamers and column.path == new for column in facts.columns.values()):
                    continue  # the rename moved a column already followed (change() recorded it)
                ident = f"{op}:rename:{old}"
                facts.columns[ident] = _Column(ident, new, field_id(new, old), (), (op,), (old,), v)
        elif kind is WriteKind.CONFIG:
            for key, value in _config_values(attempt):
                facts.config[f"{op}:config:{key}"] = _ConfigKey(f"{op}:config:{key}", key, value, op, v)
        elif kind is WriteKind.CREATE_INDEX:
            index_name, column = attempt.args.get("name"), attempt.args.get("column") or ""
            if isinstance(index_name, str) and isinstance(column, str):
                indices = state.indices if state else ()
                ids = frozenset(i for index in indices if index.name == index_name for i in index.field_ids)
                ident = f"{op}:index:{index_name}"
                facts.indices[ident] = _Index(ident, index_name, column, ids, op, v)

    def check(self, v: int, state: VersionEffects) -> None:
        """Every fact in force against version ``v``; a broken one is reported and forgotten."""
        facts = self.facts
        for ident, column in list(facts.columns.items()):
            present = state.field_at(column.path)
            if present is not None:
                if present.id != column.field_id:
                    facts.columns[ident] = replace(column, field_id=present.id)
                continue
            del facts.columns[ident]
            moved = state.field_with_id(column.field_id) if column.field_id is not None else None
            if moved is not None and column.renamers:
                undone = "undone" if moved.path in column.former else f"renamed to {moved.path}"
                detail = f"column {column.path} (id {moved.id}, renamed at version {column.since}) is {undone}"
                roles = [(op, Role.LOST) for op in column.renamers]
                self.report(ident, AnomalyKind.LOST_ALTERATION, roles, v, detail)
            else:
                where = f"named {moved.path}" if moved is not None else "missing"
                detail = f"column {column.path} (since version {column.since}) is {where}"
                roles = [(op, Role.LOST) for op in (*column.adders, *column.renamers)]
                self.report(ident, AnomalyKind.LOST_COLUMN, roles, v, detail)
        for ident, dropped in list(facts.dropped.items()):
            if state.field_at(dropped.path) is not None:
                del facts.dropped[ident]
                detail = f"column {dropped.path}, dropped at version {dropped.since}, is back"
                self.report(ident, AnomalyKind.RESURRECTED_COLUMN, [(dropped.dropper, Role.DELETED)], v, detail)
        for ident, fact in list(facts.config.items()):
            now = state.config.get(fact.key)
            if now != fact.value:
                del facts.config[ident]
                said = "removed" if fact.value is None else f"set to {fact.value!r}"
                shown = "absent" if now is None else repr(now)
                detail = f"config key {fact.key!r}, {said} at version {fact.since}, is {shown}"
                self.report(ident, AnomalyKind.LOST_CONFIG, [(fact.writer, Role.LOST)], v, detail)
        names = state.index_names()
        for ident, index in list(facts.indices.items()):
            if index.name not in names:
                del facts.indices[ident]
                detail = f"index {index.name!r}, created at version {index.since}, is missing"
                self.report(ident, AnomalyKind.LOST_INDEX, [(index.creator, Role.LOST)], v, detail)

    def segments(self, v: int, state: VersionEffects, prev: VersionEffects | None, claimers: list[Attempt]) -> None:
        """Index segments that claim fragments they were not built over."""
        remapped = any(_kind(a) in _REMAPS_INDICES for a in claimers if not _failed(a))
        before = {segment.uuid: segment for segment in (prev.indices if prev else ())}
        for segment in state.indices:
            first = segment.uuid not in self.seen_segments
            self.seen_segments.add(segment.uuid)
            if remapped or segment.fragment_ids is None:
                continue
            ids = set(segment.fragment_ids)
            base = self.states.get(segment.dataset_version)
            if first and base is not None and ids - base.fragment_ids:
                extra = sorted(ids - base.fragment_ids)
                detail = (
                    f"index {segment.name!r} (segment {segment.uuid}) names fragments {extra}, which version "
                    f"{segment.dataset_version}, the one it was built on, does not have"
                )
                self.report(f"segment:{segment.uuid}", AnomalyKind.INDEX_BEYOND_FRAGMENTS, [], v, detail)
            elif not first and segment.uuid in before:
                gained = sorted(ids - set(before[segment.uuid].fragment_ids or ()))
                if gained:
                    detail = f"index {segment.name!r} (segment {segment.uuid}) gains fragments {gained} unrebuilt"
                    self.report(f"segment:{segment.uuid}", AnomalyKind.INDEX_BEYOND_FRAGMENTS, [], v, detail)

    def phantoms(self, v: int, state: VersionEffects, prev: VersionEffects, claimers: list[Attempt]) -> None:
        """Effects of failed attempts showing at ``v`` that no other claimer
        explains (an overwrite brings :data:`OVERWRITE_COLUMNS`, a restore the
        state of its version)."""
        comes: set[str] = set()
        goes: set[str] = set()
        keys: set[str] = set()
        names: set[object] = set()
        for attempt in (a for a in claimers if not _failed(a)):
            kind = _kind(attempt)
            target = self.states.get(attempt.args.get("version", -1)) if kind is WriteKind.RESTORE else None
            if kind is WriteKind.CREATE or (kind is WriteKind.RESTORE and target is None):
                return  # what it brings is unknown
            if kind in (WriteKind.OVERWRITE, WriteKind.RESTORE):
                comes |= target.paths() if target else set(OVERWRITE_COLUMNS)
                goes |= prev.paths()
                keys |= set(state.config) | set(prev.config) if target else set()
                names |= target.index_names() if target else set()
            moves = _schema_moves(attempt)
            comes, goes = comes | set(moves[0]), goes | set(moves[1])
            keys |= {key for key, _ in _config_values(attempt)} if kind is WriteKind.CONFIG else set()
            names |= {attempt.args.get("name")} if kind is WriteKind.CREATE_INDEX else set()
        appeared = {p for p in state.paths() - prev.paths() if not any(_under(p, n) for n in comes)}
        vanished = {p for p in prev.paths() - state.paths() if not any(_under(p, n) for n in goes)}
        new_indices = state.index_names() - prev.index_names() - names
        for attempt in (a for a in self.history if _failed(a)):
            kind, (brought, taken) = _kind(attempt), _schema_moves(attempt)
            shown = [n for n in brought if n in appeared] + [n for n in taken if n in vanished]
            if kind is WriteKind.CONFIG:
                values = _config_values(attempt)
                shown = [k for k, x in values if k not in keys and prev.config.get(k) != x == state.config.get(k)]
            elif kind is WriteKind.CREATE_INDEX and attempt.args.get("name") in new_indices:
                shown = [f"index {attempt.args['name']}"]
            if shown:
                label = kind.value if kind else attempt.kind
                self.phantom(attempt, v, f"its {label} of {', '.join(shown)} shows")

    def phantom(self, attempt: Attempt, v: int, detail: str) -> None:
        self.report(f"phantom:{attempt.op_id}", AnomalyKind.PHANTOM, [(attempt.op_id, Role.FAILED)], v, detail)

    # -- the tags at the end --------------------------------------------------------

    def tags(self, observations: EffectObservations) -> None:
        if observations.tags_unreadable is not None:
            return
        tags = observations.tags
        tag_attempts = [a for a in self.history if _kind(a) is WriteKind.TAG]
        for attempt in tag_attempts:
            name = attempt.args.get("name")
            if not isinstance(name, str):
                continue
            asked = attempt.args.get("version")
            expected = asked if isinstance(asked, int) else attempt.version
            if _acknowledged(attempt) and (name not in tags or (expected is not None and tags[name] != expected)):
                shown = "missing" if name not in tags else f"naming version {tags[name]}"
                detail = f"tag {name!r} of version {expected} is {shown}"
                self.anomalies.append(
                    Anomaly(
                        AnomalyKind.LOST_TAG,
                        Witness.of([(attempt.op_id, Role.LOST)], [] if expected is None else [expected], detail=detail),
                    )
                )
            elif _failed(attempt) and name in tags:
                others = [a for a in tag_attempts if a.args.get("name") == name and not _failed(a)]
                if not others:
                    detail = f"its tag {name!r} exists"
                    witness = Witness.of([(attempt.op_id, Role.FAILED)], [tags[name]], detail=detail)
                    self.anomalies.append(Anomaly(AnomalyKind.PHANTOM, witness))


def effect_anomalies(
    history: Sequence[Attempt], observations: EffectObservations, claims: Mapping[int, Sequence[Attempt]]
) -> list[Anomaly]:
    """The anomalies of the schema, config, indices and tags of a run: each
    observed version judged against the attempts ``claims`` says committed
    it (module docstring), in version order, the tags last."""
    judge = _Judge(history, observations, claims)
    for v in judge.numbers:
        judge.version(v)
    judge.tags(observations)
    return judge.anomalies
