"""What index segments hold, beside the rows they cover (upstream
format/index/index.md; the rules that compare the two are declared in
``rules/index_*.py`` and computed in ``index_checks/``, one module per index
page).

* :func:`usable_segments`, :func:`segment_directory_exists`,
  :func:`missing_segment_files`: which segments the content rules judge
  (a segment of a newer version, or without its directory, is the index/*
  rules' or is skipped as readers skip it);
* :func:`segment_file`: a Lance file of a segment's directory, read whole
  once per run however many versions list the segment (cache key naming the
  file's location).
* :func:`covered_rows`: the rows a segment must answer for at a version:
  the rows of the fragments its bitmap names that the version still has,
  each with what the index stores for it (its stable row id where the
  dataset has stable row ids, else its row address), the value of the
  segment's key field, and whether the version has deleted it (a segment
  may leave out rows deleted before it was built, and keeps rows deleted
  after: readers filter them, index.md "Handling deleted and invalidated
  rows").
* :func:`key_positions`: the covered row each stored identifier names.

A default run reads whole covered fragments in id order until
:data:`SAMPLE_ROWS` rows are read: the rules then check those fragments'
rows and the index entries that fall in them, and say that the rest went
unchecked (:attr:`CoveredRows.complete`). ``validate --deep`` reads every
covered fragment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import LanceFormatError
from reference_impl.fragment_reuse import FRAGMENT_REUSE_INDEX_NAME, FragmentRewrite, fragment_rewrites
from reference_impl.fragments import Fragment
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.files import IndexFileContents, read_index_file
from reference_impl.indices.types import IndexType, compatibility
from reference_impl.row_ids import row_address
from reference_impl.scan import fragment_table

from ..context import Failed, Loaded, Ok, VersionView, load
from .schema_tree import schema_tree

#: Rows of covered fragments a default (not deep) run reads per segment.
SAMPLE_ROWS = 65_536


@dataclass(frozen=True)
class CoveredRows:
    """The rows one segment covers at one version (see the module docstring)."""

    #: The covered fragments the version still has whose rows are here.
    fragment_ids: tuple[int, ...]
    #: What the index stores for each row: stable row ids, or row addresses.
    row_ids: np.ndarray
    #: The row address of each row (equal to ``row_ids`` without stable row ids).
    row_addresses: np.ndarray
    #: The key field's value of each row (the segment's first field).
    values: pa.Array
    #: Whether the version has deleted the row.
    deleted: np.ndarray
    #: Whether every covered fragment the version has is here (False: a
    #: default run stopped at :data:`SAMPLE_ROWS`).
    complete: bool
    #: Covered fragments the version no longer has (a deleted fragment:
    #: readers drop the segment's rows of it).
    gone_fragment_ids: tuple[int, ...]


def segment_file(view: VersionView, index: IndexMetadata, name: str) -> Loaded[IndexFileContents]:
    """The file ``name`` of ``index``'s directory, read once per run."""
    try:
        location = view.reader.index_file_location(index, name)
    except LanceFormatError as exc:
        return Failed(exc)
    key = ("index-file", str(location.storage.root), location.relpath)
    return view.dataset.cached(key, read_index_file, view.reader, index, name)


def segment_directory_exists(view: VersionView, index: IndexMetadata) -> bool:
    """Whether the segment's directory ``_indices/{uuid}/`` exists. A segment
    without one holds metadata only (the reference records the types it does
    not write that way) or lost its files: ``index/directory-present`` and
    ``index/file-sizes-match`` judge which from the files the manifest lists,
    and the content rules leave such a segment alone."""
    try:
        location = view.reader.index_file_location(index, "")
    except LanceFormatError:
        return False  # a base path that does not resolve: the index/* rules report it
    return location.storage.is_dir(location.relpath.rstrip("/"))


def usable_segments(view: VersionView, index_type: IndexType) -> list[tuple[int, IndexMetadata]]:
    """``(position, index)`` of the version's segments of ``index_type`` the
    reference reads (index.md, "Index Compatibility": a segment of a newer
    ``index_version`` is skipped, as readers skip it)."""
    found = []
    for position, index in enumerate(view.manifest_file.indices or []):
        verdict = compatibility(index)
        if verdict.index_type is index_type and verdict.usable:
            found.append((position, index))
    return found


def missing_segment_files(view: VersionView, index: IndexMetadata, names: Iterable[str]) -> list[str] | None:
    """Which of the files ``names`` of the segment do not exist; None when
    its directory does not (:func:`segment_directory_exists`)."""
    if not segment_directory_exists(view, index):
        return None
    places = {name: view.reader.index_file_location(index, name) for name in names}
    return [name for name, place in places.items() if not place.storage.exists(place.relpath)]


