"""The bodies of the BITMAP and LABEL_LIST rules (``rules/index_bitmap.py``,
whose docstring says what they check and why; scalar/bitmap.md and
label_list.md), loaded only for a version with a segment of either type
(:func:`..index_checks.checks`).

The two types share most rules: those bodies take the :class:`.bitmap_kinds.Kind`
they check. Each yields its rule's findings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.errors import LanceFormatError
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices import bitmap, label_list
from reference_impl.indices.bitmap import BitmapSegment, RowIdentifiers
from reference_impl.indices.types import IndexType, Usability, compatibility

from ..context import Loaded, VersionView, load
from ..facts.bitmap_contents import Discrepancy, Slot, compare, rows_in_several_keys
from ..facts.index_contents import CoveredRows, covered_rows, rewritten_fragments, segment_file, without_fragments
from ..facts.text import listed, plural, printable
from .bitmap_kinds import BITMAP, LABEL_LIST, Kind

_ROW_OFFSET_MASK = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class Decoded:
    """A segment's file as plain data (the label list's list-null set too)."""

    segment: BitmapSegment
    list_nulls: np.ndarray | None


@dataclass(frozen=True)
class Checked:
    """One segment at one version: what was compared and what differs."""

    discrepancies: list[Discrepancy]
    covered: CoveredRows
    #: Covered fragments left out because a deferred compaction rewrote them.
    rewritten: tuple[int, ...]
    #: The key type does not fit the column: no comparison was made.
    type_problem: str | None


def _segments(view: VersionView, kind: Kind) -> Iterator[tuple[int, IndexMetadata]]:
    for position, index in enumerate(view.manifest_file.indices or []):
        if IndexType.of(index) is kind.index_type:
            yield position, index


def _location(view: VersionView, index: IndexMetadata) -> str | None:
    try:
        return view.reader.index_file_location(index, bitmap.BITMAP_FILE).relpath
    except LanceFormatError:
        return None


def _decoded(view: VersionView, kind: Kind, index: IndexMetadata) -> Loaded[Decoded]:
    """The segment's file decoded, once per run (keyed by its location)."""
    contents = segment_file(view, index, bitmap.BITMAP_FILE)
    if not contents.ok:
        return contents
    raw = contents.value
    budget = _row_budget(view, raw)

    def decode() -> Decoded:
        if kind.labels:
            decoded = label_list.decode_label_list_file(raw, index.index_version, max_rows=budget)
            return Decoded(decoded.labels, decoded.list_nulls)
        identifiers = bitmap.identifiers_of(index.index_version, bitmap.ADDRESSES_FROM_VERSION)
        return Decoded(bitmap.decode_bitmap_file(raw, identifiers, max_rows=budget), None)

    return view.dataset.cached(("bitmap-segment", raw.path, index.index_version, kind.topic, budget), decode)


#: Row entries a stored byte can hold without run containers: a Roaring
#: bitmap container keeps 65,536 offsets in 8 KiB (pylance 14 and the
#: reference write no run containers).
ROWS_PER_STORED_BYTE = 8


def _row_budget(view: VersionView, raw) -> int:
    """How many row entries a segment's sets may expand to before they are
    refused (a few bytes of run containers can claim billions): what its
    bytes (its table's Arrow bytes, keys included) hold without run
    containers, four per row the version has, and a million besides."""
    stored = raw.table.nbytes + sum(len(buffer) for buffer in raw.global_buffers[1:])
    rows = sum(fragment.physical_rows for fragment in view.manifest.fragments)
    return ROWS_PER_STORED_BYTE * stored + 4 * rows + (1 << 20)


def _usable(view: VersionView, kind: Kind) -> Iterator[tuple[int, IndexMetadata, Decoded]]:
    """The segments of ``kind`` the reference reads whose file decodes."""
    for position, index in _segments(view, kind):
        if not compatibility(index).usable:
            continue
        decoded = _decoded(view, kind, index)
        if decoded.ok:
            yield position, index, decoded.value


def _key_type_problem(kind: Kind, keys: pa.Array, values: pa.Array) -> tuple[pa.Array | None, str | None]:
    """The keys cast to the column's type (a label list: the list's item
    type), or why they cannot be."""
    if not kind.labels:
        wanted = values.type
    elif pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
        wanted = values.type.value_type
    else:
        return None, f"a label list index is over a list column, and this one is {values.type}"
    if keys.type == wanted:
        return keys, None
    try:
        return keys.cast(wanted), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None, f"its keys are {keys.type}, which the column's values ({wanted}) cannot be compared with"


