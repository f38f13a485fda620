"""What BITMAP and LABEL_LIST segments hold, compared with the rows they
cover (upstream format/index/scalar/bitmap.md and label_list.md; the rules
are ``rules/index_bitmap.py``).

Both index types store, per key, the set of rows holding it; a label list's
keys are the items of the list column (a row holds each item of its list),
its rows whose list is null kept in a set of their own. :func:`compare`
works on pairs (row, slot): a slot is a key (equal keys share the slot of
the first), the null key (:data:`NULL_SLOT`), the list-null set
(:data:`LIST_NULL_SLOT`), or :data:`NO_KEY` for a value no key holds. It
compares the pairs the segment stores with the pairs the covered rows call
for:

* a row the version has not deleted must be stored in exactly its slots;
* a deleted row may be missing (index.md: a segment may leave out rows
  deleted before it was built; it keeps the ones deleted after, which
  readers filter), but where stored, only in the slots of its value;
* with stable row ids one row id may have two covered incarnations (an
  update deletes the old row and writes it anew under the same id): the
  live one decides.

Only rows of covered fragments read (:func:`..index_contents.covered_rows`)
are compared; stored rows outside them (rows of fragments deleted since, or
removed from the segment's bitmap by an update in place) are not.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.indices.bitmap import BitmapSegment, RowIdentifiers

from .index_contents import CoveredRows

#: Slots after the keys' own (``len(keys) + offset``).
NULL_SLOT, LIST_NULL_SLOT, NO_KEY = 0, 1, 2


class Slot(enum.Enum):
    """What kind of slot a discrepancy is in: which rule reports it."""

    VALUE = "value"
    NULL = "null"
    LIST_NULL = "list null"


@dataclass(frozen=True)
class Discrepancy:
    """A row stored where its value does not put it (``extra``), or missing
    from where it does (``missing``)."""

    row: int
    slot: Slot
    #: The key (or None for the null key and the list-null set) concerned.
    key: object
    missing: bool
    #: The row's value, for the message.
    value: object


@dataclass(frozen=True)
class Stored:
    """A segment's contents as (row, slot) pairs, slots canonical."""

    rows: np.ndarray
    slots: np.ndarray
    #: Key of each slot below ``len(keys)`` (a Python value).
    keys: list
    #: How many key slots there are (the special slots follow).
    key_count: int


def stored_pairs(segment: BitmapSegment, list_nulls: np.ndarray | None = None) -> Stored:
    """The segment's (row, slot) pairs; equal keys share one slot."""
    keys = segment.keys
    count = len(keys)
    # The first position of each key among the keys: duplicates fold into it.
    canonical = pc.index_in(keys, value_set=keys, skip_nulls=True).to_numpy(zero_copy_only=False)
    null = keys.is_null().to_numpy(zero_copy_only=False)
    slots = [
        np.full(len(rows), count + NULL_SLOT if null[k] else int(canonical[k]), dtype=np.int64)
        for k, rows in enumerate(segment.row_sets)
    ]
    rows = list(segment.row_sets)
    if list_nulls is not None:
        rows.append(list_nulls)
        slots.append(np.full(len(list_nulls), count + LIST_NULL_SLOT, dtype=np.int64))
    empty_rows, empty_slots = np.zeros(0, np.uint64), np.zeros(0, np.int64)
    return Stored(
        np.concatenate([empty_rows, *rows]).astype(np.uint64),
        np.concatenate([empty_slots, *slots]),
        keys.to_pylist(),
        count,
    )


def expected_pairs(stored: Stored, keys: pa.Array, values: pa.Array, labels: bool) -> tuple[np.ndarray, np.ndarray]:
    """(covered row index, slot) pairs the covered ``values`` call for: a
    value's key slot (a label list: each item's), the null key for a null
    value (a null item), the list-null slot for a null list."""
    count = stored.key_count
    if labels:
        items = pc.list_flatten(values)
        parents = pc.list_parent_indices(values).to_numpy(zero_copy_only=False).astype(np.int64)
        slot_of_item = _slots_of(keys, items, count)
        null_lists = np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))
        rows = np.concatenate([parents, null_lists])
        slots = np.concatenate([slot_of_item, np.full(len(null_lists), count + LIST_NULL_SLOT, np.int64)])
        return rows, slots
    return np.arange(len(values), dtype=np.int64), _slots_of(keys, values, count)