def key_positions(keys: np.ndarray, ids: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """For each of ``ids`` (what a segment stores for a row), the position
    in ``keys`` (the covered rows' row addresses or row ids) holding it, -1
    where none does. ``order`` sorts ``keys`` (a stable argsort when not
    given); where a key repeats (a row an update moved keeps its stable row
    id), the first in that order is taken."""
    order = np.argsort(keys, kind="stable") if order is None else order
    sorted_keys = keys[order]
    spot = np.searchsorted(sorted_keys, ids)
    found = spot < len(sorted_keys)
    found[found] = sorted_keys[spot[found]] == ids[found]
    positions = np.full(len(ids), -1, dtype=np.int64)
    positions[found] = order[spot[found]]
    return positions


def _key_path(view: VersionView, field_id: int) -> list[str] | None:
    """Names from the top-level field down to the field ``field_id``; None
    when no rooted field has that id (the schema walk is the validator's
    one, total on dangling or cyclic parents)."""
    tree = schema_tree(view)
    field = tree.by_id.get(field_id)
    if field is None or field_id not in tree.rooted:
        return None
    return [ancestor.name for ancestor in reversed(tree.ancestors(field))] + [field.name]


def _key_values(table: pa.Table, path: list[str]) -> pa.Array:
    column = table.column(path[0]).combine_chunks()
    for name in path[1:]:
        column = pc.struct_field(column, name)
    return column


def covered_rows(view: VersionView, index: IndexMetadata) -> Loaded[CoveredRows]:
    """The rows ``index`` covers at this version, once per version and run."""
    return view.memo(("index-covered-rows", index.uuid), lambda: load(_covered_rows, view, index))


def _covered_rows(view: VersionView, index: IndexMetadata) -> CoveredRows:
    try:
        covered = index.fragment_ids() or []
    except ValueError as exc:
        raise LanceFormatError(view.manifest_path, f"index {index.name!r}: {exc}") from None
    path = _key_path(view, index.fields[0]) if index.fields else None
    if path is None:
        raise LanceFormatError(view.manifest_path, f"index {index.name!r} is keyed on no field of the schema")
    by_id: dict[int, Fragment] = {fragment.id: fragment for fragment in view.manifest.fragments}
    present = [fragment_id for fragment_id in covered if fragment_id in by_id]
    gone = tuple(fragment_id for fragment_id in covered if fragment_id not in by_id)
    row_ids, addresses, values, deleted = [], [], [], []
    read, taken = 0, []
    for fragment_id in present:
        if not view.dataset.deep and read >= SAMPLE_ROWS:
            break
        fragment = by_id[fragment_id]
        table = fragment_table(view.reader, fragment, include_deleted=True, columns=[path[0]])
        rows = fragment.physical_rows
        fragment_addresses = np.uint64(row_address(fragment_id, 0)) + np.arange(rows, dtype=np.uint64)
        stable = view.reader.row_ids(fragment)
        is_deleted = np.zeros(rows, dtype=bool)
        is_deleted[list(view.reader.deleted_offsets(fragment))] = True
        row_ids.append(fragment_addresses if stable is None else np.asarray(stable, dtype=np.uint64))
        addresses.append(fragment_addresses)
        values.append(_key_values(table, path))
        deleted.append(is_deleted)
        read += rows
        taken.append(fragment_id)
    empty = np.zeros(0, dtype=np.uint64)
    return CoveredRows(
        fragment_ids=tuple(taken),
        row_ids=np.concatenate(row_ids) if row_ids else empty,
        row_addresses=np.concatenate(addresses) if addresses else empty,
        values=pa.concat_arrays(values) if values else pa.array([]),
        deleted=np.concatenate(deleted) if deleted else np.zeros(0, dtype=bool),
        complete=len(taken) == len(present),
        gone_fragment_ids=gone,
    )


# -- compactions with deferred remap (index/system/frag_reuse.md) -------------------------


def fragment_rewrites_of(view: VersionView) -> list[FragmentRewrite]:
    """The rewrites this version's fragment reuse index records, once per
    version (none without one, or when its details do not decode: the index
    rules report that)."""

    def read() -> list[FragmentRewrite]:
        reuse = [index for index in view.manifest_file.indices or [] if index.name == FRAGMENT_REUSE_INDEX_NAME]
        try:
            return [rewrite for index in reuse for rewrite in fragment_rewrites(index, view.reader.storage.read)]
        except (ValueError, LanceFormatError):
            return []

    return view.memo("index-fragment-rewrites", read)


def rewritten_fragments(view: VersionView) -> tuple[frozenset[int], frozenset[int]]:
    """The fragments the version's recorded rewrites read and those they
    wrote: a segment built before such a compaction keeps entries for the
    first, which readers translate to the second through the reuse index's
    row maps."""
    rewrites = fragment_rewrites_of(view)
    return (
        frozenset(fragment for rewrite in rewrites for fragment in rewrite.sources),
        frozenset(fragment for rewrite in rewrites for fragment in rewrite.destinations),
    )


def without_fragments(covered: CoveredRows, fragments: Collection[int]) -> CoveredRows:
    """``covered`` less the rows of ``fragments``."""
    if not fragments:
        return covered
    drop = np.fromiter(fragments, np.uint64, len(fragments))
    keep = ~np.isin(covered.row_addresses >> np.uint64(32), drop)
    return dataclasses.replace(
        covered,
        fragment_ids=tuple(fragment for fragment in covered.fragment_ids if fragment not in fragments),
        row_ids=covered.row_ids[keep],
        row_addresses=covered.row_addresses[keep],
        values=covered.values.filter(pa.array(keep)),
        deleted=covered.deleted[keep],
    )


def checked_rows(view: VersionView, index: IndexMetadata) -> Loaded[CoveredRows]:
    """:func:`covered_rows` less the fragments a compaction with deferred
    remap wrote: the segment answers for their rows through the fragment
    reuse index's row maps, which rules that do not translate entries leave
    unchecked (and say so)."""
    loaded = covered_rows(view, index)
    if not loaded.ok:
        return loaded
    _, written = rewritten_fragments(view)
    return Ok(without_fragments(loaded.value, written))
