"""Conflict resolution (transaction specification: each operation's
"Compatibility" section, and "Conflict Resolution").

A writer commits ``mine`` on top of the versions committed since its read
version. For each of those, in version order, :func:`decide` says what
happens, from the perspective of the operation being committed (the page's
wording: compatibility is not symmetric):

* :attr:`Outcome.COMPATIBLE`: mine commits on top as it is; the manifest is
  rebuilt from the latest one, so fresh fragment ids and row ids come from the
  latest ``max_fragment_id`` and ``next_row_id`` (``conflict.rebase-fresh-ids``);
* :attr:`Outcome.REBASE`: mine is modified to incorporate theirs first
  (deletion masks merged, a singleton index merged), then committed;
* :attr:`Outcome.RETRYABLE`: the commit fails; running the whole operation
  again on the latest version may succeed;
* :attr:`Outcome.INCOMPATIBLE`: the commit fails; running it again would
  change what it means.

Be conservative (table format, "Conflict Resolution Flow"): a version whose
transaction is missing, or whose operation this implementation does not
know, conflicts with everything (``commit.missing-transaction-conflicts``,
``commit.unknown-operation-conflicts``).

Everything here is pure: :func:`decide` reads nothing. What a sub-case needs
from storage comes in as arguments: the manifest at mine's read version
(``read``: fragment files, stable row ids) and, for the same-rows sub-case of
Delete and Update, a :class:`RowChanges` the commit loop reads from the
deletion files. The rebase helpers at the end are pure too; the loop writes
the merged deletion files they ask for.

One small function per operation being committed (``_append``,
``_delete``, ...), each citing the requirement ids (``conflict.*``) of the
rules it applies. Where the page and pylance 14 disagree, the page is
followed and the difference is recorded in docs/spec-discrepancies.md.

Size. One cohesive concept (about 880 lines): the compatibility table of the
transaction page, one function per row, with the pure rebase helpers it
implies; splitting it would separate a decision from its rebase.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from .. import feature_flags
from ..fragment_reuse import FRAGMENT_REUSE_INDEX_NAME
from ..fragments import DeletionFile, Fragment
from ..index_metadata import IndexMetadata, encode_fragment_bitmap
from ..manifest import Manifest
from ..newer_operations import DataOverlay, ReserveRowIds
from ..transactions import (
    Append,
    Clone,
    CreateIndex,
    DataReplacement,
    Delete,
    Merge,
    Operation,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    Transaction,
    UnknownOperation,
    Update,
    UpdateBases,
    UpdateConfig,
    UpdateMap,
    UpdateMemWalState,
    UpdateMode,
)
from ..wire import table_pb2
from .build import MEM_WAL_INDEX_NAME

#: The fragment reuse index and the MemWAL index are singleton indices
#: (upstream index pages; the CreateIndex compatibility section).
SINGLETON_INDEX_NAMES = frozenset({FRAGMENT_REUSE_INDEX_NAME, MEM_WAL_INDEX_NAME})


class Outcome(enum.Enum):
    COMPATIBLE = "compatible"  # commit on top as is
    REBASE = "rebase"  # modify mine to incorporate theirs, then commit
    RETRYABLE = "retryable"  # fail; re-running the whole operation on the latest version may succeed
    INCOMPATIBLE = "incompatible"  # fail; re-running would change the operation's meaning


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    requirement_ids: tuple[str, ...]
    #: One sentence a user can read.
    reason: str


@dataclass(frozen=True)
class RowChanges:
    """Rows two transactions delete, for the same-rows sub-case of Delete and
    Update (transaction page, "Rebase Mechanism": affected rows).

    ``mine``: fragment id -> physical offsets mine deletes that were still
    visible at its read version. ``theirs``: fragment id -> every offset the
    deletion file theirs committed for that fragment marks deleted. Only the
    fragments both touch are needed; the commit loop reads them.
    """

    mine: Mapping[int, frozenset[int]] = field(default_factory=dict)
    theirs: Mapping[int, frozenset[int]] = field(default_factory=dict)

    def overlap(self, fragment_ids: Iterable[int]) -> dict[int, frozenset[int]]:
        """Offsets both delete, by fragment (only fragments where they meet)."""
        found = {}
        for fragment_id in fragment_ids:
            both = self.mine.get(fragment_id, frozenset()) & self.theirs.get(fragment_id, frozenset())
            if both:
                found[fragment_id] = both
        return found


@dataclass(frozen=True)
class _Pair:
    """What a per-operation function gets: both operations and the evidence."""

    mine: Transaction
    theirs: Transaction
    read: Manifest | None
    rows: RowChanges | None


def _compatible(rid: str, reason: str) -> Decision:
    return Decision(Outcome.COMPATIBLE, (rid,), reason)


def _rebase(rid: str, reason: str) -> Decision:
    return Decision(Outcome.REBASE, (rid,), reason)


def _retryable(rid: str, reason: str) -> Decision:
    return Decision(Outcome.RETRYABLE, (rid,), reason)


def _incompatible(rid: str, reason: str) -> Decision:
    return Decision(Outcome.INCOMPATIBLE, (rid,), reason)


def operation_title(operation: Operation | None) -> str:
    """The message name of an operation (``Append``, ...), for messages."""
    if operation is None or isinstance(operation, UnknownOperation):
        return "an unknown operation"
    return type(operation).__name__


# -- what an operation touches ------------------------------------------------------


def modified_fragment_ids(operation: Operation | None) -> set[int]:
    """Ids of the existing fragments an operation changes or removes (its new
    fragments are not counted: nobody else can touch them yet)."""
    if isinstance(operation, Delete):
        return {f.id for f in operation.updated_fragments} | set(operation.deleted_fragment_ids)
    if isinstance(operation, Update):
        return {f.id for f in operation.updated_fragments} | set(operation.removed_fragment_ids)
    if isinstance(operation, Rewrite):
        return rewritten_fragment_ids(operation)
    if isinstance(operation, DataReplacement):
        return {group.fragment_id for group in operation.replacements}
    if isinstance(operation, Merge):
        return {f.id for f in operation.fragments}
    return set()


def rewritten_fragment_ids(operation: Rewrite) -> set[int]:
    old = [f for group in operation.groups for f in group.old_fragments] + list(operation.old_fragments)
    return {f.id for f in old}


def removed_fragment_ids(operation: Operation | None) -> set[int]:
    """Fragments a Delete or Update removes whole."""
    if isinstance(operation, Delete):
        return set(operation.deleted_fragment_ids)
    if isinstance(operation, Update):
        return set(operation.removed_fragment_ids)
    return set()


def _covered_fragments(indices: Iterable[IndexMetadata]) -> set[int] | None:
    """Fragments the indices cover; None when one has no bitmap (covers an
    unknown set: treated as overlapping everything)."""
    covered: set[int] = set()
    for index in indices:
        ids = index.fragment_ids()
        if ids is None:
            return None
        covered |= set(ids)
    return covered


def _overlaps(fragment_ids: set[int], covered: set[int] | None) -> bool:
    return bool(fragment_ids) and (covered is None or bool(fragment_ids & covered))


def _uses_stable_row_ids(read: Manifest | None) -> bool:
    return read is not None and bool(read.reader_feature_flags & feature_flags.STABLE_ROW_IDS)


def _replaced_fields(operation: DataReplacement) -> set[int]:
    return {field_id for g in operation.replacements if g.new_file is not None for field_id in g.new_file.fields}


def _regions(generations) -> set[str]:
    return {g.region_id for g in generations if g.region_id is not None}


# -- one function per operation being committed -------------------------------------


def _append(p: _Pair) -> Decision:
    theirs = p.theirs.operation
    if isinstance(theirs, Overwrite):
        return _incompatible("conflict.append-after-overwrite-incompatible", "the table was overwritten")
    if isinstance(theirs, Restore):
        return _incompatible("conflict.append-after-restore-incompatible", "the table was restored to an older version")
    if isinstance(theirs, UpdateMemWalState):
        return _incompatible("conflict.append-after-mem-wal-state-incompatible", "MemWAL merge progress was recorded")
    return _compatible("conflict.append-otherwise-compatible", "appended fragments take fresh ids")


def _delete(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    touched = modified_fragment_ids(mine)
    if isinstance(theirs, Overwrite):
        return _incompatible("conflict.delete-after-overwrite-incompatible", "the table was overwritten")
    if isinstance(theirs, Restore):
        return _incompatible("conflict.delete-after-restore-incompatible", "the table was restored to an older version")
    if isinstance(theirs, UpdateMemWalState):
        return _incompatible("conflict.delete-after-mem-wal-state-incompatible", "MemWAL merge progress was recorded")
    if isinstance(theirs, Merge) and touched & modified_fragment_ids(theirs):
        return _retryable(
            "conflict.delete-after-merge-overlapping-retryable", "a Merge rewrote fragments it deletes from"
        )
    if isinstance(theirs, Rewrite) and touched & rewritten_fragment_ids(theirs):
        return _retryable("conflict.delete-after-rewrite-overlapping-retryable", "a Rewrite moved rows it deletes")
    if isinstance(theirs, DataReplacement) and touched & modified_fragment_ids(theirs):
        return _retryable(
            "conflict.delete-after-data-replacement-overlapping-retryable", "a DataReplacement changed its fragments"
        )
    if isinstance(theirs, (Delete, Update)):
        return _deletion_masks(p, "conflict.delete-after-delete-or-update-rebases")
    return _compatible("conflict.delete-otherwise-compatible", "the other operation touched none of its fragments")


def _deletion_masks(p: _Pair, rebase_id: str) -> Decision:
    """Mine and theirs are each a Delete or an Update: merge the deletion
    masks of the fragments both changed, unless the same rows were deleted
    (or a shared fragment was removed whole, or had its data files changed:
    then the masks cannot be merged)."""
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, (Delete, Update)) and isinstance(theirs, (Delete, Update))
    same_rows = "conflict.delete-same-rows-retryable"
    theirs_updated = {f.id: f for f in theirs.updated_fragments}
    shared = modified_fragment_ids(mine) & modified_fragment_ids(theirs)
    if not shared:
        return _compatible(rebase_id, "the two operations changed different fragments")
    if shared & removed_fragment_ids(theirs):
        return _retryable(same_rows, f"fragments {sorted(shared & removed_fragment_ids(theirs))} were removed whole")
    if shared & removed_fragment_ids(mine):
        return _retryable(same_rows, f"fragments {sorted(shared & removed_fragment_ids(mine))} it removes were changed")
    if p.read is not None:
        # A column rewritten in place (an Update in REWRITE_COLUMNS mode)
        # changes every row of its fragment, so it touches whatever rows the
        # other side deleted there: the same rows, whichever side rewrote it.
        at_read = {f.id: f for f in p.read.fragments}
        mine_updated = {f.id: f for f in mine.updated_fragments}
        rewritten = sorted(
            i for i in shared if i in at_read and i in theirs_updated and theirs_updated[i].files != at_read[i].files
        )
        if rewritten:
            return _retryable(same_rows, f"the data files of fragments {rewritten} were rewritten")
        rewriting = sorted(
            i for i in shared if i in at_read and i in mine_updated and mine_updated[i].files != at_read[i].files
        )
        if rewriting:
            return _retryable(
                same_rows, f"it rewrites the data files of fragments {rewriting}, whose rows the other side changed"
            )
    if p.rows is not None:
        both = p.rows.overlap(shared)
        if both:
            fragment_id, offsets = next(iter(sorted(both.items())))
            return _retryable(
                same_rows, f"both deleted rows {sorted(offsets)[:5]} of fragment {fragment_id} (same rows)"
            )
    return _rebase(rebase_id, f"the deletion masks of fragments {sorted(shared)} are merged")


def _overwrite(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, Overwrite)
    if isinstance(theirs, Overwrite):
        return _retryable("conflict.overwrite-after-overwrite-retryable", "another Overwrite was committed")
    if isinstance(theirs, UpdateMemWalState):
        return _retryable("conflict.overwrite-after-mem-wal-state-retryable", "MemWAL merge progress was recorded")
    if isinstance(theirs, UpdateConfig):
        keys = _config_keys_touched(theirs)
        if keys.replaces or set(mine.config_upsert_values) & keys.keys:
            return _retryable(
                "conflict.overwrite-after-update-config-same-key-retryable", "the same config key was changed"
            )
    return _compatible("conflict.overwrite-otherwise-compatible", "an Overwrite replaces the whole table")


def _create_index(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, CreateIndex)
    if isinstance(theirs, Overwrite):
        return _incompatible("conflict.create-index-after-overwrite-incompatible", "the table was overwritten")
    if isinstance(theirs, Restore):
        return _incompatible(
            "conflict.create-index-after-restore-incompatible", "the table was restored to an older version"
        )
    if isinstance(theirs, UpdateMemWalState):
        return _incompatible(
            "conflict.create-index-after-mem-wal-state-incompatible", "MemWAL merge progress was recorded"
        )
    ordinary = [i for i in mine.new_indices if i.name not in SINGLETON_INDEX_NAMES]
    if isinstance(theirs, Rewrite):
        if (
            ordinary
            and not _uses_stable_row_ids(p.read)
            and _overlaps(rewritten_fragment_ids(theirs), _covered_fragments(ordinary))
        ):
            return _retryable(
                "conflict.create-index-after-rewrite-overlapping-retryable",
                "a Rewrite moved rows of fragments the index covers",
            )
        return _compatible("conflict.create-index-otherwise-compatible", "the Rewrite moved no indexed rows")
    if isinstance(theirs, DataReplacement):
        for group in theirs.replacements:
            fields = set(group.new_file.fields) if group.new_file is not None else set()
            hit = [i for i in ordinary if fields & set(i.fields)]
            if hit and _overlaps({group.fragment_id}, _covered_fragments(hit)):
                return _retryable(
                    "conflict.create-index-after-data-replacement-indexed-retryable",
                    f"an indexed field of fragment {group.fragment_id} was replaced",
                )
        return _compatible("conflict.create-index-otherwise-compatible", "no indexed field was replaced")
    if isinstance(theirs, CreateIndex):
        singletons = {i.name for i in mine.new_indices} & {i.name for i in theirs.new_indices} & SINGLETON_INDEX_NAMES
        if singletons:
            return _rebase(
                "conflict.create-index-singleton-rebases", f"the singleton index {sorted(singletons)[0]} is merged"
            )
        return _compatible("conflict.create-index-same-name-later-wins", "indices are told apart by name and uuid")
    return _compatible(
        "conflict.create-index-otherwise-compatible", "fragments added stay unindexed, removed ones leave the bitmap"
    )


def _rewrite(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, Rewrite)
    mine_ids = rewritten_fragment_ids(mine)
    if isinstance(theirs, Overwrite):
        return _incompatible("conflict.rewrite-after-overwrite-incompatible", "the table was overwritten")
    if isinstance(theirs, Restore):
        return _incompatible(
            "conflict.rewrite-after-restore-incompatible", "the table was restored to an older version"
        )
    if isinstance(theirs, Merge):
        return _retryable("conflict.rewrite-after-merge-retryable", "a Merge replaced the fragment list")
    if isinstance(theirs, (Delete, Update, DataReplacement, Rewrite)) and mine_ids & modified_fragment_ids(theirs):
        shared = sorted(mine_ids & modified_fragment_ids(theirs))
        return _retryable(
            "conflict.rewrite-after-fragment-change-overlapping-retryable",
            f"a {operation_title(theirs)} changed fragments {shared} it rewrites",
        )
    if isinstance(theirs, CreateIndex):
        ordinary = [i for i in theirs.new_indices if i.name not in SINGLETON_INDEX_NAMES]
        if ordinary and not _uses_stable_row_ids(p.read) and _overlaps(mine_ids, _covered_fragments(ordinary)):
            return _retryable(
                "conflict.rewrite-after-create-index-overlapping-retryable",
                "a new index covers fragments it rewrites",
            )
    return _compatible("conflict.rewrite-otherwise-compatible", "the other operation touched none of its fragments")


def _merge(p: _Pair) -> Decision:
    theirs = p.theirs.operation
    if isinstance(theirs, (Overwrite, Restore, Project, UpdateMemWalState)):
        return _incompatible(
            "conflict.merge-after-overwrite-restore-project-or-mem-wal-incompatible",
            f"a {operation_title(theirs)} changed the table under the Merge",
        )
    if isinstance(theirs, (Append, Delete, Update, Merge, Rewrite, DataReplacement)):
        return _retryable(
            "conflict.merge-after-fragment-change-retryable",
            f"a {operation_title(theirs)} changed the fragments the Merge lists",
        )
    return _compatible("conflict.merge-otherwise-compatible", "the other operation changed no fragment")


def _project(p: _Pair) -> Decision:
    theirs = p.theirs.operation
    if isinstance(theirs, (Overwrite, Restore, UpdateMemWalState)):
        return _incompatible(
            "conflict.project-after-overwrite-restore-or-mem-wal-incompatible",
            f"a {operation_title(theirs)} changed the table under the Project",
        )
    if isinstance(theirs, (Project, Merge)):
        return _retryable("conflict.project-after-project-or-merge-retryable", "the schema changed meanwhile")
    return _compatible("conflict.project-otherwise-compatible", "the schema did not change")


def _restore(p: _Pair) -> Decision:
    if isinstance(p.theirs.operation, UpdateMemWalState):
        return _incompatible("conflict.restore-after-mem-wal-state-incompatible", "MemWAL merge progress was recorded")
    return _compatible("conflict.restore-otherwise-compatible", "a Restore supersedes what happened meanwhile")


def _reserve_fragments(p: _Pair) -> Decision:
    if isinstance(p.theirs.operation, (Overwrite, Restore)):
        return _incompatible(
            "conflict.reserve-fragments-after-overwrite-or-restore-incompatible",
            f"a {operation_title(p.theirs.operation)} reset the fragment ids",
        )
    return _compatible("conflict.reserve-fragments-otherwise-compatible", "ids are reserved above the latest maximum")


def _reserve_row_ids(p: _Pair) -> Decision:
    """ReserveRowIds Compatibility (newest page): only a manifest replaced
    wholesale conflicts; otherwise the ids come from the latest next_row_id."""
    if isinstance(p.theirs.operation, (Overwrite, Restore)):
        return _incompatible(
            "conflict.reserve-row-ids-after-overwrite-or-restore-incompatible",
            f"a {operation_title(p.theirs.operation)} replaced the manifest whose next_row_id it advances",
        )
    return _compatible("conflict.reserve-row-ids-otherwise-compatible", "ids are reserved above the latest next_row_id")


def _data_overlay(p: _Pair) -> Decision:
    """DataOverlay Compatibility (newest page): permissive, since overlays
    stack and keep physical row addresses; only what moves rows or replaces
    the fragment list under the overlaid fragments stops it."""
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, DataOverlay)
    targets = mine.fragment_ids
    if isinstance(theirs, (Overwrite, Restore, UpdateMemWalState)):
        return _incompatible(
            "conflict.data-overlay-after-overwrite-restore-or-mem-wal-incompatible",
            f"a {operation_title(theirs)} changed the table under the overlays",
        )
    if isinstance(theirs, Rewrite) and targets & rewritten_fragment_ids(theirs):
        return _retryable(
            "conflict.data-overlay-after-rewrite-overlapping-retryable",
            f"a Rewrite moved the rows of overlaid fragments {sorted(targets & rewritten_fragment_ids(theirs))}",
        )
    if isinstance(theirs, Merge):
        return _retryable("conflict.data-overlay-after-merge-retryable", "a Merge replaced the fragment list")
    if (
        isinstance(theirs, Update)
        and theirs.update_mode != UpdateMode.REWRITE_COLUMNS
        and targets & modified_fragment_ids(theirs)
    ):
        return _retryable(
            "conflict.data-overlay-after-row-moving-update-retryable",
            f"an Update moved rows out of overlaid fragments {sorted(targets & modified_fragment_ids(theirs))}",
        )
    return _compatible(
        "conflict.data-overlay-otherwise-compatible", "physical row addresses of the overlaid fragments are kept"
    )


def _update(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, Update)
    touched = modified_fragment_ids(mine)
    if isinstance(theirs, (Overwrite, Restore)):
        return _incompatible(
            "conflict.update-after-overwrite-or-restore-incompatible", f"a {operation_title(theirs)} replaced the table"
        )
    if isinstance(theirs, (Rewrite, DataReplacement)) and touched & modified_fragment_ids(theirs):
        return _retryable(
            "conflict.update-after-fragment-change-overlapping-retryable",
            f"a {operation_title(theirs)} changed fragments {sorted(touched & modified_fragment_ids(theirs))}",
        )
    if isinstance(theirs, Merge):
        return _retryable("conflict.update-after-merge-retryable", "a Merge replaced the fragment list")
    if isinstance(theirs, (Delete, Update)):
        return _deletion_masks(p, "conflict.update-after-delete-or-update-rebases")
    if isinstance(theirs, UpdateMemWalState) and _regions(mine.merged_generations) & _regions(
        theirs.merged_generations
    ):
        return _incompatible(
            "conflict.update-mem-wal-same-region-incompatible", "merge progress of the same MemWAL region was recorded"
        )
    return _compatible("conflict.update-otherwise-compatible", "the other operation touched none of its fragments")


@dataclass(frozen=True)
class _Touched:
    keys: frozenset[str]
    replaces: bool


def _map_touched(update: UpdateMap | None, *extra: Iterable[str]) -> _Touched:
    keys = {e.key for e in update.entries} if update is not None else set()
    for more in extra:
        keys |= set(more)
    return _Touched(frozenset(keys), bool(update is not None and update.replace))


def _config_keys_touched(op: UpdateConfig) -> _Touched:
    return _map_touched(op.config_updates, op.upsert_values, op.delete_keys)


def _maps_touched(op: UpdateConfig) -> dict[str, _Touched]:
    """Each map an UpdateConfig changes (config, table metadata, schema
    metadata, the metadata of each field), with the keys it changes."""
    maps = {
        "config": _config_keys_touched(op),
        "table metadata": _map_touched(op.table_metadata_updates),
        "schema metadata": _map_touched(op.schema_metadata_updates, op.schema_metadata),
    }
    for field_id in set(op.field_metadata_updates) | set(op.field_metadata):
        maps[f"field {field_id} metadata"] = _map_touched(
            op.field_metadata_updates.get(field_id), op.field_metadata.get(field_id, {})
        )
    return {name: t for name, t in maps.items() if t.keys or t.replaces}


def _update_config(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, UpdateConfig)
    if isinstance(theirs, Overwrite):
        return _incompatible("conflict.update-config-after-overwrite-incompatible", "the table was overwritten")
    if isinstance(theirs, UpdateConfig):
        ours, other = _maps_touched(mine), _maps_touched(theirs)
        for name in sorted(set(ours) & set(other)):
            a, b = ours[name], other[name]
            if a.replaces or b.replaces or a.keys & b.keys:
                return _incompatible(
                    "conflict.update-config-same-key-incompatible", f"the same keys of the {name} were changed"
                )
    return _compatible("conflict.update-config-otherwise-compatible", "different keys, or no config changed")


def _data_replacement(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, DataReplacement)
    targets = modified_fragment_ids(mine)
    fields = _replaced_fields(mine)
    if isinstance(theirs, (Overwrite, Restore, UpdateMemWalState)):
        return _incompatible(
            "conflict.data-replacement-after-overwrite-restore-or-mem-wal-incompatible",
            f"a {operation_title(theirs)} changed the table under the DataReplacement",
        )
    if isinstance(theirs, (Delete, Update)) and targets & removed_fragment_ids(theirs):
        return _incompatible(
            "conflict.data-replacement-target-removed-incompatible",
            f"target fragments {sorted(targets & removed_fragment_ids(theirs))} were removed",
        )
    if isinstance(theirs, DataReplacement):
        for group in theirs.replacements:
            other_fields = set(group.new_file.fields) if group.new_file is not None else set()
            if group.fragment_id in targets and other_fields & _fields_of(mine, group.fragment_id):
                return _retryable(
                    "conflict.data-replacement-same-field-retryable",
                    f"the same field of fragment {group.fragment_id} was replaced",
                )
        return _compatible("conflict.data-replacement-otherwise-compatible", "other fields or fragments were replaced")
    if isinstance(theirs, CreateIndex) and any(fields & set(i.fields) for i in theirs.new_indices):
        return _retryable(
            "conflict.data-replacement-after-create-index-indexed-retryable", "a replaced field was indexed"
        )
    if isinstance(theirs, Rewrite) and targets & rewritten_fragment_ids(theirs):
        return _retryable(
            "conflict.data-replacement-after-rewrite-overlapping-retryable", "a Rewrite moved the target rows"
        )
    if isinstance(theirs, Update):
        touched = targets & {f.id for f in theirs.updated_fragments}
        if touched and theirs.update_mode == UpdateMode.REWRITE_COLUMNS:
            if fields & set(theirs.fields_modified):
                return _retryable(
                    "conflict.data-replacement-after-moving-update-retryable",
                    "an Update rewrote a replaced field in place",
                )
        elif touched and theirs.new_fragments:
            return _retryable(
                "conflict.data-replacement-after-moving-update-retryable",
                f"an Update moved rows out of fragments {sorted(touched)}",
            )
    if isinstance(theirs, Merge):
        return _retryable("conflict.data-replacement-after-merge-retryable", "a Merge replaced the fragment list")
    if isinstance(theirs, (Delete, Update)) and targets & modified_fragment_ids(theirs):
        return _compatible(
            "conflict.data-replacement-keeps-deletions", "only deletion vectors were added to the target fragments"
        )
    return _compatible("conflict.data-replacement-otherwise-compatible", "the other operation touched no target")


def _fields_of(op: DataReplacement, fragment_id: int) -> set[int]:
    return {
        field_id
        for g in op.replacements
        if g.fragment_id == fragment_id and g.new_file is not None
        for field_id in g.new_file.fields
    }


def _update_mem_wal_state(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, UpdateMemWalState)
    same_region = "conflict.mem-wal-state-same-region-incompatible"
    if isinstance(theirs, UpdateMemWalState) or (isinstance(theirs, Update) and theirs.merged_generations):
        shared = _regions(mine.merged_generations) & _regions(theirs.merged_generations)
        if shared:
            return _incompatible(same_region, f"merge progress of region {sorted(shared)[0]} was recorded meanwhile")
        return _compatible(same_region, "different MemWAL regions")
    # DataOverlay: the page has no UpdateMemWalState section; an overlay
    # changes stored values as a DataReplacement does, so it is judged alike.
    if isinstance(theirs, (Append, Overwrite, Delete, Update, DataReplacement, DataOverlay, Merge, Restore, Project)):
        return _incompatible(
            "conflict.mem-wal-state-after-data-change-incompatible",
            f"a {operation_title(theirs)} changed the data the merge progress describes",
        )
    return _compatible("conflict.mem-wal-state-otherwise-compatible", "the other operation changed no data")


def _update_bases(p: _Pair) -> Decision:
    mine, theirs = p.mine.operation, p.theirs.operation
    assert isinstance(mine, UpdateBases)
    if isinstance(theirs, UpdateBases):
        for new in mine.new_bases:
            for other in theirs.new_bases:
                if (
                    (new.id != 0 and new.id == other.id)
                    or (new.name is not None and new.name == other.name)
                    or new.path == other.path
                ):
                    return _incompatible(
                        "conflict.update-bases-same-base-incompatible",
                        f"base path {new.id} ({new.path}) clashes with one added meanwhile",
                    )
    return _compatible("conflict.update-bases-otherwise-compatible", "no base path clashes")


_BY_OPERATION: Mapping[type, Callable[[_Pair], Decision]] = {
    Append: _append,
    Delete: _delete,
    Overwrite: _overwrite,
    CreateIndex: _create_index,
    Rewrite: _rewrite,
    Merge: _merge,
    Project: _project,
    Restore: _restore,
    ReserveFragments: _reserve_fragments,
    Update: _update,
    UpdateConfig: _update_config,
    DataReplacement: _data_replacement,
    UpdateMemWalState: _update_mem_wal_state,
    UpdateBases: _update_bases,
    ReserveRowIds: _reserve_row_ids,
    DataOverlay: _data_overlay,
}


def decide(
    mine: Transaction,
    theirs: Transaction | None,
    *,
    read: Manifest | None = None,
    rows: RowChanges | None = None,
) -> Decision:
    """Outcome for committing ``mine`` after ``theirs`` was committed since
    mine's read version.

    ``read`` is the manifest at mine's read version, for the sub-cases that
    need it (stable row ids; whether a shared fragment's data files changed);
    ``rows`` the rows both delete, for the same-rows sub-case of Delete and
    Update (without it, deletions on a shared fragment are judged rebaseable
    and the rebase finds same rows itself). A missing transaction (None) or an
    unknown operation, on either side, is INCOMPATIBLE ("be conservative").
    """
    if theirs is None:
        return _incompatible("commit.missing-transaction-conflicts", "its transaction is missing")
    if not theirs.has_known_operation or theirs.operation is None:
        return _incompatible("commit.unknown-operation-conflicts", "its operation is not known to this implementation")
    if isinstance(mine.operation, Clone):
        return _incompatible("conflict.clone-only-first", "a Clone only creates a table, and this one exists")
    handler = _BY_OPERATION.get(type(mine.operation))
    if handler is None:
        return _incompatible(
            "commit.unknown-operation-conflicts", "the operation being committed is not known to this implementation"
        )
    if isinstance(theirs.operation, Clone):
        return _compatible("conflict.clone-never-conflicts", "a Clone is a table's first version")
    return handler(_Pair(mine, theirs, read, rows))


# -- rebasing (pure; the commit loop writes the files) --------------------------------


def deletions_to_merge(mine: Transaction, base: Manifest, latest: Manifest) -> dict[int, Fragment]:
    """Fragments whose deletion mask mine must merge: those mine updates
    whose deletion file in ``latest`` differs from the one in ``base`` (the
    manifest mine's fragments were built against), each as it is in
    ``latest``."""
    operation = mine.operation
    if not isinstance(operation, (Delete, Update)):
        return {}
    before = {f.id: f for f in base.fragments}
    now = {f.id: f for f in latest.fragments}
    merge = {}
    for fragment in operation.updated_fragments:
        old, new = before.get(fragment.id), now.get(fragment.id)
        if old is None or new is None:
            continue
        if old.deletion_file != new.deletion_file:
            merge[fragment.id] = new
    return merge


def with_merged_deletions(
    mine: Transaction, deletion_files: Mapping[int, DeletionFile | None], *, rebased_on: int
) -> Transaction:
    """Mine with the merged deletion files written for it: each updated
    fragment named in ``deletion_files`` takes its new file, or is removed
    whole when the value is None (every row deleted). The transaction is
    then based on version ``rebased_on`` (as pylance does: what it changed is
    now relative to that version)."""
    operation = mine.operation
    assert isinstance(operation, (Delete, Update))
    emptied = sorted(i for i, f in deletion_files.items() if f is None)
    updated = []
    for fragment in operation.updated_fragments:
        if fragment.id in deletion_files:
            new_file = deletion_files[fragment.id]
            if new_file is None:
                continue
            fragment = replace(fragment, deletion_file=new_file)
        updated.append(fragment)
    if isinstance(operation, Delete):
        new_op: Operation = replace(
            operation,
            updated_fragments=updated,
            deleted_fragment_ids=list(operation.deleted_fragment_ids) + emptied,
        )
    else:
        new_op = replace(
            operation,
            updated_fragments=updated,
            removed_fragment_ids=list(operation.removed_fragment_ids) + emptied,
        )
    return replace(mine, operation=new_op, read_version=rebased_on)


def with_latest_data_files(mine: Transaction, base: Manifest, latest: Manifest) -> Transaction:
    """Mine with each fragment it updates carrying the data files the
    fragment has in ``latest``, where a compatible concurrent version changed
    them (the reference's Project removes a data file left holding only
    dropped fields) and mine did not: a Delete or Update changes only a
    fragment's deletion file, so the rest of the fragment is the latest
    one's (transaction page, "Rebase Mechanism": the rebased transaction
    incorporates the concurrent change instead of undoing it)."""
    operation = mine.operation
    if not isinstance(operation, (Delete, Update)):
        return mine
    before = {f.id: f for f in base.fragments}
    now = {f.id: f for f in latest.fragments}
    updated = []
    for fragment in operation.updated_fragments:
        old, new = before.get(fragment.id), now.get(fragment.id)
        if old is not None and new is not None and fragment.files == old.files and new.files != old.files:
            fragment = replace(fragment, files=list(new.files))
        updated.append(fragment)
    if updated == operation.updated_fragments:
        return mine
    return replace(mine, operation=replace(operation, updated_fragments=updated))


def with_index_bitmaps_on(mine: Transaction, latest: Manifest) -> Transaction:
    """A CreateIndex whose fragment bitmaps name only fragments that still
    exist in ``latest``: fragments a concurrent Delete, Update or Rewrite
    removed leave the bitmaps (the CreateIndex compatibility section)."""
    operation = mine.operation
    if not isinstance(operation, CreateIndex):
        return mine
    present = {f.id for f in latest.fragments}
    indices = []
    for index in operation.new_indices:
        covered = index.fragment_ids()
        if covered is not None and set(covered) - present:
            index = replace(index, fragment_bitmap=encode_fragment_bitmap(set(covered) & present))
        indices.append(index)
    return replace(mine, operation=replace(operation, new_indices=indices))


class SingletonMergeError(ValueError):
    """Two versions of a singleton index cannot be merged without reading
    files (their details are not inline)."""


def with_singleton_indices_merged(mine: Transaction, latest_indices: Iterable[IndexMetadata]) -> Transaction:
    """A CreateIndex whose singleton indices (MemWAL, fragment reuse) include
    what the latest version's copies hold (the CreateIndex compatibility
    section: rebase and merge the indexes). MemWAL: per region, the higher
    merged generation. Fragment reuse: the union of the inline versions.
    Raises :class:`SingletonMergeError` when details are not inline."""
    operation = mine.operation
    if not isinstance(operation, CreateIndex):
        return mine
    latest = {i.name: i for i in latest_indices if i.name in SINGLETON_INDEX_NAMES}
    merged_indices = []
    for index in operation.new_indices:
        committed = latest.get(index.name)
        if committed is not None and committed.uuid != index.uuid:
            if index.name == MEM_WAL_INDEX_NAME:
                index = replace(index, details=_merged_mem_wal_details(index.details, committed.details))
            else:
                index = replace(index, details=_merged_fragment_reuse_details(index.details, committed.details))
        merged_indices.append(index)
    return replace(mine, operation=replace(operation, new_indices=merged_indices))


def _merged_mem_wal_details(mine: bytes, theirs: bytes) -> bytes:
    ours, other = table_pb2.MemWalIndexDetails(), table_pb2.MemWalIndexDetails()
    ours.ParseFromString(mine)
    other.ParseFromString(theirs)
    by_region = {bytes(g.region_id.uuid): g for g in ours.merged_generations}
    for generation in other.merged_generations:
        region = bytes(generation.region_id.uuid)
        current = by_region.get(region)
        if current is None:
            added = ours.merged_generations.add()
            added.CopyFrom(generation)
            by_region[region] = added
        elif generation.generation > current.generation:
            current.generation = generation.generation
    return ours.SerializeToString(deterministic=True)


def _merged_fragment_reuse_details(mine: bytes, theirs: bytes) -> bytes:
    ours, other = table_pb2.FragmentReuseIndexDetails(), table_pb2.FragmentReuseIndexDetails()
    ours.ParseFromString(mine)
    other.ParseFromString(theirs)
    if ours.WhichOneof("content") != "inline" or other.WhichOneof("content") != "inline":
        raise SingletonMergeError("fragment reuse index details kept in an external file")
    known = {v.dataset_version for v in ours.inline.versions}
    for version in other.inline.versions:
        if version.dataset_version not in known:
            ours.inline.versions.add().CopyFrom(version)
            known.add(version.dataset_version)
    ordered = sorted(ours.inline.versions, key=lambda v: v.dataset_version)
    result = table_pb2.FragmentReuseIndexDetails()
    for version in ordered:
        result.inline.versions.add().CopyFrom(version)
    return result.SerializeToString(deterministic=True)


__all__ = [
    "FRAGMENT_REUSE_INDEX_NAME",
    "SINGLETON_INDEX_NAMES",
    "Decision",
    "Outcome",
    "RowChanges",
    "SingletonMergeError",
    "decide",
    "deletions_to_merge",
    "modified_fragment_ids",
    "operation_title",
    "removed_fragment_ids",
    "rewritten_fragment_ids",
    "with_index_bitmaps_on",
    "with_merged_deletions",
    "with_singleton_indices_merged",
]
