"""Histories a correct implementation could produce: operations applied one
after another to an in-memory table, recorded as a harness history with the
observations of every version (what :mod:`.observe` would read back). The
checker's property tests start from these (they must be accepted, and each
injected anomaly named), and so does its benchmark (100,000 operations).

Besides acknowledged operations the model records conflicts (nothing
visible), and operations whose writer died: some committed (a version no
acknowledged operation claims), some not.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from conformance.drivers.writes import WriteKind, WriteOutcome

from .history import Attempt
from .observe import Observations, Row, VersionObservation

APPEND, DELETE, UPDATE, UPSERT = WriteKind.APPEND, WriteKind.DELETE, WriteKind.UPDATE, WriteKind.UPSERT
COMPACT, CONFIG, OVERWRITE, RESTORE = WriteKind.COMPACT, WriteKind.CONFIG, WriteKind.OVERWRITE, WriteKind.RESTORE

#: Kind -> weight of the model's operations (restore goes back one version).
DEFAULT_WEIGHTS = {
    APPEND: 4.0,
    DELETE: 2.0,
    UPDATE: 2.0,
    UPSERT: 1.0,
    COMPACT: 0.5,
    CONFIG: 0.5,
    OVERWRITE: 0.05,
    RESTORE: 0.05,
}
INITIAL_ROWS = 16
#: The transaction operation the model's operations commit (``.attribution.TRANSACTION_OPERATIONS`` allows it).
_COMMITS = {
    APPEND: "append",
    DELETE: "delete",
    UPDATE: "update",
    UPSERT: "update",
    COMPACT: "rewrite",
    CONFIG: "update_config",
    OVERWRITE: "overwrite",
    RESTORE: "restore",
}


@dataclass
class SerialRun:
    history: list[Attempt]
    observations: Observations
    #: The rows visible at the last version: id -> (value, stable row id).
    rows: dict[int, tuple[int, int]]
    #: Ids an acknowledged delete removed and nothing brought back since.
    deleted: set[int] = field(default_factory=set)
    next_id: int = 0
    next_row_id: int = 0
    next_fragment_id: int = 0


class _Table:
    def __init__(self) -> None:
        self.rows: dict[int, tuple[int, int]] = {}
        self.order: list[int] = []  # for sampling: ids, possibly stale (checked on use)

    def sample(self, rng: random.Random, n: int) -> list[int]:
        chosen: set[int] = set()
        for _ in range(4 * n):
            if len(chosen) == n or not self.order:
                break
            position = rng.randrange(len(self.order))
            row_id = self.order[position]
            if row_id in self.rows:
                chosen.add(row_id)
            else:  # drop a stale entry (swap with the last)
                self.order[position] = self.order[-1]
                self.order.pop()
        return sorted(chosen)


def serial_run(operations: int, seed: int, *, weights: dict[WriteKind, float] | None = None) -> SerialRun:
    """``operations`` operations by 8 writers, applied serially."""
    rng = random.Random(seed)
    weights = weights or DEFAULT_WEIGHTS
    kinds, kind_weights = list(weights), list(weights.values())
    table = _Table()
    run = SerialRun([], Observations([]), table.rows)
    versions = run.observations.versions
    last_delta: tuple[list[Row], list[Row]] = ([], [])

    def fresh_ids(n: int) -> list[int]:
        ids = list(range(run.next_id, run.next_id + n))
        run.next_id += n
        return ids

    def fresh_row_id() -> int:
        run.next_row_id += 1
        return run.next_row_id - 1

    def commit(attempt_kind, args, added: list[Row], removed: list[Row], operation: str, claim: Attempt | None):
        nonlocal last_delta
        version = len(versions) + 1
        for row_id, _, _ in removed:
            table.rows.pop(row_id, None)
        for row_id, value, stable in added:
            table.rows[row_id] = (value, stable)  # type: ignore[assignment]
            table.order.append(row_id)
        fragments = []
        if added:
            fragments.append((run.next_fragment_id, f"f{run.next_fragment_id}"))
            run.next_fragment_id += 1
        versions.append(
            VersionObservation(version, operation, version - 1 if version > 1 else 0, added, removed, fragments)
        )
        last_delta = (added, removed)
        return version

    # Version 1: the set-up.
    ids = fresh_ids(INITIAL_ROWS)
    commit(WriteKind.CREATE, {"ids": ids}, [(i, 0, fresh_row_id()) for i in ids], [], "overwrite", None)
    setup = Attempt("setup", -1, WriteKind.CREATE, {"ids": ids}, None, WriteOutcome.ACKNOWLEDGED, 1, None, 0, 0)
    run.history.append(setup)

    for step in range(operations):
        kind = rng.choices(kinds, kind_weights)[0]
        roll = rng.random()
        outcome = (
            WriteOutcome.CONFLICT if roll < 0.05 else WriteOutcome.UNKNOWN if roll < 0.07 else WriteOutcome.ACKNOWLEDGED
        )
        writer = step % 8
        op_id = f"w{writer}-{step}"
        read = len(versions)
        value = 1_000_000_000 + step
        added: list[Row] = []
        removed: list[Row] = []
        operation = _COMMITS[kind]
        if kind == APPEND:
            args: dict = {"ids": fresh_ids(4)}
            added = [(i, 0, fresh_row_id()) for i in args["ids"]]
        elif kind in (DELETE, UPDATE):
            targets = table.sample(rng, 3)
            args = {"ids": targets} if kind == DELETE else {"ids": targets, "value": value}
            removed = [(i, *table.rows[i]) for i in targets]
            if kind == UPDATE:
                added = [(i, value, fresh_row_id()) for i in targets]
        elif kind == UPSERT:
            matched, new = table.sample(rng, 2), fresh_ids(2)
            args = {"ids": matched + new, "new_ids": new, "value": value}
            removed = [(i, *table.rows[i]) for i in matched]
            added = [(i, value, fresh_row_id()) for i in matched + new]
        elif kind == COMPACT:
            args = {}
            moved = table.sample(rng, 4)
            removed = [(i, *table.rows[i]) for i in moved]
            added = list(removed)
        elif kind == CONFIG:
            args = {"values": [[f"k{step}", str(step)]]}
        elif kind == OVERWRITE:
            args = {"ids": fresh_ids(8)}
            removed = [(i, v, r) for i, (v, r) in table.rows.items()]
            added = [(i, 0, fresh_row_id()) for i in args["ids"]]
        else:  # RESTORE to the version before the latest: undo the last change
            if read < 2:
                continue
            args = {"back": 1, "version": read - 1}
            added, removed = list(last_delta[1]), list(last_delta[0])
        if outcome is WriteOutcome.CONFLICT or (outcome is WriteOutcome.UNKNOWN and rng.random() < 0.5):
            run.history.append(Attempt(op_id, writer, kind, args, read, outcome, None, "lost", step, step + 1))
            if kind in (APPEND, UPSERT, OVERWRITE):
                run.next_id += 0  # its ids stay unused
            continue
        version = commit(kind, args, added, removed, operation, None)
        if kind == DELETE and outcome is WriteOutcome.ACKNOWLEDGED:
            run.deleted.update(args["ids"])
        for row_id, _, _ in added:
            run.deleted.discard(row_id)
        if kind in (OVERWRITE, RESTORE):
            run.deleted = {i for i in run.deleted if i not in table.rows}
        acknowledged = outcome is WriteOutcome.ACKNOWLEDGED
        run.history.append(
            Attempt(
                op_id,
                writer,
                kind,
                args,
                read,
                outcome,
                version if acknowledged else None,
                None if acknowledged else "the writer died",
                step,
                step + 1,
            )
        )
    return run
