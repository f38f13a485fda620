"""Rules on a table and its external manifest store read together (table
format: "External Manifest Store", "External Store Reader"; transaction
page: "Reader Process with External Store").

They run only when the validator is given the store (``validate(...,
manifest_store=...)``, ``--manifest-store`` on the command line); the store
is read, never written, and nothing is finalised. A table the store knows
nothing of draws no finding: it was not committed through it.
"""

from __future__ import annotations

from reference_impl.commit.external_store import StoreRecord

from ..context import DatasetView
from ..registry import Scope, Severity, rule


def _records(dataset: DatasetView) -> list[StoreRecord]:
    return [record for _, record in sorted(dataset.store_records.items())]


@rule(
    "external-store/pending-finalization",
    severity=Severity.WARNING,
    requirements=("external-store.finalize", "external-store.supplements-object-store"),
    summary="The external store points every version at its final manifest, not at a staged one",
    scope=Scope.DATASET,
)
def pending_finalization(dataset: DatasetView):
    for record in _records(dataset):
        if record.staged and record.present and not record.final_present:
            yield (
                f"the external store commits version {record.entry.version} at the staged manifest "
                f"{record.relpath}, which was never copied to {record.final}: a reader using the store finalises it, "
                "a reader unaware of the store sees the version before",
                record.relpath,
            )


@rule(
    "external-store/missing-manifest",
    severity=Severity.ERROR,
    requirements=("external-store.store-row-has-manifest",),
    summary="Every version the external store records has its manifest, of the size recorded, under _versions/",
    scope=Scope.DATASET,
)
def missing_manifest(dataset: DatasetView):
    for record in _records(dataset):
        version = record.entry.version
        if record.malformed is not None:
            yield f"the external store's row for version {version} cannot be used: {record.malformed}", None
        elif not record.present and not record.final_present:
            yield (
                f"the external store records version {version} at {record.entry.path}, but neither that manifest "
                f"nor the final {record.final} exists: a reader using the store must refuse to load it",
                record.relpath,
            )
        elif record.present and record.entry.size >= 0 and record.size_found != record.entry.size:
            yield (
                f"the external store records version {version} as {record.entry.size} bytes, but {record.relpath} "
                f"has {record.size_found}",
                record.relpath,
            )


@rule(
    "external-store/version-beyond-store",
    severity=Severity.WARNING,
    requirements=("commit.single-mechanism",),
    summary="No manifest is newer than the latest version the external store records",
    scope=Scope.DATASET,
)
def version_beyond_store(dataset: DatasetView):
    if not dataset.store_records:
        return
    latest = max(dataset.store_records)
    for version, relpath in sorted(dataset.listing.manifests().items()):
        if version > latest:
            yield (
                f"version {version} ({relpath}) is newer than the latest version the external store records "
                f"({latest}): it was committed without the store, and a reader using the store does not see it",
                relpath,
            )
