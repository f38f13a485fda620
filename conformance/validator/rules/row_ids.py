"""Rules on stable row ids and row version sequences (row id & lineage
specification; table format: ``DataFragment.row_id_sequence``).

Sequences are decoded by :mod:`reference_impl.row_ids`, whose decoders never
produce more values than the limit they are given: here the fragment's
``physical_rows``, itself capped at :data:`MAX_ROWS` (a larger fragment is
reported by ``row-id/unchecked`` rather than expanded). Cross-fragment checks
keep the ids in 64-bit Roaring bitmaps, not Python sets.

pylance keeps a row's id when it updates the row: the deleted original and the
rewritten copy share the id (docs/spec-discrepancies.md). Uniqueness is
therefore required among *visible* rows; an id shared with a deleted row is
reported as an info.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from pyroaring import BitMap64

from reference_impl import feature_flags as flags
from reference_impl.errors import CorruptFileError, LanceFormatError
from reference_impl.fragments import ExternalFile, Fragment
from reference_impl.row_ids import (
    DEFAULT_MAX_ROWS,
    decode_row_id_sequence,
    decode_version_sequence,
    row_id_segment_kinds,
)

from ..context import VersionView
from ..registry import Severity, rule
from .deletions import deletion_content

#: Fragments with more physical rows than this are not expanded.
MAX_ROWS = DEFAULT_MAX_ROWS
#: External sequences larger than this are not read.
MAX_SEQUENCE_BYTES = 1 << 28

SEQUENCES = {
    "row_id_sequence": "row id sequence",
    "created_at_version_sequence": "created-at version sequence",
    "last_updated_at_version_sequence": "last-updated-at version sequence",
}


@dataclass
class Decoded:
    """One stored sequence of one fragment, decoded or not.

    ``status``: ``ok``; ``external`` (the external byte range cannot be read);
    ``decode`` (the bytes are not a valid message); ``count`` (not one value
    per physical row); ``duplicate`` (a row id sequence repeats an id);
    ``too-large`` (not expanded).
    """

    status: str
    message: str = ""
    values: list[int] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _key(stored) -> tuple:
    if isinstance(stored, ExternalFile):
        return ("external", stored.path, stored.offset, stored.size)
    return ("inline", hashlib.blake2b(bytes(stored), digest_size=16).digest())


def sequence(view: VersionView, fragment: Fragment, attr: str) -> Decoded | None:
    """The decoded sequence ``attr`` of ``fragment`` (see :data:`SEQUENCES`);
    None when the fragment does not store it."""
    stored = getattr(fragment, attr)
    if stored is None:
        return None
    key = ("rules.row_ids", attr, _key(stored), fragment.physical_rows)
    loaded = view.dataset.cached(key, lambda: _decode(view, fragment, attr, stored))
    if loaded.ok:
        return loaded.value
    return Decoded("decode", loaded.error.problem)


def _decode(view: VersionView, fragment: Fragment, attr: str, stored) -> Decoded:
    what = SEQUENCES[attr]
    context = f"fragment {fragment.id} {what}"
    if fragment.physical_rows > MAX_ROWS:
        return Decoded("too-large", f"{fragment.physical_rows} physical rows is more than this validator expands")
    if isinstance(stored, ExternalFile):
        storage = view.dataset.storage
        if stored.size > MAX_SEQUENCE_BYTES:
            return Decoded("too-large", f"the external {what} holds {stored.size} bytes")
        try:
            data = storage.read(stored.path, stored.offset, stored.size)
        except LanceFormatError as exc:
            return Decoded("external", exc.problem)
    else:
        data = bytes(stored)
    limit = fragment.physical_rows
    if attr == "row_id_sequence":
        try:
            row_id_segment_kinds(data, context)
        except CorruptFileError as exc:
            return Decoded("decode", exc.problem)
        try:
            values = decode_row_id_sequence(data, context, max_rows=limit)
        except CorruptFileError as exc:
            # The segments are valid (checked above): what is left is too
            # many values for the fragment, or a repeated id.
            return Decoded("duplicate" if "more than once" in exc.problem else "count", exc.problem)
    else:
        try:
            values = decode_version_sequence(data, context, max_rows=limit)
        except CorruptFileError as exc:
            return Decoded("count" if "more than the limit" in exc.problem else "decode", exc.problem)
    if len(values) != fragment.physical_rows:
        return Decoded(
            "count", f"{what} holds {len(values)} values but the fragment has {fragment.physical_rows} physical rows"
        )
    return Decoded("ok", values=values)


def _where(view: VersionView, index: int, fragment: Fragment, attr: str) -> str:
    stored = getattr(fragment, attr)
    if isinstance(stored, ExternalFile):
        return f"{stored.path}#[{stored.offset}, +{stored.size})"
    return view.at(f"fragments[{index}].{attr}")


def _enabled(view: VersionView) -> bool:
    return bool(view.manifest.reader_feature_flags & flags.STABLE_ROW_IDS)


def _row_ids(view: VersionView):
    """(index, fragment, Decoded) for every fragment storing row ids."""
    for index, fragment in enumerate(view.manifest.fragments):
        decoded = sequence(view, fragment, "row_id_sequence")
        if decoded is not None:
            yield index, fragment, decoded


@rule(
    "row-id/external-range-in-file",
    severity=Severity.ERROR,
    requirements=("row-id.external-range-in-file",),
    summary="An external row id or version sequence names a file under the root and a byte range inside it",
)
def external_range_in_file(view: VersionView):
    for index, fragment in enumerate(view.manifest.fragments):
        for attr, what in SEQUENCES.items():
            decoded = sequence(view, fragment, attr)
            if decoded is not None and decoded.status == "external":
                yield f"fragment {fragment.id}: the external {what} cannot be read: {decoded.message}", _where(
                    view, index, fragment, attr
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
    for index, fragment, decoded in _row_ids(view):
        if decoded.status == "decode":
            yield f"fragment {fragment.id}: {decoded.message}", _where(view, index, fragment, "row_id_sequence")


@rule(
    "row-id/one-per-row",
    severity=Severity.ERROR,
    requirements=("row-id.one-per-row",),
    summary="A fragment's row id sequence has exactly one id per physical row",
)
def one_per_row(view: VersionView):
    for index, fragment, decoded in _row_ids(view):
        if decoded.status == "count":
            yield f"fragment {fragment.id}: {decoded.message}", _where(view, index, fragment, "row_id_sequence")


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


def _shown(ids: BitMap64, limit: int = 5) -> str:
    values = []
    for value in ids:
        values.append(str(value))
        if len(values) == limit:
            break
    return ", ".join(values) + (" ..." if len(ids) > limit else "")


@rule(
    "row-id/unique",
    severity=Severity.ERROR,
    requirements=("row-id.unique",),
    summary="No two visible rows of a version share a row id (nor two rows of one fragment)",
)
def unique(view: VersionView):
    seen = BitMap64()
    for index, fragment, decoded in _row_ids(view):
        if decoded.status == "duplicate":
            yield f"fragment {fragment.id}: {decoded.message}", _where(view, index, fragment, "row_id_sequence")
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
                f"fragments also have ({_shown(shared)})",
                _where(view, index, fragment, "row_id_sequence"),
            )
        seen |= mine


@rule(
    "row-id/kept-on-update",
    severity=Severity.INFO,
    requirements=("row-id.new-id-on-update", "row-id.unique"),
    summary="A deleted row's id is not carried by another row (pylance keeps ids through updates)",
)
def kept_on_update(view: VersionView):
    visible, deleted = BitMap64(), BitMap64()
    for _, fragment, decoded in _row_ids(view):
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
            f"{len(shared)} row ids of deleted rows are carried by visible rows ({_shown(shared)}): the rows were "
            "updated keeping their ids, as pylance does (see docs/spec-discrepancies.md)",
            view.at("fragments"),
        )


@rule(
    "row-id/below-next-row-id",
    severity=Severity.ERROR,
    requirements=("row-id.next-row-id-above-all",),
    summary="With stable row ids, every row id is below next_row_id",
)
def below_next_row_id(view: VersionView):
    if not _enabled(view):
        return
    bound = view.manifest.next_row_id
    for index, fragment, decoded in _row_ids(view):
        if decoded.ok and decoded.values:
            largest = max(decoded.values)
            if largest >= bound:
                over = sum(1 for value in decoded.values if value >= bound)
                yield (
                    f"fragment {fragment.id}: {over} row ids (the largest {largest}) are not below next_row_id {bound}",
                    _where(view, index, fragment, "row_id_sequence"),
                )


@rule(
    "row-id/next-row-id-zero",
    severity=Severity.ERROR,
    requirements=("row-id.next-row-id-zero-means-empty",),
    summary="With stable row ids, next_row_id 0 means the table has never had a row",
)
def next_row_id_zero(view: VersionView):
    manifest = view.manifest
    if _enabled(view) and manifest.next_row_id == 0:
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
    if not _enabled(view) and view.manifest.next_row_id:
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
    for index, fragment in enumerate(view.manifest.fragments):
        for attr in ("created_at_version_sequence", "last_updated_at_version_sequence"):
            decoded = sequence(view, fragment, attr)
            if decoded is not None and decoded.status in ("decode", "count"):
                yield f"fragment {fragment.id}: {decoded.message}", _where(view, index, fragment, attr)


@rule(
    "row-id/versions-ordered",
    severity=Severity.ERROR,
    requirements=("row-id.versions-ordered",),
    summary="Per row, created-at <= last-updated-at <= the manifest's version",
)
def versions_ordered(view: VersionView):
    for index, fragment in enumerate(view.manifest.fragments):
        created = sequence(view, fragment, "created_at_version_sequence")
        updated = sequence(view, fragment, "last_updated_at_version_sequence")
        for attr, decoded in (("created_at_version_sequence", created), ("last_updated_at_version_sequence", updated)):
            if decoded is not None and decoded.ok and decoded.values:
                latest = max(decoded.values)
                if latest > view.version:
                    yield (
                        f"fragment {fragment.id}: {SEQUENCES[attr]} names version {latest}, later than this "
                        f"version {view.version}",
                        _where(view, index, fragment, attr),
                    )
        if created is not None and updated is not None and created.ok and updated.ok:
            earlier = [i for i, (c, u) in enumerate(zip(created.values, updated.values)) if u < c]
            if earlier:
                yield (
                    f"fragment {fragment.id}: {len(earlier)} rows (offsets {earlier[:5]}) were last updated before "
                    "they were created",
                    _where(view, index, fragment, "last_updated_at_version_sequence"),
                )


@rule(
    "row-id/unchecked",
    severity=Severity.INFO,
    requirements=("row-id.one-per-row", "row-id.version-sequences-cover-rows"),
    summary="Sequences of fragments too large for this validator to expand are reported, not expanded",
)
def unchecked(view: VersionView):
    for index, fragment in enumerate(view.manifest.fragments):
        for attr, what in SEQUENCES.items():
            decoded = sequence(view, fragment, attr)
            if decoded is not None and decoded.status == "too-large":
                yield (
                    f"fragment {fragment.id}: {what} not checked: {decoded.message}",
                    _where(view, index, fragment, attr),
                )
