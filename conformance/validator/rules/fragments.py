"""Rules on fragments (table format: fragments, max_fragment_id, physical rows)."""

from __future__ import annotations

import bisect
from collections import Counter

from reference_impl.transactions import Append, Merge, Overwrite, Restore, Update, read_transaction_file

from ..context import DatasetView, VersionView
from ..facts.fragment_checks import NewFragments, fragment_rule
from ..facts.text import listed, printable
from ..facts.transactions import operation_of
from ..registry import Finding, Severity, rule

U32_MAX = (1 << 32) - 1
#: Fragments named one by one before a rule sums up the rest.
SHOWN_FRAGMENTS = 20
DECREASE_REQUIREMENTS = ("fragment.max-id-never-decreases",)


def _ids(view: VersionView) -> list[int]:
    """The fragment ids in manifest order, listed once per version (four rules ask)."""
    return view.memo("fragments.ids", lambda: [fragment.id for fragment in view.manifest.fragments])


@rule(
    "fragment/id-unique",
    severity=Severity.ERROR,
    requirements=("fragment.id-unique",),
    summary="No two fragments of a version share an id",
)
def id_unique(view: VersionView):
    ids = _ids(view)
    if len(set(ids)) == len(ids):
        return  # no id repeated: the common case, told without a count per id
    repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
    if repeated:
        yield f"fragment ids used by more than one fragment: {listed(repeated)}", view.at("fragments")


@rule(
    "fragment/id-fits-u32",
    severity=Severity.ERROR,
    requirements=("fragment.id-fits-u32",),
    summary="Fragment ids fit in 32 bits (row addresses keep them in the upper half of a u64)",
)
def id_fits_u32(view: VersionView):
    ids = _ids(view)
    if max(ids, default=0) <= U32_MAX:
        return  # every id fits: the common case, told in one pass
    wide = sorted({i for i in ids if i > U32_MAX})
    if wide:
        yield f"fragment ids that do not fit in 32 bits: {listed(wide)}", view.at("fragments")


@rule(
    "fragment/max-id-covers",
    severity=Severity.ERROR,
    requirements=("fragment.max-id-covers-fragments",),
    summary="max_fragment_id is at least the id of every fragment of the version",
)
def max_id_covers(view: VersionView):
    ids = _ids(view)
    if not ids:
        return
    highest = max(ids)
    recorded = view.manifest.max_fragment_id
    if recorded is None and highest > 0:
        yield f"max_fragment_id is absent, but the version has fragments up to id {highest}", view.at("max_fragment_id")
    elif recorded is not None and highest > recorded:
        above = sorted(i for i in set(ids) if i > recorded)
        yield (
            f"max_fragment_id is {recorded}, but fragments have higher ids: {listed(above)}",
            view.at("max_fragment_id"),
        )


@rule(
    "fragment/max-id-absent",
    severity=Severity.INFO,
    requirements=("fragment.max-id-zero-for-first", "fragment.max-id-absent-without-fragments"),
    summary="max_fragment_id is recorded when fragment 0 exists (pylance 0.20 omits a zero)",
)
def max_id_absent(view: VersionView):
    ids = _ids(view)
    if ids and view.manifest.max_fragment_id is None and max(ids) == 0:
        yield (
            "max_fragment_id is absent although fragment 0 exists; it should be 0 (older writers do not store "
            "a zero, see docs/spec-discrepancies.md)",
            view.at("max_fragment_id"),
        )


def _sorted_versions(dataset: DatasetView) -> list[int]:
    # memo, not cached: a listing that cannot be read raises for every rule that asks.
    return dataset.memo(("fragments:sorted-versions",), lambda: sorted(dataset.manifest_paths()))


def _had_fragments_before(dataset: DatasetView, version: int) -> bool | None:
    """Whether any version before ``version`` has fragments: None when that
    cannot be known (history starts after version 1, or a manifest does not
    decode). Results are remembered, so a run stays linear in the versions."""
    memo: dict[int, bool | None] = dataset.memo(("fragments:had-fragments-before",), dict)
    versions = _sorted_versions(dataset)
    position = bisect.bisect_left(versions, version)
    walked = []
    answer = None
    for index in range(position - 1, -1, -1):
        earlier = versions[index]
        if earlier in memo:
            answer = memo[earlier]
            break
        walked.append(earlier)
        loaded = dataset.manifest_file(earlier)
        if not loaded.ok:
            answer = None
            break
        if loaded.value.manifest.fragments:
            answer = True
            break
    else:
        # Reached the oldest kept version without finding fragments.
        answer = False if versions and versions[0] == 1 else None
    # ``memo[v]`` means "v or a version before it had fragments".
    for earlier in walked:
        memo[earlier] = answer
    return answer


@rule(
    "fragment/max-id-without-fragments",
    severity=Severity.ERROR,
    requirements=("fragment.max-id-absent-without-fragments",),
    summary="max_fragment_id is unset while no fragment has ever existed",
)
def max_id_without_fragments(view: VersionView):
    manifest = view.manifest
    if manifest.fragments or manifest.max_fragment_id is None:
        return
    if _had_fragments_before(view.dataset, view.version) is False:
        yield (
            f"max_fragment_id is {manifest.max_fragment_id}, but neither this version nor any earlier one has a "
            "fragment",
            view.at("max_fragment_id"),
        )


