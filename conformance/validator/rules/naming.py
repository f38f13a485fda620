"""Rules on manifest names (table format: manifest naming schemes)."""

from __future__ import annotations

from reference_impl.naming import parse_manifest_name

from ..context import DatasetView, VersionView
from ..registry import Scope, Severity, rule


@rule(
    "naming/no-mixture",
    severity=Severity.ERROR,
    requirements=("naming.no-mixture", "naming.consistent-scheme"),
    summary="Manifest names use one naming scheme, V1 or V2, never both",
    scope=Scope.DATASET,
)
def no_mixture(dataset: DatasetView):
    listing = dataset.listing
    if listing.is_mixed:
        v1 = ", ".join(p for _, p in sorted(listing.v1.items())[:3])
        v2 = ", ".join(p for _, p in sorted(listing.v2.items())[:3])
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
