"""Mutations for the index rules (conformance/validator/rules/indices.py).

The "plain" base has one BTREE index, ``id_idx`` on field 0, built from
version 4 and listed by versions 5 (CreateIndex) and 6 (UpdateConfig), with
its files under ``_indices/{uuid}/``. Edits go to the manifests of both
versions, whose transaction records are dropped so that the transaction rules
do not also report a change the operations did not make.
"""

from __future__ import annotations

import dataclasses
import shutil
import uuid as uuid_module

from reference_impl.fragment_reuse import FRAGMENT_REUSE_INDEX_NAME
from reference_impl.index_metadata import encode_fragment_bitmap
from reference_impl.wire import table_pb2

from ..edit import edit_manifest
from ..registry import mutation

INDEXED_VERSIONS = (5, 6)


def _edit_indexed_versions(root, edit, versions=INDEXED_VERSIONS) -> None:
    def apply(manifest_file):
        edit(manifest_file.indices)
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = None

    for version in versions:
        edit_manifest(root, apply, version=version)


def _add_entry(root, **changes) -> None:
    """Add a copy of the index entry with ``changes``, in the latest version."""

    def edit(indices):
        indices.append(dataclasses.replace(indices[0], **changes))

    _edit_indexed_versions(root, edit, versions=(6,))


def _change(root, **changes) -> None:
    def edit(indices):
        for field_name, value in changes.items():
            setattr(indices[0], field_name, value)

    _edit_indexed_versions(root, edit)


def _index_directory(root):
    (directory,) = [p for p in (root / "_indices").iterdir() if p.is_dir()]
    return directory


@mutation("index/name-unique", also=("index/directory-present",))
def reuse_an_index_name_for_another_column(root):
    _add_entry(root, uuid=str(uuid_module.uuid4()), fields=[1])


@mutation("index/uuid-unique")
def list_one_uuid_twice(root):
    _add_entry(root, name="id_idx_copy")


@mutation("index/uuid-unique", also=("index-bitmap/file-decodes",))
def change_an_index_type_under_its_uuid(root):
    # The BTREE's directory then lacks the lookup file a BITMAP segment keeps.
    def edit(indices):
        indices[0].type_url = "/lance.table.BitmapIndexDetails"

    _edit_indexed_versions(root, edit, versions=(6,))


@mutation("index/fields-exist")
def index_a_field_the_schema_lacks(root):
    _change(root, fields=[99])


@mutation("index/dataset-version-not-later")
def build_an_index_from_a_future_version(root):
    _change(root, dataset_version=50)


@mutation("index/fragment-bitmap-bounded")
def cover_a_fragment_never_assigned(root):
    _change(root, fragment_bitmap=encode_fragment_bitmap([0, 77]))


@mutation("index/type-url-unique-ignoring-case", also=("index/directory-present",))
def spell_a_type_url_in_another_case(root):
    _add_entry(root, uuid=str(uuid_module.uuid4()), name="id_idx_lower", type_url="/lance.table.btreeindexdetails")


@mutation("index/file-sizes-match", breaks="index.file-sizes-match")
def misrecord_an_index_file_size(root):
    def edit(indices):
        indices[0].files[0].size_bytes += 1

    _edit_indexed_versions(root, edit)


@mutation("index/file-sizes-match", breaks="index.file-sizes-match")
def remove_a_listed_index_file(root):
    directory = _index_directory(root)
    sorted(directory.iterdir())[0].unlink()


@mutation("index/directory-present")
def remove_the_index_directory(root):
    shutil.rmtree(_index_directory(root))


def _split_into_segments(root, first: list[int], second: list[int]) -> None:
    """In the latest version, make id_idx cover ``first`` and add a second
    segment of it (same name, field and type; no files of its own, so none
    to find) covering ``second``."""

    def edit(indices):
        indices[0].fragment_bitmap = encode_fragment_bitmap(first)
        indices.append(
            dataclasses.replace(
                indices[0], uuid=str(uuid_module.uuid4()), files=[], fragment_bitmap=encode_fragment_bitmap(second)
            )
        )

    _edit_indexed_versions(root, edit, versions=(6,))


@mutation("index/delta-segments")
def add_a_delta_segment_of_the_index(root):
    # Two segments of id_idx over disjoint fragments: a delta index as
    # upstream's index overview allows.
    _split_into_segments(root, [0, 1], [2, 3])


@mutation("index/segments-disjoint")
def let_two_segments_of_an_index_cover_one_fragment(root):
    _split_into_segments(root, [0, 1, 2], [2, 3])


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _unknown_field(size: int) -> bytes:
    """What a protobuf message skips: field 15, length-delimited, ``size`` bytes."""
    return _varint(15 << 3 | 2) + _varint(size) + b"\x00" * size


@mutation("index/details-compact")
def pad_the_index_details_to_250_kb(root):
    # The BTREE details are an empty message; the padding is a field it does
    # not know, so they still decode.
    def edit(indices):
        indices[0].details = (indices[0].details or b"") + _unknown_field(250 << 10)

    _edit_indexed_versions(root, edit)


@mutation("index/fragment-bitmap-from-dataset-version")
def date_the_index_back_to_version_1(root):
    """The index covers fragments 0 to 3, built from version 4; version 1
    had fragments 0 to 2 only (what pylance's remapping after a compaction
    leaves, without moving dataset_version)."""
    _change(root, dataset_version=1)


def compact_with_deferred_remap(root) -> None:
    """pylance compacts the "plain" base (fragments 0 and 1 have deletions)
    and leaves the index remapping to a fragment-reuse index, whose content
    is small and inline."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).optimize.compact_files(target_rows_per_fragment=10_000, defer_index_remap=True)


def _edit_fragment_reuse_details(root, edit) -> None:
    def apply(manifest_file):
        (index,) = [i for i in manifest_file.indices if i.name == FRAGMENT_REUSE_INDEX_NAME]
        details = table_pb2.FragmentReuseIndexDetails.FromString(index.details)
        edit(details)
        index.details = details.SerializeToString()

    edit_manifest(root, apply)


@mutation("index/fragment-reuse-inline-when-small")
def move_small_fragment_reuse_content_to_a_file(root):
    compact_with_deferred_remap(root)

    def externalise(details):
        content = details.inline.SerializeToString()
        (root / "_indices" / "reuse.bin").write_bytes(content)
        details.external.path = "_indices/reuse.bin"  # replaces the inline content (a oneof)
        details.external.size = len(content)

    _edit_fragment_reuse_details(root, externalise)


@mutation("index/fragment-reuse-inline-when-small", also=("index/details-compact",))
def keep_250_kb_of_fragment_reuse_content_inline(root):
    # Content that large makes the details too large as well.
    compact_with_deferred_remap(root)

    def grow(details):
        version = details.inline.versions.add(dataset_version=1)
        version.groups.add(changed_row_addrs=b"\x01" * (250 << 10))

    _edit_fragment_reuse_details(root, grow)
