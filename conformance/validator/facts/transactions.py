"""What the validator knows about the transaction that made each version
(transaction specification: transaction files, transaction types).

A version's transaction is read from its transaction file when that loads,
else from the copy embedded in the manifest (:func:`recorded_transaction`).
The rules that compare a version with the one before it see both through a
:class:`VersionState`, built once per run (:meth:`DatasetView.cached`).
"""

from __future__ import annotations

from dataclasses import dataclass

from reference_impl.fragments import Fragment
from reference_impl.index_metadata import IndexMetadata
from reference_impl.manifest import Manifest
from reference_impl.manifest_file import ManifestFile
from reference_impl.schema import Schema
from reference_impl.transactions import Clone, Rewrite, Transaction, read_transaction_file

from ..context import DatasetView, Loaded, VersionView
from .deletions import deletion_file_content


def transaction_file(view: VersionView) -> Loaded:
    """The transaction file ``view``'s manifest names, read once per run
    (its value is None when the manifest names none). Raises ValueError for
    a name that is no file name."""
    name = view.manifest.transaction_file
    manifest_file = view.manifest_file
    # The embedded copy, when there is one, spares decoding the file again
    # when both hold the same bytes (checks unchanged, see decode_transaction).
    embedded = None
    if manifest_file.transaction is not None and manifest_file.transaction_bytes is not None:
        embedded = (manifest_file.transaction_bytes, manifest_file.transaction)
    return view.dataset.cached(
        ("txn", name), lambda: read_transaction_file(view.dataset.storage, name, embedded=embedded)
    )


def recorded_transaction(view: VersionView) -> tuple[Transaction, str] | None:
    """The transaction of ``view`` and where it was read: the transaction
    file when it loads, else the embedded copy, else None."""
    name = view.manifest.transaction_file
    if name:
        try:
            loaded = transaction_file(view)
        except ValueError:  # a name that is no file name; transaction/file-decodes reports it
            loaded = None
        if loaded is not None and loaded.ok and loaded.value is not None:
            return loaded.value, f"_transactions/{name}"
    if view.manifest_file.transaction is not None:
        return view.manifest_file.transaction, view.at("transaction_section")
    return None


@dataclass
class VersionState:
    """The parts of one version's manifest the transaction rules compare."""

    version: int
    manifest: Manifest
    #: Fragments by id (with duplicate ids, the last one; other rules report
    #: duplicates).
    fragments: dict[int, Fragment]
    indices: list[IndexMetadata]

    @property
    def schema(self) -> Schema:
        return self.manifest.schema

    @property
    def effective_max_fragment_id(self) -> int | None:
        """max_fragment_id, or the highest fragment id when it is absent
        (pylance 0.20 omits a zero; docs/spec-discrepancies.md)."""
        if self.manifest.max_fragment_id is not None:
            return self.manifest.max_fragment_id
        return max(self.fragments) if self.fragments else None


def _summarise(version: int, manifest_file: ManifestFile) -> VersionState:
    manifest = manifest_file.manifest
    return VersionState(version, manifest, {f.id: f for f in manifest.fragments}, list(manifest_file.indices or []))


def version_state(dataset: DatasetView, version: int) -> VersionState | None:
    """The summary of ``version``, or None when it has no decodable manifest."""
    if version not in dataset.manifest_paths():
        return None
    loaded = dataset.manifest_file(version)
    if not loaded.ok:
        return None
    summary = dataset.cached(("transactions.state", version), lambda: _summarise(version, loaded.value))
    return summary.value if summary.ok else None


def operation_of(view: VersionView, kind: type):
    """(transaction, location, this version's state, previous state or None)
    when the version's operation is a ``kind``; None otherwise."""
    found = recorded_transaction(view)
    if found is None or not isinstance(found[0].operation, kind):
        return None
    current = version_state(view.dataset, view.version)
    if current is None:
        return None
    return found[0], found[1], current, version_state(view.dataset, view.version - 1)


def rebased(transaction: Transaction, version: int) -> bool:
    """Whether ``transaction`` was built on a version older than the one before ``version``."""
    return transaction.read_version != version - 1


def rewrite_groups(operation: Rewrite):
    """(old fragments, new fragments) per group, the legacy ungrouped form included."""
    groups = [(g.old_fragments, g.new_fragments) for g in operation.groups]
    if operation.old_fragments or operation.new_fragments:
        groups.append((operation.old_fragments, operation.new_fragments))
    return groups


def same_location(a: str, b: str) -> bool:
    """Two spellings of one base location (a trailing separator aside)."""
    return bool(a) and bool(b) and a.rstrip("/\\") == b.rstrip("/\\")


def clone_source_bases(manifest: Manifest, operation: Clone) -> set[int]:
    """Ids of the base paths of ``manifest`` that name the Clone's source."""
    return {b.id for b in manifest.base_paths if same_location(b.path, operation.ref_path)}


def live_rows(dataset: DatasetView, state: VersionState) -> int | None:
    """Visible rows of a version; None when a deletion count is unknown and
    its deletion file cannot be read (or is not a valid list of offsets)."""
    total = 0
    view = None
    for fragment in state.fragments.values():
        deleted = fragment.num_deleted_rows
        if fragment.deletion_file is not None and not deleted:
            # A zero count means "not recorded": count the file itself,
            # through the bounded reader the deletion rules share (the
            # offsets stay a bitmap; only its size is taken).
            view = view or dataset.version_view(state.version)
            if view is None:
                return None
            content = deletion_file_content(view, fragment, fragment.deletion_file)
            if content.file is None or content.file.problem_for(fragment.physical_rows) is not None:
                return None
            deleted = len(content.offsets)
        total += fragment.physical_rows - deleted
    return total


def version_operation(view: VersionView):
    """The operation of the transaction that created this version (the copy
    embedded in the manifest first, else the transaction file), or None when
    it is not recorded or does not decode."""
    embedded = view.manifest_file.transaction
    if embedded is not None:
        return embedded.operation
    name = view.manifest.transaction_file
    if not name:
        return None
    loaded = view.dataset.cached(("txn", name), lambda: read_transaction_file(view.dataset.storage, name))
    return loaded.value.operation if loaded.ok else None


def previous_version(view: VersionView) -> VersionView | None:
    """The view of the version before ``view`` (None for version 0 or when it
    has no usable manifest)."""
    if view.version <= 0:
        return None
    return view.dataset.version_view(view.version - 1)