def _checked(view: VersionView, kind: Kind, index: IndexMetadata, decoded: Decoded) -> Loaded[Checked]:
    def check() -> Checked:
        covered = covered_rows(view, index)
        if not covered.ok:
            raise covered.error
        rows = covered.value
        # Stable row ids survive a compaction; row addresses (which row ids
        # are, without stable row ids) move, and the segment keeps the old ones.
        addresses = decoded.segment.identifiers is RowIdentifiers.ROW_ADDRESSES or not view.reader.uses_stable_row_ids
        rewritten = sorted(set(rows.fragment_ids) & rewritten_fragments(view)[1]) if addresses else []
        if rewritten:
            rows = without_fragments(rows, set(rewritten))
        if len(rows.values) == 0:  # nothing read to compare with (every covered fragment gone or left out)
            return Checked([], rows, tuple(rewritten), None)
        keys, problem = _key_type_problem(kind, decoded.segment.keys, rows.values)
        if keys is None:
            return Checked([], rows, tuple(rewritten), problem)
        segment = dataclasses.replace(decoded.segment, keys=keys)
        try:
            found = compare(segment, rows, labels=kind.labels, list_nulls=decoded.list_nulls)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            return Checked([], rows, tuple(rewritten), f"its keys cannot be matched with the column's values: {exc}")
        return Checked(found, rows, tuple(rewritten), None)

    return view.memo(("bitmap-checked", kind.topic, index.uuid), lambda: load(check))


def _described(found: list[Discrepancy], kind: Kind) -> str:
    def one(d: Discrepancy) -> str:
        where = {Slot.NULL: "the null set", Slot.LIST_NULL: "the list-null set"}.get(
            d.slot, f"the set of {kind.noun} {printable(repr(d.key))}"
        )
        if d.missing and d.slot is Slot.VALUE and d.key is None:
            return f"row {d.row} holds {printable(repr(d.value))}, which no {kind.noun} of the segment is"
        return f"row {d.row} ({printable(repr(d.value))}) {'is missing from' if d.missing else 'is in'} {where}"

    return listed([one(d) for d in found[:5]], total=len(found), sep="; ")


def _contents(view: VersionView, kind: Kind, slots: tuple[Slot, ...], what: str) -> Iterator:
    for _, index, decoded in _usable(view, kind):
        checked = _checked(view, kind, index, decoded)
        if not checked.ok:
            continue  # the rows do not read: the data rules report them
        found = [d for d in checked.value.discrepancies if d.slot in slots]
        if found:
            yield (
                f"segment {index.uuid} of index '{index.name}' does not hold {what}: "
                f"{plural(len(found), 'discrepancy', 'discrepancies')}: {_described(found, kind)}",
                _location(view, index),
            )


def rows_match_values(view: VersionView) -> Iterator:
    return _contents(view, BITMAP, (Slot.VALUE,), "the covered rows under their values")


def null_rows_match(view: VersionView) -> Iterator:
    return _contents(view, BITMAP, (Slot.NULL,), "the covered null rows in its null bitmap")


def rows_match_labels(view: VersionView) -> Iterator:
    return _contents(view, LABEL_LIST, (Slot.VALUE, Slot.NULL), "the covered rows under their labels")


def list_nulls_match(view: VersionView) -> Iterator:
    return _contents(view, LABEL_LIST, (Slot.LIST_NULL,), "the covered rows whose list is null in its list-null set")


def file_decodes(view: VersionView, kind: Kind) -> Iterator:
    for position, index in _segments(view, kind):
        if not compatibility(index).usable:
            continue
        decoded = _decoded(view, kind, index)
        if not decoded.ok:
            yield str(decoded.error), _location(view, index) or view.at(f"index_section.indices[{position}]")
            continue
        checked = _checked(view, kind, index, decoded.value)
        if checked.ok and checked.value.type_problem:
            yield (
                f"segment {index.uuid} of index '{index.name}': {checked.value.type_problem}",
                _location(view, index),
            )


