"""Mutations for the deletion-file rules (conformance/validator/rules/deletions.py).

The "plain" base has, from version 4 on, two ``.arrow`` deletion files written
by pylance: fragment 0 (3 of 1000 rows deleted, read version 2) and fragment 1
(800 of 1000 rows deleted, read version 3).

Most mutations change a file's bytes, which no other rule compares. Those that
change the latest manifest's deletion metadata also drop that version's record
of its transaction (:func:`~conformance.mutations.edit.edit_untracked`): the transaction rules
compare a version's fragments with the previous version's, and would otherwise
report the edit as a change the operation did not make. A version may lack its
transaction record (an info).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.ipc as ipc
from pyroaring import BitMap

from conformance.validator.facts.deletions import MAX_FILE_BYTES
from reference_impl.dataset import Dataset
from reference_impl.deletions import decode_arrow_deletions, encode_arrow_deletions
from reference_impl.fragments import DeletionFile, DeletionFileType

from ..edit import arrow_ipc_file, edit_untracked
from ..registry import mutation


def _latest_fragment(root, fragment_id: int):
    dataset = Dataset.open(root)
    return next(f for f in dataset.fragments if f.id == fragment_id)


def _deletion_path(root, fragment_id: int):
    fragment = _latest_fragment(root, fragment_id)
    return root / fragment.deletion_file.path(fragment.id)


def _offsets(root, fragment_id: int) -> list[int]:
    path = _deletion_path(root, fragment_id)
    return decode_arrow_deletions(path.read_bytes(), str(path))


def _point_latest_at(root, fragment_id: int, *, file_type=None, deletion_id=None, read_version=None, count=None):
    """Change the latest manifest's deletion file metadata of a fragment."""

    def edit(manifest_file):
        for fragment in manifest_file.manifest.fragments:
            if fragment.id == fragment_id:
                deletion = fragment.deletion_file
                if file_type is not None:
                    deletion.file_type = file_type
                if deletion_id is not None:
                    deletion.id = deletion_id
                if read_version is not None:
                    deletion.read_version = read_version
                if count is not None:
                    deletion.num_deleted_rows = count

    edit_untracked(root, edit)


@mutation("deletion/file-exists", breaks="deletion.file-exists")
def remove_a_deletion_file(root):
    _deletion_path(root, 0).unlink()


@mutation("deletion/extension-matches-kind", breaks="deletion.extension-matches-kind")
def give_the_arrow_file_a_bin_extension(root):
    path = _deletion_path(root, 0)
    path.rename(path.with_suffix(".bin"))


@mutation("deletion/extension-matches-kind", breaks="deletion.extension-matches-kind")
def store_a_bitmap_in_the_arrow_ipc_file(root):
    path = _deletion_path(root, 0)
    path.write_bytes(BitMap(_offsets(root, 0)).serialize())


@mutation("deletion/extension-matches-kind", breaks="deletion.either-kind")
def record_an_unknown_deletion_kind(root):
    _point_latest_at(root, 0, file_type=7)


@mutation("deletion/arrow-layout")
def write_two_record_batches(root):
    path = _deletion_path(root, 0)
    offsets = _offsets(root, 0)
    # Same three offsets overall (the count stays right), split over two batches.
    table_a = pa.table({"row_id": pa.array(offsets[:1], pa.uint32())})
    table_b = pa.table({"row_id": pa.array(offsets[1:], pa.uint32())})
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table_a.schema) as writer:
        writer.write_table(table_a)
        writer.write_table(table_b)
    path.write_bytes(sink.getvalue().to_pybytes())


@mutation("deletion/arrow-layout")
def write_a_string_column(root):
    path = _deletion_path(root, 0)
    path.write_bytes(arrow_ipc_file({"row_id": pa.array([str(v) for v in _offsets(root, 0)])}))


@mutation("deletion/arrow-layout")
def write_a_null_offset(root):
    path = _deletion_path(root, 0)
    offsets = _offsets(root, 0)
    path.write_bytes(arrow_ipc_file({"row_id": pa.array(offsets[:-1] + [None], pa.int32())}))


@mutation("deletion/bitmap-layout")
def append_bytes_after_a_bitmap(root):
    offsets = _offsets(root, 1)
    fragment = _latest_fragment(root, 1)
    target = root / fragment.deletion_file.path(1).replace(".arrow", ".bin")
    target.write_bytes(BitMap(offsets).serialize() + b"\x00\x01trailing")
    _point_latest_at(root, 1, file_type=DeletionFileType.BITMAP)


@mutation("deletion/count-matches-metadata")
def miscount_the_deleted_rows(root):
    _point_latest_at(root, 1, count=801)


