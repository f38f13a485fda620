"""Shallow clones (table.proto, ``Manifest.base_paths`` and ``BasePath``;
transaction specification: ``Clone``; upstream ``layout.md``, shallow clone).

A shallow clone is a new dataset whose first manifest lists the source
version's fragments without copying a single data file: a new
:class:`~reference_impl.manifest.BasePath` names the source root
(``is_dataset_root`` true, so its files are under ``data/`` and
``_deletions/`` there), and every data file, deletion file and index that
had no ``base_id`` gets that base's id. Files that already had one keep it,
and the source's own base paths are carried over, so a clone of a clone still
finds every file. New files written to the clone afterwards have no
``base_id`` and live under the clone's root.

The first manifest
    * keeps the source's version number (upstream and pylance 14 do; the
      clone's history starts where the source was), its schema, fragments,
      config, table metadata, data format and high-water marks
      (``max_fragment_id``, ``next_row_id``);
    * adds the base path with the next free id (0 when the source has none;
      table.proto: "the key ... starts from 0, increased by 1 for each new base
      path"), whose ``path`` is the source root as an absolute path (table.proto:
      "This absolute path will be directly used") and whose ``name`` is the
      tag cloned from (table.proto: "When we use shallow clone and the target
      version is a tag, the tag name will be set here"), else the source
      branch, else absent. pylance 14 leaves ``name`` absent when cloning a
      tag (docs/spec-discrepancies.md);
    * sets the feature flags its content needs, base paths (16) included;
    * records a ``Clone`` transaction (``is_shallow``, ``ref_name`` the tag or
      source branch, ``ref_version``, ``ref_path`` the source root,
      ``branch_name`` when the clone is a branch), whose ``read_version`` is
      the source version, in ``_transactions/`` and in the manifest file;
    * is named with the V2 scheme unless told otherwise: the clone is a new
      dataset, and new datasets use V2 (pylance 14 does the same even for a
      V1 source).

Branches are shallow clones too (upstream ``branch_tag.md``);
:mod:`reference_impl.operations.refs` writes them with :func:`write_shallow_clone`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import entropy, feature_flags
from ..commit import CommitSettings, content_feature_flags, new_transaction
from ..errors import CommitConflictError, IncompatibleConflictError, InvalidOperationError, UnsupportedFeatureError
from ..fragments import Fragment
from ..index_metadata import IndexMetadata
from ..manifest import BasePath, Manifest
from ..manifest_file import ManifestFile, decode_manifest_file, encode_manifest_file
from ..naming import LATEST_HINT, VERSIONS_DIR, NamingScheme, list_versions, manifest_path
from ..refs import TREE_DIR, read_tag
from ..storage import Storage, open_storage, parse_dataset_uri
from ..transactions import Clone, write_transaction_file

if TYPE_CHECKING:
    from ..dataset import Dataset

#: Opens the dataset at a root (its storage) and version (the latest when
#: None): what the dataset API passes in (``Dataset.open``), so that
#: operations need not import the layer above them.
OpenDataset = Callable[[Storage, "int | None"], "Dataset"]


# -- public API ----------------------------------------------------------------


def shallow_clone(
    dataset: Dataset,
    target_uri,
    *,
    version: int | None = None,
    tag: str | None = None,
    manifest_naming: str = "v2",
    relative_base_path: bool = False,
    open_dataset: OpenDataset,
) -> Dataset:
    """Create a dataset at ``target_uri`` holding ``version`` (default: the
    version ``dataset`` is at) or the version tag ``tag`` points to, with
    the files left where they are. Returns the clone, opened.

    ``relative_base_path`` records the source root relative to the clone's
    root instead of as an absolute path: a departure from table.proto that
    readers must tolerate (pylance stores what it is given), used where the
    two datasets must move together, as in the golden fixtures."""
    source, ref_name = _clone_source(dataset, version, tag, open_dataset)
    # The clone is named as any dataset is, and reached with the source's options.
    target = open_storage(parse_dataset_uri(target_uri), source.storage.storage_options)
    write_shallow_clone(
        source.manifest_file,
        source.storage,
        target,
        ref_name=ref_name,
        branch_name=None,
        naming=NamingScheme(manifest_naming),
        relative_base_path=relative_base_path,
    )
    return open_dataset(target, None)


def write_shallow_clone(
    source: ManifestFile,
    source_root: Storage,
    target: Storage,
    *,
    ref_name: str | None,
    branch_name: str | None,
    naming: NamingScheme = NamingScheme.V2,
    relative_base_path: bool = False,
) -> ManifestFile:
    """Write the first manifest (and transaction file) of a shallow clone of
    ``source``, which lives at ``source_root``, into ``target``. Refuses a
    target that already holds a version."""
    unknown = feature_flags.unknown_flags(source.manifest.writer_feature_flags)
    if unknown:
        raise UnsupportedFeatureError(source.path, f"writer feature flags 0x{unknown:x} are unknown; cannot clone")
    existing = list_versions(target).manifests()
    if existing:
        raise IncompatibleConflictError(
            str(target.root),
            "a dataset already exists here, and a Clone only creates one (conflict.clone-only-first)",
            version=max(existing),
        )
    operation = Clone(
        is_shallow=True,
        ref_name=ref_name,
        ref_version=source.manifest.version,
        ref_path=_ref_path(source_root, target, relative_base_path),
        branch_name=branch_name,
    )
    transaction = new_transaction(source.manifest.version, operation)
    nanos = entropy.current().time_ns()
    settings = CommitSettings(
        timestamp=(nanos // 1_000_000_000, nanos % 1_000_000_000),
        transaction_file=write_transaction_file(target, transaction),
    )
    manifest, indices = cloned_manifest(source.manifest, source.indices or [], operation, settings)
    data = encode_manifest_file(manifest, indices or None, transaction)
    relpath = manifest_path(manifest.version, naming)
    try:
        target.put_if_not_exists(relpath, data)
    except CommitConflictError:
        raise IncompatibleConflictError(
            str(target.root),
            f"version {manifest.version} was created here meanwhile, and a Clone only creates a table "
            "(conflict.clone-only-first)",
            version=manifest.version,
        ) from None
    target.put(f"{VERSIONS_DIR}/{LATEST_HINT}", json.dumps({"version": manifest.version}).encode())
    return decode_manifest_file(data, str(target.path(relpath)))


def cloned_manifest(
    source: Manifest, source_indices: list[IndexMetadata], operation: Clone, settings: CommitSettings
) -> tuple[Manifest, list[IndexMetadata]]:
    """The clone's first manifest and indices (pure; the rules are in the
    module docstring)."""
    base_id = max((base.id for base in source.base_paths), default=-1) + 1
    base = BasePath(id=base_id, path=operation.ref_path, is_dataset_root=True, name=operation.ref_name)
    manifest = replace(
        source,
        fragments=[_on_base(fragment, base_id) for fragment in source.fragments],
        base_paths=list(source.base_paths) + [base],
        branch=operation.branch_name,
        tag="",
        writer_version=settings.writer_version,
        timestamp=settings.timestamp,
        transaction_file=settings.transaction_file,
        index_section=None,
        transaction_section=None,
        transaction_section_field=None,
    )
    stable = bool(source.reader_feature_flags & feature_flags.STABLE_ROW_IDS)
    flags = content_feature_flags(manifest, stable_row_ids=stable)
    manifest.reader_feature_flags, manifest.writer_feature_flags = flags
    indices = [index if index.base_id is not None else replace(index, base_id=base_id) for index in source_indices]
    return manifest, indices


# -- helpers ---------------------------------------------------------------------


def _on_base(fragment: Fragment, base_id: int) -> Fragment:
    """``fragment`` with every data and deletion file lacking a base on ``base_id``."""
    files = [f if f.base_id is not None else replace(f, base_id=base_id) for f in fragment.files]
    deletion = fragment.deletion_file
    if deletion is not None and deletion.base_id is None:
        deletion = replace(deletion, base_id=base_id)
    return replace(fragment, files=files, deletion_file=deletion)


def _ref_path(source_root: Storage, target: Storage, relative: bool) -> str:
    """The source root as the clone records it: absolute (a path, or the
    source's ``s3://`` URI), or relative to the clone's root on request."""
    if isinstance(source_root.root, Path) and isinstance(target.root, Path):
        source_path = source_root.root.absolute()
        return os.path.relpath(source_path, target.root.absolute()) if relative else str(source_path)
    if relative:
        raise InvalidOperationError("a relative base path is only written between two local datasets")
    return source_root.location


def _clone_source(
    dataset: Dataset, version: int | None, tag: str | None, open_dataset: OpenDataset
) -> tuple[Dataset, str | None]:
    """The dataset (on the right branch, at the right version) to clone and
    the reference name to record."""
    if tag is None:
        return (dataset if version in (None, dataset.version) else dataset.checkout(version)), dataset.manifest.branch
    root = dataset.root_storage()
    found = read_tag(root, tag)
    if version is not None and version != found.version:
        raise InvalidOperationError(f"tag {tag!r} points to version {found.version}, not {version}")
    where = root if found.branch is None else root.subtree(f"{TREE_DIR}/{found.branch}")
    return open_dataset(where, found.version), tag
