"""Rules on stable row ids and row version sequences (row id & lineage
specification; table format: ``DataFragment.row_id_sequence``).

Sequences are decoded by :mod:`reference_impl.row_ids`, whose decoders never
produce more values than the limit they are given: here the fragment's
``physical_rows``, itself capped at
:data:`~conformance.validator.facts.row_ids.MAX_ROWS` (a larger fragment is
reported by ``row-id/unchecked`` rather than expanded). Cross-fragment checks
keep the ids in 64-bit Roaring bitmaps, not Python sets.

pylance keeps a row's id when it updates the row: the deleted original and the
rewritten copy share the id, as the row id page requires from revision
upstream-2026-11-29 on (row-id.kept-on-update). Uniqueness is therefore
required among *visible* rows. Under the earlier revisions, whose page gave an
updated row a new id (row-id.new-id-on-update, a should), an id shared with a
deleted row is reported as an info by ``row-id/kept-on-update``, a rule those
revisions alone run.

Sequences spilled to hidden columns, the external arms reserved by the newest
page and the reserved names are checked in :mod:`.row_lineage`.

The history rules (``never-reused``, ``sequential-assignment``,
``stable-across-moves``, ``new-row-versions``) compare version ``v`` with
``v - 1`` through the operation recorded for ``v``, like the transaction
rules. Only fragments that are new or changed in ``v`` can hold ids ``v``
assigned, so those are the ones expanded; ``v - 1`` contributes one bitmap of
all its ids, built once per run.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyroaring import BitMap64

from reference_impl.fragments import ExternalFile, Fragment, LineageColumn
from reference_impl.newer_operations import ReserveRowIds
from reference_impl.transactions import Append, Clone, Operation, Overwrite, Restore, Rewrite, Update

from ...requirements import requirement
from ..context import VersionView
from ..facts.deletions import deletion_content
from ..facts.row_ids import (
    SEQUENCES,
    Decoded,
    SequenceStatus,
    row_id_sequences,
    sequence,
    sequence_location,
    stable_row_ids_enabled,
    storing_fragments,
)
from ..facts.text import listed
from ..facts.transactions import recorded_transaction, rewrite_groups
from ..registry import Finding, Severity, rule

#: Sequences below this many bytes belong inline in the fragment, larger ones
#: in an external file (table.proto ``DataFragment.row_id_sequence``: "about 200 KB").
INLINE_LIMIT = 200 * 1024


@rule(
    "row-id/external-range-in-file",
    severity=Severity.ERROR,
    requirements=("row-id.external-range-in-file",),
    summary="An external row id or version sequence names a file under the root and a byte range inside it",
)
def external_range_in_file(view: VersionView):
    for index, fragment in storing_fragments(view):
        for attr, what in SEQUENCES.items():
            decoded = sequence(view, fragment, attr)
            if decoded is not None and decoded.status is SequenceStatus.EXTERNAL:
                yield (
                    f"fragment {fragment.id}: the external {what} cannot be read: {decoded.message}",
                    sequence_location(view, index, fragment, attr),
                )


@rule(
    "row-id/sequence-decodes",
    severity=Severity.ERROR,
    requirements=(
        "row-id.sequence-decodes",
        "row-id.range-segment",
        "row-id.holes-segment",
        "row-id.bitmap-segment",
        "row-id.sorted-array-sorted",
        "row-id.encoded-array-widths",
    ),
    summary="Each row id sequence decodes as a RowIdSequence of well-formed segments",
)
def sequence_decodes(view: VersionView):
    for index, fragment, decoded in row_id_sequences(view):
        if decoded.status is SequenceStatus.DECODE:
            yield (
                f"fragment {fragment.id}: {decoded.message}",
                sequence_location(view, index, fragment, "row_id_sequence"),
            )


@rule(
    "row-id/one-per-row",
    severity=Severity.ERROR,
    requirements=("row-id.one-per-row",),
    summary="A fragment's row id sequence has exactly one id per physical row",
)
def one_per_row(view: VersionView):
    for index, fragment, decoded in row_id_sequences(view):
        if decoded.status is SequenceStatus.COUNT:
            yield (
                f"fragment {fragment.id}: {decoded.message}",
                sequence_location(view, index, fragment, "row_id_sequence"),
            )


def _visible(view: VersionView, fragment: Fragment, ids: list[int]) -> tuple[list[int], list[int]] | None:
    """(ids of visible rows, ids of deleted rows); None when the deletion
    file cannot be read (its own rules report why)."""
    content = deletion_content(view, fragment)
    if content is None:
        return ids, []
    if not content.ok:
        return None
    deleted = content.offsets
    visible = [row_id for offset, row_id in enumerate(ids) if offset not in deleted]
    gone = [row_id for offset, row_id in enumerate(ids) if offset in deleted]
    return visible, gone


@rule(
    "row-id/unique",
    severity=Severity.ERROR,
    requirements=("row-id.unique",),
    summary="No two visible rows of a version share a row id (nor two rows of one fragment)",
)
def unique(view: VersionView):
    seen = BitMap64()
    for index, fragment, decoded in row_id_sequences(view):
        if decoded.status is SequenceStatus.DUPLICATE:
            yield (
                f"fragment {fragment.id}: {decoded.message}",
                sequence_location(view, index, fragment, "row_id_sequence"),
            )
            continue
        if not decoded.ok:
            continue
        split = _visible(view, fragment, decoded.values)
        if split is None:
            continue
        mine = BitMap64(split[0])
        shared = seen & mine
        if shared:
            yield (
                f"fragment {fragment.id}: {len(shared)} visible rows have ids that visible rows of earlier "
                f"fragments also have ({listed(shared)})",
                sequence_location(view, index, fragment, "row_id_sequence"),
            )
        seen |= mine


@rule(
    "row-id/kept-on-update",
    severity=Severity.INFO,
    requirements=("row-id.new-id-on-update",),
    summary="An updated row gets a new id, so a deleted row's id is not carried by another row (pylance keeps ids "
    "through updates, as the newest revision requires)",
)
def kept_on_update(view: VersionView):
    """The seeds' rule on updates: run only under the revisions in which
    row-id.new-id-on-update is in force (seeds, upstream-2026-11); from
    upstream-2026-11-29 on keeping the id is what the page requires."""
    visible, deleted = BitMap64(), BitMap64()
    for _, fragment, decoded in row_id_sequences(view):
        if not decoded.ok:
            continue
        split = _visible(view, fragment, decoded.values)
        if split is None:
            continue
        visible |= BitMap64(split[0])
        deleted |= BitMap64(split[1])
    shared = visible & deleted
    if shared:
        yield (
            f"{len(shared)} row ids of deleted rows are carried by visible rows ({listed(shared)}): the rows were "
            f"updated keeping their ids, as {view.writer} does, where format revision {view.dataset.spec_revision} "
            "gives an updated row a new id (upstream-2026-11-29 keeps it; see docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


@rule(
    "row-id/below-next-row-id",
    severity=Severity.ERROR,
    requirements=("row-id.next-row-id-above-all",),
    summary="With stable row ids, every row id is below next_row_id",
)
def below_next_row_id(view: VersionView):
    if not stable_row_ids_enabled(view):
        return
    bound = view.manifest.next_row_id
    for index, fragment, decoded in row_id_sequences(view):
        if decoded.ok and decoded.values:
            largest = max(decoded.values)
            if largest >= bound:
                over = sum(1 for value in decoded.values if value >= bound)
                yield (
                    f"fragment {fragment.id}: {over} row ids (the largest {largest}) are not below next_row_id {bound}",
                    sequence_location(view, index, fragment, "row_id_sequence"),
                )


@rule(
    "row-id/next-row-id-zero",
    severity=Severity.ERROR,
    requirements=("row-id.next-row-id-zero-means-empty",),
    summary="With stable row ids, next_row_id 0 means the table has never had a row",
)
def next_row_id_zero(view: VersionView):
    manifest = view.manifest
    if stable_row_ids_enabled(view) and manifest.next_row_id == 0:
        rows = sum(max(0, f.physical_rows) for f in manifest.fragments)
        if rows:
            yield f"next_row_id is 0, yet the fragments hold {rows} physical rows", view.at("next_row_id")


@rule(
    "row-id/next-row-id-without-flag",
    severity=Severity.WARNING,
    requirements=("row-id.next-row-id-needs-flag",),
    summary="next_row_id is left at 0 when stable row ids are off (it means nothing then)",
)
def next_row_id_without_flag(view: VersionView):
    if not stable_row_ids_enabled(view) and view.manifest.next_row_id:
        yield (
            f"next_row_id is {view.manifest.next_row_id} but stable row ids (flag 2) are off, so it means nothing",
            view.at("next_row_id"),
        )


@rule(
    "row-id/version-sequences-cover-rows",
    severity=Severity.ERROR,
    requirements=("row-id.version-sequences-cover-rows",),
    summary="Created-at and last-updated-at sequences decode and give one version per physical row",
)
def version_sequences_cover_rows(view: VersionView):
    for index, fragment in storing_fragments(view):
        for attr in ("created_at_version_sequence", "last_updated_at_version_sequence"):
            decoded = sequence(view, fragment, attr)
            if decoded is not None and decoded.status in (SequenceStatus.DECODE, SequenceStatus.COUNT):
                yield f"fragment {fragment.id}: {decoded.message}", sequence_location(view, index, fragment, attr)


@rule(
    "row-id/versions-ordered",
    severity=Severity.ERROR,
    requirements=("row-id.versions-ordered",),
    summary="Per row, created-at <= last-updated-at <= the manifest's version",
)
def versions_ordered(view: VersionView):
    for index, fragment in storing_fragments(view):
        created = sequence(view, fragment, "created_at_version_sequence")
        updated = sequence(view, fragment, "last_updated_at_version_sequence")
        for attr, decoded in (("created_at_version_sequence", created), ("last_updated_at_version_sequence", updated)):
            if decoded is not None and decoded.ok and decoded.values:
                latest = max(decoded.values)
                if latest > view.version:
                    yield (
                        f"fragment {fragment.id}: {SEQUENCES[attr]} names version {latest}, later than this "
                        f"version {view.version}",
                        sequence_location(view, index, fragment, attr),
                    )
        if created is not None and updated is not None and created.ok and updated.ok:
            earlier = [i for i, (c, u) in enumerate(zip(created.values, updated.values, strict=True)) if u < c]
            if earlier:
                yield (
                    f"fragment {fragment.id}: {len(earlier)} rows (offsets {listed(earlier)}) were last updated before "
                    "they were created",
                    sequence_location(view, index, fragment, "last_updated_at_version_sequence"),
                )


@rule(
    "row-id/unchecked",
    severity=Severity.INFO,
    requirements=("row-id.one-per-row", "row-id.version-sequences-cover-rows"),
    summary="Sequences of fragments too large for this validator to expand are reported, not expanded",
)
def unchecked(view: VersionView):
    for index, fragment in storing_fragments(view):
        for attr, what in SEQUENCES.items():
            decoded = sequence(view, fragment, attr)
            if decoded is not None and decoded.status is SequenceStatus.TOO_LARGE:
                yield (
                    f"fragment {fragment.id}: {what} not checked: {decoded.message}",
                    sequence_location(view, index, fragment, attr),
                )


# -- history: version v against v - 1 ---------------------------------------------------


@dataclass
class _AllIds:
    """Every row id of one version's fragments (deleted rows included)."""

    ids: BitMap64
    #: False when some fragment's sequence is absent or does not decode.
    complete: bool


