"""Mutations for the manifest, naming, history, transaction and feature-flag rules."""

from __future__ import annotations

import os
import struct

from reference_impl.dataset import Dataset
from reference_impl.manifest import BasePath
from reference_impl.naming import NamingScheme, list_versions, manifest_name, parse_manifest_name
from reference_impl.storage import LocalStorage
from reference_impl.transactions import Transaction, UnknownOperation
from reference_impl.wire import table_pb2

from ...spec_revisions import UNDEFINED_FLAG
from ..edit import edit_manifest, edit_manifest_message, manifest_relpath
from ..registry import mutation


@mutation("manifest/decodes", breaks="manifest.footer-magic")
def truncate_the_latest_manifest(root):
    path = root / manifest_relpath(root)
    path.write_bytes(path.read_bytes()[:-5])


@mutation("manifest/decodes", breaks="manifest.metadata-position-in-file")
def point_the_footer_past_the_end(root):
    path = root / manifest_relpath(root)
    data = bytearray(path.read_bytes())
    data[-16:-8] = (len(data) * 3).to_bytes(8, "little")
    path.write_bytes(bytes(data))


@mutation(
    "naming/no-mixture", breaks=("naming.no-mixture", "naming.consistent-scheme", "history.one-manifest-per-version")
)
def add_a_v1_name_beside_v2_names(root):
    relpath = manifest_relpath(root, 1)
    os.link(root / relpath, root / "_versions" / manifest_name(1, NamingScheme.V1))


@mutation("naming/name-matches-version", also=("transaction/read-version",))
def renumber_a_manifest_inside(root):
    def edit(manifest_file):
        manifest_file.manifest.version += 40

    edit_manifest(root, edit, version=2)


@mutation("transaction/file-name", also=("transaction/file-decodes",))
def misname_the_transaction_file(root):
    def edit(manifest_file):
        manifest_file.manifest.transaction_file = "not-a-transaction.bin"

    edit_manifest(root, edit)


@mutation("transaction/file-decodes", breaks="transaction.file-path-resolves")
def remove_the_transaction_file(root):
    name = Dataset.open(root).manifest.transaction_file
    (root / "_transactions" / name).unlink()


@mutation("transaction/file-decodes", breaks="transaction.file-decodes")
def garble_the_transaction_file(root):
    name = Dataset.open(root).manifest.transaction_file
    (root / "_transactions" / name).write_bytes(b"\xff" * 40)


@mutation(
    "transaction/read-version", also=("transaction/embedded-matches-file",), breaks="transaction.read-version-earlier"
)
def make_the_transaction_read_the_future(root):
    def edit(manifest_file):
        manifest_file.transaction.read_version = manifest_file.manifest.version + 5

    edit_manifest(root, edit)


@mutation("transaction/embedded-matches-file", breaks="manifest.transaction-section-length-prefixed")
def change_the_embedded_transaction(root):
    def edit(manifest_file):
        manifest_file.transaction.properties = {"changed": "yes"}

    edit_manifest(root, edit)


@mutation("feature-flags/known", breaks=("feature-flags.known-bits", "feature-flags.known-bits-to-2048"))
def set_an_unknown_reader_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags |= UNDEFINED_FLAG

    edit_manifest(root, edit)


