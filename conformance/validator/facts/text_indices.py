"""The text index segments of a version (INVERTED, NGRAM, JSON; upstream
format/index/scalar/fts.md, ngram.md, json.md), read once per run, and the
covered rows they are compared with (:mod:`.index_contents`).

:func:`segments` lists a version's segments of one type with what the rules
need to know before looking inside: whether the reference reads the type
and version (index.md, "Index Compatibility"), and the decoded segment or
the reason it was not decoded (a file that is not what the page says, or a
layout the reference skips).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.files import IndexFormatError
from reference_impl.indices.inverted import UnreadLayout
from reference_impl.indices.types import IndexType, compatibility

from ..context import VersionView
from .index_contents import CoveredRows, checked_rows, rewritten_fragments, segment_directory_exists

S = TypeVar("S")
T = TypeVar("T")

#: Findings of one kind reported per segment before the rest are counted.
SHOWN_PER_SEGMENT = 5


@dataclass(frozen=True)
class Segment(Generic[S]):
    """One segment of a version, with its decoded contents or why there are none."""

    position: int
    index: IndexMetadata
    #: The decoded segment (None: see ``skipped`` or ``error``).
    value: S | None
    #: Why the reference does not read it (an unknown version or layout).
    skipped: str | None
    #: Why it did not decode (a file not holding what its page says).
    error: IndexFormatError | None


def _decode(read: Callable, dataset, index: IndexMetadata):
    try:
        return read(dataset, index)
    except UnreadLayout as exc:
        return exc
    except IndexFormatError:
        raise
    except (ValueError, IndexError, struct.error, OverflowError, KeyError, TypeError) as exc:
        # Decoders check what they read; anything else a hostile file still
        # provokes is reported as the file not decoding, never a traceback.
        raise IndexFormatError(f"index {index.uuid}", f"does not decode: {type(exc).__name__}: {exc}") from None


def segments(view: VersionView, index_type: IndexType, read: Callable[..., S]) -> list[Segment[S]]:
    """The version's segments of ``index_type``, each decoded once per run."""
    found: list[Segment[S]] = []
    for position, index in enumerate(view.manifest_file.indices or []):
        compat = compatibility(index)
        if compat.index_type is not index_type or not segment_directory_exists(view, index):
            continue
        if not compat.usable:
            why = compat.usability.value
            if index.index_version is not None:
                why = f"{why} {index.index_version}"
            found.append(Segment(position, index, None, why, None))
            continue
        key = ("index-text-segment", str(view.dataset.storage.root), index.uuid)
        loaded = view.dataset.cached(key, _decode, read, view.reader, index)
        if not loaded.ok:
            error = loaded.error
            if not isinstance(error, IndexFormatError):
                error = IndexFormatError(getattr(error, "path", index.uuid), str(error))
            found.append(Segment(position, index, None, None, error))
        elif isinstance(loaded.value, UnreadLayout):
            found.append(Segment(position, index, None, f"a layout not read here: {loaded.value.what}", None))
        else:
            found.append(Segment(position, index, loaded.value, None, None))
    return found


@dataclass(frozen=True)
class RowLookup:
    """Covered rows by what an index stores for them."""

    rows: CoveredRows
    #: stored value -> position in ``rows``
    by_key: dict[int, int]
    #: Whether the keys are row addresses (the fragment is known from each).
    addresses: bool


def row_lookup(view: VersionView, index: IndexMetadata, addresses: bool) -> RowLookup | None:
    """The covered rows keyed by row address (``addresses``) or by what
    :attr:`CoveredRows.row_ids` holds; None when they did not load (the
    manifest rules report why)."""

    def build() -> RowLookup | None:
        loaded = checked_rows(view, index)
        if not loaded.ok:
            return None
        rows = loaded.value
        keys = rows.row_addresses if addresses else rows.row_ids
        return RowLookup(rows, {int(key): number for number, key in enumerate(keys.tolist())}, addresses)

    return view.memo(("index-text-rows", index.uuid, addresses), build)


def outside_coverage(view: VersionView, index: IndexMetadata, addresses: np.ndarray, allowed_gone=()) -> list[int]:
    """Row addresses that name no row of a fragment ``index`` covers: a
    fragment outside its bitmap, or an offset past the fragment's rows.
    Rows of covered fragments the version no longer has (and of
    ``allowed_gone``) are dropped by readers, and rows of fragments a
    compaction with deferred remap read are translated by them, so neither
    is outside."""
    try:
        covered = set(index.fragment_ids() or [])
    except ValueError:
        return []
    rows_of = {fragment.id: fragment.physical_rows for fragment in view.manifest.fragments}
    remapped, _ = rewritten_fragments(view)
    bad = []
    for address in np.unique(addresses).tolist():
        fragment_id, offset = address >> 32, address & 0xFFFFFFFF
        if fragment_id in allowed_gone or fragment_id in remapped:
            continue
        if fragment_id not in covered:
            bad.append(address)
        elif fragment_id in rows_of and rows_of[fragment_id] is not None and offset >= rows_of[fragment_id]:
            bad.append(address)
    return bad


def address_text(address: int) -> str:
    return f"{address >> 32}:{address & 0xFFFFFFFF}"


def shown(items: list[T], describe: Callable[[T], str]) -> str:
    """The first few items described, and how many more there are."""
    text = ", ".join(describe(item) for item in items[:SHOWN_PER_SEGMENT])
    if len(items) > SHOWN_PER_SEGMENT:
        text += f" and {len(items) - SHOWN_PER_SEGMENT} more"
    return text
