"""Mutations for the data file rules (conformance/validator/rules/data_files.py)."""

from __future__ import annotations

import os
import shutil

from reference_impl.dataset import Dataset
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage

from ..edit import edit_manifest, edit_untracked
from ..registry import mutation


def _file_of(manifest_file, fragment_id: int, index: int = 0):
    (fragment,) = [f for f in manifest_file.manifest.fragments if f.id == fragment_id]
    return fragment.files[index]


def _latest_path(root, fragment_id: int = 3):
    (fragment,) = [f for f in Dataset.open(root).fragments if f.id == fragment_id]
    return root / "data" / fragment.files[0].path


def _edit_file(root, change, fragment_id: int = 3, index: int = 0):
    def edit(manifest_file):
        change(_file_of(manifest_file, fragment_id, index))

    edit_untracked(root, edit)


# -- where the file is ---------------------------------------------------------------


@mutation("data-file/path", breaks="data-file.path-relative")
def make_a_data_file_path_absolute(root):
    target = _latest_path(root)

    def change(data_file):
        data_file.path = str(target)

    _edit_file(root, change)


@mutation("data-file/path", breaks="data-file.path-stays-inside")
def climb_out_of_the_data_directory(root):
    def change(data_file):
        data_file.path = f"../../{root.name}/data/{data_file.path}"

    _edit_file(root, change)


@mutation("data-file/path", breaks="data-file.path-stays-inside")
def replace_a_data_file_by_a_symlink_out_of_the_root(root):
    target = _latest_path(root)
    outside = root.parent / "outside.lance"
    shutil.copyfile(target, outside)
    target.unlink()
    os.symlink(outside, target)


@mutation("data-file/exists")
def remove_a_data_file(root):
    _latest_path(root).unlink()


@mutation("data-file/exists")
def replace_a_data_file_by_a_directory(root):
    target = _latest_path(root)
    target.unlink()
    target.mkdir()


@mutation("data-file/extension")
def rename_a_data_file_without_extension(root):
    target = _latest_path(root)
    shutil.copyfile(target, target.with_suffix(".dat"))

    def change(data_file):
        data_file.path = data_file.path[: -len(".lance")] + ".dat"

    _edit_file(root, change)


# -- what the file is -------------------------------------------------------------------


@mutation("data-file/readable")
def break_the_trailer_magic(root):
    target = _latest_path(root)
    data = bytearray(target.read_bytes())
    data[-4:] = b"LNAC"
    target.write_bytes(bytes(data))


@mutation("data-file/readable")
def point_the_footer_outside_the_file(root):
    target = _latest_path(root)
    data = bytearray(target.read_bytes())
    data[-40:-32] = (len(data) * 2).to_bytes(8, "little")  # column metadata offsets table start
    data[-32:-24] = (len(data) * 2).to_bytes(8, "little")
    target.write_bytes(bytes(data))


@mutation("data-file/size")
def misstate_the_file_size(root):
    def change(data_file):
        data_file.file_size_bytes += 1

    _edit_file(root, change)


@mutation("data-file/version-matches-file", breaks="data-file.version-matches-file")
def record_every_file_as_2_1(root):
    def edit(manifest_file):
        manifest_file.manifest.data_format.version = "2.1"
        for fragment in manifest_file.manifest.fragments:
            for data_file in fragment.files:
                data_file.file_minor_version = 1

    edit_untracked(root, edit)


@mutation(
    "data-file/version-matches-file",
    base="legacy",
    breaks=("data-file.version-matches-file", "data-file.zero-version-is-legacy"),
)
def record_a_legacy_file_as_2_0(root):
    def edit(manifest_file):
        manifest_file.manifest.data_format.version = "2.0"
        for fragment in manifest_file.manifest.fragments:
            for data_file in fragment.files:
                data_file.file_major_version, data_file.file_minor_version = 2, 0
                data_file.column_indices = list(range(len(data_file.fields)))

    edit_untracked(root, edit)


@mutation("data-file/same-format-version")
def name_another_format_version(root):
    def edit(manifest_file):
        manifest_file.manifest.data_format.version = "2.1"

    edit_untracked(root, edit)


@mutation("data-file/same-format-version", base="legacy")
def name_a_v2_format_over_legacy_files(root):
    def edit(manifest_file):
        manifest_file.manifest.data_format.version = "2.0"

    edit_untracked(root, edit)


# -- field ids and column indices ----------------------------------------------------------


