"""The checks behind the RTREE rules (conformance/validator/rules/
index_rtree.py, which imports this module only for a version listing an
RTREE segment): upstream format/index/scalar/rtree.md, rows and deletions
format/index/index.md.

Each segment whose version the reference reads is decoded once per run
(:func:`reference_impl.indices.rtree.rtree_of`). The tree rules (structure,
branch boxes, Hilbert order) look at every entry of page_data.lance; the row rules compare the leaf entries and
the null rows with the rows of the fragments the segment covers at each
version listing it (:func:`..facts.index_contents.checked_rows`): a
default run a sample of whole fragments, a deep run all of them.

Deleted rows (index.md, "Handling deleted and invalidated rows"): a row
deleted before the segment was built may be missing, one deleted after it
is still there; an entry that is there holds the row's box (deleting a row
leaves its values in the data file). Rows whose geometry is empty (no
coordinate, or a NaN one) have no box: pylance 14 records them in neither
file, and the rules ask nothing of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.rtree import (
    NULLS_FILE,
    PAGE_FILE,
    Boxes,
    GeometryBoxes,
    Quantisation,
    RTreeSegment,
    UnsupportedGeometry,
    geometry_boxes,
    leaf_hilbert_values,
    rtree_of,
)
from reference_impl.indices.types import IndexType

from ..context import Loaded, VersionView, load
from ..facts.index_contents import (
    CoveredRows,
    checked_rows,
    key_positions,
    missing_segment_files,
    rewritten_fragments,
    segment_file,
    usable_segments,
)
from ..facts.schema_tree import schema_tree
from ..facts.text import listed, plural

#: What reading a covered fragment's key column raises for a data file that
#: is itself damaged (the data-file and data-page rules report that).
_DATA_FILE_ERRORS = (ValueError, IndexError, KeyError, pa.ArrowException)
#: Problems of one kind quoted per segment and version before the rest are counted.
MAX_EXAMPLES = 5
FILES = (PAGE_FILE, NULLS_FILE)
Finding = tuple[str, str]


def _label(index: IndexMetadata) -> str:
    return f"RTREE segment {index.name!r} ({index.uuid})"


def _at(view: VersionView, position: int) -> str:
    return view.at(f"index_section.indices[{position}]")


def _listing(problems: list[str], total: int | None = None) -> str:
    total = len(problems) if total is None else total
    shown = "; ".join(problems[:MAX_EXAMPLES])
    return shown if total <= MAX_EXAMPLES else f"{shown}; and {total - MAX_EXAMPLES} more"


def _missing_files(view: VersionView, index: IndexMetadata) -> list[str] | None:
    return missing_segment_files(view, index, FILES)


def _decode(view: VersionView, index: IndexMetadata) -> RTreeSegment:
    pages, nulls = segment_file(view, index, PAGE_FILE), segment_file(view, index, NULLS_FILE)
    for loaded in (pages, nulls):
        if not loaded.ok:
            raise loaded.error
    assert pages.value is not None and nulls.value is not None  # for the type checker: ok was tested
    return rtree_of(pages.value, nulls.value, index.index_version or 0)


def _segment(view: VersionView, index: IndexMetadata) -> Loaded[RTreeSegment]:
    key = ("rtree-segment", index.uuid, index.index_version, tuple(f.path for f in index.files))
    return view.dataset.memo(key, lambda: load(_decode, view, index))


def _readable(view: VersionView) -> Iterator[tuple[int, IndexMetadata, RTreeSegment]]:
    for position, index in usable_segments(view, IndexType.RTREE):
        if _missing_files(view, index) != []:
            continue
        loaded = _segment(view, index)
        if loaded.ok:
            yield position, index, loaded.value


# -- the files decode -------------------------------------------------------------------


def files_decode(view: VersionView) -> Iterator[Finding]:
    for position, index in usable_segments(view, IndexType.RTREE):
        missing = _missing_files(view, index)
        if missing and not index.files:
            # a file the manifest lists is index/file-sizes-match's to miss
            yield f"{_label(index)} has no {' or '.join(missing)}", _at(view, position)
        if missing != []:
            continue
        loaded = _segment(view, index)
        if not loaded.ok:
            yield f"{_label(index)}: {loaded.error}", _at(view, position)


# -- the tree -----------------------------------------------------------------------------


def _structure_problems(segment: RTreeSegment) -> list[str]:
    """How the branch entries fail to make the tree rtree.md describes: the
    file holds one branch entry per page below the root, and the entries of
    each branch level name each page of the level below once."""
    problems = []
    expected = segment.num_items + max(segment.num_pages - 1, 0)
    if len(segment.ids) != expected:
        problems.append(
            f"page_data.lance holds {len(segment.ids)} entries, where {segment.num_items} leaf entries and "
            f"{segment.num_pages} pages make {expected}"
        )
        return problems
    for below, level in zip(segment.levels, segment.levels[1:], strict=False):
        entries = np.concatenate(
            [segment.ids[segment.page_range(page).start : segment.page_range(page).stop] for page in level]
        )
        named = np.bincount(entries[entries < segment.num_pages].astype(np.int64), minlength=segment.num_pages)
        outside = sorted({int(page) for page in entries if int(page) not in below})
        if outside:
            problems.append(
                f"branch pages {listed(list(level))} name pages {listed(outside)}, not of the level below them "
                f"(pages {below[0]} to {below[-1]})"
            )
        unnamed = [page for page in below if named[page] == 0]
        repeated = [page for page in below if named[page] > 1]
        if unnamed:
            problems.append(f"no branch entry names page{'s' if len(unnamed) > 1 else ''} {listed(unnamed)}")
        if repeated:
            problems.append(f"page{'s' if len(repeated) > 1 else ''} {listed(repeated)} named by more than one entry")
    return problems


def tree_structure(view: VersionView) -> Iterator[Finding]:
    for position, index, segment in _readable(view):
        problems = _structure_problems(segment)
        if problems:
            yield f"{_label(index)}: {_listing(problems)}", _at(view, position)


def _page_unions(segment: RTreeSegment) -> Boxes:
    """The box around the entries of each page (all pages hold an entry
    once the structure holds)."""
    starts = np.asarray(segment.offsets, dtype=np.int64)
    boxes = segment.boxes
    return Boxes(
        np.minimum.reduceat(boxes.xmin, starts),
        np.minimum.reduceat(boxes.ymin, starts),
        np.maximum.reduceat(boxes.xmax, starts),
        np.maximum.reduceat(boxes.ymax, starts),
    )


def _bound_problems(segment: RTreeSegment) -> list[str]:
    if not segment.num_items or _structure_problems(segment):
        return []  # nothing to bound, or index-rtree/tree-structure's finding
    problems = []
    unions = _page_unions(segment)
    branch = np.arange(segment.num_items, len(segment.ids))
    children = segment.ids[branch].astype(np.int64)
    holds = segment.boxes.take(branch).contain(unions.take(children))
    for entry in branch[~holds][:MAX_EXAMPLES]:
        child = int(segment.ids[entry])
        problems.append(
            f"branch entry {int(entry)} (box {segment.boxes.describe(int(entry))}) does not contain the entries "
            f"of its page {child} (box {unions.describe(child)})"
        )
    if (~holds).sum() > MAX_EXAMPLES:
        problems.append(f"and {int((~holds).sum()) - MAX_EXAMPLES} more branch entries")
    if segment.global_box is not None:
        stored = Boxes(*(np.array([value]) for value in segment.global_box))
        root = unions.take([segment.num_pages - 1])
        if not stored.contain(root)[0]:
            problems.append(
                f"the bbox metadata {stored.describe(0)} does not contain the root's entries {root.describe(0)}"
            )
    return problems


def page_bounds(view: VersionView) -> Iterator[Finding]:
    for position, index, segment in _readable(view):
        problems = _bound_problems(segment)
        if problems:
            yield f"{_label(index)}: {'; '.join(problems)}", _at(view, position)


def _first_unsorted(values: np.ndarray) -> int | None:
    """The first position whose value is below the one before it, or None."""
    falls = np.flatnonzero(values[1:] < values[:-1])
    return int(falls[0]) + 1 if len(falls) else None


def hilbert_order(view: VersionView) -> Iterator[Finding]:
    """The leaf entries follow the Hilbert order of their box centres over
    the bbox metadata (rtree.md, "Hilbert Curve Sorting"), the page's
    rounding or pylance 14's truncation (docs/spec-discrepancies.md)."""
    for position, index, segment in _readable(view):
        box = segment.global_box
        if segment.num_items < 2 or box is None or not all(np.isfinite(box)) or _structure_problems(segment):
            continue
        by_page = leaf_hilbert_values(segment, Quantisation.ROUND)
        at = _first_unsorted(by_page)
        if at is None or _first_unsorted(leaf_hilbert_values(segment, Quantisation.FLOOR)) is None:
            continue
        yield (
            f"{_label(index)}: leaf entry {at} (box {segment.boxes.describe(at)}, Hilbert value {int(by_page[at])}) "
            f"follows entry {at - 1} (Hilbert value {int(by_page[at - 1])}): the leaves are not in Hilbert order "
            "(queries stay right, pages prune less)",
            _at(view, position),
        )


