"""The commit steps and reader steps of the external manifest store (table
format: "External Store Commit", "External Store Reader").

A commit through the store (:func:`commit_through_store`):

1. stage the manifest in the object store under its final name plus
   ``-{uuid}`` (``external-store.stage-unique-name``; with V2 naming the staged
   name is the V2 name plus the suffix, as pylance does);
2. put-if-not-exists the staged path in the store: the commit point
   (``external-store.commit-point``); a writer that loses has lost the race
   for the version, and removes its staged manifest;
3. copy the staged manifest to its final name;
4. point the store at the final path (``external-store.finalize``), then
   remove the staged manifest (garbage collection, as pylance does).

A reader (:func:`resolve_through_store`) asks the store for the version; a
staged path is finalised as steps 3 and 4 do (``external-store.reader-
synchronises``); when that cannot be done it refuses to load with
:class:`~reference_impl.errors.ManifestStoreOutOfSyncError` naming the
version and the paths. A dataset the store knows nothing of is read from the
object store alone. The copy never replaces a manifest already at the final
name: the same bytes there mean another process finalised first; other bytes
are a disagreement no reader may settle by overwriting.

:func:`inspect_store` reads the same facts without writing, for the
validator and ``describe``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import CommitConflictError, LanceFormatError, ManifestStoreError, ManifestStoreOutOfSyncError
from ...naming import NamingScheme, list_versions, parse_manifest_name, resolve_version
from ...storage import S3Storage, Storage
from .protocol import ExternalManifestStore, StoreEntry

#: The steps of a commit through the store; ``on_step`` is called after each.
STEP_MANIFEST_STAGED = "manifest-staged"
STEP_STORE_COMMITTED = "store-committed"
STEP_MANIFEST_COPIED = "manifest-copied"
STEP_STORE_REPOINTED = "store-repointed"

_STAGED_SUFFIX = re.compile(r"^(.*\.manifest)-[0-9a-fA-F-]{32,36}$")


def _no_step(name: str) -> None:
    pass


def store_base_uri(storage: Storage) -> str:
    """How the store names the dataset at ``storage``: its object key prefix
    (pylance's ``base_uri``: no bucket, no scheme) for an object store, its
    absolute path for a local directory."""
    if isinstance(storage, S3Storage):
        return storage.prefix
    return str(storage.root)


def store_path(storage: Storage, relpath: str) -> str:
    """The path the store records for ``relpath`` under the dataset root
    (for a dataset at a bucket's top, whose base_uri is empty: ``relpath``)."""
    return f"{_prefix(storage)}{relpath}"


def _prefix(storage: Storage) -> str:
    base_uri = store_base_uri(storage)
    return f"{base_uri}/" if base_uri else ""


def relpath_of(storage: Storage, entry: StoreEntry) -> str:
    """The path under the dataset root of the manifest ``entry`` names.
    A row that names anything outside ``_versions/`` of this dataset is
    malformed: nothing outside the root is ever read."""
    prefix = _prefix(storage)
    if not entry.path.startswith(prefix):
        raise ManifestStoreError(
            str(storage.root), f"the store records version {entry.version} at {entry.path!r}, outside the dataset"
        )
    relpath = entry.path[len(prefix) :]
    if not relpath.startswith("_versions/") or "/" in relpath[len("_versions/") :]:
        raise ManifestStoreError(
            str(storage.root), f"the store records version {entry.version} at {entry.path!r}, not under _versions/"
        )
    return relpath


def final_name_of(staged_relpath: str) -> str | None:
    """The final manifest path a staged path is the staging copy of, or None
    when ``staged_relpath`` is not a staged name."""
    match = _STAGED_SUFFIX.match(staged_relpath)
    return match.group(1) if match else None


def is_staged(relpath: str) -> bool:
    return final_name_of(relpath) is not None


def _final_relpath(storage: Storage, entry: StoreEntry) -> tuple[str, str | None]:
    """(final path, staged path or None) of the manifest ``entry`` names,
    checked to name the entry's version."""
    relpath = relpath_of(storage, entry)
    final = final_name_of(relpath)
    staged = relpath if final is not None else None
    final = final or relpath
    parsed = parse_manifest_name(final.rsplit("/", 1)[-1])
    if parsed is None or parsed[0] != entry.version:
        raise ManifestStoreError(
            str(storage.root),
            f"the store records version {entry.version} at {entry.path!r}, a name that is not that version's manifest",
        )
    return final, staged


# -- committing ----------------------------------------------------------------------


def commit_through_store(
    storage: Storage,
    store: ExternalManifestStore,
    version: int,
    final_relpath: str,
    data: bytes,
    step: Callable[[str], None] = _no_step,
) -> None:
    """Commit ``data`` as the manifest of ``version`` through ``store``.
    Raises :class:`~reference_impl.errors.CommitConflictError` when another
    writer holds the version (its staged manifest is removed first)."""
    staged = f"{final_relpath}-{uuid.uuid4()}"
    storage.put_if_not_exists(staged, data)
    step(STEP_MANIFEST_STAGED)
    base_uri = store_base_uri(storage)
    if not store.put_if_not_exists(base_uri, version, store_path(storage, staged), len(data)):
        _remove_quietly(storage, staged)
        raise CommitConflictError(
            str(storage.path(final_relpath)), f"the external store already holds version {version}", version=version
        )
    step(STEP_STORE_COMMITTED)
    finalize(storage, store, StoreEntry(version, store_path(storage, staged), len(data)), step)


def finalize(
    storage: Storage, store: ExternalManifestStore, entry: StoreEntry, step: Callable[[str], None] = _no_step
) -> str:
    """Copy the staged manifest ``entry`` names to its final name and point
    the store at it (idempotent: any number of writers and readers may do it
    at once); the final path. Raises
    :class:`~reference_impl.errors.ManifestStoreOutOfSyncError` when it
    cannot be done."""
    final, staged = _final_relpath(storage, entry)
    if staged is None:
        return final
    where = f"version {entry.version} (staged {staged}, final {final})"
    data = _read_if_there(storage, staged)
    if data is not None:
        if entry.size >= 0 and len(data) != entry.size:
            raise ManifestStoreOutOfSyncError(
                str(storage.path(staged)),
                f"{where}: the store records {entry.size} bytes but the staged manifest has {len(data)}",
                version=entry.version,
            )
        try:
            storage.put_if_not_exists(final, data)
        except CommitConflictError:
            if storage.read(final) != data:
                raise ManifestStoreOutOfSyncError(
                    str(storage.path(final)),
                    f"{where}: another manifest is already at the final name; the store's commit cannot be finalised",
                    version=entry.version,
                ) from None
        except LanceFormatError as exc:  # a read-only or failing store: this reader cannot synchronise
            raise ManifestStoreOutOfSyncError(
                str(storage.path(final)), f"{where}: the staged manifest cannot be copied: {exc}", version=entry.version
            ) from None
    elif not storage.exists(final):
        raise ManifestStoreOutOfSyncError(
            str(storage.root),
            f"{where}: the store records the staged manifest, but neither it nor the final manifest exists",
            version=entry.version,
        )
    elif entry.size >= 0 and storage.size(final) != entry.size:
        raise ManifestStoreOutOfSyncError(
            str(storage.path(final)),
            f"{where}: the store records {entry.size} bytes but the final manifest has {storage.size(final)}",
            version=entry.version,
        )
    step(STEP_MANIFEST_COPIED)
    store.put(store_base_uri(storage), entry.version, store_path(storage, final), storage.size(final))
    step(STEP_STORE_REPOINTED)
    _remove_quietly(storage, staged)
    return final


def _read_if_there(storage: Storage, relpath: str) -> bytes | None:
    """The bytes of ``relpath``, or None when it is not there (any moment,
    another finaliser may remove the staged manifest it has copied)."""
    if not storage.exists(relpath):
        return None
    try:
        return storage.read(relpath)
    except LanceFormatError:
        if storage.exists(relpath):
            raise  # there, but unreadable: not a race
        return None


def _remove_quietly(storage: Storage, relpath: str) -> None:
    """Remove a staged manifest; failing to is harmless (it is never read
    once the store no longer points at it)."""
    try:
        storage.delete(relpath)
    except (OSError, LanceFormatError):
        pass


# -- reading ----------------------------------------------------------------------


def resolve_through_store(
    storage: Storage, store: ExternalManifestStore, version: int | None, *, synchronize: bool = True
) -> tuple[int | None, str, NamingScheme | None]:
    """As :func:`reference_impl.naming.resolve_version`, through the store:
    the version (the store's latest when None), its final manifest path
    (finalising a staged one) and the naming scheme. With ``synchronize``
    False nothing is written: a staged manifest is read where it is (the
    validator and ``describe`` look without repairing)."""
    base_uri = store_base_uri(storage)
    entry = store.latest(base_uri) if version is None else store.get(base_uri, version)
    if entry is None:
        # Not committed through the store (yet): the object store alone says.
        return resolve_version(storage, version)
    if synchronize:
        final = finalize(storage, store, entry)
    else:
        final, staged = _final_relpath(storage, entry)
        if staged is not None and storage.exists(staged):
            parsed = parse_manifest_name(final.rsplit("/", 1)[-1])
            assert parsed is not None  # _final_relpath checked the name
            return entry.version, staged, parsed[1]
    if not storage.exists(final):
        raise ManifestStoreOutOfSyncError(
            str(storage.path(final)),
            f"the store records version {entry.version} at {entry.path}, which does not exist",
            version=entry.version,
        )
    parsed = parse_manifest_name(final.rsplit("/", 1)[-1])
    assert parsed is not None  # _final_relpath checked the name
    return entry.version, final, parsed[1]


def synchronize_latest(storage: Storage, store: ExternalManifestStore) -> dict[int, str]:
    """Finalise the store's latest version if it is staged, and list the
    committed manifests (version -> path) as a writer catching up needs
    them. A version the store records without its manifest refuses."""
    entry = store.latest(store_base_uri(storage))
    if entry is not None:
        final = finalize(storage, store, entry)
        if not storage.exists(final):
            raise ManifestStoreOutOfSyncError(
                str(storage.path(final)),
                f"the store records version {entry.version} at {entry.path}, which does not exist",
                version=entry.version,
            )
    return list_versions(storage).manifests()


# -- inspecting (never writes) ----------------------------------------------------


@dataclass(frozen=True)
class StoreRecord:
    """What the store records for one version, as found in the object store."""

    entry: StoreEntry
    #: The path under the root the row names (None when it lies outside).
    relpath: str | None
    #: The final manifest path of that version (None when the row is malformed).
    final: str | None
    staged: bool
    #: Whether the manifest the row names exists.
    present: bool
    #: Whether the final manifest exists.
    final_present: bool
    #: The size of the manifest the row names, when present.
    size_found: int | None
    #: Why the row cannot be used at all, when it cannot.
    malformed: str | None = None


def inspect_entry(storage: Storage, entry: StoreEntry) -> StoreRecord:
    """The facts about ``entry`` in the object store, read-only."""
    try:
        final, staged = _final_relpath(storage, entry)
    except ManifestStoreError as exc:
        return StoreRecord(entry, None, None, False, False, False, None, malformed=exc.problem)
    named = staged or final
    present = storage.exists(named)
    return StoreRecord(
        entry,
        named,
        final,
        staged is not None,
        present,
        storage.exists(final),
        storage.size(named) if present else None,
    )


def inspect_store(storage: Storage, store: ExternalManifestStore, versions: list[int]) -> dict[int, StoreRecord]:
    """The store's records of ``versions`` (and of its latest version), read
    without finalising anything. A version the store has no row for is left
    out."""
    base_uri = store_base_uri(storage)
    records: dict[int, StoreRecord] = {}
    latest = store.latest(base_uri)
    if latest is not None:
        records[latest.version] = inspect_entry(storage, latest)
    for version in versions:
        if version not in records:
            entry = store.get(base_uri, version)
            if entry is not None:
                records[version] = inspect_entry(storage, entry)
    return records