@mutation("data-file/field-id-values", breaks="data-file.no-unassigned-field-id")
def store_the_unassigned_field_id(root):
    def change(data_file):
        data_file.fields[-1] = -1

    _edit_file(root, change)


@mutation(
    "data-file/field-id-values",
    breaks=("data-file.no-other-negative-ids", "data-file.negative-ids-tombstone-or-lineage"),
)
def store_a_negative_field_id(root):
    def change(data_file):
        data_file.fields[-1] = -7

    _edit_file(root, change)


@mutation("data-file/legacy-field-ids-sorted", base="legacy")
def list_legacy_field_ids_backwards(root):
    def change(data_file):
        data_file.fields.reverse()

    _edit_file(root, change, fragment_id=0)


@mutation("data-file/legacy-column-indices", base="legacy")
def give_a_legacy_file_column_indices(root):
    def change(data_file):
        data_file.column_indices = list(range(len(data_file.fields)))

    _edit_file(root, change, fragment_id=0)


@mutation("data-file/column-indices-per-field")
def drop_a_column_index(root):
    def change(data_file):
        data_file.column_indices.pop()

    _edit_file(root, change)


@mutation("data-file/column-indices-distinct")
def repeat_a_column_index(root):
    def change(data_file):
        data_file.column_indices[1] = data_file.column_indices[0]

    _edit_file(root, change)


@mutation("data-file/column-indices-in-file")
def point_a_column_index_past_the_columns(root):
    def change(data_file):
        data_file.column_indices[-1] = 40

    _edit_file(root, change)


@mutation("data-file/column-indices-in-file")
def store_a_negative_column_index(root):
    def change(data_file):
        data_file.column_indices[-1] = -3

    _edit_file(root, change)


# -- legacy files: their field ids against their own schema ---------------------------


def _edit_legacy_ids(root, change) -> None:
    """Change the ids listed for the legacy base's fragment 0 first data file
    (ids 0..4: id, name, point, point.x, point.y) in every version."""

    def edit(manifest_file):
        for fragment in manifest_file.manifest.fragments:
            if fragment.id == 0:
                assert fragment.files[0].fields == [0, 1, 2, 3, 4]
                fragment.files[0].fields = change(fragment.files[0].fields)

    for version in sorted(list_versions(LocalStorage(root)).manifests()):
        edit_manifest(root, edit, version=version)


@mutation("data-file/legacy-every-field", base="legacy")
def leave_a_nested_field_unlisted(root):
    _edit_legacy_ids(root, lambda ids: ids[:-1])


@mutation("data-file/legacy-ids-follow-columns", base="legacy")
def list_a_field_the_file_does_not_hold(root):
    # Still ascending, still one id per column, but column 4 holds point.y (4).
    _edit_legacy_ids(root, lambda ids: ids[:-1] + [6])


# -- what a fragment's files say about each other and the schema -----------------------


@mutation("data-file/distinct-field-ids")
def store_one_field_id_for_two_columns(root):
    # Fragment 3's file holds fields [0, 1, 3, 4]; its second column now
    # claims to be field 0 as well.
    def change(data_file):
        data_file.fields[1] = data_file.fields[0]

    _edit_file(root, change)


#: A field id no version of the "plain" base has given out (its ids are 0 to 4).
UNKNOWN_FIELD_ID = 99


@mutation(
    "data-file/unknown-field-ids",
    breaks=("data-file.no-other-negative-ids", "data-file.negative-ids-tombstone-or-lineage"),
)
def store_a_field_id_the_schema_lacks(root):
    def change(data_file):
        data_file.fields[-1] = UNKNOWN_FIELD_ID

    _edit_file(root, change)


#: A data file name of the kind older writers chose, not UUID-based.
PLAIN_NAME = "plain-name.lance"


@mutation("data-file/uuid-based-name")
def give_a_data_file_a_plain_name(root):
    target = _latest_path(root)
    os.link(target, target.parent / PLAIN_NAME)

    def change(data_file):
        data_file.path = PLAIN_NAME

    _edit_file(root, change)


@mutation("data-file/legacy-version-recorded", base="legacy", breaks="data-file.zero-version-is-legacy")
def commit_a_delete_over_legacy_files_with_pylance(root):
    """pylance records legacy files as 0.2, the trailer's version, where the
    table.proto marks them 0.0: the version its delete commits is one more that
    lists them so."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).delete("id = 8")
