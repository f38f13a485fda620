"""Seeded, reproducible plans: which operation each writer tries, in order.

A plan is made of :class:`PlannedOp`: an operation id, a
:class:`~conformance.drivers.writes.WriteKind` (the one write vocabulary) and
the JSON-able arguments the checker needs to trace its effects.
:func:`to_write_op` turns one into the vocabulary's operation once the
version it is built on is known (an append writes every column the table
has then; a restore goes back from there).

The arguments per kind: ``append`` and ``overwrite`` ``{"ids": [...]}``;
``delete`` ``{"ids": [...]}``; ``update`` ``{"ids": [...], "value": v}``;
``upsert`` ``{"ids": [...], "new_ids": [...], "value": v, "shared": bool}``;
``add-columns`` and ``drop-columns`` ``{"columns": [...]}``;
``alter-columns`` ``{"renames": [[old, new], ...]}``; ``config``
``{"values": [[key, value], ...]}``; ``create-index`` ``{"name": n,
"column": c}``; ``tag`` ``{"name": n}``; ``restore`` ``{"back": n}`` (and,
once performed, ``"version"``: the target); ``compact`` ``{}``.

Every appended id is unique in the run (the list-append analogue: a row
always says which operation wrote it), every update writes a value no other
operation writes (a register per id), and every column, config key, index
and tag name is the operation's own, so that an effect seen anywhere is
traced to the one operation it came from. Upserts match keys their own
writer appended earlier and insert fresh ones; *shared-key* upserts
(``upsert/shared-keys``) are the other pattern: every writer that plans one
at step ``s`` upserts the same new keys, so that concurrent upserts of the
same new key meet (the duplicate-row bug class). The plan of writer ``w``
depends only on the run's seed, its workload and ``w``.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from conformance.drivers import writes
from conformance.drivers.writes import WriteKind

from .history import FORMAT_1_KINDS
from .spec import RunSpec


class Pattern(str, enum.Enum):
    """How an operation picks what it touches, where a kind has more than one way."""

    #: Its own fresh ids, values and names (every kind).
    OWN = "own"
    #: New keys shared with the other writers' operations of the same step (upserts).
    SHARED_KEYS = "shared-keys"


#: What a workload weighs: a kind of write and the pattern it follows.
Term = tuple[WriteKind, Pattern]
Workload = dict[Term, float]

#: The kinds a plan can hold with the shared-keys pattern.
SHARED_KEY_KINDS = frozenset({WriteKind.UPSERT})
#: Kinds a plan never holds: the set-up creates the dataset.
UNPLANNED = frozenset({WriteKind.CREATE})
#: Kinds whose rows carry ids the operation chose (they add rows).
ADDING_KINDS = frozenset({WriteKind.APPEND, WriteKind.UPSERT, WriteKind.OVERWRITE})

#: The named mixes ``--workload`` takes besides single kinds: overwrite and
#: restore are rare, appends, deletes and updates common. Shared-key upserts
#: are in no mix: pylance 14 duplicates rows under them unless the key is
#: declared (``RunSpec.primary_key``; docs/spec-discrepancies.md).
MIXES: dict[str, dict[WriteKind, float]] = {
    "mixed": {
        WriteKind.APPEND: 4,
        WriteKind.DELETE: 2,
        WriteKind.UPDATE: 2,
        WriteKind.UPSERT: 1,
        WriteKind.COMPACT: 0.5,
        WriteKind.CREATE_INDEX: 0.3,
        WriteKind.CONFIG: 0.5,
        WriteKind.ADD_COLUMNS: 0.2,
        WriteKind.OVERWRITE: 0.1,
        WriteKind.RESTORE: 0.1,
    },
    "rows": {WriteKind.APPEND: 3, WriteKind.DELETE: 2, WriteKind.UPDATE: 2, WriteKind.UPSERT: 1},
    "schema": {
        WriteKind.APPEND: 2,
        WriteKind.DELETE: 2,
        WriteKind.ADD_COLUMNS: 2,
        WriteKind.DROP_COLUMNS: 1,
        WriteKind.ALTER_COLUMNS: 1,
        WriteKind.CONFIG: 1,
    },
}

ROWS_PER_APPEND = 4
TARGETS_PER_OPERATION = 3
#: Ids of writer ``w`` start at ``(w + 1) * ID_BLOCK``; the set-up's are below.
ID_BLOCK = 1_000_000_000
ROWS_PER_OVERWRITE = 8
#: The keys shared-key upserts share: step ``s`` upserts ``SHARED_KEYS_BASE + s * 100 + k``
#: (above the set-up's ids, below every writer's block).
SHARED_KEYS_BASE = ID_BLOCK // 2
SHARED_KEYS_PER_STEP = 2
#: The columns every version has (the set-up's); other columns are the operations' own.
KEY_COLUMN = "id"
VALUE_COLUMN = "value"


class WorkloadError(ValueError):
    """A workload name or weight that makes no sense."""


@dataclass(frozen=True)
class PlannedOp:
    """One planned operation: its op id, kind and arguments."""

    op_id: str
    kind: WriteKind
    args: dict


def term_name(term: Term) -> str:
    kind, pattern = term
    return kind.value if pattern is Pattern.OWN else f"{kind.value}/{pattern.value}"


def parse_workload(text: str) -> Workload:
    """``"mixed"``, ``"append,delete"``, ``"append:3,delete:1"`` or
    ``"upsert/shared-keys"`` as term -> weight (names of :data:`MIXES` expand
    to their kinds)."""
    weights: Workload = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, weight_text = item.partition(":")
        try:
            weight = float(weight_text) if weight_text else 1.0
        except ValueError:
            raise WorkloadError(f"workload {item!r}: the weight is not a number") from None
        if weight < 0:
            raise WorkloadError(f"workload {item!r}: a weight cannot be negative")
        for term, w in _terms(name).items():
            weights[term] = weights.get(term, 0) + w * weight
    if not any(weights.values()):
        raise WorkloadError("no workload with a positive weight")
    return weights


def _terms(name: str) -> dict[Term, float]:
    if name in MIXES:
        return {(kind, Pattern.OWN): w for kind, w in MIXES[name].items()}
    kind_name, _, pattern_name = name.partition("/")
    try:
        kind = WriteKind(kind_name)
        pattern = Pattern(pattern_name) if pattern_name else Pattern.OWN
    except ValueError:
        kinds = [k.value for k in WriteKind if k not in UNPLANNED]
        known = ", ".join(
            [*sorted(MIXES), *kinds, *(f"{k.value}/{Pattern.SHARED_KEYS.value}" for k in SHARED_KEY_KINDS)]
        )
        raise WorkloadError(f"unknown workload {name!r}; known: {known}") from None
    if kind in UNPLANNED or (pattern is Pattern.SHARED_KEYS and kind not in SHARED_KEY_KINDS):
        raise WorkloadError(f"workload {name!r}: not an operation a writer plans")
    return {(kind, pattern): 1.0}


def workload_to_json(workload: Mapping[Term, float]) -> dict[str, float]:
    return {term_name(term): weight for term, weight in workload.items()}


def workload_from_json(document: Mapping[str, float]) -> Workload:
    """The inverse of :func:`workload_to_json` (format-1 names such as
    ``add_column`` and ``upsert_race`` read as their vocabulary terms)."""
    # Format 1's racing upserts were a kind; they are the shared-keys pattern of upsert.
    renamed = {**FORMAT_1_KINDS, "upsert_race": f"upsert/{Pattern.SHARED_KEYS.value}"}
    workload: Workload = {}
    for name, weight in document.items():
        for term, w in _terms(renamed.get(name, name)).items():
            workload[term] = workload.get(term, 0) + w * weight
    return workload


def writer_workload(spec: RunSpec, writer: int) -> Workload:
    """Writer ``writer``'s workload: its own (``spec.writer_workloads``, taken
    in turn when there are fewer than writers) or the run's."""
    own = spec.writer_workloads
    return workload_from_json(own[writer % len(own)] if own else spec.workloads)


