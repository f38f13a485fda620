"""Mutations for the tag and branch rules (conformance/validator/rules/refs.py).

The "plain" base has the tag ``stable`` (version 2 of main). The "branched"
base has main versions 1 and 2, the tags ``v1`` (main version 1) and
``on-branch`` (version 2 of branch ``feature/x``), and the branches
``feature/x`` (two versions under ``tree/feature/x/``) and ``empty`` (one).
"""

from __future__ import annotations

import json
import shutil

from reference_impl.manifest_file import encode_manifest_file, read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage

from ..edit import edit_manifest
from ..registry import mutation


def _rewrite_json(path, edit) -> None:
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))


def _tag(root, name: str):
    return root / "_refs" / "tags" / f"{name}.json"


def _branch(root, file_name: str):
    return root / "_refs" / "branches" / file_name


@mutation("refs/tag-file-content")
def drop_the_tagged_version(root):
    _rewrite_json(_tag(root, "stable"), lambda document: document.pop("version"))


@mutation("refs/tag-file-content")
def write_a_tag_that_is_not_json(root):
    _tag(root, "stable").write_bytes(b"version: 2\n")


@mutation("refs/tag-file-content")
def spell_the_manifest_size_twice_differently(root):
    def edit(document):
        document["manifest_size"] = document["manifestSize"] + 1

    _rewrite_json(_tag(root, "stable"), edit)


@mutation("refs/branch-file-content", base="branched")
def drop_the_parent_version(root):
    _rewrite_json(_branch(root, "empty.json"), lambda document: document.pop("parentVersion"))


@mutation("refs/branch-file-content", base="branched")
def make_the_creation_time_a_string(root):
    def edit(document):
        document["createAt"] = "yesterday"

    _rewrite_json(_branch(root, "empty.json"), edit)


@mutation("refs/tag-name", breaks="refs.tag-name-shape")
def name_a_tag_with_two_dots(root):
    shutil.copy(_tag(root, "stable"), _tag(root, "release..1"))


@mutation("refs/tag-name", breaks="refs.tag-name-shape")
def name_a_tag_ending_in_lock(root):
    shutil.copy(_tag(root, "stable"), _tag(root, "stable.lock"))


@mutation("refs/branch-name", base="branched", breaks="refs.branch-name-not-main")
def name_a_branch_main(root):
    shutil.copy(_branch(root, "empty.json"), _branch(root, "main.json"))


@mutation("refs/branch-name", base="branched", breaks="refs.branch-name-charset")
def name_a_branch_with_a_space(root):
    shutil.copy(_branch(root, "empty.json"), _branch(root, "two%20words.json"))


@mutation("refs/tag-target-exists")
def tag_a_version_that_does_not_exist(root):
    def edit(document):
        document["version"] = 999

    _rewrite_json(_tag(root, "stable"), edit)


@mutation("refs/tag-target-exists", base="branched")
def tag_a_branch_that_does_not_exist(root):
    def edit(document):
        document["branch"] = "nowhere"

    _rewrite_json(_tag(root, "on-branch"), edit)


@mutation("refs/branch-tree-layout", base="branched", breaks="refs.branch-tree-layout")
def remove_a_branchs_versions(root):
    shutil.rmtree(root / "tree" / "empty" / "_versions")


@mutation("refs/manifest-branch-field", base="branched", also=("refs/tag-manifest-size",))
def claim_a_main_version_for_a_branch(root):
    def edit(manifest_file):
        manifest_file.manifest.branch = "feature/x"

    edit_manifest(root, edit, version=1)


@mutation("refs/manifest-branch-field", base="branched", also=("refs/tag-manifest-size",))
def drop_the_branch_name_from_a_branch_manifest(root):
    storage = LocalStorage(root / "tree" / "feature" / "x")
    manifests = list_versions(storage).manifests()
    relpath = manifests[max(manifests)]
    manifest_file = read_manifest_file(storage, relpath)
    manifest_file.manifest.branch = None
    data = encode_manifest_file(manifest_file.manifest, manifest_file.indices, manifest_file.transaction)
    (storage.root / relpath).write_bytes(data)


@mutation("refs/tag-name", breaks="refs.tag-name-charset")
def name_a_tag_with_a_space(root):
    shutil.copy(_tag(root, "stable"), _tag(root, "two%20words"))


@mutation("refs/branch-name", base="branched", breaks="refs.branch-name-shape")
def name_a_branch_with_an_empty_segment(root):
    shutil.copy(_branch(root, "empty.json"), _branch(root, "feature%2F%2Fx.json"))


@mutation("refs/file-location", base="branched", breaks="refs.tag-file-location")
def leave_notes_among_the_tags(root):
    (root / "_refs" / "tags" / "README").write_text("notes")


@mutation("refs/file-location", base="branched", breaks="refs.branch-file-location")
def make_a_directory_among_the_branches(root):
    (root / "_refs" / "branches" / "nested").mkdir()


@mutation("refs/orphan-branch-directory", base="branched", breaks="refs.branch-file-location")
def leave_a_branch_directory_without_its_branch_file(root):
    shutil.copytree(root / "tree" / "empty", root / "tree" / "gone" / "deep")


@mutation("refs/tag-manifest-size", base="branched")
def record_a_wrong_manifest_size_for_a_tag(root):
    def edit(document):
        document["manifestSize"] += 10

    _rewrite_json(_tag(root, "on-branch"), edit)


@mutation("refs/branch-tree-layout", base="branched", breaks="refs.branch-is-shallow-clone")
def make_a_branch_name_its_sources_files_as_its_own(root):
    """Branch ``empty`` has no commit of its own: its one manifest reaches
    main's data files through base path 0 (main's root). Without the base
    path ids the files would have to lie in the branch's own directory."""
    storage = LocalStorage(root / "tree" / "empty")
    manifests = list_versions(storage).manifests()
    relpath = manifests[max(manifests)]
    manifest_file = read_manifest_file(storage, relpath)
    for fragment in manifest_file.manifest.fragments:
        for data_file in fragment.files:
            data_file.base_id = None
    data = encode_manifest_file(manifest_file.manifest, manifest_file.indices, manifest_file.transaction)
    (storage.root / relpath).write_bytes(data)