def _all_ids(view: VersionView) -> _AllIds:
    def compute() -> _AllIds:
        found, decoded_fragments = BitMap64(), 0
        for _, _, decoded in row_id_sequences(view):
            if decoded.ok:
                found.update(decoded.values)
                decoded_fragments += 1
        return _AllIds(found, decoded_fragments == len(view.manifest.fragments))

    # memo, not cached: decoding problems end up in `complete`, nothing raises.
    return view.dataset.memo(("rules.row_ids:all", view.version, view.manifest_path), compute)


@dataclass
class _Step:
    """Version ``v`` (stable row ids on) and what it is compared with."""

    view: VersionView
    previous: VersionView
    #: The recorded operation, None when the version records none.
    operation: Operation | None
    #: (position, fragment, decoded ids) of the fragments that are new in v or
    #: differ from v - 1's fragment of the same id.
    changed: list[tuple[int, Fragment, Decoded]]


def _step(view: VersionView) -> _Step | None:
    if not stable_row_ids_enabled(view) or view.version <= 0:
        return None
    previous = view.dataset.version_view(view.version - 1)
    if previous is None or not stable_row_ids_enabled(previous):
        return None
    found = recorded_transaction(view)
    before = {f.id: f for f in previous.manifest.fragments}
    changed = [
        (index, fragment, decoded)
        for index, fragment, decoded in row_id_sequences(view)
        if before.get(fragment.id) != fragment
    ]
    return _Step(view, previous, found[0].operation if found else None, changed)


