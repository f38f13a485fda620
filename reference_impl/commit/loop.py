"""The commit protocol (table format: committing datasets, conflict
resolution flow).

A commit happens in the order the specification gives:

1. the writer writes every new data and deletion file;
2. it writes the transaction file ``_transactions/{read_version}-{uuid}.txn``;
3. it builds the new manifest from the manifest it read and the transaction
   (:func:`~reference_impl.commit.build.build_manifest`);
4. it writes the manifest of the next version with put-if-not-exists.

A crash before step 4 leaves the dataset at the previous version: the files
written so far are unreferenced, and no committed version is ever replaced,
because step 4 never overwrites an existing manifest.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from .. import entropy, feature_flags
from ..errors import UnsupportedFeatureError
from ..manifest_file import ManifestFile, decode_manifest_file, encode_manifest_file
from ..naming import LATEST_HINT, VERSIONS_DIR, NamingScheme, manifest_path
from ..storage import Storage
from ..transactions import Operation, Transaction, write_transaction_file
from .build import CommitSettings, build_manifest

#: The steps a commit goes through; ``on_step`` is called after each of the
#: first two and before the manifest is written. Tests raise from it to
#: simulate a writer dying at that point.
STEP_FILES_WRITTEN = "files-written"
STEP_TRANSACTION_WRITTEN = "transaction-written"
STEP_BEFORE_MANIFEST = "before-manifest"


def new_transaction(read_version: int, operation: Operation, *, tag: str = "", properties=None) -> Transaction:
    return Transaction(
        read_version=read_version,
        uuid=str(entropy.current().uuid4()),
        operation=operation,
        tag=tag,
        properties=dict(properties or {}),
    )


def commit(
    storage: Storage,
    transaction: Transaction,
    *,
    read: ManifestFile | None,
    naming: NamingScheme,
    timestamp: tuple[int, int],
    stable_row_ids: bool = False,
    data_storage_version: str = "2.0",
    restore_source: ManifestFile | None = None,
    on_step: Callable[[str], None] | None = None,
) -> ManifestFile:
    """Commit ``transaction`` on top of ``read`` and return the new manifest
    file. The caller has already written the transaction's data and deletion
    files. Raises :class:`CommitConflictError` when the next version already
    exists (another writer committed first); nothing committed is touched."""
    step = on_step or (lambda name: None)
    if read is not None:
        unknown = feature_flags.unknown_flags(read.manifest.writer_feature_flags)
        if unknown:
            raise UnsupportedFeatureError(
                read.path, f"writer feature flags 0x{unknown:x} are unknown; this writer must not write the dataset"
            )
    step(STEP_FILES_WRITTEN)
    transaction_file = write_transaction_file(storage, transaction)
    step(STEP_TRANSACTION_WRITTEN)
    settings = CommitSettings(
        timestamp=timestamp,
        transaction_file=transaction_file,
        stable_row_ids=stable_row_ids,
        data_storage_version=data_storage_version,
    )
    manifest, indices = build_manifest(
        read.manifest if read else None,
        (read.indices or []) if read else [],
        transaction,
        settings,
        restore_source=restore_source,
    )
    data = encode_manifest_file(manifest, indices or None, transaction)
    step(STEP_BEFORE_MANIFEST)
    relpath = manifest_path(manifest.version, naming)
    storage.put_if_not_exists(relpath, data)
    _write_hint(storage, manifest.version)
    return decode_manifest_file(data, str(storage.path(relpath)))


def _write_hint(storage: Storage, version: int) -> None:
    """Best effort: the hint is never trusted, so failing to write it is harmless."""
    try:
        storage.put(f"{VERSIONS_DIR}/{LATEST_HINT}", json.dumps({"version": version}).encode())
    except OSError:
        pass
