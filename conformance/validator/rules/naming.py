"""Rules on the names under ``_versions/`` (table format: manifest naming
schemes; external manifest store).

``reference_impl.naming.list_versions`` sorts every entry into committed
manifests (V1 or V2), staged manifests (``{version}.manifest-{id}`` with an id
of 32 to 36 hex digits and dashes), the latest-version hint, and the rest.
Staged names are checked by ``external-store/staged-name``; whatever the
listing does not recognise is left to ``naming/unrecognized-entries``, so an
entry is judged by one rule only.
"""

from __future__ import annotations

import re

from reference_impl.naming import parse_manifest_name

from ..context import DatasetView, VersionView
from ..facts.text import listed
from ..registry import Scope, Severity, rule


@rule(
    "naming/no-mixture",
    severity=Severity.ERROR,
    # Within one scheme a version has exactly one name, so two manifests of
    # one version can only come from a mixture (a migration left half done).
    requirements=("naming.no-mixture", "naming.consistent-scheme", "history.one-manifest-per-version"),
    summary="Manifest names use one naming scheme, V1 or V2, never both",
    scope=Scope.DATASET,
)
def no_mixture(dataset: DatasetView):
    listing = dataset.listing
    if listing.is_mixed:
        v1 = listed([p for _, p in sorted(listing.v1.items())], 3)
        v2 = listed([p for _, p in sorted(listing.v2.items())], 3)
        yield (
            f"{len(listing.v1)} manifests use V1 names ({v1}) and {len(listing.v2)} use V2 names ({v2})",
            "_versions",
        )


@rule(
    "naming/name-matches-version",
    severity=Severity.ERROR,
    requirements=("naming.name-matches-version",),
    summary="The version a manifest's name encodes equals the version inside it",
)
def name_matches_version(view: VersionView):
    parsed = parse_manifest_name(view.manifest_path.rsplit("/", 1)[-1])
    if parsed is not None and parsed[0] != view.manifest.version:
        yield (
            f"the name encodes version {parsed[0]} ({parsed[1].value} scheme) but the manifest says "
            f"{view.manifest.version}",
            view.manifest_path,
        )


@rule(
    "naming/unrecognized-entries",
    severity=Severity.WARNING,
    requirements=("history.manifests-in-versions-dir", "naming.v1-pattern", "naming.v2-pattern"),
    summary="Every entry of _versions/ is a manifest, a staged manifest or the latest-version hint",
    scope=Scope.DATASET,
)
def unrecognized_entries(dataset: DatasetView):
    for name in dataset.listing.unrecognized:
        yield f"'{name}' fits neither manifest naming scheme", f"_versions/{name}"


#: The staging id: a UUID, hyphenated (8-4-4-4-12) or as 32 bare hex digits.
STAGED_UUID = re.compile(
    r"^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$"
)


@rule(
    "external-store/staged-name",
    severity=Severity.ERROR,
    requirements=("external-store.stage-unique-name",),
    summary="A staged manifest is named {version}.manifest-{uuid}, its unique part a UUID",
    scope=Scope.DATASET,
)
def staged_name(dataset: DatasetView):
    for _, paths in sorted(dataset.listing.staged.items()):
        for relpath in paths:
            suffix = relpath.rsplit(".manifest-", 1)[-1]
            if not STAGED_UUID.match(suffix):
                yield (
                    f"the staged manifest '{relpath.rsplit('/', 1)[-1]}' has the suffix '{suffix}', which is not a "
                    "UUID: staging names must be unique, {version}.manifest-{uuid}",
                    relpath,
                )