@mutation("deletion/offsets-distinct", breaks="deletion.count-matches-metadata")
def repeat_an_offset(root):
    path = _deletion_path(root, 0)
    offsets = _offsets(root, 0)
    path.write_bytes(arrow_ipc_file({"row_id": pa.array(offsets + offsets[:1], pa.uint32())}))


@mutation("deletion/offsets-in-range")
def delete_a_row_past_the_end(root):
    path = _deletion_path(root, 0)
    offsets = _offsets(root, 0)
    path.write_bytes(encode_arrow_deletions(offsets[:-1] + [1000 + 5]))


@mutation("deletion/offsets-in-range")
def delete_a_negative_offset(root):
    path = _deletion_path(root, 0)
    offsets = _offsets(root, 0)
    path.write_bytes(arrow_ipc_file({"row_id": pa.array(offsets[:-1] + [-4], pa.int32())}))


@mutation("deletion/offsets-in-range", also=("deletion/count-matches-metadata",))
def delete_four_billion_rows_in_a_bitmap(root):
    # Run containers make this a few hundred bytes; it must never be expanded.
    fragment = _latest_fragment(root, 1)
    target = root / fragment.deletion_file.path(1).replace(".arrow", ".bin")
    bitmap = BitMap(range(0, 2**32 - 1))
    bitmap.run_optimize()
    target.write_bytes(bitmap.serialize())
    _point_latest_at(root, 1, file_type=DeletionFileType.BITMAP)


@mutation("deletion/count-within-physical-rows", also=("deletion/count-matches-metadata",))
def delete_more_rows_than_the_fragment_has(root):
    _point_latest_at(root, 1, count=1001)


@mutation("deletion/read-version-earlier")
def compute_the_deletions_from_a_later_version(root):
    future = Dataset.open(root).version + 3
    fragment = _latest_fragment(root, 0)
    source = root / fragment.deletion_file.path(0)
    fragment.deletion_file.read_version = future
    (root / fragment.deletion_file.path(0)).write_bytes(source.read_bytes())
    _point_latest_at(root, 0, read_version=future)


@mutation("deletion/absent-when-nothing-deleted")
def name_a_deletion_file_that_deletes_nothing(root):
    # Fragment 2 has no deleted rows, yet gets an (empty) deletion file.
    (root / "_deletions" / "2-5-424242.arrow").write_bytes(encode_arrow_deletions([]))

    def edit(manifest_file):
        fragment = next(f for f in manifest_file.manifest.fragments if f.id == 2)
        fragment.deletion_file = DeletionFile(
            DeletionFileType.ARROW_ARRAY, read_version=5, id=424242, num_deleted_rows=0
        )

    edit_untracked(root, edit)


@mutation("deletion/absent-when-nothing-deleted", also=("deletion/count-matches-metadata",))
def empty_a_deletion_file(root):
    _deletion_path(root, 0).write_bytes(encode_arrow_deletions([]))


@mutation("deletion/file-exists", breaks="deletion.path-derived")
def store_a_deletion_file_under_another_id(root):
    # The file is intact, but not where fragment 0's metadata derives it.
    path = _deletion_path(root, 0)
    fragment_id, read_version, _ = path.stem.split("-")
    path.rename(path.with_name(f"{fragment_id}-{read_version}-4242.arrow"))


@mutation("deletion/arrow-uint32", base="plain")
def delete_a_row_with_pylance(root):
    """pylance writes its .arrow deletion files with a uint32 column; the
    version this delete commits holds a new one, for fragment 2."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).delete("id = 2500")


@mutation("deletion/unchecked", breaks="deletion.count-matches-metadata")
def grow_a_deletion_file_past_the_readable_size(root):
    """Fragment 0's deletion file gets half a gigabyte of zeros after its
    three offsets (a sparse file: nothing is written): no longer the file of
    three offsets num_deleted_rows counts, and too large for the validator
    to read and count."""
    path = _deletion_path(root, 0)
    with open(path, "r+b") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)


#: A name a deletion file of fragment 9 could have, which no version refers to.
UNREFERENCED_NAME = "9-1-1.arrow"


@mutation("deletion/unreferenced-files")
def leave_a_deletion_file_no_version_refers_to(root):
    # What a commit that failed after writing its deletion file leaves.
    (root / "_deletions" / UNREFERENCED_NAME).write_bytes(b"left by a failed commit")


@mutation("deletion/unreferenced-files")
def put_a_file_that_is_no_deletion_file_in_deletions(root):
    (root / "_deletions" / "notes.txt").write_text("?")
