"""Mutations for the row lineage rules of revision upstream-2026-11-29
(conformance/validator/rules/row_lineage.py).

Most start from the "stable_row_ids" base (see :mod:`.row_ids`): its latest
version's fragment 0 holds 40 rows with ids 0 to 39. :func:`spill_row_ids`
moves a fragment's row ids to a hidden ``_rowid`` column of a new data file,
as a writer that spills does (flag 2048 set in both words); the mutations
then break one thing about it. A spill done right validates clean
(tests/conformance/validator/test_row_lineage.py).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa

from reference_impl.fragments import DataFile, Fragment, LineageColumn
from reference_impl.row_ids import decode_row_id_sequence
from reference_impl.row_lineage import LINEAGE_COLUMNS

from ...validator.rules.row_lineage import SPILLED_LINEAGE_FLAG
from ..edit import edit_untracked
from ..registry import mutation
from .row_ids import externalise_row_ids

ROW_IDS = LINEAGE_COLUMNS["row_id_sequence"]


def _write_column(root: Path, like: DataFile, values: pa.Array) -> DataFile:
    """A new data file under ``data/`` holding the one column ``_rowid``,
    written by pylance in the file version of ``like``; its DataFile entry
    lists the reserved field id."""
    # lazy: pylance is optional (the test extra); only these mutations write a file with it
    from lance.file import LanceFileWriter

    name = f"lineage-{uuid.uuid4().hex}.lance"
    schema = pa.schema([pa.field(ROW_IDS.name, values.type, nullable=values.null_count > 0)])
    version = f"{like.file_major_version}.{like.file_minor_version}"
    with LanceFileWriter(str(root / "data" / name), schema, version=version) as writer:
        writer.write_batch(pa.table([values], schema=schema))
    return DataFile(
        name,
        [ROW_IDS.field_id],
        [0],
        like.file_major_version,
        like.file_minor_version,
        (root / "data" / name).stat().st_size,
    )


def spill_row_ids(
    root: Path,
    fragment_id: int = 0,
    *,
    values=None,
    flag: bool = True,
    list_in_file: bool = True,
    files: int = 1,
) -> None:
    """Spill fragment ``fragment_id``'s row ids (default: the ones it holds,
    or ``values(ids)``) to ``files`` new data files, listed in the fragment
    when ``list_in_file``; set flag 2048 in both words when ``flag``."""

    def edit(manifest_file) -> None:
        fragment: Fragment = next(f for f in manifest_file.manifest.fragments if f.id == fragment_id)
        assert isinstance(fragment.row_id_sequence, bytes), "the base keeps its row ids inline"
        ids = decode_row_id_sequence(fragment.row_id_sequence, "base", max_rows=fragment.physical_rows)
        column = pa.array(values(ids) if values else ids, pa.uint64())
        written = [_write_column(root, fragment.files[0], column) for _ in range(files)]
        if list_in_file:
            fragment.files.extend(written)
        fragment.row_id_sequence = LineageColumn()
        if flag:
            manifest_file.manifest.reader_feature_flags |= SPILLED_LINEAGE_FLAG
            manifest_file.manifest.writer_feature_flags |= SPILLED_LINEAGE_FLAG

    edit_untracked(root, edit)


@mutation("row-id/external-arms-reserved", base="stable_row_ids", also=("row-id/inline-when-small",))
def keep_row_ids_in_an_external_range(root):
    """The seeds' external arm, readable and within its file: the newest
    page reserves the field."""
    externalise_row_ids(root)


@mutation("row-id/column-located", base="stable_row_ids", breaks="row-id.column-in-one-file")
def spill_row_ids_to_no_file(root):
    spill_row_ids(root, list_in_file=False)


@mutation("row-id/column-located", base="stable_row_ids", breaks="row-id.column-in-one-file")
def spill_row_ids_to_two_files(root):
    spill_row_ids(root, files=2)


@mutation("row-id/column-located", base="legacy", breaks="row-id.column-only-in-v2-files")
def mark_a_legacy_fragment_spilled(root):
    """A column marker in a fragment of legacy (v1) files, which have no
    column_indices to locate a column by."""

    def edit(manifest_file) -> None:
        manifest_file.manifest.fragments[0].created_at_version_sequence = LineageColumn()
        manifest_file.manifest.reader_feature_flags |= SPILLED_LINEAGE_FLAG
        manifest_file.manifest.writer_feature_flags |= SPILLED_LINEAGE_FLAG

    edit_untracked(root, edit)


@mutation("row-id/column-values", base="stable_row_ids")
def spill_a_null_row_id(root):
    spill_row_ids(root, values=lambda ids: [None, *ids[1:]])


@mutation("row-id/column-values", base="stable_row_ids", also=("fragment/physical-rows",))
def spill_one_row_id_too_few(root):
    """The column's file is one row short, which the fragment rules see too."""
    spill_row_ids(root, values=lambda ids: ids[:-1])


@mutation("row-id/column-flag", base="stable_row_ids")
def spill_row_ids_without_the_flag(root):
    spill_row_ids(root, flag=False)


@mutation("row-id/column-names-reserved", base="stable_row_ids")
def name_a_column_rowid(root):
    def edit(manifest_file) -> None:
        field = next(f for f in manifest_file.manifest.schema.top_level() if f.name == "name")
        field.name = ROW_IDS.name

    edit_untracked(root, edit)