def keys_unique(view: VersionView, kind: Kind) -> Iterator:
    for _, index, decoded in _usable(view, kind):
        keys = decoded.segment.keys
        counts = pc.value_counts(keys.drop_null())
        repeated = counts.filter(pc.greater(counts.field("counts"), 1)).field("values").to_pylist()
        if repeated or keys.null_count > 1:
            shown = [printable(repr(v)) for v in repeated] + (["null"] if keys.null_count > 1 else [])
            yield (
                f"segment {index.uuid} of index '{index.name}' stores {kind.noun}s more than once: {listed(shown)}",
                _location(view, index),
            )


def rows_exist(view: VersionView, kind: Kind) -> Iterator:
    for _, index, decoded in _usable(view, kind):
        stored = np.concatenate(
            [np.zeros(0, np.uint64), *decoded.segment.row_sets]
            + ([decoded.list_nulls] if decoded.list_nulls is not None else [])
        )
        bad = _nowhere(view, decoded.segment.identifiers, np.unique(stored))
        if len(bad):
            yield (
                f"segment {index.uuid} of index '{index.name}' names "
                f"{plural(len(bad), 'row')} that never existed: {listed(bad.tolist())}",
                _location(view, index),
            )


def _nowhere(view: VersionView, identifiers: RowIdentifiers, stored: np.ndarray) -> np.ndarray:
    """Stored rows naming no row the dataset has or had: a row address past
    its fragment's physical rows, or in a fragment id never assigned; a
    stable row id not yet assigned."""
    manifest = view.manifest
    if identifiers is RowIdentifiers.ROW_IDS and view.reader.uses_stable_row_ids:
        return stored[stored >= np.uint64(manifest.next_row_id)]
    fragment_ids = stored >> np.uint64(32)
    offsets = stored & _ROW_OFFSET_MASK
    rows_of = {fragment.id: fragment.physical_rows for fragment in manifest.fragments}
    ids = np.fromiter(rows_of, np.uint64, len(rows_of))
    limits = np.fromiter(rows_of.values(), np.uint64, len(rows_of))
    order = np.argsort(ids)
    ids, limits = ids[order], limits[order]
    where = np.searchsorted(ids, fragment_ids).clip(max=max(len(ids) - 1, 0))
    present = (ids[where] == fragment_ids) if len(ids) else np.zeros(len(stored), bool)
    past_end = present & (offsets >= (limits[where] if len(ids) else 0))
    highest = manifest.max_fragment_id
    never = ~present & (fragment_ids > np.uint64(highest)) if highest is not None else np.zeros(len(stored), bool)
    return stored[past_end | never]


def rows_in_one_key(view: VersionView, kind: Kind) -> Iterator:
    for _, index, decoded in _usable(view, kind):
        several = rows_in_several_keys(decoded.segment)
        if several:
            shown = [
                f"row {row} in {listed([printable(repr(k)) if k is not None else 'null' for k in keys])}"
                for row, keys in list(several.items())[:5]
            ]
            yield (
                f"segment {index.uuid} of index '{index.name}' puts {plural(len(several), 'row')} under "
                f"several keys, though a row has one value: {listed(shown, total=len(several), sep='; ')}",
                _location(view, index),
            )


def sampled(view: VersionView, kind: Kind) -> Iterator:
    for position, index in _segments(view, kind):
        usability = compatibility(index).usability
        if usability is Usability.UNKNOWN_VERSION:
            yield (
                f"segment {index.uuid} of index '{index.name}' has index_version {index.index_version}, newer "
                "than the reference reads: skipped, as readers skip it (index.md, Index Compatibility)",
                view.at(f"index_section.indices[{position}]"),
            )
            continue
        decoded = _decoded(view, kind, index) if usability is Usability.USABLE else None
        checked = _checked(view, kind, index, decoded.value) if decoded is not None and decoded.ok else None
        if checked is None or not checked.ok:
            continue
        unchecked = []
        if not checked.value.covered.complete:
            unchecked.append(
                f"only covered fragments {listed(checked.value.covered.fragment_ids)} were compared "
                "(a bounded sample; validate --deep compares them all)"
            )
        if checked.value.rewritten:
            unchecked.append(
                f"{plural(len(checked.value.rewritten), 'fragment')} ({listed(checked.value.rewritten)}) that a "
                "deferred compaction wrote went uncompared: the segment holds their rows under earlier addresses"
            )
        if unchecked:
            yield f"segment {index.uuid} of index '{index.name}': {'; '.join(unchecked)}", _location(view, index)
