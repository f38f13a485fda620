"""Mutations for the manifest, naming, history, transaction and feature-flag rules."""

from __future__ import annotations

import os

from reference_impl.naming import NamingScheme, manifest_name

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


@mutation("naming/no-mixture", breaks=("naming.no-mixture", "naming.consistent-scheme", "history.one-manifest-per-version"))
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
    from reference_impl.dataset import Dataset

    name = Dataset.open(root).manifest.transaction_file
    (root / "_transactions" / name).unlink()


@mutation("transaction/file-decodes", breaks="transaction.file-decodes")
def garble_the_transaction_file(root):
    from reference_impl.dataset import Dataset

    name = Dataset.open(root).manifest.transaction_file
    (root / "_transactions" / name).write_bytes(b"\xff" * 40)


@mutation("transaction/read-version", also=("transaction/embedded-matches-file",), breaks="transaction.read-version-earlier")
def make_the_transaction_read_the_future(root):
    def edit(manifest_file):
        manifest_file.transaction.read_version = manifest_file.manifest.version + 5

    edit_manifest(root, edit)


@mutation("transaction/embedded-matches-file", breaks="manifest.transaction-section-length-prefixed")
def change_the_embedded_transaction(root):
    def edit(manifest_file):
        manifest_file.transaction.properties = {"changed": "yes"}

    edit_manifest(root, edit)


@mutation("feature-flags/known")
def set_an_unknown_reader_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags |= 1 << 10

    edit_manifest(root, edit)


@mutation("feature-flags/deletion-files")
def clear_the_deletion_flag(root):
    def edit(manifest_file):
        manifest_file.manifest.reader_feature_flags &= ~1

    edit_manifest(root, edit)


@mutation("feature-flags/stable-row-ids", base="stable_row_ids", breaks="feature-flags.stable-row-ids", also=("row-id/next-row-id-without-flag",))
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
    from reference_impl.manifest import BasePath

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
    from reference_impl.transactions import Transaction, UnknownOperation

    def edit(manifest_file):
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = Transaction(read_version=0, uuid="", operation=UnknownOperation())

    edit_manifest(root, edit)
