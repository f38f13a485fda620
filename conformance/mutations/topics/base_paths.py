"""Mutations for the base path rules (conformance/validator/rules/base_paths.py).

The ``shallow_clone`` base's source dataset is shared by every copy of the
clone: these mutations only ever change the copy.
"""

from __future__ import annotations

import os
import shutil

from reference_impl.manifest import BasePath
from reference_impl.manifest_file import read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage
from reference_impl.transactions import Clone

from ..edit import edit_manifest, edit_transaction, edit_untracked, manifest_relpath, versions_of
from ..registry import mutation


@mutation("base-path/ids-unique", base="shallow_clone")
def declare_a_base_id_twice(root):
    def edit(manifest_file):
        (base,) = manifest_file.manifest.base_paths
        manifest_file.manifest.base_paths.append(BasePath(id=base.id, path=base.path, is_dataset_root=True))

    edit_manifest(root, edit)


@mutation("base-path/base-id-declared", breaks="base-path.base-id-declared")
def refer_to_an_undeclared_base(root):
    def edit(manifest_file):
        (fragment,) = [f for f in manifest_file.manifest.fragments if f.id == 3]
        fragment.files[0].base_id = 4

    edit_untracked(root, edit)


@mutation("base-path/base-id-declared", base="shallow_clone", breaks="base-path.base-id-declared")
def refer_to_a_base_the_clone_does_not_declare(root):
    def edit(manifest_file):
        manifest_file.manifest.fragments[0].files[0].base_id = 9

    edit_untracked(root, edit)


@mutation("base-path/exists", base="shallow_clone", breaks="data-file.exists")
def move_the_base_somewhere_empty(root):
    def edit(manifest_file):
        manifest_file.manifest.base_paths[0].path = str(root.parent / "nowhere")

    edit_manifest(root, edit)


@mutation("base-path/clone-writes-local", base="shallow_clone")
def write_an_appended_file_into_the_source(root):
    """The clone gets a source of its own (a copy of the shared one, which no
    mutation may touch); then the data file of version 2's Append moves into
    that source and every version after the Clone reads it from there."""
    storage = LocalStorage(root)
    versions = sorted(list_versions(storage).manifests())
    (clone_version,) = versions_of(root, Clone)
    (base,) = read_manifest_file(storage, manifest_relpath(root, clone_version)).manifest.base_paths
    source = base.path
    private = root.parent / f"{root.name}-own-source"
    shutil.copytree(source, private, symlinks=True)

    def repoint(manifest_file):
        for base in manifest_file.manifest.base_paths:
            if base.path == source:
                base.path = str(private)

    for version in versions:
        edit_manifest(root, repoint, version=version)

    def retarget(transaction):
        transaction.operation.ref_path = str(private)

    edit_transaction(root, clone_version, retarget)

    appended = []

    def move(manifest_file):
        for fragment in manifest_file.manifest.fragments:
            for data_file in fragment.files:
                if data_file.base_id is None:
                    data_file.base_id = 0
                    appended.append(data_file.path)

    for version in versions:
        if version > clone_version:
            edit_manifest(root, move, version=version)
    for name in set(appended):
        shutil.move(str(root / "data" / name), str(private / "data" / name))


@mutation("base-path/base-id-declared", breaks=("base-path.base-id-declared", "base-path.absent-means-root"))
def mark_root_files_as_base_0(root):
    """A writer that names the dataset root "base 0" instead of leaving
    base_id unset: the "plain" base declares no base path, so the files of
    the latest version now name a base that does not exist."""

    def edit(manifest_file):
        for fragment in manifest_file.manifest.fragments:
            for data_file in fragment.files:
                data_file.base_id = 0

    edit_untracked(root, edit)


@mutation("base-path/absolute", base="shallow_clone")
def make_the_source_base_path_relative(root):
    """The source stays where it is; only its path is given relative to the
    clone's root, which still resolves to it."""

    def edit(manifest_file):
        (base,) = manifest_file.manifest.base_paths
        base.path = os.path.relpath(base.path, root)

    edit_manifest(root, edit)


@mutation("base-path/ids-sequential", base="shallow_clone")
def number_the_only_base_2(root):
    def edit(manifest_file):
        (base,) = manifest_file.manifest.base_paths
        base.id = 2
        for fragment in manifest_file.manifest.fragments:
            for data_file in fragment.files:
                if data_file.base_id is not None:
                    data_file.base_id = 2

    edit_untracked(root, edit)


@mutation("base-path/dataset-root-flag", base="shallow_clone", also=("data-file/exists",))
def say_the_source_is_no_dataset_root(root):
    """The source is a dataset, its files under data/; read as a plain
    directory, the files cannot be found where the flag says they are."""

    def edit(manifest_file):
        (base,) = manifest_file.manifest.base_paths
        base.is_dataset_root = False

    edit_manifest(root, edit)
