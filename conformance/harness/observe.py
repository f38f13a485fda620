"""Every version of a raced dataset, read back with the reference reader as
what changed from the version before: the rows that appeared and
disappeared, the fragments given content, and the transaction's operation
and read version. The checker works on these observations alone.

Reading is incremental: a fragment's rows are read once per distinct
content (its id, data files and deletion file), so the cost follows what
changed, not the number of versions times the table size.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from conformance.drivers.writes import TOKEN_PROPERTY
from reference_impl.commit import decide
from reference_impl.commit.conflicts import Outcome, RowChanges, modified_fragment_ids
from reference_impl.dataset import Dataset, dataset_storage
from reference_impl.errors import LanceFormatError
from reference_impl.fragments import Fragment
from reference_impl.naming import list_versions
from reference_impl.scan import fragment_table
from reference_impl.transactions import Delete, Transaction, Update, read_transaction_file

#: A row as the checker sees it: (id, value, stable row id or None).
Row = tuple[int, int, "int | None"]


@dataclass(frozen=True)
class VersionObservation:
    version: int
    #: The transaction's operation (proto oneof name), None when unreadable.
    operation: str | None
    read_version: int | None
    added: list[Row] = field(default_factory=list)
    removed: list[Row] = field(default_factory=list)
    #: (fragment id, content signature) of fragments whose content is new here.
    new_fragments: list[tuple[int, str]] = field(default_factory=list)
    #: The operation's token its writer recorded in the transaction's
    #: properties (``conformance.drivers.writes.TOKEN_PROPERTY``), if any.
    token: str | None = None
    #: When the manifest says it was committed (seconds since the epoch), if it says.
    timestamp: float | None = None


@dataclass(frozen=True)
class ConflictObservation:
    """A committed version ``version`` whose transaction ``decide`` says
    conflicts with version ``other``, committed between its read version and
    itself."""

    version: int
    other: int
    outcome: str
    reason: str
    requirement_ids: tuple[str, ...] = ()
    #: The library that wrote version ``version`` (``lance`` for pylance).
    writer_library: str = ""


@dataclass
class Observations:
    versions: list[VersionObservation]
    conflicts: list[ConflictObservation] = field(default_factory=list)
    #: Validator errors: (version, rule id, message).
    validator_errors: list[tuple[int | None, str, str]] = field(default_factory=list)
    #: Versions where pylance reads other rows than the reference: (version, detail).
    disagreements: list[tuple[int, str]] = field(default_factory=list)
    #: A version that could not be read at all: (version, message).
    unreadable: list[tuple[int, str]] = field(default_factory=list)


def _fragment_key(fragment: Fragment) -> tuple:
    return (fragment.id, tuple(f.path for f in fragment.files), repr(fragment.deletion_file))


def _transaction_of(dataset: Dataset) -> Transaction | None:
    manifest_file = dataset.manifest_file
    name = manifest_file.manifest.transaction_file
    if name:
        try:
            return read_transaction_file(dataset.storage, name)
        except LanceFormatError:
            pass
    return manifest_file.transaction


def observe(uri: str, storage_options: Mapping[str, str] | None = None) -> Observations:
    """Read every version of the dataset at ``uri``."""
    storage = dataset_storage(uri, storage_options, writable=False)
    versions = sorted(list_versions(storage).manifests())
    rows_of: dict[tuple, list[Row]] = {}
    signature_of: dict[tuple, str] = {}
    previous: dict[int, tuple] = {}
    result = Observations([])
    datasets: dict[int, Dataset] = {}
    transactions: dict[int, Transaction | None] = {}
    for version in versions:
        try:
            dataset = Dataset.open(storage, version)
        except LanceFormatError as exc:
            result.unreadable.append((version, str(exc)))
            continue
        datasets[version] = dataset
        stable = dataset.uses_stable_row_ids
        current = {f.id: _fragment_key(f) for f in dataset.fragments}
        fragments = {f.id: f for f in dataset.fragments}
        added: list[Row] = []
        removed: list[Row] = []
        new_fragments = []
        for fragment_id, key in previous.items():
            if current.get(fragment_id) != key:
                removed.extend(rows_of[key])
        for fragment_id, key in current.items():
            if previous.get(fragment_id) == key:
                continue
            if key not in rows_of:
                rows_of[key], signature_of[key] = _read_fragment(dataset, fragments[fragment_id], stable)
            added.extend(rows_of[key])
            new_fragments.append((fragment_id, signature_of[key]))
        previous = current
        transaction = _transaction_of(dataset)
        transactions[version] = transaction
        stamp = dataset.manifest.timestamp
        result.versions.append(
            VersionObservation(
                version,
                transaction.operation_name if transaction is not None else None,
                transaction.read_version if transaction is not None else None,
                added,
                removed,
                new_fragments,
                token=transaction.properties.get(TOKEN_PROPERTY) if transaction is not None else None,
                timestamp=stamp[0] + stamp[1] / 1e9 if stamp is not None else None,
            )
        )
    result.conflicts = _conflicts(datasets, transactions)
    return result


def _read_fragment(dataset: Dataset, fragment: Fragment, stable: bool) -> tuple[list[Row], str]:
    """The visible rows of a fragment, and a signature of its content (the
    ids of every physical row, deleted or not)."""
    table = fragment_table(dataset, fragment, with_row_id=stable, include_deleted=True)
    ids = table.column("id").to_pylist()
    values = table.column("value").to_pylist() if "value" in table.column_names else [None] * len(ids)
    row_ids = table.column("_rowid").to_pylist() if stable else [None] * len(ids)
    deleted = set(dataset.deleted_offsets(fragment))
    rows = [
        (i, v, r) for offset, (i, v, r) in enumerate(zip(ids, values, row_ids, strict=True)) if offset not in deleted
    ]
    signature = hashlib.sha1(repr(ids).encode()).hexdigest()[:16]
    return rows, signature


def _newly_deleted(datasets: Mapping[int, Dataset], version: int, fragment_ids: set[int]) -> dict[int, frozenset[int]]:
    """Offsets version ``version`` deleted that the version before had not, per fragment."""
    now, before = datasets.get(version), datasets.get(version - 1)
    changes = {}
    for fragment_id in fragment_ids:
        deleted_now = _deleted(now, fragment_id)
        changes[fragment_id] = deleted_now - _deleted(before, fragment_id)
    return changes


def _deleted(dataset: Dataset | None, fragment_id: int) -> frozenset[int]:
    if dataset is None:
        return frozenset()
    for fragment in dataset.fragments:
        if fragment.id == fragment_id:
            return frozenset(dataset.deleted_offsets(fragment))
    return frozenset()


def _unmerged(dataset: Dataset | None, rows: RowChanges) -> tuple[int, frozenset[int]] | None:
    """A fragment whose deletions by the other version are missing from the
    rebased version's deletion mask (a rebase must keep them), and those offsets."""
    if dataset is None:
        return None
    present = {f.id for f in dataset.fragments}
    for fragment_id, theirs in sorted(rows.theirs.items()):
        if fragment_id not in present:
            continue
        missing = theirs - _deleted(dataset, fragment_id)
        if missing:
            return fragment_id, missing
    return None