@rule(
    "row-id/never-reused",
    severity=Severity.ERROR,
    requirements=("row-id.never-reused",),
    summary="next_row_id never goes down; rows an Append or Overwrite writes get fresh ids, and no version gives "
    "a row an id below next_row_id that the version before did not hold",
)
def never_reused(view: VersionView):
    step = _step(view)
    if step is None:
        return
    before, now = step.previous.manifest.next_row_id, view.manifest.next_row_id
    if now < before:
        yield (
            f"next_row_id went down from {before} (version {step.previous.version}) to {now}: ids from {now} on "
            "would be handed out again",
            view.at("next_row_id"),
        )
    # A Restore brings back rows of an earlier version with their ids; a
    # version that records no operation might be one.
    if step.operation is None or isinstance(step.operation, (Restore, Clone)):
        return
    writes_new_rows = isinstance(step.operation, (Append, Overwrite))
    earlier = {f.id for f in step.previous.manifest.fragments}
    held = _all_ids(step.previous)
    for index, fragment, decoded in step.changed:
        if not decoded.ok:
            continue
        old = BitMap64(value for value in decoded.values if value < before)
        if writes_new_rows and (fragment.id not in earlier or isinstance(step.operation, Overwrite)):
            # Every row of an Append or Overwrite is new: none may carry an
            # id handed out before.
            if old:
                yield (
                    f"fragment {fragment.id}: {len(old)} of the rows the {step.operation.NAME} wrote carry ids below "
                    f"next_row_id {before} of version {step.previous.version} ({listed(old)}): ids handed out "
                    "before were given to new rows",
                    sequence_location(view, index, fragment, "row_id_sequence"),
                )
            continue
        revived = old - held.ids if held.complete else BitMap64()
        if revived:
            yield (
                f"fragment {fragment.id}: {len(revived)} rows carry ids below next_row_id {before} of version "
                f"{step.previous.version} that no row of that version had ({listed(revived)}): retired ids were "
                "given to other rows",
                sequence_location(view, index, fragment, "row_id_sequence"),
            )


