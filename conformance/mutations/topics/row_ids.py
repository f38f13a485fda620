"""Mutations for the row id rules (conformance/validator/rules/row_ids.py).

The "stable_row_ids" base's latest version (3, a Delete) has fragments 0 (40
rows, ids 0..39), 1 (40 rows, ids 40..79), 2 (20 rows, ids 80..99) and 3 (30
rows, ids 100..129), every tenth row deleted, next_row_id 130, and pylance's
created-at / last-updated-at sequences (1 for fragments 0..2, 2 for fragment
3). Edits go to the latest manifest, whose transaction record is dropped so
that the transaction rules do not also see a change the Delete did not make.
"""

from __future__ import annotations

from conformance.validator.facts.row_ids import MAX_SEQUENCE_BYTES
from reference_impl.fragments import ExternalFile
from reference_impl.row_ids import decode_row_id_sequence, encode_row_id_sequence, encode_version_sequence
from reference_impl.wire import rowids_pb2

from ..edit import edit_manifest, edit_untracked
from ..registry import mutation


def _fragment(manifest_file, fragment_id: int):
    return next(f for f in manifest_file.manifest.fragments if f.id == fragment_id)


def _set(root, fragment_id: int, attr: str, value) -> None:
    def edit(manifest_file):
        setattr(_fragment(manifest_file, fragment_id), attr, value)

    edit_untracked(root, edit)


@mutation("row-id/sequence-decodes", base="stable_row_ids", breaks="row-id.sequence-decodes")
def garble_a_row_id_sequence(root):
    _set(root, 0, "row_id_sequence", b"\x0a\xff\xff\xff")


@mutation("row-id/sequence-decodes", base="stable_row_ids", breaks="row-id.sorted-array-sorted")
def unsort_a_sorted_array_segment(root):
    message = rowids_pb2.RowIdSequence()
    segment = message.segments.add()
    segment.sorted_array.u16_array.base = 0
    segment.sorted_array.u16_array.offsets = b"".join(v.to_bytes(2, "little") for v in [1, 0] + list(range(2, 40)))
    _set(root, 0, "row_id_sequence", message.SerializeToString())


@mutation("row-id/sequence-decodes", base="stable_row_ids", breaks="row-id.holes-segment")
def put_a_hole_outside_its_range(root):
    message = rowids_pb2.RowIdSequence()
    segment = message.segments.add()
    segment.range_with_holes.start = 0
    segment.range_with_holes.end = 41
    segment.range_with_holes.holes.u64_array.values = (500).to_bytes(8, "little")
    _set(root, 0, "row_id_sequence", message.SerializeToString())


@mutation("row-id/one-per-row", base="stable_row_ids")
def drop_the_last_row_id(root):
    _set(root, 0, "row_id_sequence", encode_row_id_sequence(range(0, 39)))


@mutation("row-id/one-per-row", base="stable_row_ids")
def claim_a_trillion_row_ids(root):
    # A two-varint range that must not be expanded.
    message = rowids_pb2.RowIdSequence()
    segment = message.segments.add()
    segment.range.start = 0
    segment.range.end = 10**12
    _set(root, 0, "row_id_sequence", message.SerializeToString())


@mutation("row-id/unique", base="stable_row_ids")
def give_two_fragments_the_same_ids(root):
    _set(root, 1, "row_id_sequence", encode_row_id_sequence(range(0, 40)))


@mutation("row-id/unique", base="stable_row_ids")
def repeat_an_id_within_a_fragment(root):
    message = rowids_pb2.RowIdSequence()
    for start, end in ((0, 20), (0, 20)):
        segment = message.segments.add()
        segment.range.start = start
        segment.range.end = end
    _set(root, 0, "row_id_sequence", message.SerializeToString())


@mutation("row-id/below-next-row-id", base="stable_row_ids", also=("row-id/never-reused",))
def lower_next_row_id(root):
    # Below version 2's next_row_id too: ids from 120 on could be handed out again.
    def edit(manifest_file):
        manifest_file.manifest.next_row_id = 120

    edit_untracked(root, edit)


