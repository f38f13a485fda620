"""Rules on the manifest file container (table format: manifest)."""

from __future__ import annotations

from reference_impl.manifest import PYLANCE_TRANSACTION_SECTION_FIELD
from reference_impl.transactions import UnknownOperation

from ..context import DatasetView, VersionView
from ..registry import Scope, Severity, rule

KNOWN_FOOTER_VERSIONS = {(0, 1), (0, 2)}


@rule(
    "manifest/decodes",
    severity=Severity.ERROR,
    requirements=(
        "manifest.footer-magic",
        "manifest.metadata-position-in-file",
        "manifest.index-section-in-file",
        "manifest.transaction-section-length-prefixed",
        "manifest.uuid-sixteen-bytes",
        "index.fragment-bitmap-roaring",
    ),
    summary="Every manifest file decodes: footer, magic, in-file positions and lengths, messages",
    scope=Scope.DATASET,
)
def manifest_decodes(dataset: DatasetView):
    paths = dataset.manifest_paths()
    for version in dataset.selected_versions:
        loaded = dataset.manifest_file(version)
        if not loaded.ok:
            yield loaded.error.problem, paths.get(version)


@rule(
    "manifest/footer-version",
    severity=Severity.INFO,
    requirements=("manifest.footer-magic",),
    summary="The manifest footer carries a format version this validator knows",
)
def footer_version(view: VersionView):
    footer = view.manifest_file.footer
    if (footer.major, footer.minor) not in KNOWN_FOOTER_VERSIONS:
        yield (
            f"manifest footer version {footer.major}.{footer.minor} is not one this validator knows",
            view.manifest_path,
        )


@rule(
    "manifest/timestamp",
    severity=Severity.WARNING,
    requirements=("manifest.timestamp-utc",),
    summary="The manifest records when its version was created",
)
def timestamp(view: VersionView):
    stamp = view.manifest.timestamp
    if stamp is None:
        yield "the manifest has no creation timestamp", view.at("timestamp")
    elif stamp[0] < 0 or not 0 <= stamp[1] < 1_000_000_000:
        yield f"the creation timestamp {stamp} is not a valid UTC time", view.at("timestamp")


@rule(
    "manifest/transaction-section-field",
    severity=Severity.INFO,
    requirements=("manifest.transaction-section-length-prefixed",),
    summary="The embedded transaction's position is recorded in field 21 as the spec defines",
)
def transaction_section_field(view: VersionView):
    if view.manifest.transaction_section_field == PYLANCE_TRANSACTION_SECTION_FIELD:
        yield (
            f"the transaction section position is recorded in field {PYLANCE_TRANSACTION_SECTION_FIELD}, "
            "not in transaction_section (21); see docs/spec-discrepancies.md",
            view.at("transaction_section"),
        )


@rule(
    "manifest/transaction-section-not-empty",
    severity=Severity.ERROR,
    requirements=("manifest.transaction-section-absent-when-empty",),
    summary="A transaction section, when the manifest points at one, holds a transaction with an operation",
)
def transaction_section_not_empty(view: VersionView):
    embedded = view.manifest_file.transaction
    if view.manifest.transaction_section is None or embedded is None:
        return
    operation = embedded.operation
    # An operation this proto does not know still is an operation (its field
    # numbers are kept): only a transaction without any is empty.
    if operation is None or (isinstance(operation, UnknownOperation) and not operation.field_numbers):
        yield (
            f"the manifest points at a transaction section (position {view.manifest.transaction_section}) whose "
            "transaction has no operation; a version without an inline transaction leaves the position unset",
            view.at("transaction_section"),
        )