def skipped_kinds(workloads: Sequence[Mapping[Term, float]], performed: frozenset[WriteKind]) -> list[WriteKind]:
    """Kinds some writer's workload asks for that the writer does not perform
    (left out of its plans)."""
    asked = {kind for workload in workloads for (kind, _), weight in workload.items() if weight > 0}
    return sorted(asked - performed, key=lambda kind: kind.value)


def plan_all(spec: RunSpec, performed: frozenset[WriteKind]) -> list[list[PlannedOp]]:
    """Every writer's plan. Deletes and updates target ids the set-up wrote
    and ids any writer's planned appends write, so writers meet on rows."""
    workloads = [writer_workload(spec, w) for w in range(spec.writers)]
    sequences: list[list[Term]] = []
    rngs = [random.Random(f"{spec.seed}/{w}") for w in range(spec.writers)]
    for w, rng in enumerate(rngs):
        terms = [t for t, weight in workloads[w].items() if weight > 0 and t[0] in performed]
        terms.sort(key=term_name)
        weights = [workloads[w][t] for t in terms]
        sequences.append(rng.choices(terms, weights, k=spec.operations) if terms else [])
    planner = _Planner(spec)
    plans: list[list[PlannedOp]] = [[] for _ in range(spec.writers)]
    # Interleave the writers step by step so that targets come from appends
    # planned earlier by anyone.
    for step in range(spec.operations):
        for w in range(spec.writers):
            if step < len(sequences[w]):
                plans[w].append(planner.plan(w, step, sequences[w][step], rngs[w]))
    return plans


