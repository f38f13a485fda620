"""Tags and branches (upstream ``branch_tag.md``; file formats in
:mod:`reference_impl.refs`).

Tags
    ``_refs/tags/{name}.json`` at the dataset root, whichever branch the
    tagged version is on ("Tags are always stored at the root dataset
    level"). Creating one needs the version to exist on that branch (its
    manifest size is recorded); an existing tag is never replaced.

Branches
    A branch is a shallow clone of the source version living under
    ``tree/{name}/`` ("Each branch dataset is technically a shallow clone of
    the source dataset"), plus ``_refs/branches/{name}.json``. As upstream
    Lance does, the clone is written first and the metadata file last: the
    metadata file is what makes the branch exist, so a writer that dies in
    between leaves only an unreferenced directory. The branch's first
    manifest keeps the source version number (pylance 14 does; the
    upstream page's ``1.manifest`` example is not what it writes), names the
    branch in ``Manifest.branch``, and reaches the source's files through a
    base path to the source branch's root (:mod:`.clone`). Branches of
    branches record the parent branch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import CommitConflictError
from ..naming import NamingScheme
from ..refs import TREE_DIR, branch_path, validate_branch_name, write_branch, write_tag
from ..refs import delete_tag as delete_tag_file
from .clone import OpenDataset, write_shallow_clone
from .restore import version_manifest_file

if TYPE_CHECKING:
    from ..dataset import Dataset


def create_tag(dataset: Dataset, name: str, version: int | None = None) -> None:
    """Tag ``version`` (default: the version ``dataset`` is at) of the
    dataset's branch as ``name``."""
    version = dataset.version if version is None else version
    write_tag(dataset.root_storage(), name, version, branch=dataset.manifest.branch)


def delete_tag(dataset: Dataset, name: str) -> None:
    """Remove tag ``name``; an error when there is none."""
    delete_tag_file(dataset.root_storage(), name)


def create_branch(
    dataset: Dataset,
    name: str,
    version: int | None = None,
    *,
    relative_base_path: bool = False,
    open_dataset: OpenDataset,
) -> Dataset:
    """Start branch ``name`` from ``version`` (default: the version
    ``dataset`` is at) of the dataset's branch, and open it.
    ``relative_base_path`` as for :func:`~.clone.shallow_clone`."""
    validate_branch_name(name)
    root = dataset.root_storage()
    if root.exists(branch_path(name)):
        raise CommitConflictError(str(root.path(branch_path(name))), f"branch {name!r} already exists")
    version = dataset.version if version is None else version
    source = version_manifest_file(dataset, version)
    branch_root = root.subtree(f"{TREE_DIR}/{name}")
    write_shallow_clone(
        source,
        dataset.storage,
        branch_root,
        ref_name=dataset.manifest.branch,
        branch_name=name,
        naming=NamingScheme.V2,
        relative_base_path=relative_base_path,
    )
    write_branch(root, name, version, parent_branch=dataset.manifest.branch)
    return open_dataset(branch_root, None)
