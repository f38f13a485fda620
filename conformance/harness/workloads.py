"""Seeded, reproducible plans: which operation each writer tries, in order.

Upserts match keys their own writer appended earlier, and insert fresh ones.
Racing upserts (``upsert_race``) are the other kind: every writer that
plans one at step ``s`` upserts the same new keys, so that concurrent
upserts of the same new keys meet (the duplicate-row bug class: a correct
writer lets one of them insert, the others conflict or update).

Every appended id is unique in the run (the list-append analogue: a row
always says which operation wrote it; racing upserts' keys are shared on
purpose, their values tell them apart), every update writes a value no other
operation writes (a register per id), so that a row seen anywhere is traced
to the one operation it came from. The plan of writer ``w`` depends only on
the run's seed, its kinds and weights, and ``w``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from .spec import RunSpec

APPEND = "append"
DELETE = "delete"
UPDATE = "update"
UPSERT = "upsert"
UPSERT_RACE = "upsert_race"
COMPACT = "compact"
CREATE_INDEX = "create_index"
CONFIG = "config"
ADD_COLUMN = "add_column"
OVERWRITE = "overwrite"
RESTORE = "restore"

KINDS = (APPEND, DELETE, UPDATE, UPSERT, UPSERT_RACE, COMPACT, CREATE_INDEX, CONFIG, ADD_COLUMN, OVERWRITE, RESTORE)
#: Kinds whose rows carry ids the operation chose (they add rows).
ADDING_KINDS = frozenset({APPEND, UPSERT, UPSERT_RACE, OVERWRITE})
#: Kinds performed as an upsert by key (``id``): matched keys updated, others inserted.
UPSERT_KINDS = frozenset({UPSERT, UPSERT_RACE})

#: The named mixes ``--workload`` takes besides single kinds: overwrite and
#: restore are rare, appends, deletes and updates common. Racing upserts
#: are in no mix: pylance 14 duplicates rows under them unless the key is
#: declared (``RunSpec.primary_key``; docs/spec-discrepancies.md).
MIXES: dict[str, dict[str, float]] = {
    "mixed": {
        APPEND: 4,
        DELETE: 2,
        UPDATE: 2,
        UPSERT: 1,
        COMPACT: 0.5,
        CREATE_INDEX: 0.3,
        CONFIG: 0.5,
        ADD_COLUMN: 0.2,
        OVERWRITE: 0.1,
        RESTORE: 0.1,
    },
    "rows": {APPEND: 3, DELETE: 2, UPDATE: 2, UPSERT: 1},
}

ROWS_PER_APPEND = 4
TARGETS_PER_OPERATION = 3
#: Ids of writer ``w`` start at ``(w + 1) * ID_BLOCK``; the set-up's are below.
ID_BLOCK = 1_000_000_000
ROWS_PER_OVERWRITE = 8
#: The keys racing upserts share: step ``s`` upserts ``RACE_KEYS + s * 100 + k``
#: (above the set-up's ids, below every writer's block).
RACE_KEYS = ID_BLOCK // 2
RACE_KEYS_PER_STEP = 2


class WorkloadError(ValueError):
    """A workload name or weight that makes no sense."""


@dataclass(frozen=True)
class PlannedOp:
    """One planned operation: its op id, kind and arguments."""

    op_id: str
    kind: str
    args: dict


def parse_workloads(text: str) -> dict[str, float]:
    """``"mixed"``, ``"append,delete"`` or ``"append:3,delete:1"`` as kind ->
    weight (names of :data:`MIXES` expand to their kinds)."""
    weights: dict[str, float] = {}
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
        if name in MIXES:
            for kind, w in MIXES[name].items():
                weights[kind] = weights.get(kind, 0) + w * weight
        elif name in KINDS:
            weights[name] = weights.get(name, 0) + weight
        else:
            raise WorkloadError(f"unknown workload {name!r}; known: {', '.join(sorted([*MIXES, *KINDS]))}")
    if not any(weights.values()):
        raise WorkloadError("no workload with a positive weight")
    return weights


def skipped_kinds(weights: Mapping[str, float], supported: frozenset[str]) -> list[str]:
    """Kinds asked for that the writer cannot do (they are left out of its plans)."""
    return sorted(kind for kind, weight in weights.items() if weight > 0 and kind not in supported)


def plan_all(spec: RunSpec, supported: frozenset[str]) -> list[list[PlannedOp]]:
    """Every writer's plan. Deletes and updates target ids the set-up wrote
    and ids any writer's planned appends write, so writers meet on rows."""
    kinds = [k for k in KINDS if spec.workloads.get(k, 0) > 0 and k in supported]
    if not kinds:
        return [[] for _ in range(spec.writers)]
    weights = [spec.workloads[k] for k in kinds]
    rngs = [random.Random(f"{spec.seed}/{w}") for w in range(spec.writers)]
    sequences = [rng.choices(kinds, weights, k=spec.operations) for rng in rngs]
    appended: list[int] = list(range(spec.initial_rows))
    own: list[list[int]] = [[] for _ in range(spec.writers)]
    raced: set[int] = set()
    plans: list[list[PlannedOp]] = [[] for _ in range(spec.writers)]
    # Interleave the writers step by step so that targets come from appends
    # planned earlier by anyone.
    for step in range(spec.operations):
        for w in range(spec.writers):
            kind, rng = sequences[w][step], rngs[w]
            op_id = f"w{w}-{step}"
            base = (w + 1) * ID_BLOCK + step * 100
            value = base + 99  # no other operation writes this value
            args: dict
            if kind == APPEND:
                args = {"ids": [base + k for k in range(ROWS_PER_APPEND)]}
                appended.extend(args["ids"])
                own[w].extend(args["ids"])
            elif kind in (DELETE, UPDATE):
                targets = sorted(set(rng.sample(appended, min(TARGETS_PER_OPERATION, len(appended)))))
                args = {"ids": targets} if kind == DELETE else {"ids": targets, "value": value}
            elif kind == UPSERT:
                # Keys only this writer appended: no other operation inserts
                # them, so no concurrent insert of the same key can make a
                # second row (Lance does not enforce unique keys).
                matched = sorted(set(rng.sample(own[w], min(2, len(own[w])))))
                fresh = [base, base + 1]
                appended.extend(fresh)
                args = {"ids": matched + fresh, "new_ids": fresh, "value": value}
            elif kind == UPSERT_RACE:
                # The same new keys for every writer at this step.
                shared = [RACE_KEYS + step * 100 + k for k in range(RACE_KEYS_PER_STEP)]
                if shared[0] not in raced:
                    raced.add(shared[0])
                    appended.extend(shared)
                args = {"ids": shared, "new_ids": shared, "value": value}
            elif kind == OVERWRITE:
                args = {"ids": [base + k for k in range(ROWS_PER_OVERWRITE)]}
                appended.extend(args["ids"])
            elif kind == RESTORE:
                args = {"back": rng.randint(1, 4)}
            elif kind == CREATE_INDEX:
                args = {"name": f"idx_{op_id.replace('-', '_')}"}
            elif kind == CONFIG:
                args = {"key": f"harness.{op_id}", "value": str(value)}
            elif kind == ADD_COLUMN:
                args = {"name": f"c_{op_id.replace('-', '_')}"}
            else:
                args = {}
            plans[w].append(PlannedOp(op_id, kind, args))
    return plans
