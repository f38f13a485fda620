"""Compaction (transaction specification: ``ReserveFragments``, ``Rewrite``;
the older table format page, move-stable row ids; upstream ``row_id_lineage.md``).

Compaction moves rows without changing them: the visible rows of some small
fragments (or of fragments carrying deletions) are written again as fewer,
larger fragments, and the old fragments leave the table. It takes two
commits, as upstream Lance does:

1. ``ReserveFragments(n)`` raises ``max_fragment_id`` by ``n`` and adds
   nothing else, so the ids ``max_fragment_id - n + 1 .. max_fragment_id``
   belong to this compaction and no concurrent writer can take them;
2. ``Rewrite(groups=...)``, one group per run of old fragments, whose new
   fragments carry those reserved ids (in ascending order, group after group).

Which fragments are rewritten (the rule)
    Fragments are considered in id order, the order the manifest keeps them
    in. A fragment is a *candidate* when it has fewer physical rows than
    ``target_rows_per_fragment``, or when ``materialize_deletions`` is set and
    more than ``materialize_deletions_threshold`` of its physical rows are
    deleted (any deleted row with the default threshold of 0). Adjacent
    candidates form a run; a non-candidate ends it. A run that
    is one fragment without deletions to materialize is left alone, since
    rewriting it would give the same fragment back. Each remaining run is one
    rewrite group; its visible rows, in order (fragment by fragment, physical
    order within each), are cut into new fragments of at most
    ``target_rows_per_fragment`` rows. A run with no visible row at all gets
    no new fragment. This is close to pylance's planner, which also splits
    long runs into several groups of about the target size and by default
    materializes deletions only above 10% of a fragment: the fragment layouts
    can differ, while the rows, their order within a run, their row ids and
    their row versions are the same.

    Only data files of version 2.0 are written, so a dataset of another data
    storage version is refused (table.proto, ``DataStorageFormat``: one file
    version per dataset) before anything is committed.

Row ids and row versions
    Without stable row ids, a moved row's id is its new row address, and
    indices stop covering the rewritten fragments (the commit drops them
    from the index bitmaps). With stable row ids (reader flag 2), the older table format page says
    the id "is stable after being moved (such as during compaction)": each
    new fragment's row id sequence holds the moved rows' ids in their new
    order, and its created-at and last-updated-at version sequences hold the
    moved rows' versions, so a move changes neither. A fragment stored
    without version sequences counts as created at version 1 and last
    updated when created, as upstream Lance does.

Indices
    Index payloads locate rows by row address (upstream ``row_id_lineage.md``;
    pylance 14's scalar indices do so even under stable row ids), and a
    rewrite changes the addresses of every moved row. The commit therefore
    drops rewritten fragments from every index's fragment bitmap: the index
    goes on answering for the fragments it still covers, and readers scan the
    rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import partial
from typing import TYPE_CHECKING

import pyarrow as pa

from ..arrow_schema import schema_to_arrow
from ..blob_descriptors import is_blob_v2
from ..errors import InvalidOperationError, LanceFormatError, UnsupportedFeatureError
from ..fragment_writer import check_writable_version, dataset_data_version, write_fragments
from ..fragments import Fragment
from ..row_ids import (
    encode_row_id_sequence,
    encode_version_sequence,
    fragment_created_at_versions,
    fragment_last_updated_at_versions,
    fragment_row_ids,
)
from ..scan import fragment_table, lineage_column
from ..transactions import ReserveFragments, Rewrite, RewriteGroup

if TYPE_CHECKING:
    from ..dataset import Dataset

#: Version a row counts as created at when its fragment stores no sequence.
DEFAULT_CREATED_AT_VERSION = 1


# -- public API ----------------------------------------------------------------


def compact(
    dataset: Dataset,
    *,
    target_rows_per_fragment: int = 1024 * 1024,
    materialize_deletions: bool = True,
    materialize_deletions_threshold: float = 0.0,
) -> Dataset:
    """Rewrite small fragments and fragments with deletions (the rule is in
    the module docstring); returns the version of the ``Rewrite`` commit, or
    ``dataset`` itself when nothing needs rewriting (nothing is committed)."""
    if target_rows_per_fragment < 1:
        raise InvalidOperationError("target_rows_per_fragment must be positive")
    check_writable_version(dataset_data_version(dataset.manifest))
    runs = plan_compaction(
        dataset,
        target_rows_per_fragment=target_rows_per_fragment,
        materialize_deletions=materialize_deletions,
        materialize_deletions_threshold=materialize_deletions_threshold,
    )
    if not runs:
        return dataset
    moved = [_moved_rows(dataset, run) for run in runs]
    counts = [_fragments_needed(m.table.num_rows, target_rows_per_fragment) for m in moved]
    ids = _reserve_ids(dataset, sum(counts))
    groups = []
    for run, rows, count in zip(runs, moved, counts, strict=True):
        new_ids, ids = ids[:count], ids[count:]
        new_fragments = _write_run(dataset, rows, new_ids, target_rows_per_fragment)
        groups.append(RewriteGroup(old_fragments=list(run), new_fragments=new_fragments))
    # The Rewrite is built on the version the rows were read from, not on the
    # reservation's: the commit loop then resolves it against every version
    # committed since (its own ReserveFragments included, which is
    # compatible), so a concurrent change to a rewritten fragment is a
    # conflict rather than a lost update.
    return dataset.commit(Rewrite(groups=groups))


def plan_compaction(
    dataset: Dataset,
    *,
    target_rows_per_fragment: int,
    materialize_deletions: bool = True,
    materialize_deletions_threshold: float = 0.0,
) -> list[list[Fragment]]:
    """The runs of fragments to rewrite, each in id order (the rule of the
    module docstring). Reads the manifest only."""

    def materializes(fragment: Fragment) -> bool:
        deleted = fragment.num_deleted_rows
        return (
            materialize_deletions and deleted > 0 and deleted / fragment.physical_rows > materialize_deletions_threshold
        )

    def candidate(fragment: Fragment) -> bool:
        return fragment.physical_rows < target_rows_per_fragment or materializes(fragment)

    runs: list[list[Fragment]] = []
    current: list[Fragment] = []
    for fragment in sorted(dataset.fragments, key=lambda f: f.id):
        if candidate(fragment):
            current.append(fragment)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return [run for run in runs if len(run) > 1 or materializes(run[0])]


# -- planning and reading ----------------------------------------------------------


def _fragments_needed(rows: int, target: int) -> int:
    return -(-rows // target)


@dataclass
class MovedRows:
    """The visible rows of a run, in order, with (under stable row ids) each
    row's id and versions."""

    table: pa.Table
    row_ids: list[int] | None = None
    created_at: list[int] = dc_field(default_factory=list)
    last_updated_at: list[int] = dc_field(default_factory=list)