@mutation("row-id/next-row-id-zero", base="stable_row_ids", also=("row-id/below-next-row-id", "row-id/never-reused"))
def zero_next_row_id(root):
    def edit(manifest_file):
        manifest_file.manifest.next_row_id = 0

    edit_untracked(root, edit)


def externalise_row_ids(root, size_delta: int = 0, write: bool = True) -> None:
    """Fragment 0's row ids move to an external byte range (the seeds' arm,
    reserved from upstream-2026-11-29 on) after a 6-byte header; the range
    runs ``size_delta`` bytes past the sequence, and the file is written
    only when ``write``."""
    data = encode_row_id_sequence(range(0, 40))
    if write:
        (root / "_row_ids").mkdir(exist_ok=True)
        (root / "_row_ids" / "fragment-0.bin").write_bytes(b"header" + data)
    _set(root, 0, "row_id_sequence", ExternalFile("_row_ids/fragment-0.bin", 6, len(data) + size_delta))


@mutation("row-id/external-range-in-file", base="stable_row_ids", also=("row-id/inline-when-small",))
def run_an_external_range_past_its_file(root):
    externalise_row_ids(root, size_delta=10)


@mutation("row-id/external-range-in-file", base="stable_row_ids", also=("row-id/inline-when-small",))
def name_a_missing_external_file(root):
    externalise_row_ids(root, write=False)


@mutation("row-id/version-sequences-cover-rows", base="stable_row_ids")
def shorten_a_created_at_sequence(root):
    _set(root, 0, "created_at_version_sequence", encode_version_sequence([1] * 39))


@mutation("row-id/version-sequences-cover-rows", base="stable_row_ids")
def garble_a_last_updated_at_sequence(root):
    _set(root, 2, "last_updated_at_version_sequence", b"\x0a\x05\xff")


@mutation("row-id/versions-ordered", base="stable_row_ids")
def create_rows_after_their_last_update(root):
    _set(root, 0, "created_at_version_sequence", encode_version_sequence([2] * 40))


@mutation("row-id/versions-ordered", base="stable_row_ids")
def date_rows_in_the_future(root):
    def edit(manifest_file):
        fragment = _fragment(manifest_file, 3)
        fragment.created_at_version_sequence = encode_version_sequence([9] * 30)
        fragment.last_updated_at_version_sequence = encode_version_sequence([9] * 30)

    edit_untracked(root, edit)


# -- history: each version against the one before ------------------------------------
#
# Version 1 (an Overwrite) assigns ids 0..99 (next_row_id 100), version 2 (an
# Append) 100..129 to fragment 3 (next_row_id 130), version 3 (a Delete)
# none. These mutations edit the versions in place and keep their
# transactions, which record no row ids.


def _set_next_row_id(root, value: int, *versions: int) -> None:
    def edit(manifest_file):
        manifest_file.manifest.next_row_id = value

    for version in versions:
        edit_manifest(root, edit, version=version)


@mutation("row-id/never-reused", base="stable_row_ids")
def hand_out_ids_version_1_retired(root):
    # Version 1 says ids up to 129 were handed out already; version 2 gives
    # its rows 100..129 again.
    _set_next_row_id(root, 130, 1)


@mutation("row-id/sequential-assignment", base="stable_row_ids")
def skip_an_id_in_the_append(root):
    # next_row_id moves by 31 over an Append of 30 rows: id 130 goes to no row.
    _set_next_row_id(root, 131, 2, 3)


@mutation(
    "row-id/new-row-versions",
    base="stable_row_ids",
    breaks=("row-id.new-row-versions", "row-id.update-keeps-created-at"),
)
def date_appended_rows_to_the_version_before(root):
    def edit(manifest_file):
        _fragment(manifest_file, 3).created_at_version_sequence = encode_version_sequence([1] * 30)

    edit_manifest(root, edit, version=2)


