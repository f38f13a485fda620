"""What the upstream transaction page says about each cell.

The page (``docs/src/format/table/transaction.md`` of ``lance-format/lance``,
each operation's "Compatibility" section) describes compatibility from the
side of the operation being committed: "mine" is the second writer's
operation, "theirs" the one committed since mine's read version. Where a
section lists an operation under "conflict" without saying it can be
retried, the conflict is incompatible. Each function below restates one
section; :func:`verdict` picks the section of the second operation.
"""

from __future__ import annotations

from collections.abc import Callable

from .model import Operation as Op
from .model import PageVerdict as V
from .model import Subcase as S

PAGE_REPOSITORY = "lance-format/lance"
PAGE_PATH = "docs/src/format/table/transaction.md"
#: The commit of the page the verdicts restate.
PAGE_COMMIT = "5f4698788049910f61807759df28ab399888fd2b"

Verdict = tuple[V, str]
_REPLACES_OR_REWINDS = {Op.OVERWRITE, Op.RESTORE}


def _append(theirs: Op, sub: S) -> Verdict:
    if theirs in _REPLACES_OR_REWINDS | {Op.UPDATE_MEM_WAL_STATE}:
        return V.INCOMPATIBLE, f"Append Compatibility: {theirs.value} conflicts with append"
    return V.COMPATIBLE, "Append Compatibility: compatible with everything else"


def _delete_or_update(mine: Op, theirs: Op, sub: S) -> Verdict:
    section = "Delete Compatibility" if mine is Op.DELETE else "Update Compatibility"
    incompatible = _REPLACES_OR_REWINDS | ({Op.UPDATE_MEM_WAL_STATE} if mine is Op.DELETE else set())
    if theirs in incompatible:
        return V.INCOMPATIBLE, f"{section}: {theirs.value} conflicts"
    if theirs is Op.MERGE:
        return V.RETRYABLE, f"{section}: merge is retryable (always)"
    if theirs in (Op.REWRITE, Op.DATA_REPLACEMENT):
        if sub.same_fragment:
            return V.RETRYABLE, f"{section}: {theirs.value} on overlapping fragments is retryable"
        return V.COMPATIBLE, f"{section}: {theirs.value} on other fragments does not conflict"
    if theirs in (Op.DELETE, Op.UPDATE):
        if sub is S.SAME_ROWS:
            return V.RETRYABLE, f"{section}: {theirs.value} rebases, but the same rows touched make it retryable"
        if sub is S.UPDATE_COLUMNS:
            # A column rewritten in place is written anew for every row of
            # its fragment, the row the other side deletes included.
            return V.RETRYABLE, (
                f"{section}: {theirs.value} rebases, but a column rewrite in place touches every row of the "
                "fragment, the deleted one too: the same rows make it retryable"
            )
        return V.REBASE, f"{section}: {theirs.value} rebases (deletion masks merged)"
    return V.COMPATIBLE, f"{section}: not listed, compatible"


def _overwrite(theirs: Op, sub: S) -> Verdict:
    if theirs in (Op.OVERWRITE, Op.UPDATE_MEM_WAL_STATE):
        return V.RETRYABLE, f"Overwrite Compatibility: {theirs.value} is retryable (always)"
    if theirs is Op.UPDATE_CONFIG and sub is S.SAME_CONFIG_KEY:
        return V.RETRYABLE, "Overwrite Compatibility: update_config of the same key is retryable"
    return V.COMPATIBLE, "Overwrite Compatibility: what happened since the read version does not matter"


def _create_index(theirs: Op, sub: S) -> Verdict:
    if theirs in _REPLACES_OR_REWINDS | {Op.UPDATE_MEM_WAL_STATE}:
        return V.INCOMPATIBLE, f"CreateIndex Compatibility: {theirs.value} conflicts"
    if theirs is Op.REWRITE:
        if sub is S.STABLE_ROW_IDS:
            return V.COMPATIBLE, "CreateIndex Compatibility: rewrite is compatible under stable row ids"
        if sub is S.FRAGMENT_REUSE_INDEX:
            return V.COMPATIBLE, "CreateIndex Compatibility: rewrite with a fragment reuse index is compatible"
        return (
            V.RETRYABLE,
            "CreateIndex Compatibility: rewrite of indexed fragments without stable row ids is retryable",
        )
    if theirs is Op.DATA_REPLACEMENT:
        if sub is S.INDEXED_COLUMN:
            return V.RETRYABLE, "CreateIndex Compatibility: data_replacement of the indexed column is retryable"
        return V.COMPATIBLE, "CreateIndex Compatibility: data_replacement of another column is compatible"
    if theirs is Op.CREATE_INDEX:
        if sub is S.SINGLETON_MEM_WAL:
            return V.REBASE, "CreateIndex Compatibility: the same singleton index rebases (indexes merged)"
        return V.COMPATIBLE, "CreateIndex Compatibility: concurrent indexes are allowed (same name: the second wins)"
    return V.COMPATIBLE, "CreateIndex Compatibility: not listed, compatible"


