"""Mutations for the base path rules (conformance/validator/rules/base_paths.py).

The ``shallow_clone`` base's source dataset is shared by every copy of the
clone: these mutations only ever change the copy.
"""

from __future__ import annotations

from reference_impl.manifest import BasePath

from .mutate import edit_manifest, mutation
from .mutations_fragments import edit_untracked


@mutation("base-path/ids-unique", base="shallow_clone")
def declare_a_base_id_twice(root):
    def edit(manifest_file):
        (base,) = manifest_file.manifest.base_paths
        manifest_file.manifest.base_paths.append(BasePath(id=base.id, path=base.path, is_dataset_root=True))

    edit_manifest(root, edit)


@mutation("base-path/base-id-declared")
def refer_to_an_undeclared_base(root):
    def edit(manifest_file):
        (fragment,) = [f for f in manifest_file.manifest.fragments if f.id == 3]
        fragment.files[0].base_id = 4

    edit_untracked(root, edit)


@mutation("base-path/base-id-declared", base="shallow_clone")
def refer_to_a_base_the_clone_does_not_declare(root):
    def edit(manifest_file):
        manifest_file.manifest.fragments[0].files[0].base_id = 9

    edit_untracked(root, edit)


@mutation("base-path/exists", base="shallow_clone")
def move_the_base_somewhere_empty(root):
    def edit(manifest_file):
        manifest_file.manifest.base_paths[0].path = str(root.parent / "nowhere")

    edit_manifest(root, edit)
