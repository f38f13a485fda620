"""What the MINHASH_LSH rules (rules/index_minhash_lsh.py) check, against
upstream format/index/scalar/minhash_lsh.md; each function yields
``(message, location)`` pairs for its rule.

* The files (whole, every document): they decode as "Opening a Segment"
  says (:func:`file_problems`); ``bands.lance`` is sorted by band key then
  document (:func:`order_problems`); its page table holds the key of each
  page's last row (:func:`page_table_problems`); each document has one row
  per band whose key is the band key of its stored signature
  (:func:`band_key_problems`).
* The rows (those :func:`checked_rows` gives: a default run's sample, every
  covered fragment with ``--deep``): every covered row with tokens that is
  not deleted is one document, and no document names a row without tokens
  or no row of a checked fragment (:func:`row_problems`); each document's
  signature is the "Signature Procedure"'s for its row's text
  (:func:`signature_problems`) where the project defines the tokenizer
  exactly (:mod:`reference_impl.indices.fts_tokenizer`: ASCII text, the
  ``simple`` and ``whitespace`` tokenizers without stemming or stop words).
  Deleted rows (index.md, "Handling deleted and invalidated rows"): one
  deleted before the build may be missing, one deleted after is still
  there, and either way a document that is there holds the row's text.
* :func:`unchecked_notes`: what went unchecked, for the info rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np
import pyarrow as pa

from reference_impl.errors import LanceFormatError
from reference_impl.index_metadata import IndexMetadata
from reference_impl.indices.files import IndexFormatError
from reference_impl.indices.minhash_lsh import (
    BANDS_FILE,
    SIGNATURES_FILE,
    MinHashSegment,
    segment_of,
    text_tokens,
    tokens_undefined,
)
from reference_impl.indices.minhash_signature import BAND_SHIFT, SIGNATURE_VERSIONS, Signer, band_keys, sign_many
from reference_impl.indices.types import IndexType

from ..context import Failed, Loaded, Ok, VersionView
from ..facts.index_contents import (
    CoveredRows,
    checked_rows,
    covered_rows,
    key_positions,
    segment_directory_exists,
    segment_file,
    usable_segments,
)

#: Problems of one kind listed per segment before the rest are counted.
MAX_EXAMPLES = 5
#: What reading a covered fragment raises for a damaged data file (the data
#: file rules report it).
_DATA_FILE_ERRORS = (LanceFormatError, ValueError, IndexError, KeyError, pa.ArrowException)


def _listing(problems: list[str], total: int | None = None) -> str:
    total = len(problems) if total is None else total
    shown = "; ".join(problems[:MAX_EXAMPLES])
    return shown if total <= MAX_EXAMPLES else f"{shown}; and {total - MAX_EXAMPLES} more"


def _label(index: IndexMetadata) -> str:
    return f"MINHASH_LSH segment {index.name!r} ({index.uuid})"


def segments(view: VersionView) -> list[tuple[str, IndexMetadata]]:
    """``(location, index)`` of the MINHASH_LSH segments the reference reads
    whose directory exists (one without is the index/* rules')."""
    return [
        (view.at(f"index_section.indices[{position}]"), index)
        for position, index in usable_segments(view, IndexType.MINHASH_LSH)
        if segment_directory_exists(view, index)
    ]


def _decode(view: VersionView, index: IndexMetadata) -> Loaded[MinHashSegment]:
    signatures, bands = segment_file(view, index, SIGNATURES_FILE), segment_file(view, index, BANDS_FILE)
    if not signatures.ok:
        return signatures
    if not bands.ok:
        return bands
    try:
        return Ok(segment_of(index, signatures.value, bands.value))
    except LanceFormatError as exc:
        return Failed(exc)
    except (ValueError, pa.ArrowException) as exc:  # a column of the declared type that will not convert
        return Failed(IndexFormatError(signatures.value.path, f"does not decode: {exc}"))


def decoded(view: VersionView, index: IndexMetadata) -> Loaded[MinHashSegment]:
    """The segment's files decoded, once per run."""
    key = ("minhash-lsh-segment", index.uuid, index.details, tuple(f.path for f in index.files))
    return view.dataset.memo(key, _decode, view, index)


def _readable(view: VersionView) -> Iterator[tuple[str, IndexMetadata, MinHashSegment]]:
    for location, index in segments(view):
        loaded = decoded(view, index)
        if loaded.ok:
            yield location, index, loaded.value


# -- the files ---------------------------------------------------------------------------


def file_problems(view: VersionView) -> Iterator[tuple[str, str]]:
    for location, index in segments(view):
        loaded = decoded(view, index)
        if not loaded.ok:
            yield f"{_label(index)}: {loaded.error}", location


def order_problems(view: VersionView) -> Iterator[tuple[str, str]]:
    for location, index, segment in _readable(view):
        keys, docs = segment.bands.keys, segment.bands.doc_ids.astype(np.uint64)
        if len(keys) < 2:
            continue
        later = (keys[1:] > keys[:-1]) | ((keys[1:] == keys[:-1]) & (docs[1:] > docs[:-1]))
        wrong = np.flatnonzero(~later)
        if len(wrong):
            rows = [
                f"row {int(r) + 1} (key {int(keys[r + 1]):#x}, doc {int(docs[r + 1])}) does not follow row {int(r)} "
                f"(key {int(keys[r]):#x}, doc {int(docs[r])})"
                for r in wrong[:MAX_EXAMPLES]
            ]
            yield (
                f"{_label(index)}: {BANDS_FILE} is not sorted by band_key then doc_id: {_listing(rows, len(wrong))}",
                (location),
            )


def page_table_problems(view: VersionView) -> Iterator[tuple[str, str]]:
    for location, index, segment in _readable(view):
        bands = segment.bands
        lasts = np.minimum(np.arange(1, len(bands.page_table) + 1) * bands.page_rows, len(bands.keys)) - 1
        expected = bands.keys[lasts] if len(lasts) else np.zeros(0, np.uint64)
        wrong = np.flatnonzero(bands.page_table != expected)
        if len(wrong):
            pages = [
                f"page {int(p)}: {int(bands.page_table[p]):#x}, but its last row's key is {int(expected[p]):#x}"
                for p in wrong[:MAX_EXAMPLES]
            ]
            yield f"{_label(index)}: the page table of {BANDS_FILE} is wrong: {_listing(pages, len(wrong))}", location


def band_key_problems(view: VersionView) -> Iterator[tuple[str, str]]:
    for location, index, segment in _readable(view):
        details, bands = segment.details, segment.bands
        documents = len(segment.signatures.rows)
        expected = band_keys(segment.signatures.values, details.num_bands)
        # One cell per (document, band): the stored key, if exactly one row holds it.
        band_of = (bands.keys >> np.uint64(BAND_SHIFT)).astype(np.int64)
        problems: list[str] = []
        bad_band = np.flatnonzero(band_of >= details.num_bands)
        problems += [f"row {int(r)}'s key {int(bands.keys[r]):#x} names band {int(band_of[r])}" for r in bad_band]
        good = band_of < details.num_bands
        cell = bands.doc_ids[good].astype(np.int64) * details.num_bands + band_of[good]
        counts = np.bincount(cell, minlength=documents * details.num_bands)
        stored = np.zeros(documents * details.num_bands, dtype=np.uint64)
        stored[cell] = bands.keys[good]
        flat = expected.reshape(-1)
        for cell_number in np.flatnonzero(counts != 1)[:MAX_EXAMPLES]:
            doc, band = divmod(int(cell_number), details.num_bands)
            problems.append(f"document {doc} has {int(counts[cell_number])} rows in band {band}")
        wrong = np.flatnonzero((counts == 1) & (stored != flat))
        for cell_number in wrong[:MAX_EXAMPLES]:
            doc, band = divmod(int(cell_number), details.num_bands)
            problems.append(
                f"document {doc}'s band {band} key is {int(stored[cell_number]):#x}, but its signature gives "
                f"{int(flat[cell_number]):#x}"
            )
        total = len(bad_band) + int(np.count_nonzero(counts != 1)) + len(wrong)
        if total:
            yield (
                f"{_label(index)}: {total} band keys do not follow the stored signatures: {_listing(problems, total)}",
                (location),
            )


# -- the rows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Match:
    rows: CoveredRows
    #: Documents naming a row of a checked fragment, and the covered row each names (-1: none).
    documents: np.ndarray
    row_of_document: np.ndarray
    #: Documents per covered row.
    per_row: np.ndarray
    #: The tokens of each covered row (None: not defined exactly here).
    tokens: list[list[bytes] | None]


def _keyless_fragments(view: VersionView, index: IndexMetadata) -> frozenset[int]:
    """Fragments no data file of which stores the key field (their values
    read as nulls: the fragment rules judge that state)."""
    key = index.fields[0] if index.fields else None
    return frozenset(f.id for f in view.manifest.fragments if not any(key in d.fields for d in f.files))


def _rows(view: VersionView, index: IndexMetadata) -> CoveredRows | None:
    try:
        loaded = checked_rows(view, index)
    except _DATA_FILE_ERRORS:
        return None
    if not loaded.ok:
        return None
    rows = loaded.value
    text = pa.types.is_string(rows.values.type) or pa.types.is_large_string(rows.values.type)
    if len(rows.values) and not text:
        return None  # not text: unchecked_notes says so
    return rows


def _match(view: VersionView, index: IndexMetadata, segment: MinHashSegment, rows: CoveredRows) -> _Match:
    by_address = segment.rows_are_addresses or not view.reader.uses_stable_row_ids
    keys = rows.row_addresses if by_address else rows.row_ids
    skipped = np.asarray(sorted(_keyless_fragments(view, index)), dtype=np.int64)
    checked_row = ~np.isin((rows.row_addresses >> np.uint64(32)).astype(np.int64), skipped)
    named = segment.signatures.rows
    if by_address:
        fragments = [fragment for fragment in rows.fragment_ids if fragment not in set(skipped.tolist())]
        mine = np.flatnonzero(np.isin((named >> np.uint64(32)).astype(np.int64), np.asarray(fragments, np.int64)))
    else:
        mine = np.flatnonzero(np.isin(named, keys[checked_row]))
    row = key_positions(keys, named[mine])
    per_row = np.bincount(row[row >= 0], minlength=len(keys))
    details = segment.details
    texts = rows.values.to_pylist()
    tokens = [text_tokens(details, text) if ok else None for text, ok in zip(texts, checked_row, strict=True)]
    return _Match(rows, mine, row, per_row, tokens)


def _matched(view: VersionView) -> Iterator[tuple[str, IndexMetadata, MinHashSegment, _Match]]:
    """Each readable segment with its documents matched to its checked rows
    (nothing is matched where fragment ids repeat: an address names two rows)."""
    ids = [fragment.id for fragment in view.manifest.fragments]
    if len(set(ids)) != len(ids):
        return
    for location, index, segment in _readable(view):
        rows = _rows(view, index)
        if rows is None:
            continue
        match = view.memo(("minhash-lsh-match", index.uuid), partial(_match, view, index, segment, rows))
        yield location, index, segment, match


def _where(rows: CoveredRows, row: int) -> str:
    address = int(rows.row_addresses[row])
    return f"fragment {address >> 32} offset {address & 0xFFFFFFFF}"


def _without_tokens(value: object, tokens: list[bytes] | None) -> bool:
    """Whether a row certainly has no tokens: null, empty or whitespace
    only (for any tokenizer), or none from the tokenizer defined here."""
    if tokens is not None:
        return not tokens
    return value is None or (isinstance(value, str) and not value.strip())


def row_problems(view: VersionView) -> Iterator[tuple[str, str]]:
    for location, index, segment, match in _matched(view):
        rows, texts = match.rows, match.rows.values.to_pylist()
        empty = np.array([_without_tokens(t, k) for t, k in zip(texts, match.tokens, strict=True)], dtype=bool)
        has_tokens = np.array([bool(k) for k in match.tokens], dtype=bool)
        missing = np.flatnonzero((match.per_row == 0) & has_tokens & ~rows.deleted)
        repeated = np.flatnonzero(match.per_row > 1)
        tokenless = np.flatnonzero((match.per_row > 0) & empty)
        stray = match.documents[match.row_of_document < 0]
        named = segment.signatures.rows
        problems = [f"no document for the row at {_where(rows, int(r))}" for r in missing[:MAX_EXAMPLES]]
        problems += [f"{int(match.per_row[r])} documents for the row at {_where(rows, int(r))}" for r in repeated[:5]]
        problems += [
            f"a document for the row at {_where(rows, int(r))}, whose text {texts[r]!r} has no tokens"
            for r in tokenless[:MAX_EXAMPLES]
        ]
        problems += [f"document {int(d)} names no row (id {int(named[d])})" for d in stray[:MAX_EXAMPLES]]
        total = len(missing) + len(repeated) + len(tokenless) + len(stray)
        if total:
            yield (
                f"{_label(index)}: {len(missing)} covered rows with tokens missing, {len(repeated)} listed more than "
                f"once, {len(tokenless)} without tokens listed, {len(stray)} documents naming no covered row: "
                f"{_listing(problems, total)}",
                location,
            )


def _signable(segment: MinHashSegment) -> bool:
    return segment.details.signature_version in SIGNATURE_VERSIONS and tokens_undefined(segment.details) is None


def signature_problems(view: VersionView) -> Iterator[tuple[str, str]]:
    for location, index, segment, match in _matched(view):
        if not _signable(segment):
            continue
        named = match.row_of_document >= 0
        documents, rows = match.documents[named], match.row_of_document[named]
        keep = np.array([bool(match.tokens[r]) for r in rows], dtype=bool)
        documents, rows = documents[keep], rows[keep]
        if not len(documents):
            continue
        signer = Signer(segment.details.num_hashes, segment.details.shingle_size)
        computed, _ = sign_many(signer, [match.tokens[r] or [] for r in rows.tolist()])
        stored = segment.signatures.values[documents]
        wrong = np.flatnonzero((computed != stored).any(axis=1))
        if len(wrong):
            texts = match.rows.values
            problems = [
                f"document {int(documents[w])} (the row at {_where(match.rows, int(rows[w]))}, text "
                f"{texts[int(rows[w])].as_py()!r}) differs in {int((computed[w] != stored[w]).sum())} values"
                for w in wrong[:MAX_EXAMPLES]
            ]
            yield (
                f"{_label(index)}: {len(wrong)} signatures are not the signature procedure's for their row's text: "
                f"{_listing(problems, len(wrong))}",
                location,
            )


# -- what went unchecked -------------------------------------------------------------------


def unchecked_notes(view: VersionView) -> Iterator[tuple[str, str]]:
    for location, index, segment in _readable(view):
        notes = []
        why = tokens_undefined(segment.details)
        if why is not None:
            notes.append(f"signatures not recomputed: the reference does not tokenize {why}")
        elif segment.details.signature_version not in SIGNATURE_VERSIONS:
            notes.append(f"signatures not recomputed: signature_version {segment.details.signature_version}")
        try:
            covered, checked = covered_rows(view, index), checked_rows(view, index)
        except _DATA_FILE_ERRORS:
            covered = checked = None  # type: ignore[assignment]
        if covered is not None and checked is not None and covered.ok and checked.ok:
            rows = checked.value
            if not rows.complete:
                notes.append(
                    f"rows checked in fragments {list(rows.fragment_ids)} only (a sample; validate --deep checks "
                    "every covered fragment)"
                )
            remapped = sorted(set(covered.value.fragment_ids) - set(rows.fragment_ids))
            if remapped:
                notes.append(f"rows of fragments {remapped} not checked: their remap was deferred")
            if _rows(view, index) is None:
                notes.append(f"rows not checked: the indexed field is {rows.values.type}, not text")
            elif why is None:
                foreign = sum(1 for text in rows.values.to_pylist() if isinstance(text, str) and not text.isascii())
                if foreign:
                    notes.append(f"{foreign} rows of non-ASCII text not tokenized (their tokens are not defined here)")
        if notes:
            yield f"{_label(index)}: {'; '.join(notes)}", location
