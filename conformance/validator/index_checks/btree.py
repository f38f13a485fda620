"""The bodies of the BTREE rules (``rules/index_btree.py``, whose docstring
says what they check and why; scalar/btree.md), loaded only for a version
with a BTREE segment (:func:`..index_checks.checks`).

Each function here is one rule's body by the same name: it yields the
rule's ``(message, location)`` pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import LanceFormatError, UnsupportedFeatureError
from reference_impl.fragment_reuse import (
    FRAGMENT_REUSE_INDEX_NAME,
    AddressMove,
    FragmentRewrite,
    address_moves,
    fragment_rewrites,
    translate_row_addresses,
    translated_fragment_ids,
)
from reference_impl.index_metadata import IndexMetadata, encode_fragment_bitmap
from reference_impl.indices.btree import DATA_FILE, LOOKUP_FILE, BTreeSegment, decode_btree, order_rank
from reference_impl.indices.types import IndexType

from ..context import Loaded, VersionView, load
from ..facts.index_contents import (
    CoveredRows,
    covered_rows,
    key_positions,
    missing_segment_files,
    segment_file,
    usable_segments,
)

#: Findings of one kind reported per segment and version before the rest are counted.
MAX_EXAMPLES = 5


def _at(view: VersionView, position: int) -> str:
    return view.at(f"index_section.indices[{position}]")


def _missing_files(view: VersionView, index: IndexMetadata) -> list[str] | None:
    return missing_segment_files(view, index, (LOOKUP_FILE, DATA_FILE))


def _files_present(view: VersionView, index: IndexMetadata) -> bool:
    """Whether both files exist."""
    return _missing_files(view, index) == []


def _decode(view: VersionView, index: IndexMetadata) -> BTreeSegment:
    lookup, data = segment_file(view, index, LOOKUP_FILE), segment_file(view, index, DATA_FILE)
    for loaded in (lookup, data):
        if not loaded.ok:
            raise loaded.error
    assert lookup.value is not None and data.value is not None  # for the type checker: ok was tested
    return decode_btree(lookup.value, data.value, index_version=index.index_version or 0)


def _segment(view: VersionView, index: IndexMetadata) -> Loaded[BTreeSegment]:
    """The decoded segment, once per run (None for missing files)."""
    key = ("btree-segment", index.uuid, index.index_version, tuple(f.path for f in index.files))
    return view.dataset.memo(key, lambda: load(_decode, view, index))


def _readable(view: VersionView):
    """``(position, index, segment)`` of the BTREE segments that decode."""
    for position, index in usable_segments(view, IndexType.BTREE):
        if not _files_present(view, index):
            continue
        loaded = _segment(view, index)
        if loaded.ok:
            yield position, index, loaded.value


def files_decode(view: VersionView):
    for position, index in usable_segments(view, IndexType.BTREE):
        missing = _missing_files(view, index)
        if missing and not index.files:
            # a file the manifest lists is index/file-sizes-match's to miss
            yield f"BTREE segment {index.name!r} ({index.uuid}) has no {' or '.join(missing)}", _at(view, position)
        if missing != []:
            continue
        loaded = _segment(view, index)
        if not loaded.ok and not isinstance(loaded.error, UnsupportedFeatureError):
            yield f"BTREE segment {index.name!r} ({index.uuid}): {loaded.error}", _at(view, position)


def page_layout(view: VersionView):
    for position, index, segment in _readable(view):
        numbers = [bounds.page_idx for bounds in segment.lookup]
        if numbers != list(range(segment.page_count)):
            shown = numbers if len(numbers) <= 10 else f"{numbers[:10]}..."
            yield (
                f"BTREE segment {index.name!r} ({index.uuid}): the page lookup numbers its pages {shown}; "
                f"the {len(segment.ids)} entries at {segment.batch_size} a page make pages 0 to "
                f"{segment.page_count - 1}",
                _at(view, position),
            )


def _first_unsorted(values: pa.Array) -> int | None:
    """The first position whose value sorts before the one ahead of it
    (nulls first, NaN last), or None."""
    if len(values) < 2:
        return None
    valid = np.asarray(pc.is_valid(values), dtype=bool)
    # nulls first: once a value is seen, no null may follow
    bad_null = np.flatnonzero(~valid[1:] & valid[:-1])
    candidates = [int(bad_null[0]) + 1] if len(bad_null) else []
    later, earlier = values.slice(1), values.slice(0, len(values) - 1)
    if pa.types.is_floating(values.type):
        nan = np.asarray(pc.fill_null(pc.is_nan(values), False), dtype=bool)
        bad_nan = np.flatnonzero(~nan[1:] & nan[:-1] & valid[1:])
        candidates += [int(bad_nan[0]) + 1] if len(bad_nan) else []
    descending = np.asarray(pc.fill_null(pc.less(later, earlier), False), dtype=bool)
    bad_order = np.flatnonzero(descending)
    candidates += [int(bad_order[0]) + 1] if len(bad_order) else []
    return min(candidates) if candidates else None


def keys_sorted(view: VersionView):
    for position, index, segment in _readable(view):
        at = _first_unsorted(segment.values)
        if at is not None:
            page = at // segment.batch_size
            across = " (across a page boundary)" if at % segment.batch_size == 0 else ""
            yield (
                f"BTREE segment {index.name!r} ({index.uuid}): entry {at} (page {page}) holds "
                f"{segment.values[at].as_py()!r} after {segment.values[at - 1].as_py()!r}{across}",
                _at(view, position),
            )


def page_bounds(view: VersionView):
    for position, index, segment in _readable(view):
        problems = []
        seen: set[int] = set()
        for bounds in segment.lookup:
            if not 0 <= bounds.page_idx < segment.page_count or bounds.page_idx in seen:
                continue  # index-btree/page-layout's finding (each page is read once, however often listed)
            seen.add(bounds.page_idx)
            page = segment.page(bounds.page_idx)
            if page.values.null_count != bounds.null_count:
                problems.append(
                    f"page {bounds.page_idx} records {bounds.null_count} nulls and holds {page.values.null_count}"
                )
            keys = page.values.to_pylist()
            lowest = min(keys, key=order_rank)
            highest = max(keys, key=order_rank)
            if order_rank(bounds.min) > order_rank(lowest):
                problems.append(f"page {bounds.page_idx} records min {bounds.min!r} above its key {lowest!r}")
            if order_rank(bounds.max) < order_rank(highest):
                problems.append(f"page {bounds.page_idx} records max {bounds.max!r} below its key {highest!r}")
        if problems:
            yield (
                f"BTREE segment {index.name!r} ({index.uuid}): {_listing(problems)}",
                _at(view, position),
            )


def _listing(problems: list[str]) -> str:
    shown = "; ".join(problems[:MAX_EXAMPLES])
    return shown if len(problems) <= MAX_EXAMPLES else f"{shown}; and {len(problems) - MAX_EXAMPLES} more"


@dataclass(frozen=True)
class _Match:
    """The segment's entries against the covered rows read at one version."""

    #: Entries of sampled fragments, and the covered row each names (-1: none).
    entry_positions: np.ndarray
    row_of_entry: np.ndarray
    #: How many entries name each covered row.
    entries_per_row: np.ndarray
    #: Whether each covered row is checked (False: its fragment has no data
    #: file for the key).
    row_checked: np.ndarray