# -- the rows -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rows:
    """A segment's leaf entries and null rows against the covered rows read at one version."""

    covered: CoveredRows
    geometry: GeometryBoxes
    #: Leaf entries of checked rows, and the covered row each names (-1: none).
    entry_positions: np.ndarray
    row_of_entry: np.ndarray
    #: How many leaf entries name each covered row.
    entries_per_row: np.ndarray
    #: Recorded null rows of checked fragments, and the covered row each names (-1: none).
    null_ids: np.ndarray
    row_of_null: np.ndarray


def _mine(ids: np.ndarray, covered: CoveredRows, by_address: bool, rows: np.ndarray) -> np.ndarray:
    """The positions of ``ids`` the covered rows read can judge: row
    addresses of the fragments read, or row ids found among them."""
    if by_address:
        fragments = np.asarray(covered.fragment_ids, dtype=np.uint64)
        return np.flatnonzero(np.isin(ids >> np.uint64(32), fragments))
    return np.flatnonzero(rows >= 0)


def _match(segment: RTreeSegment, covered: CoveredRows, geometry: GeometryBoxes, by_address: bool) -> _Rows:
    keys = covered.row_addresses if by_address else covered.row_ids
    # Where an id names two rows (a row an update moved keeps its stable row id), the one not deleted.
    order = np.lexsort((covered.deleted, keys))
    leaf_rows = key_positions(keys, segment.leaf_ids, order)
    mine = _mine(segment.leaf_ids, covered, by_address, leaf_rows)
    named = leaf_rows[mine]
    counts = np.bincount(named[named >= 0], minlength=len(keys)) if len(keys) else np.zeros(0, dtype=np.int64)
    null_rows = key_positions(keys, segment.null_rows, order)
    null_mine = _mine(segment.null_rows, covered, by_address, null_rows)
    return _Rows(covered, geometry, mine, named, counts, segment.null_rows[null_mine], null_rows[null_mine])


