"""Mutations for the fragment rules (conformance/validator/rules/fragments.py).

A defect planted in a version's fragments also contradicts the transaction
that version records, so these mutations use
:func:`~conformance.mutations.edit.edit_untracked`.
"""

from __future__ import annotations

from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage

from ..edit import edit_manifest, edit_untracked
from ..registry import mutation


def _latest_fragment(manifest_file, fragment_id: int):
    (fragment,) = [f for f in manifest_file.manifest.fragments if f.id == fragment_id]
    return fragment


@mutation("fragment/id-unique")
def give_two_fragments_one_id(root):
    def edit(manifest_file):
        _latest_fragment(manifest_file, 3).id = 2

    edit_untracked(root, edit)


@mutation("fragment/id-fits-u32", also=("fragment/max-id-covers",))
def give_a_fragment_a_64_bit_id(root):
    # max_fragment_id is a uint32, so it cannot cover such an id either.
    def edit(manifest_file):
        _latest_fragment(manifest_file, 3).id = 1 << 40

    edit_untracked(root, edit)


@mutation("fragment/max-id-covers")
def lower_max_fragment_id_below_a_fragment(root):
    # Version 1 holds fragments 0..2; no earlier version to compare with.
    def edit(manifest_file):
        manifest_file.manifest.max_fragment_id = 1

    edit_manifest(root, edit, version=1)


@mutation("fragment/max-id-covers")
def drop_max_fragment_id_with_fragments_above_zero(root):
    def edit(manifest_file):
        manifest_file.manifest.max_fragment_id = None

    edit_manifest(root, edit, version=1)


@mutation("fragment/max-id-without-fragments", base="legacy", also=("fragment/new-ids-above-max",))
def set_max_fragment_id_before_any_fragment(root):
    # The legacy base's version 1 is an empty table; once it claims id 0 was
    # used, version 2's Append, which numbers its first fragment 0, reuses it.
    def edit(manifest_file):
        assert not manifest_file.manifest.fragments
        manifest_file.manifest.max_fragment_id = 0

    edit_manifest(root, edit, version=1)


@mutation("fragment/max-id-never-decreases", also=("fragment/new-ids-above-max",))
def raise_an_old_max_fragment_id(root):
    # Version 1 claims ids up to 10 were used; version 2 says 3 (and its
    # Append, numbering fragment 3, reuses an id version 1 counts as used).
    def edit(manifest_file):
        manifest_file.manifest.max_fragment_id = 10

    edit_manifest(root, edit, version=1)


@mutation("fragment/has-data-file")
def remove_every_data_file_of_a_fragment(root):
    def edit(manifest_file):
        _latest_fragment(manifest_file, 3).files = []

    edit_untracked(root, edit)


@mutation("fragment/physical-rows", breaks="fragment.files-share-rows")
def understate_physical_rows(root):
    def edit(manifest_file):
        _latest_fragment(manifest_file, 3).physical_rows = 400

    edit_untracked(root, edit)


@mutation("fragment/physical-rows", base="legacy", breaks="fragment.files-share-rows")
def overstate_physical_rows_of_a_legacy_fragment(root):
    # Fragment 1 (20 rows, no deletion file) has two legacy data files.
    def edit(manifest_file):
        _latest_fragment(manifest_file, 1).physical_rows = 21

    edit_untracked(root, edit)


@mutation("fragment/new-ids-above-max", base="evolution")
def count_ten_more_ids_as_used(root):
    # Every version says ten more ids were used than it did, so the fragments
    # the Appends and Updates number right above the real high-water mark
    # reuse ids counted as used before (the ReserveFragments keeps its
    # increment; the evolution base has no tag whose manifest size could
    # change).
    def edit(manifest_file):
        manifest_file.manifest.max_fragment_id = (manifest_file.manifest.max_fragment_id or 0) + 10

    for version in sorted(list_versions(LocalStorage(root)).manifests()):
        edit_manifest(root, edit, version=version)


@mutation("fragment/physical-rows", breaks="fragment.physical-rows-include-deleted")
def leave_deleted_rows_out_of_physical_rows(root):
    # Fragment 0's file holds 1000 rows, 3 of them deleted.
    def edit(manifest_file):
        fragment = _latest_fragment(manifest_file, 0)
        fragment.physical_rows -= fragment.deletion_file.num_deleted_rows

    edit_untracked(root, edit)


@mutation("fragment/max-id-absent", base="v2_0", breaks="fragment.max-id-zero-for-first")
def leave_out_a_zero_max_fragment_id(root):
    """Version 1 keeps only fragment 0 (of 0 and 1) and, as pylance 0.20
    did, no max_fragment_id (the value 0 is not stored). Version 2 now adds
    two fragments where its Append records one, so it forgets its
    transaction too."""

    def edit(manifest_file):
        manifest_file.manifest.fragments = manifest_file.manifest.fragments[:1]
        manifest_file.manifest.max_fragment_id = None

    edit_untracked(root, edit, version=1)
    edit_untracked(root, lambda manifest_file: None, version=2)