def _rewrite(theirs: Op, sub: S) -> Verdict:
    if theirs in _REPLACES_OR_REWINDS:
        return V.INCOMPATIBLE, f"Rewrite Compatibility: {theirs.value} conflicts"
    if theirs is Op.MERGE:
        return V.RETRYABLE, "Rewrite Compatibility: merge is retryable (always)"
    if theirs in (Op.DATA_REPLACEMENT, Op.DELETE, Op.UPDATE, Op.REWRITE):
        if sub.same_fragment or theirs is Op.REWRITE:
            return V.RETRYABLE, f"Rewrite Compatibility: {theirs.value} on overlapping fragments is retryable"
        return V.COMPATIBLE, f"Rewrite Compatibility: {theirs.value} on other fragments does not conflict"
    if theirs is Op.CREATE_INDEX:
        if sub is S.STABLE_ROW_IDS:
            return V.COMPATIBLE, "Rewrite Compatibility: create_index is compatible under stable row ids"
        if sub is S.FRAGMENT_REUSE_INDEX:
            return V.COMPATIBLE, "Rewrite Compatibility: create_index is compatible with a fragment reuse index"
        return V.RETRYABLE, "Rewrite Compatibility: create_index over the rewritten fragments is retryable"
    return V.COMPATIBLE, "Rewrite Compatibility: not listed, compatible"


def _merge(theirs: Op, sub: S) -> Verdict:
    if theirs in _REPLACES_OR_REWINDS | {Op.UPDATE_MEM_WAL_STATE, Op.PROJECT}:
        return V.INCOMPATIBLE, f"Merge Compatibility: {theirs.value} conflicts"
    if theirs in (Op.UPDATE, Op.APPEND, Op.DELETE, Op.MERGE, Op.REWRITE, Op.DATA_REPLACEMENT):
        return V.RETRYABLE, f"Merge Compatibility: {theirs.value} is retryable (always)"
    return V.COMPATIBLE, "Merge Compatibility: not listed, compatible"


def _project(theirs: Op, sub: S) -> Verdict:
    if theirs in _REPLACES_OR_REWINDS | {Op.UPDATE_MEM_WAL_STATE}:
        return V.INCOMPATIBLE, f"Project Compatibility: {theirs.value} conflicts"
    if theirs in (Op.PROJECT, Op.MERGE):
        return V.RETRYABLE, f"Project Compatibility: {theirs.value} is retryable (always)"
    return V.COMPATIBLE, "Project Compatibility: not listed, compatible"


def _restore(theirs: Op, sub: S) -> Verdict:
    if theirs is Op.UPDATE_MEM_WAL_STATE:
        return V.INCOMPATIBLE, "Restore Compatibility: update_mem_wal_state conflicts"
    return V.COMPATIBLE, "Restore Compatibility: a restore trumps anything else"


def _reserve_fragments(theirs: Op, sub: S) -> Verdict:
    if theirs in _REPLACES_OR_REWINDS:
        return V.INCOMPATIBLE, f"ReserveFragments Compatibility: {theirs.value} conflicts"
    return V.COMPATIBLE, "ReserveFragments Compatibility: not listed, compatible"


def _update_config(theirs: Op, sub: S) -> Verdict:
    if theirs is Op.OVERWRITE:
        return V.INCOMPATIBLE, "UpdateConfig Compatibility: overwrite conflicts"
    if theirs is Op.UPDATE_CONFIG and sub is S.SAME_CONFIG_KEY:
        return V.INCOMPATIBLE, "UpdateConfig Compatibility: update_config of the same key conflicts"
    return V.COMPATIBLE, "UpdateConfig Compatibility: not listed, compatible"


