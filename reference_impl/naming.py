"""Manifest naming schemes and version discovery (table format: manifest
naming schemes; external manifest store).

Two schemes name the manifest of version ``v`` under ``_versions/``:

* V1: ``{v}.manifest``;
* V2: ``{u64::MAX - v}.manifest`` zero-padded to 20 digits, so that a
  lexicographic listing yields the newest version first.

A dataset must not mix the two. ``{v}.manifest-{uuid}`` names are manifests
staged by an external manifest store and not (yet) committed;
``latest_version_hint.json`` is a hint only and never decides the latest
version. Datasets written by very old releases also carry a
``_latest.manifest`` at the root.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as dc_field

from .errors import LanceFormatError, NamingSchemeError, NotADatasetError, VersionNotFoundError
from .json_file import read_json_file
from .storage import Storage

VERSIONS_DIR = "_versions"
LEGACY_LATEST = "_latest.manifest"
LATEST_HINT = "latest_version_hint.json"
U64_MAX = 2**64 - 1
V2_DIGITS = 20

_COMMITTED = re.compile(r"^(\d+)\.manifest$")
_STAGED = re.compile(r"^(\d+)\.manifest-([0-9a-fA-F-]{32,36})$")


class NamingScheme(enum.Enum):
    V1 = "v1"
    V2 = "v2"


def manifest_name(version: int, scheme: NamingScheme) -> str:
    if version < 1 or version > U64_MAX:
        raise ValueError(f"version {version} is out of range")
    if scheme is NamingScheme.V1:
        return f"{version}.manifest"
    return f"{U64_MAX - version:0{V2_DIGITS}d}.manifest"


def manifest_path(version: int, scheme: NamingScheme) -> str:
    return f"{VERSIONS_DIR}/{manifest_name(version, scheme)}"


def parse_manifest_name(name: str) -> tuple[int, NamingScheme] | None:
    """The version and scheme a committed manifest name encodes, or None when
    the name is not a committed manifest name."""
    match = _COMMITTED.match(name)
    if not match:
        return None
    digits = match.group(1)
    number = int(digits)
    if len(digits) == V2_DIGITS and number <= U64_MAX:
        return U64_MAX - number, NamingScheme.V2
    return number, NamingScheme.V1


@dataclass
class VersionListing:
    """What ``_versions/`` holds."""

    #: version -> relative path of its committed manifest, per scheme.
    v1: dict[int, str] = dc_field(default_factory=dict)
    v2: dict[int, str] = dc_field(default_factory=dict)
    #: version -> staged manifest paths (external store, not finalised), by
    #: the version the final name encodes (V1 or V2).
    staged: dict[int, list[str]] = dc_field(default_factory=dict)
    #: names under _versions/ that fit no scheme.
    unrecognized: list[str] = dc_field(default_factory=list)
    #: whether _versions/latest_version_hint.json exists (read it with read_hint).
    has_hint: bool = False
    has_legacy_latest: bool = False

    @property
    def is_mixed(self) -> bool:
        return bool(self.v1) and bool(self.v2)

    @property
    def scheme(self) -> NamingScheme | None:
        if self.v2 and not self.v1:
            return NamingScheme.V2
        if self.v1 and not self.v2:
            return NamingScheme.V1
        return None

    def manifests(self) -> dict[int, str]:
        return {**self.v1, **self.v2}


def list_versions(storage: Storage) -> VersionListing:
    """List ``_versions/`` without judging it."""
    listing = VersionListing()
    for name in storage.list_dir(VERSIONS_DIR):
        parsed = parse_manifest_name(name)
        if parsed is not None:
            version, scheme = parsed
            target = listing.v1 if scheme is NamingScheme.V1 else listing.v2
            target[version] = f"{VERSIONS_DIR}/{name}"
            continue
        staged = _STAGED.match(name)
        if staged:
            # The staged name is the final name plus the suffix, in either scheme.
            final = parse_manifest_name(f"{staged.group(1)}.manifest")
            version = final[0] if final is not None else int(staged.group(1))
            listing.staged.setdefault(version, []).append(f"{VERSIONS_DIR}/{name}")
        elif name == LATEST_HINT:
            listing.has_hint = True
        elif not name.startswith("."):
            listing.unrecognized.append(name)
    listing.has_legacy_latest = storage.exists(LEGACY_LATEST)
    return listing


def read_hint(storage: Storage) -> int | None:
    """The version ``latest_version_hint.json`` names, or None when it is
    missing or unreadable. Only a hint: version resolution never uses it."""
    try:
        document = read_json_file(storage, f"{VERSIONS_DIR}/{LATEST_HINT}")
    except LanceFormatError:  # a hint that cannot be read is simply no hint
        return None
    value = document.get("version") if isinstance(document, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def committed_manifests(storage: Storage) -> tuple[dict[int, str], NamingScheme | None]:
    """Every committed manifest (version -> path) and the scheme in use.

    Raises :class:`NamingSchemeError` for a mixture of schemes and
    :class:`NotADatasetError` when there is no manifest at all.
    """
    listing = list_versions(storage)
    if listing.is_mixed:
        raise NamingSchemeError(
            str(storage.path(VERSIONS_DIR)),
            f"manifest names mix the V1 scheme ({len(listing.v1)} files) and the V2 scheme ({len(listing.v2)} files)",
        )
    manifests = listing.manifests()
    if not manifests:
        if listing.has_legacy_latest:
            return {}, None
        raise NotADatasetError(str(storage.root), "no manifest under _versions/")
    return manifests, listing.scheme


def resolve_version(storage: Storage, version: int | None) -> tuple[int | None, str, NamingScheme | None]:
    """The version to open (the latest when ``version`` is None), the relative
    path of its manifest and the naming scheme.

    A dataset known only through a root ``_latest.manifest`` resolves to that
    file, with version None (read it from the manifest) and scheme None.
    """
    manifests, scheme = committed_manifests(storage)
    if not manifests:
        if version is not None:
            raise VersionNotFoundError(str(storage.root), f"version {version} has no manifest")
        return None, LEGACY_LATEST, None
    if version is None:
        version = max(manifests)
    if version not in manifests:
        raise version_not_found(str(storage.root), version, manifests)
    return version, manifests[version], scheme


def version_not_found(root: str, version: int, present: Iterable[int]) -> VersionNotFoundError:
    """The error for ``version`` of the dataset at ``root`` when it has no
    manifest (never committed, or removed by a cleanup): it names the
    dataset and the version and lists, briefly, the versions ``present``."""
    return VersionNotFoundError(root, f"version {version} has no manifest (versions present: {_span(present)})")


def _span(present: Iterable[int]) -> str:
    versions = sorted(present)
    if not versions:
        return "none"
    if len(versions) > 6:
        return f"{versions[0]}..{versions[-1]} ({len(versions)} versions)"
    return ", ".join(str(v) for v in versions)