def _geometry_boxes(view: VersionView, covered: CoveredRows) -> GeometryBoxes | str:
    """The box of each covered row, or why the reference computes none."""
    try:
        return geometry_boxes(covered.values)
    except UnsupportedGeometry as exc:
        return str(exc)


def _rows(view: VersionView, index: IndexMetadata, segment: RTreeSegment) -> _Rows | str | None:
    """The match of the segment's entries with the covered rows, once per
    version; a reason when the rows cannot be judged; None when they cannot
    be read (the index/* and data-file rules report why)."""

    def compute() -> _Rows | str | None:
        loaded = checked_rows(view, index)
        if not loaded.ok:
            return None
        covered = loaded.value
        geometry = _geometry_boxes(view, covered)
        if isinstance(geometry, str):
            return geometry
        by_address = segment.ids_are_addresses or not view.reader.uses_stable_row_ids
        return _match(segment, covered, geometry, by_address)

    return view.memo(("rtree-rows", index.uuid), compute)


def _checked(view: VersionView) -> Iterator[tuple[int, IndexMetadata, RTreeSegment, _Rows]]:
    fragment_ids = [fragment.id for fragment in view.manifest.fragments]
    if len(set(fragment_ids)) != len(fragment_ids):
        return  # a row address would name two rows (fragment/id-unique's finding)
    for position, index, segment in _readable(view):
        try:
            rows = _rows(view, index, segment)
        except _DATA_FILE_ERRORS:
            continue  # a damaged data file: the data-file rules' finding
        if isinstance(rows, _Rows):
            yield position, index, segment, rows


def _describe_row(covered: CoveredRows, row: int) -> str:
    address = int(covered.row_addresses[row])
    return f"fragment {address >> 32} offset {address & 0xFFFFFFFF}"


def rows_present(view: VersionView) -> Iterator[Finding]:
    for position, index, _segment, rows in _checked(view):
        covered, geometry = rows.covered, rows.geometry
        boxed = ~geometry.null & ~geometry.empty
        missing = np.flatnonzero(boxed & ~covered.deleted & (rows.entries_per_row == 0))
        repeated = np.flatnonzero(rows.entries_per_row > 1)
        null_entries = np.flatnonzero(geometry.null & (rows.entries_per_row > 0))
        problems = [f"no leaf entry for the row at {_describe_row(covered, int(r))}" for r in missing[:MAX_EXAMPLES]]
        problems += [
            f"{int(rows.entries_per_row[r])} leaf entries for the row at {_describe_row(covered, int(r))}"
            for r in repeated[:MAX_EXAMPLES]
        ]
        problems += [
            f"a leaf entry for the row at {_describe_row(covered, int(r))}, whose geometry is null"
            for r in null_entries[:MAX_EXAMPLES]
        ]
        if len(missing) or len(repeated) or len(null_entries):
            yield (
                f"{_label(index)}: {len(missing)} covered rows with a box have no leaf entry, {len(repeated)} have "
                f"more than one, {len(null_entries)} null rows have one: {'; '.join(problems)}",
                _at(view, position),
            )


