"""What the validator knows about stored row id and row version sequences
(row id & lineage specification; table format: ``DataFragment.row_id_sequence``).

Sequences are decoded by :mod:`reference_impl.row_ids`, whose decoders never
produce more values than the limit they are given: here the fragment's
``physical_rows``, itself capped at :data:`MAX_ROWS` (a larger fragment is not
expanded: its status is ``TOO_LARGE``). Each stored sequence is decoded once
per validation run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import Enum
from typing import Literal, Union

from reference_impl import feature_flags as flags
from reference_impl.errors import CorruptFileError, LanceFormatError
from reference_impl.fragments import ExternalFile, Fragment, LineageColumn
from reference_impl.row_ids import (
    DEFAULT_MAX_ROWS,
    decode_row_id_sequence,
    decode_version_sequence,
    row_id_segment_kinds,
)
from reference_impl.row_lineage import LINEAGE_COLUMNS

from ..context import VersionView

#: Fragments with more physical rows than this are not expanded.
MAX_ROWS = DEFAULT_MAX_ROWS
#: External sequences larger than this are not read.
MAX_SEQUENCE_BYTES = 1 << 28
SEQUENCES = {
    "row_id_sequence": "row id sequence",
    "created_at_version_sequence": "created-at version sequence",
    "last_updated_at_version_sequence": "last-updated-at version sequence",
}


class SequenceStatus(str, Enum):
    """What decoding one stored sequence of one fragment found."""

    #: One value per physical row (row ids: none repeated).
    OK = "ok"
    #: The external byte range cannot be read.
    EXTERNAL = "external"
    #: The bytes are not a valid message.
    DECODE = "decode"
    #: Not one value per physical row.
    COUNT = "count"
    #: A row id sequence repeats an id.
    DUPLICATE = "duplicate"
    #: Not expanded: the fragment or the external sequence is too large.
    TOO_LARGE = "too-large"
    #: A spilled sequence (column arm) whose hidden column cannot be found or
    #: read, or holds the wrong values (reported by the row lineage rules).
    COLUMN = "column"


@dataclass(frozen=True)
class DecodedSequence:
    """One stored sequence of one fragment, decoded: one value per physical row."""

    values: list[int]
    status: Literal[SequenceStatus.OK] = SequenceStatus.OK
    #: Literal, so that testing ``ok`` tells a type checker which of the two
    #: a :data:`Decoded` is (and that ``values`` is there).
    ok: Literal[True] = True
    message: str = ""


@dataclass(frozen=True)
class UndecodedSequence:
    """One stored sequence of one fragment that did not decode (``message``
    says why)."""

    status: SequenceStatus
    message: str
    ok: Literal[False] = False
    values: None = None


#: One stored sequence of one fragment, decoded (``values``) or not.
Decoded = Union[DecodedSequence, UndecodedSequence]


def _key(stored, fragment: Fragment) -> tuple:
    if isinstance(stored, ExternalFile):
        return ("external", stored.path, stored.offset, stored.size)
    if isinstance(stored, LineageColumn):
        # The same marker in every fragment: the values are in its files.
        return ("column", tuple((f.path, f.base_id, tuple(f.fields)) for f in fragment.files))
    return ("inline", hashlib.blake2b(bytes(stored), digest_size=16).digest())


def sequence(view: VersionView, fragment: Fragment, attr: str) -> Decoded | None:
    """The decoded sequence ``attr`` of ``fragment`` (see :data:`SEQUENCES`);
    None when the fragment does not store it."""
    stored = getattr(fragment, attr)
    if stored is None:
        return None
    key = ("rules.row_ids", attr, _key(stored, fragment), fragment.physical_rows)
    loaded = view.dataset.cached(key, lambda: _decode(view, fragment, attr, stored))
    if loaded.ok:
        return loaded.value
    return UndecodedSequence(SequenceStatus.DECODE, loaded.error.problem)


def _decode(view: VersionView, fragment: Fragment, attr: str, stored) -> Decoded:
    what = SEQUENCES[attr]
    context = f"fragment {fragment.id} {what}"
    if fragment.physical_rows > MAX_ROWS:
        return UndecodedSequence(
            SequenceStatus.TOO_LARGE, f"{fragment.physical_rows} physical rows is more than this validator expands"
        )
    if isinstance(stored, LineageColumn):
        return _read_column(view, fragment, attr, context)
    if isinstance(stored, ExternalFile):
        storage = view.dataset.storage
        if stored.size > MAX_SEQUENCE_BYTES:
            return UndecodedSequence(SequenceStatus.TOO_LARGE, f"the external {what} holds {stored.size} bytes")
        try:
            data = storage.read(stored.path, stored.offset, stored.size)
        except LanceFormatError as exc:
            return UndecodedSequence(SequenceStatus.EXTERNAL, exc.problem)
    else:
        data = bytes(stored)
    limit = fragment.physical_rows
    if attr == "row_id_sequence":
        try:
            row_id_segment_kinds(data, context)
        except CorruptFileError as exc:
            return UndecodedSequence(SequenceStatus.DECODE, exc.problem)
        try:
            values = decode_row_id_sequence(data, context, max_rows=limit)
        except CorruptFileError as exc:
            # The segments are valid (checked above): what is left is too
            # many values for the fragment, or a repeated id.
            status = SequenceStatus.DUPLICATE if "more than once" in exc.problem else SequenceStatus.COUNT
            return UndecodedSequence(status, exc.problem)
    else:
        try:
            values = decode_version_sequence(data, context, max_rows=limit)
        except CorruptFileError as exc:
            status = SequenceStatus.COUNT if "more than the limit" in exc.problem else SequenceStatus.DECODE
            return UndecodedSequence(status, exc.problem)
    if len(values) != fragment.physical_rows:
        return UndecodedSequence(
            SequenceStatus.COUNT,
            f"{what} holds {len(values)} values but the fragment has {fragment.physical_rows} physical rows",
        )
    return DecodedSequence(values)


def _read_column(view: VersionView, fragment: Fragment, attr: str, context: str) -> Decoded:
    """A spilled sequence: the values of its hidden column, read with the
    reference reader (reference_impl.row_lineage)."""
    from reference_impl.scan import lineage_column  # lazy: reads the data file (pyarrow), only for a spilled sequence

    try:
        values = lineage_column(view.reader, fragment, LINEAGE_COLUMNS[attr], context)
    except LanceFormatError as exc:
        return UndecodedSequence(SequenceStatus.COLUMN, exc.problem)
    if attr == "row_id_sequence" and len(set(values)) != len(values):
        repeated = len(values) - len(set(values))
        return UndecodedSequence(SequenceStatus.DUPLICATE, f"{SEQUENCES[attr]} repeats {repeated} row ids")
    return DecodedSequence(values)


def sequence_location(view: VersionView, index: int, fragment: Fragment, attr: str) -> str:
    """A finding location for sequence ``attr`` of the fragment at ``index``."""
    stored = getattr(fragment, attr)
    if isinstance(stored, ExternalFile):
        return f"{stored.path}#[{stored.offset}, +{stored.size})"
    return view.at(f"fragments[{index}].{attr}")


def stable_row_ids_enabled(view: VersionView) -> bool:
    """Whether the version sets the stable row ids feature flag."""
    return bool(view.manifest.reader_feature_flags & flags.STABLE_ROW_IDS)


def storing_fragments(view: VersionView) -> list[tuple[int, Fragment]]:
    """(index, fragment) for the fragments that store any sequence, listed
    once per version: the rules here look at no other fragment (sequence()
    is None for them), and most tables store none."""
    return view.memo(
        "row_ids.storing",
        lambda: [
            (index, fragment)
            for index, fragment in enumerate(view.manifest.fragments)
            if fragment.row_id_sequence is not None
            or fragment.last_updated_at_version_sequence is not None
            or fragment.created_at_version_sequence is not None
        ],
    )


def row_id_sequences(view: VersionView) -> list[tuple[int, Fragment, Decoded]]:
    """(index, fragment, Decoded) for every fragment storing row ids (once per version)."""

    def compute() -> list[tuple[int, Fragment, Decoded]]:
        found = []
        for index, fragment in storing_fragments(view):
            decoded = sequence(view, fragment, "row_id_sequence")
            if decoded is not None:  # None: the fragment stores no row ids
                found.append((index, fragment, decoded))
        return found

    return view.memo("row_ids.row_ids", compute)
