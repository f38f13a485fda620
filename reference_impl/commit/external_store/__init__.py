"""The external manifest store (table format: "External Manifest Store";
transaction page: "Commit Process with External Store", "Reader Process with
External Store").

A store of (dataset, version) -> manifest path with an atomic
put-if-not-exists, for object stores without one of their own. It
supplements the manifests in the object store and never replaces them: after
synchronisation every committed version has its regular manifest, so a plain
copy of the directory is the whole table.

* :mod:`.protocol`: :class:`ExternalManifestStore` (the four operations) and
  :class:`StoreEntry` (one row);
* :mod:`.sqlite`: :class:`SqliteManifestStore`, one SQLite database file the
  user names (this implementation only);
* :mod:`.dynamodb`: :class:`DynamoDBManifestStore`, laid out as pylance's
  table, so that both commit to one ``s3+ddb://`` dataset;
* :mod:`.sync`: the commit steps (stage, put-if-not-exists, copy, repoint),
  the reader steps (finalise a staged manifest or refuse to load) and the
  read-only inspection the validator uses.
"""

from __future__ import annotations

from .dynamodb import DynamoDBManifestStore
from .protocol import ExternalManifestStore, StoreEntry
from .sqlite import SqliteManifestStore
from .sync import (
    STEP_MANIFEST_COPIED,
    STEP_MANIFEST_STAGED,
    STEP_STORE_COMMITTED,
    STEP_STORE_REPOINTED,
    StoreRecord,
    commit_through_store,
    finalize,
    inspect_store,
    resolve_through_store,
    store_base_uri,
    synchronize_latest,
)

__all__ = [
    "STEP_MANIFEST_COPIED",
    "STEP_MANIFEST_STAGED",
    "STEP_STORE_COMMITTED",
    "STEP_STORE_REPOINTED",
    "DynamoDBManifestStore",
    "ExternalManifestStore",
    "SqliteManifestStore",
    "StoreEntry",
    "StoreRecord",
    "commit_through_store",
    "finalize",
    "inspect_store",
    "resolve_through_store",
    "store_base_uri",
    "synchronize_latest",
]
