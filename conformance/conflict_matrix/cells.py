"""The cells of the matrix and the base tables they start from.

A cell is an ordered pair of operation types (the first commits, then the
second tries) in one sub-case the upstream page distinguishes: which
fragments, rows, config keys, index names or base paths the two touch,
whether the table has stable row ids, whether the replaced column is
indexed. Every pair of the types in ``protos/transaction.proto`` has at
least one cell (:data:`ANY` when the page makes no distinction).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from . import actions as act
from .actions import Action
from .model import Operation as Op
from .model import Subcase as S

ROW_OPERATIONS = frozenset({Op.DELETE, Op.UPDATE})
FRAGMENT_OPERATIONS = frozenset({Op.DELETE, Op.UPDATE, Op.REWRITE, Op.DATA_REPLACEMENT})


class Template(str, enum.Enum):
    """The base tables (each written by pylance 14 with its default data storage version, 2.2)."""

    PLAIN = "plain"
    STABLE_ROW_IDS = "stable-row-ids"
    #: PLAIN plus the MemWAL index (initialize_mem_wal), for UpdateMemWalState.
    MEM_WAL = "mem-wal"
    #: PLAIN plus a BTREE index ``idx_extra`` on ``extra``, which a compaction
    #: with deferred index remapping records in a fragment reuse index.
    INDEXED = "indexed"
    #: STABLE_ROW_IDS plus the MemWAL index, for ReserveRowIds (valid only
    #: under stable row ids) against UpdateMemWalState.
    MEM_WAL_STABLE_ROW_IDS = "mem-wal-stable-row-ids"


def build_template(template: Template, path: Path) -> int:
    """Write the base table of ``template`` at ``path``; return its latest
    version, the one both writers of a cell read."""
    import lance  # pylance, imported lazily as the drivers do

    table = act.base_table()
    # pylance's default data storage version: both writers of a cell write
    # their data files in the version of the dataset's files.
    lance.write_dataset(
        table.select(["id"]),
        str(path),
        max_rows_per_file=act.FRAGMENT_ROWS,
        enable_stable_row_ids=template in (Template.STABLE_ROW_IDS, Template.MEM_WAL_STABLE_ROW_IDS),
    )
    dataset = lance.dataset(str(path))
    dataset.add_columns({"extra": "id + 1000"})
    dataset.add_columns({"value": "id + 100"})
    dataset.delete("id = 3")
    if template in (Template.MEM_WAL, Template.MEM_WAL_STABLE_ROW_IDS):
        dataset.initialize_mem_wal(unsharded=True)
    if template is Template.INDEXED:
        dataset.create_scalar_index("extra", "BTREE", name="idx_extra")
    return lance.dataset(str(path)).version


@dataclass(frozen=True)
class CellSpec:
    """How to build one cell."""

    first: Action
    second: Action
    subcase: S
    template: Template = Template.PLAIN

    @property
    def id(self) -> str:
        return f"{self.first.operation.value}/{self.second.operation.value}:{self.subcase.value}"

    @property
    def applicable(self) -> bool:
        return Op.CLONE not in (self.first.operation, self.second.operation)


_CLONE = Action(
    Op.CLONE,
    "shallow clone of version v into a new dataset",
    None,
    None,
    pylance_unreachable="a clone starts a new dataset",
    reference_unreachable="a clone starts a new dataset",
)


def _first_default(op: Op) -> Action:
    return {
        Op.APPEND: act.append,
        Op.DELETE: lambda: act.delete((0,)),
        Op.OVERWRITE: act.overwrite,
        Op.CREATE_INDEX: lambda: act.create_index("id", "idx_id"),
        Op.REWRITE: act.rewrite,
        Op.MERGE: lambda: act.merge("doubled"),
        Op.RESTORE: act.restore,
        Op.RESERVE_FRAGMENTS: act.reserve_fragments,
        Op.UPDATE: lambda: act.update((0,)),
        Op.PROJECT: act.project,
        Op.UPDATE_CONFIG: lambda: act.update_config("k1"),
        Op.DATA_REPLACEMENT: lambda: act.data_replacement(0),
        Op.UPDATE_MEM_WAL_STATE: lambda: act.update_mem_wal_state(act.MEM_WAL_REGIONS[0]),
        Op.CLONE: lambda: _CLONE,
        Op.UPDATE_BASES: lambda: act.add_base("b1", "base-1", 1),
        Op.DATA_OVERLAY: lambda: act.data_overlay(0),
        Op.RESERVE_ROW_IDS: act.reserve_row_ids,
    }[op]()


def _second_default(op: Op) -> Action:
    """The second writer's action when the pair has no sub-cases: where both
    writers do the same type, the second touches something else of its own
    (another column name, region, key or base), so that the race is about
    the operation types alone."""
    special = {
        Op.MERGE: lambda: act.merge("tripled"),
        Op.UPDATE_MEM_WAL_STATE: lambda: act.update_mem_wal_state(act.MEM_WAL_REGIONS[1]),
        Op.UPDATE_CONFIG: lambda: act.update_config("k2"),
        Op.UPDATE_BASES: lambda: act.add_base("b2", "base-2", 2),
    }
    return special[op]() if op in special else _first_default(op)


def _with_reuse_index(op: Op) -> Action:
    return act.rewrite(fragment_reuse_index=True) if op is Op.REWRITE else _first_default(op)


def _row_action(op: Op, ids: tuple[int, ...]) -> Action:
    return act.delete(ids) if op is Op.DELETE else act.update(ids)


def _on_fragment(op: Op, fragment: int) -> Action:
    """A fragment-scoped action touching ``fragment`` (0 or 1); a rewrite
    always compacts fragment 0."""
    if op in ROW_OPERATIONS:
        return _row_action(op, (fragment * act.FRAGMENT_ROWS,))
    if op is Op.DATA_REPLACEMENT:
        return act.data_replacement(fragment)
    return act.rewrite()


def _fragment_cells(a: Op, b: Op) -> list[CellSpec]:
    if a is Op.REWRITE and b is Op.REWRITE:
        return [CellSpec(act.rewrite(), act.rewrite(), S.OVERLAPPING)]
    cells = [CellSpec(_on_fragment(a, 0), _on_fragment(b, 0), S.OVERLAPPING)]
    # Disjoint: the side that is not a rewrite moves to fragment 1.
    if b is not Op.REWRITE:
        cells.append(CellSpec(_on_fragment(a, 0), _on_fragment(b, 1), S.DISJOINT))
    else:
        cells.append(CellSpec(_on_fragment(a, 1), _on_fragment(b, 0), S.DISJOINT))
    if Op.DATA_REPLACEMENT in (a, b) and {a, b} & ROW_OPERATIONS:
        # Fragment 0's live rows are ids 0-2 (3 is deleted in the base table).
        whole = (0, 1, 2)
        first = _row_action(a, whole) if a in ROW_OPERATIONS else act.data_replacement(0)
        second = _row_action(b, whole) if b in ROW_OPERATIONS else act.data_replacement(0)
        cells.append(CellSpec(first, second, S.WHOLE_FRAGMENT))
    if a is Op.DATA_REPLACEMENT and b is Op.DATA_REPLACEMENT:
        cells.append(CellSpec(act.data_replacement(0, "value"), act.data_replacement(0, "extra"), S.OTHER_FIELD))
    return cells


def _update_columns_cells(a: Op, b: Op) -> list[CellSpec]:
    """The REWRITE_COLUMNS sub-cases of an Update against another
    fragment-scoped operation on fragment 0 (an Update against an Update
    stays REWRITE_ROWS: which rows two column rewrites "touch" is not
    something the page defines)."""
    if Op.UPDATE not in (a, b) or a is b:
        return []

    def side(op: Op, column: str) -> Action:
        if op is Op.UPDATE:
            return act.update_columns(0, column)
        return act.data_replacement(0, "value") if op is Op.DATA_REPLACEMENT else _on_fragment(op, 0)

    cells = [CellSpec(side(a, "value"), side(b, "value"), S.UPDATE_COLUMNS)]
    if Op.DATA_REPLACEMENT in (a, b):
        cells.append(CellSpec(side(a, "extra"), side(b, "extra"), S.UPDATE_COLUMNS_OTHER_FIELD))
    return cells


def _newer_cells(a: Op, b: Op) -> list[CellSpec]:
    """Cells with DataOverlay or ReserveRowIds (the newest page). A
    ReserveRowIds needs stable row ids, so its cells start from them; the
    DataOverlay section tells apart only a Rewrite or an Update of an
    overlaid fragment (and an Update rewriting columns in place)."""
    pair = {a, b}
    if Op.RESERVE_ROW_IDS in pair:
        template = Template.MEM_WAL_STABLE_ROW_IDS if Op.UPDATE_MEM_WAL_STATE in pair else Template.STABLE_ROW_IDS
        return [CellSpec(_first_default(a), _second_default(b), S.ANY, template)]
    if b is Op.DATA_OVERLAY and a in (Op.REWRITE, Op.UPDATE):
        cells = [CellSpec(_on_fragment(a, 0), act.data_overlay(0), S.OVERLAPPING)]
        if a is Op.UPDATE:
            cells.append(CellSpec(_on_fragment(a, 1), act.data_overlay(0), S.DISJOINT))
            cells.append(CellSpec(act.update_columns(0, "value"), act.data_overlay(0), S.UPDATE_COLUMNS))
        else:
            cells.append(CellSpec(act.rewrite(), act.data_overlay(1), S.DISJOINT))
        return cells
    return []


def _cells_of(a: Op, b: Op) -> list[CellSpec]:
    if Op.CLONE in (a, b):
        return [CellSpec(_first_default(a), _second_default(b), S.ANY)]
    newer = _newer_cells(a, b)
    if newer:
        return newer
    if a in ROW_OPERATIONS and b in ROW_OPERATIONS:
        return [
            CellSpec(_row_action(a, (0,)), _row_action(b, (0,)), S.SAME_ROWS),
            CellSpec(_row_action(a, (0,)), _row_action(b, (1,)), S.DIFFERENT_ROWS),
            CellSpec(_row_action(a, (0,)), _row_action(b, (4,)), S.DISJOINT),
            *_update_columns_cells(a, b),
        ]
    if a in FRAGMENT_OPERATIONS and b in FRAGMENT_OPERATIONS:
        return _fragment_cells(a, b) + _update_columns_cells(a, b)
    pair = {a, b}
    if a is Op.CREATE_INDEX and b is Op.CREATE_INDEX:
        return [
            CellSpec(act.create_index("id", "idx_id"), act.create_index("id", "idx_id"), S.SAME_INDEX_NAME),
            CellSpec(act.create_index("id", "idx_id"), act.create_index("value", "idx_value"), S.DIFFERENT_INDEX_NAME),
            CellSpec(act.initialize_mem_wal(), act.initialize_mem_wal(), S.SINGLETON_MEM_WAL),
        ]
    if pair == {Op.CREATE_INDEX, Op.REWRITE}:
        return [
            CellSpec(_first_default(a), _first_default(b), S.NO_STABLE_ROW_IDS),
            CellSpec(_first_default(a), _first_default(b), S.STABLE_ROW_IDS, Template.STABLE_ROW_IDS),
            CellSpec(_with_reuse_index(a), _with_reuse_index(b), S.FRAGMENT_REUSE_INDEX, Template.INDEXED),
        ]
    if pair == {Op.CREATE_INDEX, Op.DATA_REPLACEMENT}:

        def side(op: Op, column: str) -> Action:
            return act.create_index(column, f"idx_{column}") if op is Op.CREATE_INDEX else act.data_replacement(0)

        return [
            CellSpec(side(a, "value"), side(b, "value"), S.INDEXED_COLUMN),
            CellSpec(side(a, "id"), side(b, "id"), S.UNINDEXED_COLUMN),
        ]
    if pair == {Op.OVERWRITE, Op.UPDATE_CONFIG}:

        def config_side(op: Op, key: str | None) -> Action:
            if op is Op.UPDATE_CONFIG:
                return act.update_config("k1")
            return act.overwrite() if key is None else act.overwrite_with_config(key)

        return [
            CellSpec(config_side(a, None), config_side(b, None), S.ANY),
            CellSpec(config_side(a, "k1"), config_side(b, "k1"), S.SAME_CONFIG_KEY),
            CellSpec(config_side(a, "k2"), config_side(b, "k2"), S.DIFFERENT_CONFIG_KEY),
        ]
    if a is Op.UPDATE_CONFIG and b is Op.UPDATE_CONFIG:
        return [
            CellSpec(act.update_config("k1"), act.update_config("k1"), S.SAME_CONFIG_KEY),
            CellSpec(act.update_config("k1"), act.update_config("k2"), S.DIFFERENT_CONFIG_KEY),
        ]
    if a is Op.UPDATE_BASES and b is Op.UPDATE_BASES:
        first = act.add_base("b1", "base-1", 1)
        return [
            CellSpec(first, act.add_base("b2", "base-2", 1), S.SAME_BASE_ID),
            CellSpec(first, act.add_base("b1", "base-2", 2), S.SAME_BASE_NAME),
            CellSpec(first, act.add_base("b2", "base-1", 2), S.SAME_BASE_PATH),
            CellSpec(first, act.add_base("b2", "base-2", 2), S.DIFFERENT_BASES),
        ]
    if a is Op.UPDATE_MEM_WAL_STATE and b is Op.UPDATE_MEM_WAL_STATE:
        region, other = act.MEM_WAL_REGIONS
        first = act.update_mem_wal_state(region, 1)
        return [
            CellSpec(first, act.update_mem_wal_state(region, 2), S.SAME_MEM_WAL_REGION, Template.MEM_WAL),
            CellSpec(first, act.update_mem_wal_state(other, 1), S.DIFFERENT_MEM_WAL_REGIONS, Template.MEM_WAL),
        ]
    if Op.UPDATE_MEM_WAL_STATE in pair:
        # pylance 14 adds no computed column to a table with a MemWAL attached.
        first = act.merge("doubled", computed=False) if a is Op.MERGE else _first_default(a)
        second = act.merge("tripled", computed=False) if b is Op.MERGE else _second_default(b)
        return [CellSpec(first, second, S.ANY, Template.MEM_WAL)]
    return [CellSpec(_first_default(a), _second_default(b), S.ANY)]


def all_cells() -> list[CellSpec]:
    """Every cell, in a stable order: first operation, second operation
    (both in proto order), sub-case."""
    return [cell for a in Op for b in Op for cell in _cells_of(a, b)]


#: Sub-cases the matrix does not measure, and why.
UNMEASURED_SUBCASES = {
    "update REWRITE_COLUMNS against update": (
        "neither pylance 14's update() nor the reference's writes REWRITE_COLUMNS updates, so the matrix commits "
        "them as operations (LanceDataset.commit / Dataset.commit) against Delete, Rewrite and DataReplacement; "
        "two column rewrites against each other are left out, the page not saying which rows they touch"
    ),
    "fragment reuse index": (
        "the reference writer cannot write a fragment reuse index (Rewrite.frag_reuse_index is not in "
        "protos/transaction.proto); pylance 14 writes one through a compaction with deferred index remapping, "
        "measured in the Rewrite/CreateIndex cells where pylance does the Rewrite. A CreateIndex writing the "
        "fragment reuse index (the page's rebase with a Rewrite) has no pylance 14 Python call"
    ),
}