def _is_restore(view: VersionView) -> bool:
    transaction = view.manifest_file.transaction
    name = view.manifest.transaction_file
    if transaction is None and name:
        try:
            loaded = view.dataset.cached(("txn", name), lambda: read_transaction_file(view.dataset.storage, name))
        except ValueError:  # a name that is no file name; the transaction rules report it
            return False
        transaction = loaded.value
    return transaction is not None and isinstance(transaction.operation, Restore)


@rule(
    "fragment/max-id-never-decreases",
    severity=Severity.ERROR,
    requirements=DECREASE_REQUIREMENTS,
    summary="max_fragment_id is not lower than the previous version's",
)
def max_id_never_decreases(view: VersionView):
    previous_version = view.version - 1
    if previous_version not in view.dataset.manifest_paths():
        return
    previous = view.dataset.manifest_file(previous_version)
    if not previous.ok:
        return
    # An absent value counts as 0: pylance 0.20 does not store a zero.
    before = previous.value.manifest.max_fragment_id or 0
    now = view.manifest.max_fragment_id or 0
    if now >= before:
        return
    message = f"max_fragment_id went down from {before} (version {previous_version}) to {now}"
    if _is_restore(view):
        yield Finding(
            "fragment/max-id-never-decreases",
            Severity.INFO,
            DECREASE_REQUIREMENTS,
            message + f" by a Restore, which took the restored version's value back (as {view.writer} does; "
            f"fragment ids above {now} can be handed out again, see docs/spec-discrepancies.md)",
            view.version,
            view.at("max_fragment_id"),
        )
    else:
        yield message + "; fragment ids could be reused", view.at("max_fragment_id")


@rule(
    "fragment/has-data-file",
    severity=Severity.ERROR,
    requirements=("fragment.has-data-file",),
    summary="Every fragment has at least one data file",
)
def has_data_file(view: VersionView):
    empty = [(i, f.id) for i, f in enumerate(view.manifest.fragments) if not f.files]
    for index, fragment_id in empty[:SHOWN_FRAGMENTS]:
        yield f"fragment {fragment_id} has no data file", view.at(f"fragments[{index}].files")
    if len(empty) > SHOWN_FRAGMENTS:
        yield f"{len(empty) - SHOWN_FRAGMENTS} more fragments have no data file", view.at("fragments")


@fragment_rule(
    "fragment/physical-rows",
    severity=Severity.ERROR,
    requirements=("fragment.files-share-rows", "fragment.physical-rows-include-deleted"),
    summary="Every data file of a fragment holds physical_rows rows, as its footer reports",
)
def _physical_rows(view: VersionView, batch: NewFragments):
    """Once per distinct fragment in a run (facts/fragment_checks.py)."""
    for k, fragment, detail, data_file, facts in batch.readable:
        rows = facts.num_rows
        if rows is not None and rows != fragment.physical_rows:
            yield (
                k,
                f"fragment {fragment.id}: physical_rows is {fragment.physical_rows}, but data file "
                f"'{printable(data_file.path)}' holds {rows} rows",
                detail,
                None,
            )


NEW_IDS_REQUIREMENTS = ("fragment.new-ids-above-max",)
#: Operations that add fragments with ids assigned at commit (a Rewrite uses
#: ids reserved beforehand: transaction/rewrite-ids-reserved).
_ADDING = (Append, Overwrite, Update, Merge)


@rule(
    "fragment/new-ids-above-max",
    severity=Severity.ERROR,
    requirements=NEW_IDS_REQUIREMENTS,
    summary="Fragments an Append, Overwrite, Update or Merge adds get ids above the previous version's "
    "max_fragment_id (pylance 0.20 restarts at 0 on Overwrite: info)",
)
def new_ids_above_max(view: VersionView):
    found = None
    for kind in _ADDING:
        found = operation_of(view, kind)
        if found is not None:
            break
    if found is None or found[3] is None:
        return
    transaction, _, current, previous = found
    operation = transaction.operation
    # Everything an Overwrite leaves is new, even under an id the previous
    # version also used; otherwise the new fragments are the ids v-1 lacks.
    if isinstance(operation, Overwrite):
        added = set(current.fragments)
    else:
        added = set(current.fragments) - set(previous.fragments)
    limit = previous.effective_max_fragment_id
    low = sorted(i for i in added if limit is not None and i <= limit)
    if not low:
        return
    message = (
        f"fragment(s) {listed(low, sort=True)} added by the {operation.NAME} are not above max_fragment_id {limit} of "
        "version "
        f"{previous.version}"
    )
    if isinstance(operation, Overwrite):
        yield Finding(
            "fragment/new-ids-above-max",
            Severity.INFO,
            NEW_IDS_REQUIREMENTS,
            message + f": the Overwrite numbered its fragments afresh, as {view.writer} does, so ids of earlier "
            "versions' fragments are handed out again (see docs/spec-discrepancies.md)",
            view.version,
            view.at("fragments"),
        )
    else:
        yield message + "; new fragments get ids counting up from it, never ids used before", view.at("fragments")