class _Planner:
    """The shared state of planning: ids appended so far, by whom, and the
    columns added so far (what later drops and renames pick from)."""

    def __init__(self, spec: RunSpec):
        self.appended: list[int] = list(range(spec.initial_rows))
        self.own: dict[int, list[int]] = {}
        self.shared_steps: set[int] = set()
        self.own_columns: dict[int, list[str]] = {}

    def plan(self, w: int, step: int, term: Term, rng: random.Random) -> PlannedOp:
        kind, pattern = term
        op_id = f"w{w}-{step}"
        base = (w + 1) * ID_BLOCK + step * 100
        value = base + 99  # no other operation writes this value
        name = f"{op_id.replace('-', '_')}"
        own = self.own.setdefault(w, [])
        args: dict
        if kind is WriteKind.APPEND:
            args = {"ids": [base + k for k in range(ROWS_PER_APPEND)]}
            self.appended.extend(args["ids"])
            own.extend(args["ids"])
        elif kind in (WriteKind.DELETE, WriteKind.UPDATE):
            targets = sorted(set(rng.sample(self.appended, min(TARGETS_PER_OPERATION, len(self.appended)))))
            args = {"ids": targets} if kind is WriteKind.DELETE else {"ids": targets, "value": value}
        elif kind is WriteKind.UPSERT and pattern is Pattern.SHARED_KEYS:
            shared = [SHARED_KEYS_BASE + step * 100 + k for k in range(SHARED_KEYS_PER_STEP)]
            if step not in self.shared_steps:
                self.shared_steps.add(step)
                self.appended.extend(shared)
            args = {"ids": shared, "new_ids": shared, "value": value, "shared": True}
        elif kind is WriteKind.UPSERT:
            # Keys only this writer appended: no other operation inserts them,
            # so no concurrent insert of the same key can make a second row
            # (Lance does not enforce unique keys).
            matched = sorted(set(rng.sample(own, min(2, len(own)))))
            fresh = [base, base + 1]
            self.appended.extend(fresh)
            args = {"ids": matched + fresh, "new_ids": fresh, "value": value, "shared": False}
        elif kind is WriteKind.OVERWRITE:
            args = {"ids": [base + k for k in range(ROWS_PER_OVERWRITE)]}
            self.appended.extend(args["ids"])
        elif kind is WriteKind.RESTORE:
            args = {"back": rng.randint(1, 4)}
        elif kind is WriteKind.CREATE_INDEX:
            args = {"name": f"idx_{name}", "column": KEY_COLUMN}
        elif kind is WriteKind.CONFIG:
            args = {"values": [[f"harness.{op_id}", str(value)]]}
        elif kind is WriteKind.ADD_COLUMNS:
            args = {"columns": [f"c_{name}"]}
            self.own_columns.setdefault(w, []).append(f"c_{name}")
        elif kind is WriteKind.DROP_COLUMNS:
            # A column this writer added earlier, so that no other writer's
            # rename or drop of it is expected to conflict; none: nothing to drop.
            mine = self.own_columns.get(w, [])
            args = {"columns": [mine.pop(0)]} if mine else {"columns": []}
        elif kind is WriteKind.ALTER_COLUMNS:
            mine = self.own_columns.get(w, [])
            if mine:
                old = mine.pop(0)
                renamed = f"r_{name}"
                mine.append(renamed)
                args = {"renames": [[old, renamed]]}
            else:
                args = {"renames": []}
        elif kind is WriteKind.TAG:
            args = {"name": f"tag_{name}"}
        else:
            args = {}
        return PlannedOp(op_id, kind, args)


def rows_table(ids: Sequence[int], value: int, schema: pa.Schema) -> pa.Table:
    """Rows ``(id, value)`` with every other column of ``schema`` filled
    (integer columns copy ``id``, as :func:`to_write_op`'s added columns do;
    others null), so that appends follow schema changes."""
    columns = []
    for f in schema:
        if f.name == KEY_COLUMN:
            columns.append(pa.array(ids, f.type))
        elif f.name == VALUE_COLUMN:
            columns.append(pa.array([value] * len(ids), f.type))
        elif pa.types.is_integer(f.type):
            columns.append(pa.array(list(ids), f.type))
        else:
            columns.append(pa.nulls(len(ids), f.type))
    return pa.Table.from_arrays(columns, schema=schema)


