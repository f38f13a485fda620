"""What an external manifest store is (table format: "External Manifest
Store"): a key-value store, keyed by (dataset, version), whose one write that
matters is an atomic put-if-not-exists (``external-store.conditional-put``).

A row records where the manifest of one version of one dataset is: its path
(an object key, or a local path: the dataset's ``base_uri`` followed by the
manifest's path under the root) and its size in bytes. The path is a staged
manifest (``..._versions/{name}.manifest-{uuid}``) between the commit and its
finalisation, and the final manifest after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class StoreEntry:
    """One row of the store: version ``version`` of the dataset is the
    manifest at ``path``, ``size`` bytes long."""

    version: int
    path: str
    size: int


@runtime_checkable
class ExternalManifestStore(Protocol):
    """The four operations the commit and reader steps use.

    ``base_uri`` names the dataset (pylance's key: the dataset's object key
    prefix on S3, without the bucket); ``path`` is where the manifest is,
    as described in the module docstring.
    """

    def put_if_not_exists(self, base_uri: str, version: int, path: str, size: int) -> bool:
        """Record ``version`` at ``path`` unless the store already holds a row
        for it; True when this call recorded it (the writer committed), False
        when another writer holds the version."""
        ...

    def put(self, base_uri: str, version: int, path: str, size: int) -> None:
        """Record ``version`` at ``path`` whatever the store holds (the
        repointing of a finalised manifest)."""
        ...

    def get(self, base_uri: str, version: int) -> StoreEntry | None:
        """The row of ``version``, or None when the store has none."""
        ...

    def latest(self, base_uri: str) -> StoreEntry | None:
        """The row of the highest version, or None when the store knows
        nothing of the dataset."""
        ...