def _conflicts(
    datasets: Mapping[int, Dataset], transactions: Mapping[int, Transaction | None]
) -> list[ConflictObservation]:
    """Each committed transaction against those committed between its read
    version and itself (the conflict rules of ``reference_impl.commit.conflicts``)."""
    found = []
    for version, mine in sorted(transactions.items()):
        if mine is None or mine.read_version is None or mine.read_version < 1:
            continue
        read = datasets.get(mine.read_version)
        for other in range(mine.read_version + 1, version):
            theirs = transactions.get(other)
            rows = None
            if (
                theirs is not None
                and isinstance(mine.operation, (Delete, Update))
                and isinstance(theirs.operation, (Delete, Update))
            ):
                shared = modified_fragment_ids(mine.operation) & modified_fragment_ids(theirs.operation)
                rows = RowChanges(
                    mine=_newly_deleted(datasets, version, shared), theirs=_newly_deleted(datasets, other, shared)
                )
            decision = decide(mine, theirs, read=read.manifest if read else None, rows=rows)
            if decision.outcome in (Outcome.RETRYABLE, Outcome.INCOMPATIBLE):
                committed = datasets.get(version)
                library = (
                    committed.manifest.writer_version.library if committed and committed.manifest.writer_version else ""
                )
                found.append(
                    ConflictObservation(
                        version, other, decision.outcome.value, decision.reason, decision.requirement_ids, library
                    )
                )
            elif decision.outcome is Outcome.REBASE and rows is not None:
                dropped = _unmerged(datasets.get(version), rows)
                if dropped:
                    fragment_id, offsets = dropped
                    found.append(
                        ConflictObservation(
                            version,
                            other,
                            "rebase not done",
                            f"{decision.reason}, but offsets {sorted(offsets)[:5]} of fragment {fragment_id} deleted "
                            f"by version {other} are not deleted in version {version}",
                        )
                    )
    return found


#: Rows named in a disagreement's detail, on each side.
DISAGREEMENT_ROWS = 5


def pylance_disagreements(
    uri: str, storage_options: Mapping[str, str] | None, observations: Observations
) -> list[tuple[int, str]]:
    """The versions where pylance reads other ``(id, value)`` rows than the
    reference reader did (``observations``), with the rows only one sees."""
    import lance  # lazy: only a cross-checked run needs pylance

    state: Counter = Counter()
    found = []
    for observed in observations.versions:
        for i, v, _ in observed.added:
            state[(i, v)] += 1
        for i, v, _ in observed.removed:
            state[(i, v)] -= 1
            if state[(i, v)] == 0:
                del state[(i, v)]
        try:
            table = lance.dataset(uri, version=observed.version, storage_options=dict(storage_options or {}) or None)
            table = table.to_table(columns=["id", "value"])
        except Exception as exc:  # pylance failing to read a version is a disagreement too
            found.append((observed.version, f"pylance cannot read it: {exc}"[:300]))
            continue
        theirs = Counter(zip(table.column("id").to_pylist(), table.column("value").to_pylist(), strict=True))
        if theirs != state:
            only_pylance = sorted(theirs - state)[:DISAGREEMENT_ROWS]
            only_reference = sorted(state - theirs)[:DISAGREEMENT_ROWS]
            found.append(
                (observed.version, f"only pylance sees {only_pylance}; only the reference sees {only_reference}")
            )
    return found