def entries_valid(view: VersionView) -> Iterator[Finding]:
    for position, index, segment, rows in _checked(view):
        stray = rows.entry_positions[rows.row_of_entry < 0]
        named = rows.row_of_entry >= 0
        entries, row_at = rows.entry_positions[named], rows.row_of_entry[named]
        boxed = ~rows.geometry.null[row_at] & ~rows.geometry.empty[row_at]
        entries, row_at = entries[boxed], row_at[boxed]
        holds = segment.boxes.take(entries).contain(rows.geometry.boxes.take(row_at))
        wrong = np.flatnonzero(~holds)
        problems = [
            f"leaf entry {int(entry)} names no covered row (id {int(segment.ids[entry])})"
            for entry in stray[:MAX_EXAMPLES]
        ]
        problems += [
            f"leaf entry {int(entries[i])} holds the box {segment.boxes.describe(int(entries[i]))} for the row at "
            f"{_describe_row(rows.covered, int(row_at[i]))}, whose geometry's box is "
            f"{rows.geometry.boxes.describe(int(row_at[i]))}"
            for i in wrong[:MAX_EXAMPLES]
        ]
        if len(stray) or len(wrong):
            yield (
                f"{_label(index)}: {len(stray)} leaf entries name no row of a covered fragment, {len(wrong)} hold a "
                f"box that does not contain their row's geometry: {'; '.join(problems)}",
                _at(view, position),
            )


def null_rows(view: VersionView) -> Iterator[Finding]:
    for position, index, _segment, rows in _checked(view):
        covered, geometry = rows.covered, rows.geometry
        recorded = np.zeros(len(covered.row_addresses), bool)
        recorded[rows.row_of_null[rows.row_of_null >= 0]] = True
        stray = rows.null_ids[rows.row_of_null < 0]
        named = rows.row_of_null[rows.row_of_null >= 0]
        not_null = named[~geometry.null[named]]
        unrecorded = np.flatnonzero(geometry.null & ~covered.deleted & ~recorded)
        problems = [f"id {int(row_id)} names no covered row" for row_id in stray[:MAX_EXAMPLES]]
        problems += [
            f"the row at {_describe_row(covered, int(r))} is recorded but its geometry is not null"
            for r in not_null[:MAX_EXAMPLES]
        ]
        problems += [
            f"the row at {_describe_row(covered, int(r))} is null but not recorded" for r in unrecorded[:MAX_EXAMPLES]
        ]
        if len(stray) or len(not_null) or len(unrecorded):
            yield (
                f"{_label(index)}: nulls.lance records {len(stray)} rows of no covered fragment and "
                f"{len(not_null)} rows that are not null, and misses {len(unrecorded)} null rows: "
                f"{'; '.join(problems)}",
                _at(view, position),
            )


# -- what a run left unchecked ---------------------------------------------------------------


def _covered_fragment_ids(index: IndexMetadata) -> list[int]:
    """The fragments the segment's bitmap names (none when it does not
    decode: index/* rules report that)."""
    try:
        return index.fragment_ids() or []
    except ValueError:
        return []


def _field_encoding(view: VersionView, index: IndexMetadata) -> str:
    field = schema_tree(view).by_id.get(index.fields[0]) if index.fields else None
    return (field.extension_name or "no GeoArrow extension name") if field is not None else "no field"


def sampled(view: VersionView) -> Iterator[Finding]:
    _, written = rewritten_fragments(view)
    for position, index, segment in _readable(view):
        remapped = sorted(written & set(_covered_fragment_ids(index)))
        if remapped:
            yield (
                f"{_label(index)}: covered fragments {listed(remapped)} were written by a compaction whose remap "
                "was deferred (readers translate the segment's entries through the fragment reuse index); "
                "their rows were not checked",
                _at(view, position),
            )
        try:
            rows = _rows(view, index, segment)
        except _DATA_FILE_ERRORS:
            continue
        if isinstance(rows, str):
            yield (
                f"{_label(index)}: rows not checked: the reference computes no boxes for the indexed column "
                f"({_field_encoding(view, index)}): {rows}",
                _at(view, position),
            )
        elif rows is not None and not rows.covered.complete:
            read = set(rows.covered.fragment_ids) | set(remapped)
            gone = set(rows.covered.gone_fragment_ids)
            unchecked = [f for f in _covered_fragment_ids(index) if f not in read and f not in gone]
            yield (
                f"{_label(index)}: the rows of {plural(len(unchecked), 'covered fragment')} ({listed(unchecked)}) "
                "were not compared with the entries (a sample); validate --deep checks every covered fragment",
                _at(view, position),
            )
