"""Each operation of the matrix, done with pylance 14 and with the reference.

Every action receives a handle opened at the read version ``v`` before the
other writer committed (a ``lance.LanceDataset`` or a
``reference_impl.dataset.Dataset``) and commits one operation from there.
pylance's high-level calls are used where they commit the operation alone on
the handle's version; ``lance.LanceDataset.commit(..., read_version=v)``
where the call would read the latest version instead (appends, overwrites,
restores) or where no high-level call makes the operation (DataReplacement).

The base table (:mod:`.cells`) has columns ``id``, ``extra`` and ``value``
(field ids 0, 1, 2; each in its own data file, so that a DataReplacement
replaces a whole data file), twelve rows in fragments 0, 1 and 2 (ids 0-3,
4-7, 8-11), and row id 3 deleted, so that a compaction rewrites fragment 0
only.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.fragment_writer import dataset_data_version, write_data_file, write_fragments
from reference_impl.manifest import BasePath
from reference_impl.newer_operations import ReserveRowIds
from reference_impl.transactions import (
    DataReplacement,
    DataReplacementGroup,
    Overwrite,
    ReserveFragments,
    Update,
    UpdateBases,
    UpdateMode,
)

from .model import Implementation, Operation

#: Rows per fragment of the base table.
FRAGMENT_ROWS = 4
FIELD_IDS = {"id": 0, "extra": 1, "value": 2}
#: The field id of a data file's obsolete (tombstoned) columns.
TOMBSTONE = -2
#: The MemWAL regions the reference's UpdateMemWalState actions name.
MEM_WAL_REGIONS = ("1b0e5c1e-3c6c-4c8e-9a43-6f1e2f0f0a01", "2c1f6d2f-4d7d-4d9f-8b54-7a2f3a1a1b02")


@dataclass(frozen=True)
class Context:
    """Where a writer works: the dataset, the version both writers read, and
    a directory outside the dataset for base paths."""

    uri: str
    read_version: int
    scratch: Path
    #: Distinguishes the files the two writers name themselves.
    token: str


Run = Callable[[Any, Context], None]


@dataclass(frozen=True)
class Action:
    """One operation, as each implementation performs it."""

    operation: Operation
    summary: str
    pylance: Run | None
    reference: Run | None
    #: Why an implementation cannot perform it (when its ``Run`` is None).
    pylance_unreachable: str = ""
    reference_unreachable: str = ""

    def runner(self, implementation: Implementation) -> Run | None:
        return self.pylance if implementation is Implementation.PYLANCE else self.reference

    def unreachable_reason(self, implementation: Implementation) -> str:
        if implementation is Implementation.PYLANCE:
            return self.pylance_unreachable
        return self.reference_unreachable


def base_table(first_id: int = 0, rows: int = 12) -> pa.Table:
    ids = list(range(first_id, first_id + rows))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "extra": pa.array([1000 + i for i in ids], pa.int64()),
            "value": pa.array([100 + i for i in ids], pa.int64()),
        }
    )


def _in_list(ids: tuple[int, ...]) -> str:
    return f"id IN ({', '.join(str(i) for i in ids)})"


def _pylance_commit(ctx: Context, operation) -> None:
    import lance  # pylance, imported lazily as the drivers do

    lance.LanceDataset.commit(ctx.uri, operation, read_version=ctx.read_version)


# -- append / overwrite ------------------------------------------------------------


def append() -> Action:
    def pylance(ds, ctx: Context) -> None:
        import lance  # pylance, lazily (as the drivers import it)
        from lance.fragment import write_fragments  # pylance, lazily

        fragments = write_fragments(base_table(12, 4), ds, data_storage_version=ds.data_storage_version)
        _pylance_commit(ctx, lance.LanceOperation.Append(fragments))

    def reference(ds, ctx: Context) -> None:
        ds.append(base_table(12, 4))

    return Action(Operation.APPEND, "append 4 rows (ids 12-15) as a new fragment", pylance, reference)


def overwrite() -> Action:
    def pylance(ds, ctx: Context) -> None:
        import lance  # pylance, lazily (as the drivers import it)
        from lance.fragment import write_fragments  # pylance, lazily

        fragments = write_fragments(
            base_table(100, 4), ds, mode="overwrite", data_storage_version=ds.data_storage_version
        )
        _pylance_commit(ctx, lance.LanceOperation.Overwrite(ds.schema, fragments))

    def reference(ds, ctx: Context) -> None:
        ds.overwrite(base_table(100, 4))

    return Action(Operation.OVERWRITE, "overwrite the table with 4 new rows (ids 100-103)", pylance, reference)


def overwrite_with_config(key: str) -> Action:
    """An Overwrite that also sets config ``key`` (``Overwrite.config_upsert_values``)."""

    def reference(ds, ctx: Context) -> None:
        fragments = write_fragments(
            ds.storage, base_table(100, 4), ds.schema, version=dataset_data_version(ds.manifest)
        )
        ds.commit(Overwrite(fragments=fragments, schema=ds.schema, config_upsert_values={key: ctx.token}))

    return Action(
        Operation.OVERWRITE,
        f"overwrite the table with 4 new rows (ids 100-103), setting config key {key!r}",
        None,
        reference,
        pylance_unreachable="pylance 14's Overwrite takes no config (LanceOperation.Overwrite has no such argument)",
    )


# -- delete / update ---------------------------------------------------------------


def _where(ids: tuple[int, ...]):
    return pc.field("id").isin(list(ids))


def delete(ids: tuple[int, ...]) -> Action:
    def pylance(ds, ctx: Context) -> None:
        ds.delete(_in_list(ids), conflict_retries=0)

    def reference(ds, ctx: Context) -> None:
        ds.delete(_where(ids))

    return Action(Operation.DELETE, f"delete rows with {_in_list(ids)}", pylance, reference)


def update(ids: tuple[int, ...]) -> Action:
    def pylance(ds, ctx: Context) -> None:
        ds.update({"value": "-1"}, where=_in_list(ids), conflict_retries=0)

    def reference(ds, ctx: Context) -> None:
        ds.update({"value": pa.scalar(-1, pa.int64())}, _where(ids))

    return Action(
        Operation.UPDATE,
        f"set value = -1 where {_in_list(ids)} (REWRITE_ROWS: rows moved to a new fragment)",
        pylance,
        reference,
    )


def update_columns(fragment_id: int, column: str) -> Action:
    """An Update in REWRITE_COLUMNS mode: ``column`` of every row of
    ``fragment_id`` written anew as a data file of the same fragment, the old
    file's field tombstoned. Neither implementation's ``update`` call does
    this, so both commit the operation themselves."""

    def pylance(ds, ctx: Context) -> None:
        import lance  # pylance, lazily (as the drivers import it)
        from lance.fragment import DataFile  # pylance, lazily

        new_file = _pylance_column_file(ds, ctx, fragment_id, column, "columns")
        fragment = ds.get_fragment(fragment_id).metadata
        field_id = FIELD_IDS[column]
        files = [
            DataFile(
                f.path,
                [TOMBSTONE],
                list(f.column_indices),
                f.file_major_version,
                f.file_minor_version,
                f.file_size_bytes,
            )
            if list(f.fields) == [field_id]
            else f
            for f in fragment.files
        ]
        fragment.files = [*files, new_file]
        operation = lance.LanceOperation.Update(
            updated_fragments=[fragment], fields_modified=[field_id], update_mode="rewrite_columns"
        )
        _pylance_commit(ctx, operation)

    def reference(ds, ctx: Context) -> None:
        field = next(f for f in ds.schema.fields if f.name == column)
        fragment = next(f for f in ds.fragments if f.id == fragment_id)
        new_file = write_data_file(
            ds.storage, _replacement_values(fragment_id, column), [field], version=dataset_data_version(ds.manifest)
        )
        files = [
            dataclasses.replace(f, fields=[TOMBSTONE]) if list(f.fields) == [field.id] else f for f in fragment.files
        ]
        updated = dataclasses.replace(fragment, files=[*files, new_file])
        ds.commit(
            Update(updated_fragments=[updated], fields_modified=[field.id], update_mode=UpdateMode.REWRITE_COLUMNS)
        )

    return Action(
        Operation.UPDATE,
        f"rewrite column {column} of fragment {fragment_id} in place (an Update in REWRITE_COLUMNS mode)",
        pylance,
        reference,
    )


# -- indices -----------------------------------------------------------------------


def create_index(column: str, name: str) -> Action:
    def pylance(ds, ctx: Context) -> None:
        ds.create_scalar_index(column, "BTREE", name=name)

    def reference(ds, ctx: Context) -> None:
        ds.create_index([column], name=name, index_type="BTREE")

    return Action(Operation.CREATE_INDEX, f"create BTREE index {name!r} on {column}", pylance, reference)


def initialize_mem_wal() -> Action:
    def pylance(ds, ctx: Context) -> None:
        ds.initialize_mem_wal(unsharded=True)

    return Action(
        Operation.CREATE_INDEX,
        "create the MemWAL index (singleton) with initialize_mem_wal",
        pylance,
        None,
        reference_unreachable="the reference writer has no call that creates the MemWAL index",
    )


# -- rewrite, merge, project -----------------------------------------------------------


def rewrite(*, fragment_reuse_index: bool = False) -> Action:
    """Compact fragment 0; with ``fragment_reuse_index``, pylance defers
    remapping the table's indices and records a fragment reuse index
    instead."""

    def pylance(ds, ctx: Context) -> None:
        ds.optimize.compact_files(
            target_rows_per_fragment=FRAGMENT_ROWS,
            materialize_deletions_threshold=0.0,
            num_threads=1,
            defer_index_remap=fragment_reuse_index,
        )

    def reference(ds, ctx: Context) -> None:
        ds.compact(target_rows_per_fragment=FRAGMENT_ROWS, materialize_deletions_threshold=0.0)

    if fragment_reuse_index:
        return Action(
            Operation.REWRITE,
            "compact fragment 0 with deferred index remapping (the Rewrite carries a fragment reuse index)",
            pylance,
            None,
            reference_unreachable=(
                "the reference writer cannot write a fragment reuse index (protos/transaction.proto has no "
                "Rewrite.frag_reuse_index)"
            ),
        )
    return Action(
        Operation.REWRITE,
        "compact: fragment 0 (with a deleted row) rewritten; both implementations commit ReserveFragments first",
        pylance,
        reference,
    )


def merge(column: str, *, computed: bool = True) -> Action:
    """Add ``column``: ``id * 2``, or all nulls when not ``computed`` (pylance
    14 refuses computed columns on a table with a MemWAL attached)."""

    def pylance(ds, ctx: Context) -> None:
        ds.add_columns({column: "id * 2"} if computed else pa.field(column, pa.int64()))

    def reference(ds, ctx: Context) -> None:
        if computed:
            ds.add_columns({column: pc.multiply(pc.field("id"), 2)})
        else:
            ds.add_columns({pa.field(column, pa.int64()): lambda rows: pa.nulls(rows.num_rows, pa.int64())})

    what = f"{column} = id * 2" if computed else f"{column}, all nulls"
    return Action(Operation.MERGE, f"add column {what} (a Merge)", pylance, reference)


def project() -> Action:
    def pylance(ds, ctx: Context) -> None:
        ds.drop_columns(["extra"])

    def reference(ds, ctx: Context) -> None:
        ds.drop_columns(["extra"])

    return Action(Operation.PROJECT, "drop column extra (a Project)", pylance, reference)


# -- restore, reserve ------------------------------------------------------------------


def restore() -> Action:
    def pylance(ds, ctx: Context) -> None:
        import lance  # pylance, lazily

        _pylance_commit(ctx, lance.LanceOperation.Restore(1))

    def reference(ds, ctx: Context) -> None:
        ds.restore(1)

    return Action(Operation.RESTORE, "restore version 1", pylance, reference)


def reserve_fragments() -> Action:
    def reference(ds, ctx: Context) -> None:
        ds.commit(ReserveFragments(num_fragments=2))

    return Action(
        Operation.RESERVE_FRAGMENTS,
        "reserve 2 fragment ids",
        None,
        reference,
        pylance_unreachable=(
            "pylance 14 has no public ReserveFragments operation; compact_files commits one, but always "
            "followed by its Rewrite"
        ),
    )


#: Row ids the matrix's ReserveRowIds sets aside.
RESERVED_ROW_IDS = 8


def reserve_row_ids() -> Action:
    def reference(ds, ctx: Context) -> None:
        ds.commit(ReserveRowIds(num_row_ids=RESERVED_ROW_IDS))

    return Action(
        Operation.RESERVE_ROW_IDS,
        f"reserve {RESERVED_ROW_IDS} stable row ids",
        None,
        reference,
        pylance_unreachable=(
            "pylance 14 has no ReserveRowIds operation (no LanceOperation, no dataset call); it reads a version "
            "holding one and appends above the reservation"
        ),
    )


def data_overlay(fragment: int) -> Action:
    """Overlay values for column ``value`` of ``fragment``: performed by neither side."""
    return Action(
        Operation.DATA_OVERLAY,
        f"overlay new values of column value in fragment {fragment}",
        None,
        None,
        pylance_unreachable=(
            "pylance 14 commits LanceOperation.DataOverlay, but the version sets reader feature flag 64, which its "
            "own reader then refuses ('cannot be read by this version of Lance'): nothing can race on the table"
        ),
        reference_unreachable=(
            "the reference does not commit DataOverlay: data overlay files are experimental (flag 64) and their "
            "page is not among the pages it restates; its decide() applies the page's rules"
        ),
    )


# -- config, bases, MemWAL ---------------------------------------------------------------


def update_config(key: str) -> Action:
    def pylance(ds, ctx: Context) -> None:
        ds.update_config({key: ctx.token})

    def reference(ds, ctx: Context) -> None:
        ds.update_metadata(config={key: ctx.token})

    return Action(Operation.UPDATE_CONFIG, f"set config key {key!r}", pylance, reference)


def add_base(name: str, directory: str, base_id: int) -> Action:
    def location(ctx: Context) -> str:
        path = ctx.scratch / directory
        path.mkdir(parents=True, exist_ok=True)
        return str(path)

    def pylance(ds, ctx: Context) -> None:
        import lance  # pylance, lazily

        ds.add_bases([lance.DatasetBasePath(location(ctx), name=name, id=base_id)])

    def reference(ds, ctx: Context) -> None:
        ds.commit(UpdateBases([BasePath(id=base_id, path=location(ctx), is_dataset_root=False, name=name)]))

    return Action(
        Operation.UPDATE_BASES,
        f"add base path {base_id} named {name!r} at <scratch>/{directory}",
        pylance,
        reference,
    )


def update_mem_wal_state(region: str, generation: int = 1) -> Action:
    def reference(ds, ctx: Context) -> None:
        ds.update_mem_wal_state({region: generation})

    return Action(
        Operation.UPDATE_MEM_WAL_STATE,
        f"record MemWAL region {region[:8]}... merged up to generation {generation}",
        None,
        reference,
        pylance_unreachable=(
            "no pylance 14 Python call commits UpdateMemWalState (mem_wal_writer writes WAL entries; merging "
            "them into the table is not exposed)"
        ),
    )


# -- data replacement --------------------------------------------------------------


def _replacement_values(fragment_id: int, column: str) -> pa.Table:
    first = fragment_id * FRAGMENT_ROWS
    return pa.table({column: pa.array([-(first + i) - 1 for i in range(FRAGMENT_ROWS)], pa.int64())})


def _pylance_column_file(ds, ctx: Context, fragment_id: int, column: str, purpose: str):
    """Write new values of ``column`` for the rows of ``fragment_id`` as a
    data file of the dataset, with pylance's file writer; its ``DataFile``."""
    from lance.file import LanceFileWriter  # pylance, lazily
    from lance.fragment import DataFile  # pylance, lazily

    name = f"{purpose}-{ctx.token}-{fragment_id}.lance"
    path = os.path.join(ctx.uri, "data", name)
    table = _replacement_values(fragment_id, column)
    version = ds.data_storage_version  # the dataset's files' version, as every data file of it
    with LanceFileWriter(path, table.schema, version=version) as writer:
        writer.write_batch(table)
    major, minor = (int(part) for part in version.split("."))
    return DataFile(name, [FIELD_IDS[column]], [0], major, minor, os.path.getsize(path))


def data_replacement(fragment_id: int, column: str = "value") -> Action:
    def pylance(ds, ctx: Context) -> None:
        import lance  # pylance, lazily (as the drivers import it)

        new_file = _pylance_column_file(ds, ctx, fragment_id, column, "replacement")
        group = lance.LanceOperation.DataReplacementGroup(fragment_id, new_file)
        _pylance_commit(ctx, lance.LanceOperation.DataReplacement([group]))

    def reference(ds, ctx: Context) -> None:
        field = next(f for f in ds.schema.fields if f.name == column)
        new_file = write_data_file(
            ds.storage, _replacement_values(fragment_id, column), [field], version=dataset_data_version(ds.manifest)
        )
        ds.commit(DataReplacement([DataReplacementGroup(fragment_id, new_file)]))

    return Action(
        Operation.DATA_REPLACEMENT,
        f"replace column {column} of fragment {fragment_id} with a new data file",
        pylance,
        reference,
    )