def _match(ids: np.ndarray, rows: CoveredRows, by_address: bool, skipped: frozenset[int]) -> _Match:
    """Match entries (their ids as readers see them) with covered rows."""
    keys = rows.row_addresses if by_address else rows.row_ids
    row_checked = ~np.isin((rows.row_addresses >> np.uint64(32)).astype(np.int64), list(skipped))
    if by_address:
        fragments = (ids >> np.uint64(32)).astype(np.int64)
        checked = [fragment for fragment in rows.fragment_ids if fragment not in skipped]
        mine = np.flatnonzero(np.isin(fragments, np.asarray(checked, dtype=np.int64)))
    else:
        mine = np.flatnonzero(np.isin(ids, keys[row_checked]))
    row = key_positions(keys, ids[mine])
    counts = np.bincount(row[row >= 0], minlength=len(keys)) if len(keys) else np.zeros(0, dtype=np.int64)
    return _Match(mine, row, counts, row_checked)


@dataclass(frozen=True)
class _Reuse:
    """What this version's fragment reuse index says about moved rows."""

    rewrites: list[FragmentRewrite]
    moves: list[AddressMove]
    #: Why the reference cannot translate through it (None: it can).
    problem: str | None = None


def _reuse(view: VersionView) -> _Reuse:
    """The rewrites and row moves of this version's fragment reuse index
    (index.md, "Compaction and remapping"; frag_reuse.md, "Ordered
    Compaction"): a segment's entries for rows a recorded compaction moved
    hold the old row addresses, which readers translate."""

    def compute() -> _Reuse:
        rewrites: list[FragmentRewrite] = []
        moves: list[AddressMove] = []
        for index in view.manifest_file.indices or []:
            if index.name != FRAGMENT_REUSE_INDEX_NAME:
                continue
            if (index.index_version or 0) > 0:
                # transitions of version 1 are unknown to the reference's table.proto
                return _Reuse(
                    [], [], f"its index_version {index.index_version} records moves the reference does not read"
                )
            try:
                rewrites += fragment_rewrites(index, view.reader.storage.read)
                moves += address_moves(index, view.reader.storage.read)
            except (ValueError, LanceFormatError) as exc:
                return _Reuse([], [], f"it does not decode ({exc})")
        return _Reuse(rewrites, moves)

    return view.memo("btree-fragment-reuse", compute)