def _moved_rows(dataset: Dataset, run: list[Fragment]) -> MovedRows:
    """Read the visible rows of ``run`` (table overview page, deletion files: a deleted
    offset is not a row of the table) and, with stable row ids, their ids and
    versions from the fragments' sequences, masked the same way."""
    blob_fields = [f.name for f in dataset.schema.fields if is_blob_v2(f)]
    if blob_fields:
        # A scan gives blob v2 descriptors, which point into the data files
        # being replaced (blob.md, "Compaction": they must be rewritten).
        raise UnsupportedFeatureError(
            dataset.manifest_file.path, f"compacting blob v2 columns ({', '.join(blob_fields)}) is not supported"
        )
    tables = [fragment_table(dataset, fragment) for fragment in run]
    moved = MovedRows(pa.concat_tables(tables) if tables else schema_to_arrow(dataset.schema).empty_table())
    if not dataset.uses_stable_row_ids:
        return moved
    moved.row_ids = []
    manifest_path = dataset.manifest_file.path  # errors about inline sequences name it
    for fragment in run:
        visible = _visible_offsets(dataset, fragment)
        read_column = partial(lineage_column, dataset)  # a spilled sequence is read from its data file
        row_ids = fragment_row_ids(dataset.storage, fragment, manifest_path=manifest_path, read_column=read_column)
        if row_ids is None:
            raise ValueError(f"fragment {fragment.id} of a stable-row-id dataset has no row id sequence")
        created = fragment_created_at_versions(
            dataset.storage, fragment, manifest_path=manifest_path, read_column=read_column
        )
        if created is None:
            created = [DEFAULT_CREATED_AT_VERSION] * fragment.physical_rows
        updated = (
            fragment_last_updated_at_versions(
                dataset.storage, fragment, manifest_path=manifest_path, read_column=read_column
            )
            or created
        )
        moved.row_ids.extend(row_ids[i] for i in visible)
        moved.created_at.extend(created[i] for i in visible)
        moved.last_updated_at.extend(updated[i] for i in visible)
    return moved


def _visible_offsets(dataset: Dataset, fragment: Fragment) -> list[int]:
    deleted = set(dataset.deleted_offsets(fragment))
    return [offset for offset in range(fragment.physical_rows) if offset not in deleted]


# -- committing ------------------------------------------------------------------


def _reserve_ids(dataset: Dataset, count: int) -> list[int]:
    """Commit ``ReserveFragments`` and return the reserved ids, ascending
    (nothing is committed for zero fragments).

    A manifest may leave ``max_fragment_id`` out although fragments exist
    (pylance 0.20 does when the only id is 0; docs/spec-discrepancies.md,
    "Observed in pylance" item 3). The reservation then also covers the gap
    up to the highest id present, so that no reserved id is one in use.
    """
    if count == 0:
        return []
    recorded = dataset.manifest.max_fragment_id
    highest = max((f.id for f in dataset.fragments), default=-1)
    gap = max(0, highest - (recorded if recorded is not None else -1))
    reserved = dataset.commit(ReserveFragments(num_fragments=count + gap))
    top = reserved.manifest.max_fragment_id
    if top is None:  # committing a reservation always records the new high-water mark
        raise LanceFormatError(reserved.manifest_file.path, "a ReserveFragments commit recorded no max_fragment_id")
    return list(range(top - count + 1, top + 1))


def _write_run(dataset: Dataset, moved: MovedRows, ids: list[int], target: int) -> list[Fragment]:
    """Write a run's rows as new fragments with the reserved ``ids``, carrying
    the moved rows' ids and versions under stable row ids."""
    if not ids:
        return []
    written = write_fragments(
        dataset.storage,
        moved.table,
        dataset.schema,
        max_rows_per_file=target,
        version=dataset_data_version(dataset.manifest),
    )
    if len(written) != len(ids):
        raise AssertionError(f"wrote {len(written)} fragments for {len(ids)} reserved ids")
    fragments = []
    start = 0
    for fragment, fragment_id in zip(written, ids, strict=True):
        stop = start + fragment.physical_rows
        fragment.id = fragment_id
        if moved.row_ids is not None:
            fragment.row_id_sequence = encode_row_id_sequence(moved.row_ids[start:stop])
            fragment.created_at_version_sequence = encode_version_sequence(moved.created_at[start:stop])
            fragment.last_updated_at_version_sequence = encode_version_sequence(moved.last_updated_at[start:stop])
        fragments.append(fragment)
        start = stop
    return fragments