def _data_replacement(theirs: Op, sub: S) -> Verdict:
    section = "DataReplacement Compatibility"
    if theirs in _REPLACES_OR_REWINDS | {Op.UPDATE_MEM_WAL_STATE}:
        return V.INCOMPATIBLE, f"{section}: {theirs.value} conflicts"
    if theirs in (Op.DELETE, Op.UPDATE) and sub is S.WHOLE_FRAGMENT:
        return V.INCOMPATIBLE, f"{section}: {theirs.value} removing a target fragment outright conflicts"
    if theirs is Op.MERGE:
        return V.RETRYABLE, f"{section}: merge is retryable (always)"
    if theirs is Op.DATA_REPLACEMENT:
        if sub is S.OVERLAPPING:
            return V.RETRYABLE, f"{section}: the same field on overlapping fragments is retryable"
        return V.COMPATIBLE, f"{section}: another field or other fragments do not conflict"
    if theirs is Op.CREATE_INDEX:
        if sub is S.INDEXED_COLUMN:
            return V.RETRYABLE, f"{section}: create_index on the replaced field is retryable"
        return V.COMPATIBLE, f"{section}: an index on another field does not conflict"
    if theirs is Op.REWRITE:
        if sub.same_fragment:
            return V.RETRYABLE, f"{section}: rewrite of overlapping fragments is retryable"
        return V.COMPATIBLE, f"{section}: rewrite of other fragments does not conflict"
    if theirs is Op.UPDATE and sub is S.UPDATE_COLUMNS:
        return V.RETRYABLE, f"{section}: an update rewriting a replaced field in place is retryable"
    if theirs is Op.UPDATE and sub is S.UPDATE_COLUMNS_OTHER_FIELD:
        return V.COMPATIBLE, f"{section}: an update rewriting another field in place does not conflict"
    if theirs is Op.UPDATE and sub.same_fragment:
        return V.RETRYABLE, f"{section}: an update rewriting rows out of a target fragment is retryable"
    if theirs is Op.DELETE and sub.same_fragment:
        return V.COMPATIBLE, f"{section}: a delete adding only a deletion vector is compatible"
    return V.COMPATIBLE, f"{section}: not listed, compatible"


def _update_bases(theirs: Op, sub: S) -> Verdict:
    if theirs is Op.UPDATE_BASES and sub in (S.SAME_BASE_ID, S.SAME_BASE_NAME, S.SAME_BASE_PATH):
        return V.INCOMPATIBLE, "UpdateBases Compatibility: a base path with the same id, name or path conflicts"
    return V.COMPATIBLE, "UpdateBases Compatibility: only update_bases with a shared id, name or path conflicts"


def _reserve_row_ids(theirs: Op, sub: S) -> Verdict:
    if theirs in _REPLACES_OR_REWINDS:
        return V.INCOMPATIBLE, f"ReserveRowIds Compatibility: {theirs.value} replaces the manifest wholesale"
    return V.COMPATIBLE, "ReserveRowIds Compatibility: only next_row_id advances; not listed, compatible"


def _data_overlay(theirs: Op, sub: S) -> Verdict:
    section = "DataOverlay Compatibility"
    if theirs in _REPLACES_OR_REWINDS | {Op.UPDATE_MEM_WAL_STATE}:
        return V.INCOMPATIBLE, f"{section}: {theirs.value} conflicts"
    if theirs is Op.MERGE:
        return V.RETRYABLE, f"{section}: merge is retryable (always)"
    if theirs is Op.REWRITE and sub.same_fragment:
        return V.RETRYABLE, f"{section}: rewrite of an overlaid fragment is retryable (its offsets moved)"
    if theirs is Op.UPDATE and sub is S.UPDATE_COLUMNS:
        return V.COMPATIBLE, f"{section}: a REWRITE_COLUMNS update keeps row addresses"
    if theirs is Op.UPDATE and sub.same_fragment:
        return V.RETRYABLE, f"{section}: a row-moving update of an overlaid fragment is retryable"
    return V.COMPATIBLE, f"{section}: row addresses of the overlaid fragments are kept"


def _update_mem_wal_state(theirs: Op, sub: S) -> Verdict:
    return V.UNSPECIFIED, "the page has no UpdateMemWalState Compatibility section"


_SECTIONS: dict[Op, Callable[[Op, S], Verdict]] = {
    Op.APPEND: _append,
    Op.DELETE: lambda theirs, sub: _delete_or_update(Op.DELETE, theirs, sub),
    Op.UPDATE: lambda theirs, sub: _delete_or_update(Op.UPDATE, theirs, sub),
    Op.OVERWRITE: _overwrite,
    Op.CREATE_INDEX: _create_index,
    Op.REWRITE: _rewrite,
    Op.MERGE: _merge,
    Op.PROJECT: _project,
    Op.RESTORE: _restore,
    Op.RESERVE_FRAGMENTS: _reserve_fragments,
    Op.UPDATE_CONFIG: _update_config,
    Op.DATA_REPLACEMENT: _data_replacement,
    Op.UPDATE_MEM_WAL_STATE: _update_mem_wal_state,
    Op.UPDATE_BASES: _update_bases,
    Op.DATA_OVERLAY: _data_overlay,
    Op.RESERVE_ROW_IDS: _reserve_row_ids,
}


def verdict(first: Op, second: Op, subcase: S) -> Verdict:
    """The page's verdict on committing ``second`` after ``first`` was
    committed since ``second``'s read version, with the reason."""
    if Op.CLONE in (first, second):
        return V.NOT_APPLICABLE, "Clone Compatibility: a clone only starts a dataset, so nothing races it"
    return _SECTIONS[second](first, subcase)