@rule(
    "row-id/sequential-assignment",
    severity=Severity.ERROR,
    requirements=("row-id.sequential-assignment",),
    summary="The ids a version assigns are exactly the previous next_row_id up to its own next_row_id, each once",
)
def sequential_assignment(view: VersionView):
    step = _step(view)
    # A ReserveRowIds moves next_row_id past ids no row takes (transaction
    # page, "ReserveRowIds"); transaction/reserve-row-ids checks that version.
    if step is None or isinstance(step.operation, ReserveRowIds):
        return
    changed_ids = [decoded.values for _, _, decoded in step.changed if decoded.ok]
    if len(changed_ids) != len(step.changed):
        return  # a sequence that does not decode: its own rules report it
    start, end = step.previous.manifest.next_row_id, view.manifest.next_row_id
    if end < start:
        return  # row-id/never-reused reports it
    assigned, count = BitMap64(), 0
    for ids in changed_ids:
        fresh = [value for value in ids if value >= start]
        count += len(fresh)
        assigned.update(fresh)
    expected = BitMap64()
    expected.add_range(start, end)
    if assigned == expected and count == len(expected):
        return
    problems = []
    if count != len(assigned):
        problems.append(f"{count - len(assigned)} of them repeat an id")
    missing, beyond = expected - assigned, assigned - expected
    if missing:
        problems.append(f"ids {listed(missing)} between them are given to no row")
    if beyond:
        problems.append(f"ids {listed(beyond)} lie at or above next_row_id")
    yield (
        f"next_row_id went from {start} (version {step.previous.version}) to {end}, so the new rows should carry "
        f"ids {start} to {end - 1} in turn; {count} rows carry ids from {start} on, and " + "; ".join(problems),
        view.at("fragments"),
    )