def _as_readers_see(view: VersionView, index: IndexMetadata, reuse: _Reuse) -> IndexMetadata:
    """``index`` covering what readers see it cover once the fragment reuse
    index translates its bitmap (a stand-in with its own uuid, so that its
    covered rows are kept apart from those of the bitmap as stored)."""
    stored = index.fragment_ids() or []
    translated = translated_fragment_ids(stored, reuse.rewrites) or []
    if sorted(stored) == translated:
        return index
    return replace(index, uuid=f"{index.uuid}#translated", fragment_bitmap=encode_fragment_bitmap(translated))


#: What reading a covered fragment's key column raises for a data file that
#: is itself damaged (the data-file and data-page rules report that).
_DATA_FILE_ERRORS = (LanceFormatError, ValueError, IndexError, KeyError, pa.ArrowException)


def _covered(view: VersionView, index: IndexMetadata) -> CoveredRows | None:
    """The rows ``index`` covers, or None when they cannot be read (a
    segment keyed on no field is index/fields-exist's finding, a damaged
    data file the data-file rules')."""
    try:
        loaded = covered_rows(view, index)
    except _DATA_FILE_ERRORS:
        return None
    return loaded.value if loaded.ok else None


def _keyless_fragments(view: VersionView, index: IndexMetadata) -> frozenset[int]:
    """Fragments no data file of which stores the key field: their values
    read as nulls, a state the fragment rules judge, not this index."""
    key = index.fields[0] if index.fields else None
    return frozenset(
        fragment.id
        for fragment in view.manifest.fragments
        if not any(key in data_file.fields for data_file in fragment.files)
    )


def _checked(view: VersionView):
    """``(position, index, segment, rows, match)`` for each readable
    segment whose covered rows read (a segment keyed on no field is
    index/fields-exist's finding). Nothing is matched in a version whose
    fragment ids repeat (fragment/id-unique's finding): a row address would
    name two rows."""
    fragment_ids = [fragment.id for fragment in view.manifest.fragments]
    if len(set(fragment_ids)) != len(fragment_ids):
        return
    for position, index, segment in _readable(view):
        by_address = segment.ids_are_addresses or not view.reader.uses_stable_row_ids
        reuse = _reuse(view)
        if by_address and reuse.problem is not None:
            continue  # index-btree/sampled says so
        covering = _as_readers_see(view, index, reuse) if by_address else index
        rows = _covered(view, covering)
        if rows is None:
            continue
        ids = translate_row_addresses(segment.ids, reuse.moves) if by_address and reuse.moves else segment.ids
        skipped = _keyless_fragments(view, index)
        match = view.memo(("btree-match", index.uuid), partial(_match, ids, rows, by_address, skipped))
        yield position, index, segment, rows, match