@mutation("row-id/stable-across-moves", base="stable_row_ids")
def renumber_a_row_in_the_compaction(root):
    # pylance compacts the four fragments into one (a ReserveFragments, then
    # a Rewrite); the moved row with id 1 then comes out with id 0, the id of
    # a row the Delete removed (so no id is duplicated or out of range).
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).optimize.compact_files(target_rows_per_fragment=1000)

    def edit(manifest_file):
        (fragment,) = manifest_file.manifest.fragments
        ids = decode_row_id_sequence(fragment.row_id_sequence, "test", max_rows=fragment.physical_rows)
        assert 0 not in ids and 1 in ids
        fragment.row_id_sequence = encode_row_id_sequence([0 if i == 1 else i for i in ids])

    edit_manifest(root, edit)


# -- malformed segments ---------------------------------------------------------------


def _one_segment(root, fill) -> None:
    """Fragment 0's row id sequence becomes one segment that ``fill`` sets."""
    message = rowids_pb2.RowIdSequence()
    fill(message.segments.add())
    _set(root, 0, "row_id_sequence", message.SerializeToString())


@mutation("row-id/sequence-decodes", base="stable_row_ids", breaks="row-id.range-segment")
def run_a_range_backwards(root):
    def fill(segment):
        segment.range.start = 40
        segment.range.end = 0

    _one_segment(root, fill)


@mutation("row-id/sequence-decodes", base="stable_row_ids", breaks="row-id.bitmap-segment")
def cut_a_range_bitmap_short(root):
    # 40 values need 5 bitmap bytes; 4 hold only 32 bits.
    def fill(segment):
        segment.range_with_bitmap.start = 0
        segment.range_with_bitmap.end = 40
        segment.range_with_bitmap.bitmap = b"\xff" * 4

    _one_segment(root, fill)


@mutation("row-id/sequence-decodes", base="stable_row_ids", breaks="row-id.encoded-array-widths")
def give_a_16_bit_array_an_odd_byte_count(root):
    def fill(segment):
        segment.array.u16_array.base = 0
        segment.array.u16_array.offsets = b"".join(v.to_bytes(2, "little") for v in range(40))[:-1]

    _one_segment(root, fill)


# -- warnings and infos -----------------------------------------------------------------


@mutation("row-id/inline-when-small", base="stable_row_ids", also=("row-id/external-arms-reserved",))
def move_a_small_sequence_to_an_external_file(root):
    # Readable and within its file: only its size is at fault.
    externalise_row_ids(root)


@mutation("row-id/next-row-id-without-flag")
def set_next_row_id_without_stable_row_ids(root):
    # The "plain" base has stable row ids off.
    _set_next_row_id(root, 5, 1)


@mutation("row-id/kept-on-update", base="stable_row_ids")
def update_a_row_with_pylance(root):
    """pylance 14 moves an updated row to a new fragment under its old id,
    deleting the old copy: a visible and a deleted row share the id. The
    seeds' page gave the row a new id; the rule, and so this mutation, is
    validated under upstream-2026-11, the newest revision that still says so."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).update({"name": "'changed'"}, where="id = 5")


@mutation(
    "row-id/unchecked", base="stable_row_ids", breaks="row-id.one-per-row", also=("row-id/external-arms-reserved",)
)
def keep_fragment_0s_row_ids_in_a_huge_file(root):
    """An external row id sequence larger than the validator reads
    (MAX_SEQUENCE_BYTES), in a sparse file that really is that large: the
    sequence is reported as unchecked, not read."""
    data = encode_row_id_sequence(range(0, 40))
    size = MAX_SEQUENCE_BYTES + 1
    (root / "_row_ids").mkdir(exist_ok=True)
    with open(root / "_row_ids" / "fragment-0.bin", "wb") as file:
        file.write(data)
        file.truncate(size)
    _set(root, 0, "row_id_sequence", ExternalFile("_row_ids/fragment-0.bin", 0, size))