@mutation("feature-flags/paired-bits")
def set_the_mixed_versions_flag_for_readers_only(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 256

    edit_manifest(root, edit)


@mutation("feature-flags/paired-bits-persist")
def clear_the_managed_blobs_flag_after_a_version_set_it(root):
    def set_both(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 2048
        manifest_file.manifest.writer_feature_flags |= 2048

    latest = max(list_versions(LocalStorage(root)).manifests())
    edit_manifest(root, set_both, version=latest - 1)  # the latest version then clears it


@mutation("feature-flags/contested-bit")
def set_a_bit_the_pages_disagree_about(root):
    """Bit 512 in both words: fragment reuse with stable row ids to versioning.md, a fragment
    metadata tree to fragment_metadata.md (docs/spec-inconsistencies.md)."""

    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 512
        manifest_file.manifest.writer_feature_flags |= 512

    edit_manifest(root, edit)


@mutation("feature-flags/deletion-files")
def clear_the_deletion_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags &= ~1

    edit_manifest(root, edit)


@mutation(
    "feature-flags/stable-row-ids",
    base="stable_row_ids",
    breaks="feature-flags.stable-row-ids",
    also=("row-id/next-row-id-without-flag",),
)
def clear_the_row_id_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags &= ~2
        manifest_file.manifest.writer_feature_flags &= ~2

    edit_manifest(root, edit)


@mutation("feature-flags/stable-row-ids", base="stable_row_ids", breaks="row-id.sequence-when-enabled")
def drop_one_row_id_sequence(root):
    def edit(message):
        message.fragments[0].ClearField("inline_row_ids")

    edit_manifest_message(root, edit)


@mutation("feature-flags/base-paths")
def declare_a_base_path_without_the_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.base_paths.append(BasePath(id=1, path=str(root), is_dataset_root=True))

    edit_manifest(root, edit)


@mutation("feature-flags/table-config")
def clear_the_config_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.writer_feature_flags &= ~8

    edit_manifest(root, edit)


@mutation("external-store/staged-name")
def stage_a_manifest_under_a_name_that_is_no_uuid(root):
    # 33 hex digits and dashes: a staged name to the listing, but no UUID.
    relpath = manifest_relpath(root)
    os.link(root / relpath, root / "_versions" / "99.manifest-0123456789abcdef-0123456789abcdef")


@mutation("manifest/transaction-section-not-empty", also=("transaction/unknown-operation",))
def embed_an_empty_transaction(root):
    def edit(manifest_file):
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = Transaction(read_version=0, uuid="", operation=UnknownOperation())

    edit_manifest(root, edit)


# -- the manifest container ---------------------------------------------------------------


def _rewrite_manifest_message(root, edit) -> None:
    """Change the Manifest message of the latest manifest file and nothing
    else: the sections before it keep their bytes and positions, which the
    reference encoder (:func:`~conformance.mutations.edit.edit_manifest`)
    would lay out anew. ``edit`` gets the message and the file's length."""
    path = root / manifest_relpath(root)
    data = path.read_bytes()
    footer = data[-16:]
    (position,) = struct.unpack_from("<q", footer)
    (length,) = struct.unpack_from("<I", data, position)
    message = table_pb2.Manifest.FromString(data[position + 4 : position + 4 + length])
    edit(message, len(data))
    payload = message.SerializeToString()
    path.write_bytes(data[:position] + struct.pack("<I", len(payload)) + payload + footer)


@mutation("manifest/decodes", breaks="manifest.index-section-in-file")
def point_the_index_section_past_the_end(root):
    def edit(message, size):
        message.index_section = size * 3

    _rewrite_manifest_message(root, edit)


@mutation("manifest/decodes", breaks="index.fragment-bitmap-roaring")
def garble_an_index_fragment_bitmap(root):
    # The "plain" base's latest version lists one index, built over fragments 0 to 3.
    def edit(manifest_file):
        manifest_file.indices[0].fragment_bitmap = b"fragments 0 to 3"

    edit_manifest(root, edit)


@mutation("manifest/footer-version")
def give_the_manifest_footer_version_0_9(root):
    # The 16-byte footer: i64 position, u16 major, u16 minor, "LANC".
    path = root / manifest_relpath(root)
    data = bytearray(path.read_bytes())
    data[-6:-4] = (9).to_bytes(2, "little")
    path.write_bytes(bytes(data))


@mutation("manifest/timestamp")
def leave_out_the_creation_time(root):
    def edit(manifest_file):
        manifest_file.manifest.timestamp = None

    edit_manifest(root, edit)


@mutation("manifest/timestamp")
def record_more_nanoseconds_than_a_second_has(root):
    # A protobuf Timestamp's nanos stay below 10**9.
    def edit(manifest_file):
        seconds, _ = manifest_file.manifest.timestamp
        manifest_file.manifest.timestamp = (seconds, 1_500_000_000)

    edit_manifest(root, edit)


@mutation("manifest/transaction-section-field")
def commit_a_config_change_with_pylance(root):
    """pylance records the embedded transaction's position in field 23 of
    every manifest it writes (the reference encoder, used by the other
    mutations, writes field 21): the version this commit adds is one more."""
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it

    lance.dataset(root).update_config({"owner.reviewer": "conformance"})


# -- history and names ----------------------------------------------------------------------


@mutation("history/gapless", breaks="history.no-skipped-versions")
def commit_the_latest_version_two_numbers_ahead(root):
    """The latest version (6 in the "plain" base) is committed as 8, under
    the V2 name of 8: nothing is numbered 7."""
    old = root / manifest_relpath(root)
    ahead = parse_manifest_name(old.name)[0] + 2

    def edit(manifest_file):
        manifest_file.manifest.version = ahead

    edit_manifest(root, edit)
    old.rename(root / "_versions" / manifest_name(ahead, NamingScheme.V2))


@mutation("naming/unrecognized-entries", breaks="history.manifests-in-versions-dir")
def keep_a_manifest_copy_without_the_manifest_extension(root):
    relpath = manifest_relpath(root)
    os.link(root / relpath, root / f"{relpath}.bak")


@mutation("naming/unrecognized-entries", base="stable_row_ids", breaks="naming.v1-pattern")
def name_a_v1_manifest_with_a_sign(root):
    # "+3.manifest": version 3, but not in plain decimal.
    relpath = manifest_relpath(root)
    os.link(root / relpath, root / "_versions" / f"+{relpath.rsplit('/', 1)[-1]}")


@mutation("naming/unrecognized-entries", breaks="naming.v2-pattern")
def name_a_v2_manifest_with_a_hex_number(root):
    # The number V2 names version 6 by, 2**64 - 1 - 6, in hexadecimal.
    os.link(root / manifest_relpath(root, 6), root / "_versions" / f"{2**64 - 1 - 6:x}.manifest")


# -- feature flags ------------------------------------------------------------------------


@mutation("feature-flags/writer-known", breaks=("feature-flags.known-bits", "feature-flags.known-bits-to-2048"))
def set_an_unknown_writer_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.writer_feature_flags |= UNDEFINED_FLAG

    edit_manifest(root, edit)


@mutation("feature-flags/deprecated-v2-flag")
def set_the_deprecated_v2_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 4
        manifest_file.manifest.writer_feature_flags |= 4

    edit_manifest(root, edit)


@mutation("feature-flags/without-content", breaks="feature-flags.deletion-files")
def set_the_deletion_flag_before_any_deletion(root):
    # Version 1 of the "plain" base has no deletion file yet (version 2 has
    # none either, but tag "stable" records the size of its manifest).
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 1
        manifest_file.manifest.writer_feature_flags |= 1

    edit_manifest(root, edit, version=1)


@mutation("feature-flags/without-content", breaks="feature-flags.base-paths")
def set_the_base_path_flag_without_a_base(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 16
        manifest_file.manifest.writer_feature_flags |= 16

    edit_manifest(root, edit)