def _slots_of(keys: pa.Array, values: pa.Array, count: int) -> np.ndarray:
    found = pc.index_in(values, value_set=keys, skip_nulls=True)
    slots = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    slots[slots < 0] = count + NO_KEY
    slots[values.is_null().to_numpy(zero_copy_only=False)] = count + NULL_SLOT
    return slots


def compare(
    segment: BitmapSegment, covered: CoveredRows, *, labels: bool, list_nulls: np.ndarray | None = None
) -> list[Discrepancy]:
    """Every discrepancy between the segment and the covered rows read (see
    the module docstring), ascending by row."""
    stored = stored_pairs(segment, list_nulls)
    idents = covered.row_addresses if segment.identifiers is RowIdentifiers.ROW_ADDRESSES else covered.row_ids
    idents = np.asarray(idents, dtype=np.uint64)
    if len(idents) == 0:
        return []
    values = covered.values
    if labels and pa.types.is_list(values.type):
        values = values.cast(pa.large_list(values.type.value_type))
    unique = np.unique(idents)
    dense = np.searchsorted(unique, idents)
    live = np.zeros(len(unique), dtype=bool)
    live[dense[~covered.deleted]] = True
    # A deleted incarnation of a row id that is live elsewhere calls for nothing.
    wanted_row = ~covered.deleted | ~live[dense]
    row_index, slots = expected_pairs(stored, segment.keys, values, labels)
    keep = wanted_row[row_index]
    if labels and list_nulls is None:  # a file recording no list-null set (label_list.py) calls for none
        keep &= slots != stored.key_count + LIST_NULL_SLOT
    row_index, slots = row_index[keep], slots[keep]
    width = stored.key_count + 3
    expected = np.unique(dense[row_index] * width + slots)
    inside = np.isin(stored.rows, unique)
    stored_codes = np.unique(np.searchsorted(unique, stored.rows[inside]) * width + stored.slots[inside])
    extra = np.setdiff1d(stored_codes, expected, assume_unique=True)
    missing = np.setdiff1d(expected, stored_codes, assume_unique=True)
    missing = missing[live[missing // width]]  # a deleted row may be left out
    value_of = _first_value_of(dense, values, len(unique))
    out = [_discrepancy(code, width, stored, unique, value_of, False) for code in extra]
    out += [_discrepancy(code, width, stored, unique, value_of, True) for code in missing]
    return sorted(out, key=lambda d: (d.row, d.missing))


def _first_value_of(dense: np.ndarray, values: pa.Array, count: int):
    """For a dense row number, its value (the live incarnation's when there
    are two), computed only for the rows a message names."""
    position = np.full(count, -1, dtype=np.int64)
    position[dense[::-1]] = np.arange(len(dense))[::-1]

    def value(row: int):
        return values[int(position[row])].as_py()

    return value


def _discrepancy(code: int, width: int, stored: Stored, unique: np.ndarray, value_of, missing: bool) -> Discrepancy:
    row, slot = divmod(int(code), width)
    count = stored.key_count
    kind = {count + NULL_SLOT: Slot.NULL, count + LIST_NULL_SLOT: Slot.LIST_NULL}.get(slot, Slot.VALUE)
    key = stored.keys[slot] if slot < count else None
    return Discrepancy(int(unique[row]), kind, key, missing, value_of(row))


def rows_in_several_keys(segment: BitmapSegment) -> dict[int, list]:
    """Rows (any, covered or not) that two different keys' sets hold, with
    those keys (None for the null key)."""
    stored = stored_pairs(segment)
    pairs = np.unique(np.stack([stored.rows, stored.slots.astype(np.uint64)], axis=1), axis=0)
    rows, counts = np.unique(pairs[:, 0], return_counts=True)
    several = rows[counts > 1]
    out: dict[int, list] = {}
    for row, slot in pairs[np.isin(pairs[:, 0], several)]:
        out.setdefault(int(row), []).append(stored.keys[int(slot)] if slot < stored.key_count else None)
    return out