def _visible_ids(view: VersionView, fragments) -> BitMap64 | None:
    """Row ids of the visible rows of ``fragments``; None when one cannot be read."""
    found = BitMap64()
    for fragment in fragments:
        decoded = sequence(view, fragment, "row_id_sequence")
        if decoded is None or not decoded.ok:
            return None
        split = _visible(view, fragment, decoded.values)
        if split is None:
            return None
        found.update(split[0])
    return found


@rule(
    "row-id/stable-across-moves",
    severity=Severity.ERROR,
    requirements=("row-id.stable-across-moves",),
    summary="A Rewrite's new fragments carry exactly the ids of the visible rows it moved",
)
def stable_across_moves(view: VersionView):
    step = _step(view)
    if step is None or not isinstance(step.operation, Rewrite):
        return
    before = {f.id: f for f in step.previous.manifest.fragments}
    now = {f.id: f for f in view.manifest.fragments}
    for position, (old, new) in enumerate(rewrite_groups(step.operation)):
        old_ids = {f.id for f in old}
        new_ids = {f.id for f in new}
        if not old_ids <= set(before) or not new_ids <= set(now):
            continue  # transaction/rewrite and its siblings report missing fragments
        moved = _visible_ids(step.previous, [before[i] for i in sorted(old_ids)])
        kept = _visible_ids(view, [now[i] for i in sorted(new_ids)])
        if moved is None or kept is None or moved == kept:
            continue
        lost, gained = moved - kept, kept - moved
        details = []
        if lost:
            details.append(f"{len(lost)} moved rows lost their ids ({listed(lost)})")
        if gained:
            details.append(f"{len(gained)} ids appear that no moved row had ({listed(gained)})")
        yield (
            f"rewrite group {position} (fragments {sorted(old_ids)} of version {step.previous.version} into "
            f"{sorted(new_ids)}): " + "; ".join(details),
            view.at("fragments"),
        )


#: The seeds' statement (an updated copy takes the version as created-at)
#: and its successor from upstream-2026-11-29 (it keeps the row's created-at).
NEW_ROW_VERSIONS = ("row-id.new-row-versions", "row-id.update-keeps-created-at")


