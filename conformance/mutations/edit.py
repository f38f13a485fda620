"""Editing a dataset on disk in place, for the mutations.

Mutations change stored bytes the way a faulty writer would: they decode a
manifest or transaction with the reference implementation, change the plain
data classes, and write the result back where it was. Nothing here checks
anything; the point is to produce exactly the defect a mutation names.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from reference_impl.manifest import Manifest
from reference_impl.manifest_file import ManifestFile, encode_manifest_file, read_manifest_file
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage
from reference_impl.transactions import TRANSACTIONS_DIR, Transaction, read_transaction_file
from reference_impl.wire import table_pb2


def copy_dataset(source: Path, target: Path) -> Path:
    """A copy of the dataset at ``source`` (symbolic links kept as links)."""
    shutil.copytree(source, target, symlinks=True)
    return target


def arrow_ipc_file(columns: dict[str, pa.Array], batches: int = 1) -> bytes:
    """An Arrow IPC file of ``columns``, the table written ``batches`` times:
    for crafting deletion files of the wrong shape or type."""
    table = pa.table(columns)
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table.schema) as writer:
        for _ in range(batches):
            writer.write_table(table)
    return sink.getvalue().to_pybytes()


def manifest_relpath(root: Path, version: int | None = None) -> str:
    """The manifest of ``version`` (default: the latest), relative to ``root``."""
    manifests = list_versions(LocalStorage(root)).manifests()
    return manifests[max(manifests) if version is None else version]


def edit_manifest(root: Path, edit: Callable[[ManifestFile], None], version: int | None = None) -> None:
    """Decode a manifest file, let ``edit`` change its dataclasses, and write
    it back in place (index and transaction sections kept)."""
    storage = LocalStorage(root)
    relpath = manifest_relpath(root, version)
    manifest_file = read_manifest_file(storage, relpath)
    edit(manifest_file)
    data = encode_manifest_file(manifest_file.manifest, manifest_file.indices, manifest_file.transaction)
    (root / relpath).write_bytes(data)


def edit_manifest_message(root: Path, edit: Callable[[table_pb2.Manifest], None], version: int | None = None) -> None:
    """Edit the Manifest protobuf itself, for defects the dataclasses cannot
    express; the file is laid out anew by the reference encoder."""

    def apply(manifest_file: ManifestFile) -> None:
        message = manifest_file.manifest.to_proto()
        edit(message)
        manifest_file.manifest = Manifest.from_proto(message)

    edit_manifest(root, apply, version)


def edit_untracked(root: Path, edit: Callable[[ManifestFile], None], version: int | None = None) -> None:
    """:func:`edit_manifest`, also forgetting the version's transaction.

    A defect planted in a version's fragments also contradicts the
    transaction that version records (the transaction rules compare each
    version with the one before it). Dropping the version's record of its
    transaction, which a version may lack (transaction.file-may-be-absent, an
    info), leaves only the planted defect."""

    def apply(manifest_file: ManifestFile) -> None:
        edit(manifest_file)
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = None

    edit_manifest(root, apply, version)


def transactions(root: Path) -> dict[int, Transaction]:
    """Every version's transaction, by version."""
    storage = LocalStorage(root)
    found = {}
    for version, relpath in sorted(list_versions(storage).manifests().items()):
        name = read_manifest_file(storage, relpath).manifest.transaction_file
        found[version] = read_transaction_file(storage, name)
    return found


def versions_of(root: Path, kind: type) -> list[int]:
    """Versions whose transaction is a ``kind``, oldest first."""
    return [v for v, t in transactions(root).items() if isinstance(t.operation, kind)]


def write_transaction(root: Path, version: int, transaction: Transaction, *, old_name: str | None = None) -> None:
    """Store ``transaction`` as ``version``'s transaction, in its file and in
    the manifest's embedded copy (renaming the file when its name changes)."""
    name = transaction.file_name()
    directory = root / TRANSACTIONS_DIR
    if old_name and old_name != name:
        (directory / old_name).unlink()
    (directory / name).write_bytes(transaction.to_proto().SerializeToString())

    def edit(manifest_file: ManifestFile) -> None:
        manifest_file.manifest.transaction_file = name
        if manifest_file.transaction is not None:
            manifest_file.transaction = transaction

    edit_manifest(root, edit, version)


def edit_transaction(root: Path, version: int, edit: Callable[[Transaction], None]) -> None:
    """Let ``edit`` change ``version``'s Transaction, then store it."""
    storage = LocalStorage(root)
    name = read_manifest_file(storage, manifest_relpath(root, version)).manifest.transaction_file
    transaction = read_transaction_file(storage, name)
    edit(transaction)
    write_transaction(root, version, transaction, old_name=name)


def edit_operation(root: Path, kind: type, edit, *, which: int = 0) -> None:
    """Edit the operation of the ``which``-th version whose operation is a ``kind``."""
    version = versions_of(root, kind)[which]
    edit_transaction(root, version, lambda transaction: edit(transaction.operation))


def occurrences(data: bytes, pattern: bytes) -> list[int]:
    """Every position where ``pattern`` starts in ``data``, overlaps included."""
    found, at = [], data.find(pattern)
    while at >= 0:
        found.append(at)
        at = data.find(pattern, at + 1)
    return found


def overwrite_once(path: Path, old: bytes, new: bytes, regions: list[tuple[int, int]] | None = None) -> None:
    """Write ``new`` over the one occurrence of ``old`` in the file, or within
    its ``(position, size)`` regions when given. The two are as long: an index
    mutation changes contents and keeps the file's size."""
    assert len(old) == len(new) and old != new, (old, new)
    data = bytearray(path.read_bytes())
    regions = regions if regions is not None else [(0, len(data))]
    found = [start + at for start, size in regions for at in occurrences(bytes(data[start : start + size]), old)]
    if len(found) != 1:
        raise AssertionError(f"{path}: {old!r} occurs {len(found)} times where it was to be replaced, not once")
    data[found[0] : found[0] + len(old)] = new
    path.write_bytes(bytes(data))