def _describe_row(rows: CoveredRows, row: int) -> str:
    address = int(rows.row_addresses[row])
    return f"fragment {address >> 32} offset {address & 0xFFFFFFFF}"


def rows_present(view: VersionView):
    for position, index, _segment, rows, match in _checked(view):
        missing = np.flatnonzero((match.entries_per_row == 0) & ~rows.deleted & match.row_checked)
        repeated = np.flatnonzero(match.entries_per_row > 1)
        problems = [f"no entry for the row at {_describe_row(rows, int(row))}" for row in missing[:MAX_EXAMPLES]]
        problems += [
            f"{int(match.entries_per_row[row])} entries for the row at {_describe_row(rows, int(row))}"
            for row in repeated[:MAX_EXAMPLES]
        ]
        if len(missing) or len(repeated):
            yield (
                f"BTREE segment {index.name!r} ({index.uuid}): {len(missing)} covered rows missing, "
                f"{len(repeated)} listed more than once: {'; '.join(problems)}",
                _at(view, position),
            )


def _same(left: pa.Array, right: pa.Array) -> np.ndarray:
    """Element-wise equality where null equals null and NaN equals NaN."""
    equal = np.asarray(pc.fill_null(pc.equal(left, right), False), dtype=bool)
    equal |= np.asarray(pc.is_null(left), dtype=bool) & np.asarray(pc.is_null(right), dtype=bool)
    if pa.types.is_floating(left.type):
        equal |= np.asarray(pc.fill_null(pc.and_(pc.is_nan(left), pc.is_nan(right)), False), dtype=bool)
    return equal


def entries_valid(view: VersionView):
    for position, index, segment, rows, match in _checked(view):
        stray = match.entry_positions[match.row_of_entry < 0]
        named = match.row_of_entry >= 0
        entry_at, row_at = match.entry_positions[named], match.row_of_entry[named]
        if not len(entry_at) and not len(stray):
            continue
        keys = segment.values.take(pa.array(entry_at, pa.int64()))
        values = rows.values.take(pa.array(row_at, pa.int64()))
        if keys.type != values.type:
            try:
                keys = keys.cast(values.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                yield (
                    f"BTREE segment {index.name!r} ({index.uuid}): keys of type {keys.type} for a field "
                    f"of type {values.type}",
                    _at(view, position),
                )
                continue
        wrong = np.flatnonzero(~_same(keys, values))
        problems = [f"entry {int(entry)} names no row (id {int(segment.ids[entry])})" for entry in stray[:MAX_EXAMPLES]]
        problems += [
            f"entry {int(entry_at[i])} holds {keys[int(i)].as_py()!r} for the row at "
            f"{_describe_row(rows, int(row_at[i]))}, which holds {values[int(i)].as_py()!r}"
            for i in wrong[:MAX_EXAMPLES]
        ]
        if len(stray) or len(wrong):
            yield (
                f"BTREE segment {index.name!r} ({index.uuid}): {len(stray)} entries name no row of a covered "
                f"fragment, {len(wrong)} hold another value than their row: {'; '.join(problems)}",
                _at(view, position),
            )


def sampled(view: VersionView):
    for position, index in usable_segments(view, IndexType.BTREE):
        if not _files_present(view, index):
            continue
        loaded = _segment(view, index)
        if not loaded.ok:
            if isinstance(loaded.error, UnsupportedFeatureError):
                yield f"BTREE segment {index.name!r} ({index.uuid}) not checked: {loaded.error}", _at(view, position)
            continue
        by_address = loaded.value.ids_are_addresses or not view.reader.uses_stable_row_ids
        reuse = _reuse(view)
        if by_address and reuse.problem is not None:
            yield (
                f"BTREE segment {index.name!r} ({index.uuid}): rows not checked: the version's fragment reuse "
                f"index, through which readers translate the segment's row addresses, cannot be used: {reuse.problem}",
                _at(view, position),
            )
            continue
        rows = _covered(view, _as_readers_see(view, index, reuse) if by_address else index)
        if rows is None:
            continue
        if not rows.complete:
            yield (
                f"BTREE segment {index.name!r} ({index.uuid}): rows checked in fragments "
                f"{list(rows.fragment_ids)} only (a sample; validate --deep checks every covered fragment)",
                _at(view, position),
            )
