"""Rules on the version history and its transaction files (table format:
committing datasets, conflict resolution; transaction specification)."""

from __future__ import annotations

import re
from itertools import pairwise

from reference_impl.transactions import Clone

from ..context import DatasetView, VersionView
from ..facts.text import listed
from ..facts.transactions import recorded_transaction, transaction_file
from ..registry import Scope, Severity, rule

TRANSACTION_FILE_NAME = re.compile(r"^(\d+)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.txn$")

#: How many missing versions a gap finding lists.
SHOWN_MISSING = 10


@rule(
    "history/gapless",
    severity=Severity.WARNING,
    # Not history.versions-increase: a version numbered below an earlier one
    # lands below the oldest kept version or in a gap that was already there,
    # so no gap shows it (tests/conformance/validator/test_history_rules.py checks the
    # writers number each commit above the versions before it).
    requirements=("history.no-skipped-versions",),
    summary="Versions are consecutive from the oldest kept one, except where a cleanup removed some (a kept "
    "transaction read a version in the gap)",
    scope=Scope.DATASET,
)
def gapless(dataset: DatasetView):
    versions = sorted(dataset.manifest_paths())
    # Version numbers come from file names, and a name may claim version
    # 2^64 - 1: the gaps are counted between neighbours, never enumerated.
    gaps = [(low, high) for low, high in pairwise(versions) if high - low > 1]
    gaps = [(low, high) for low, high in gaps if not _removed_by_cleanup(dataset, low, high)]
    if gaps:
        missing = sum(high - low - 1 for low, high in gaps)
        shown: list[int] = []
        for low, high in gaps:
            shown.extend(range(low + 1, min(high, low + 1 + SHOWN_MISSING - len(shown))))
            if len(shown) >= SHOWN_MISSING:
                break
        yield (
            f"versions {listed(shown, SHOWN_MISSING, total=missing)} between {versions[0]} and {versions[-1]} have "
            f"no manifest ({missing} in all; skipped, or removed by a cleanup that left no trace)",
            "_versions",
        )


def _removed_by_cleanup(dataset: DatasetView, low: int, high: int) -> bool:
    """Whether the versions strictly between ``low`` and ``high`` (neither
    has a neighbour in between) are gone because a cleanup removed them.

    The requirement's note: cleanup is outside the format documents and may
    leave gaps among the kept manifests; the read version of a surviving
    transaction tells them from a skipped commit. The transaction of
    ``high`` read a version; when that version lies inside the gap, it was
    committed (a writer read it) and is gone now, so the gap is a removal,
    not a commit that skipped numbers. (The versions between the read
    version and ``high`` are the ones a retried commit saw committed
    concurrently; nothing kept can say more about them.) A transaction that
    read ``low`` or earlier, or none kept at all, explains nothing: the gap
    is reported."""
    view = dataset.version_view(high)
    if view is None:
        return False  # an unreadable manifest: other rules report it
    recorded = recorded_transaction(view)
    if recorded is None:
        return False
    transaction, _ = recorded
    if isinstance(transaction.operation, Clone):
        return False  # a clone's read version belongs to the dataset it was cloned from
    return low < transaction.read_version < high


@rule(
    "transaction/file-name",
    severity=Severity.ERROR,
    requirements=("transaction.file-name-format",),
    summary="transaction_file has the form {read_version}-{uuid}.txn",
)
def file_name(view: VersionView):
    name = view.manifest.transaction_file
    if name and not TRANSACTION_FILE_NAME.match(name):
        yield f"transaction_file '{name}' is not of the form {{read_version}}-{{uuid}}.txn", view.at("transaction_file")


@rule(
    "transaction/file-decodes",
    severity=Severity.ERROR,
    requirements=(
        "transaction.file-path-resolves",
        "transaction.file-decodes",
        "transaction.name-read-version-matches",
    ),
    summary="The transaction file the manifest names exists, decodes as a Transaction, and holds the read version "
    "and uuid its name gives",
)
def file_decodes(view: VersionView):
    if view.manifest.transaction_file:
        loaded = transaction_file(view)
        if not loaded.ok:
            yield loaded.error.problem, f"_transactions/{view.manifest.transaction_file}"


@rule(
    "transaction/file-missing",
    severity=Severity.INFO,
    requirements=("transaction.file-written", "transaction.file-may-be-absent"),
    summary="A version records the transaction that created it, in a file or in the manifest",
)
def file_missing(view: VersionView):
    if not view.manifest.transaction_file and view.manifest_file.transaction is None:
        yield (
            "the version records no transaction (concurrent writers must assume it conflicts)",
            view.at("transaction_file"),
        )


@rule(
    "transaction/read-version",
    severity=Severity.ERROR,
    requirements=("transaction.read-version-earlier",),
    summary="The transaction read a version earlier than the one it created",
)
def read_version(view: VersionView):
    # A file whose name gives another read version than its content does not
    # decode (reference_impl.transactions.read_transaction_file):
    # transaction/file-decodes reports it.
    name = view.manifest.transaction_file
    candidates = []
    if name:
        loaded = transaction_file(view)
        if loaded.ok:
            candidates.append((loaded.value, f"_transactions/{name}"))
    if view.manifest_file.transaction is not None:
        candidates.append((view.manifest_file.transaction, view.at("transaction_section")))
    for transaction, location in candidates:
        if isinstance(transaction.operation, Clone):
            continue  # a clone's read version is the version of the dataset it was cloned from
        if transaction.read_version >= view.version:
            yield (
                f"the transaction read version {transaction.read_version}, not earlier than the version "
                f"{view.version} it created",
                location,
            )


@rule(
    "transaction/embedded-matches-file",
    severity=Severity.ERROR,
    requirements=("transaction.file-decodes", "manifest.transaction-section-length-prefixed"),
    summary="A transaction kept both in the manifest and in _transactions/ is the same in both",
)
def embedded_matches_file(view: VersionView):
    embedded = view.manifest_file.transaction
    if embedded is None or not view.manifest.transaction_file:
        return
    loaded = transaction_file(view)
    if loaded.ok and loaded.value != embedded:
        yield (
            "the embedded transaction differs from the transaction file",
            f"_transactions/{view.manifest.transaction_file}",
        )
