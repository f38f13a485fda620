"""Mutations for the external manifest store rules: the dataset is recorded
in a SQLite store beside it, as if every version had been committed through
the store, and then the two are put out of sync."""

from __future__ import annotations

import os
import uuid

from reference_impl.commit.external_store import store_base_uri
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage

from ..registry import mutation, mutation_store


def _record_every_version(root, *, leave_out: int = 0) -> dict[int, str]:
    """Record every committed manifest of ``root`` in its store (all but the
    newest ``leave_out``), finalised; the manifests by version."""
    storage = LocalStorage(root)
    store = mutation_store(root)
    manifests = list_versions(storage).manifests()
    recorded = sorted(manifests)[: len(manifests) - leave_out]
    for version in recorded:
        relpath = manifests[version]
        store.put(store_base_uri(storage), version, f"{store_base_uri(storage)}/{relpath}", storage.size(relpath))
    return manifests


@mutation("external-store/pending-finalization", breaks="external-store.finalize", manifest_store=True)
def leave_the_latest_commit_staged(root):
    """The writer died after the store's put: the latest manifest exists only
    under its staged name, and the store points at it."""
    manifests = _record_every_version(root)
    latest = max(manifests)
    staged = f"{manifests[latest]}-{uuid.uuid4()}"
    os.rename(root / manifests[latest], root / staged)
    storage = LocalStorage(root)
    mutation_store(root).put(
        store_base_uri(storage), latest, f"{store_base_uri(storage)}/{staged}", storage.size(staged)
    )


@mutation(
    "external-store/pending-finalization",
    breaks="external-store.supplements-object-store",
    base="stable_row_ids",
    manifest_store=True,
)
def keep_only_the_staged_copy_of_the_latest_version(root):
    """V1 names: the latest version was staged and committed in the store,
    and its final manifest is gone, so a plain copy of the directory lacks it."""
    manifests = _record_every_version(root)
    latest = max(manifests)
    staged = f"{manifests[latest]}-{uuid.uuid4()}"
    os.link(root / manifests[latest], root / staged)
    os.unlink(root / manifests[latest])
    storage = LocalStorage(root)
    mutation_store(root).put(
        store_base_uri(storage), latest, f"{store_base_uri(storage)}/{staged}", storage.size(staged)
    )


@mutation("external-store/missing-manifest", manifest_store=True)
def record_a_version_whose_manifest_is_missing(root):
    """The store records a next version at a staged manifest that is not there."""
    manifests = _record_every_version(root)
    storage = LocalStorage(root)
    nxt = max(manifests) + 1
    final = manifests[max(manifests)]
    # The next version's name in the same scheme as the latest one's.
    digits = final.rsplit("/", 1)[-1].split(".", 1)[0]
    name = f"{int(digits) - 1:020d}" if len(digits) == 20 else str(nxt)
    path = f"{store_base_uri(storage)}/_versions/{name}.manifest-{uuid.uuid4()}"
    mutation_store(root).put_if_not_exists(store_base_uri(storage), nxt, path, 1234)


@mutation("external-store/version-beyond-store", manifest_store=True)
def commit_the_latest_version_without_the_store(root):
    """The latest version was committed by a writer that did not use the store."""
    _record_every_version(root, leave_out=1)