#: Rows per fragment compaction aims at (small tables: everything merges).
COMPACT_TARGET_ROWS = 100_000
INITIAL_SCHEMA = pa.schema([pa.field(KEY_COLUMN, pa.int64()), pa.field(VALUE_COLUMN, pa.int64())])
#: Field metadata declaring a column part of the unenforced primary key (table
#: overview page, "Unenforced Primary Key").
PRIMARY_KEY_METADATA = {"lance-schema:unenforced-primary-key": "true"}


def initial_schema(primary_key: bool) -> pa.Schema:
    """The schema a run's dataset starts with; with ``primary_key``, ``id`` is
    the unenforced primary key (and so not nullable, as a key must be)."""
    if not primary_key:
        return INITIAL_SCHEMA
    return pa.schema(
        [
            pa.field(KEY_COLUMN, pa.int64(), nullable=False, metadata=PRIMARY_KEY_METADATA),
            INITIAL_SCHEMA.field(VALUE_COLUMN),
        ]
    )


def overwrite_schema(current: pa.Schema) -> pa.Schema:
    """The schema an overwrite writes: the initial columns, ``id`` as the
    table has it now (a declared primary key must not be removed)."""
    return pa.schema([current.field(KEY_COLUMN), INITIAL_SCHEMA.field(VALUE_COLUMN)])


def _ids(ids: Sequence[int]) -> writes.Predicate:
    return writes.IsIn(KEY_COLUMN, tuple(int(i) for i in ids))


def to_write_op(
    planned: PlannedOp, schema: pa.Schema, read: int, *, read_version: int | None, token: str | None
) -> writes.WriteOp | None:
    """The vocabulary operation ``planned`` is, built on version ``read``
    whose Arrow schema is ``schema``; ``read_version`` and ``token`` are set
    on it. None when there is nothing to do (a drop or a rename with no
    column of the writer's own in the version read); the ``args`` gain or
    lose what only now is known (a restore's target version, the columns
    that are there to drop or rename)."""
    kind, args = planned.kind, planned.args
    if kind is WriteKind.APPEND:
        return writes.Append(rows_table(args["ids"], 0, schema), read_version=read_version, token=token)
    if kind is WriteKind.OVERWRITE:
        return writes.Overwrite(
            rows_table(args["ids"], 0, overwrite_schema(schema)), read_version=read_version, token=token
        )
    if kind is WriteKind.DELETE:
        return writes.Delete(_ids(args["ids"]), read_version=read_version, token=token)
    if kind is WriteKind.UPDATE:
        return writes.Update(
            ((VALUE_COLUMN, int(args["value"])),), where=_ids(args["ids"]), read_version=read_version, token=token
        )
    if kind is WriteKind.UPSERT:
        return writes.Upsert(
            rows_table(args["ids"], args["value"], schema), on=(KEY_COLUMN,), read_version=read_version, token=token
        )
    if kind is WriteKind.COMPACT:
        return writes.Compact(target_rows_per_fragment=COMPACT_TARGET_ROWS, read_version=read_version, token=token)
    if kind is WriteKind.CREATE_INDEX:
        return writes.CreateIndex(args["column"], "BTREE", args["name"], read_version=read_version, token=token)
    if kind is WriteKind.CONFIG:
        return writes.Config(
            tuple((key, value) for key, value in args["values"]), read_version=read_version, token=token
        )
    if kind is WriteKind.ADD_COLUMNS:
        return writes.AddColumns(
            tuple(writes.NewColumn(name, KEY_COLUMN) for name in args["columns"]),
            read_version=read_version,
            token=token,
        )
    # A column the writer added is absent when its addition lost a race: what
    # is dropped or renamed is what the version read has (the args say so).
    present = set(schema.names)
    if kind is WriteKind.DROP_COLUMNS:
        args["columns"] = [column for column in args["columns"] if column in present]
        columns = tuple(args["columns"])
        return writes.DropColumns(columns, read_version=read_version, token=token) if columns else None
    if kind is WriteKind.ALTER_COLUMNS:
        args["renames"] = [[old, new] for old, new in args["renames"] if old in present]
        alterations = tuple(writes.Alteration(old, rename=new) for old, new in args["renames"])
        return writes.AlterColumns(alterations, read_version=read_version, token=token) if alterations else None
    if kind is WriteKind.RESTORE:
        args["version"] = max(1, read - int(args["back"]))
        return writes.Restore(args["version"], read_version=read_version, token=token)
    if kind is WriteKind.TAG:
        return writes.Tag(args["name"], read, read_version=read_version, token=token)
    raise WorkloadError(f"the harness plans no {kind.value}")