@rule(
    "row-id/new-row-versions",
    severity=Severity.ERROR,
    requirements=NEW_ROW_VERSIONS,
    summary="Rows an Append, Overwrite or Update writes have created-at and last-updated-at equal to the version, "
    "an updated copy last-updated-at only (before upstream-2026-11-29 a kept created-at is an info)",
)
def new_row_versions(view: VersionView):
    """Under the revisions in which row-id.new-row-versions is in force an
    updated copy that keeps its created-at version is reported as an info;
    from upstream-2026-11-29 on that is what the page requires."""
    creation_kept_is_news = requirement(NEW_ROW_VERSIONS[0]).in_force_under(view.dataset.spec_revision)
    found = recorded_transaction(view)
    operation = found[0].operation if found else None
    if not isinstance(operation, (Append, Overwrite, Update)):
        return
    previous = view.dataset.version_view(view.version - 1) if view.version > 0 else None
    if previous is None and not isinstance(operation, Overwrite):
        return
    before = (
        {} if previous is None or isinstance(operation, Overwrite) else {f.id: f for f in previous.manifest.fragments}
    )
    start = previous.manifest.next_row_id if previous is not None and stable_row_ids_enabled(previous) else 0
    version = view.version
    for index, fragment in storing_fragments(view):
        if fragment.id in before:
            continue  # not written by this version (an updated fragment keeps its rows)
        created = sequence(view, fragment, "created_at_version_sequence")
        updated = sequence(view, fragment, "last_updated_at_version_sequence")
        if created is None or updated is None or not created.ok or not updated.ok:
            continue
        stored_ids = sequence(view, fragment, "row_id_sequence")
        ids = stored_ids.values if stored_ids is not None and stored_ids.ok else None
        wrong_new, stale_update, kept_creation = [], [], []
        for offset, (c, u) in enumerate(zip(created.values, updated.values, strict=True)):
            # Every row of an Append or Overwrite is new; in an Update, a row
            # under an id the previous version assigned is an updated copy.
            copy = isinstance(operation, Update) and (ids is None or ids[offset] < start)
            if not copy and (c != version or u != version):
                wrong_new.append(offset)
            elif copy and u != version:
                stale_update.append(offset)
            elif copy and c != version and ids is not None and creation_kept_is_news:
                kept_creation.append(offset)
        where = sequence_location(view, index, fragment, "created_at_version_sequence")
        if wrong_new:
            yield (
                f"fragment {fragment.id}: {len(wrong_new)} rows the {operation.NAME} created (offsets "
                f"{listed(wrong_new)}) do not have created-at and last-updated-at version {version}",
                where,
            )
        if stale_update:
            yield (
                f"fragment {fragment.id}: {len(stale_update)} rows the Update rewrote (offsets {listed(stale_update)}) "
                f"do not have last-updated-at version {version}",
                sequence_location(view, index, fragment, "last_updated_at_version_sequence"),
            )
        if kept_creation:
            yield Finding(
                "row-id/new-row-versions",
                Severity.INFO,
                NEW_ROW_VERSIONS,
                f"fragment {fragment.id}: {len(kept_creation)} rows the Update rewrote (offsets "
                f"{listed(kept_creation)}) "
                f"keep their created-at version instead of taking {version}, as {view.writer} does (see "
                "docs/spec-discrepancies.md)",
                version,
                where,
            )


# -- inline or external -------------------------------------------------------------------


@rule(
    "row-id/inline-when-small",
    severity=Severity.WARNING,
    requirements=("row-id.inline-when-small",),
    summary=f"Row id and version sequences under {INLINE_LIMIT // 1024} KB are inline, larger ones external",
)
def inline_when_small(view: VersionView):
    for index, fragment in storing_fragments(view):
        for attr, what in SEQUENCES.items():
            stored = getattr(fragment, attr)
            if stored is None:
                continue
            if isinstance(stored, LineageColumn):
                continue  # spilled to a hidden column: its size is the column's (row_lineage rules)
            if isinstance(stored, ExternalFile):
                if stored.size < INLINE_LIMIT:
                    yield (
                        f"fragment {fragment.id}: the {what} is kept in an external file though it is only "
                        f"{stored.size} bytes; sequences under {INLINE_LIMIT // 1024} KB belong inline",
                        sequence_location(view, index, fragment, attr),
                    )
            elif len(stored) >= INLINE_LIMIT:
                yield (
                    f"fragment {fragment.id}: the {what} is {len(stored)} bytes inline; sequences of "
                    f"{INLINE_LIMIT // 1024} KB and more belong in an external file",
                    sequence_location(view, index, fragment, attr),
                )
