"""The bodies of the text index rules (``rules/index_text.py``, whose
docstring says what they check and why), loaded only for a version with an
INVERTED, NGRAM or JSON segment (:func:`..index_checks.checks`).

Each public function here is one rule's body by the same name: it yields
the rule's ``(message, location)`` pairs.
"""

from __future__ import annotations

from collections import Counter
from functools import partial

import numpy as np
import pyarrow as pa

from reference_impl.indices import fts_tokenizer
from reference_impl.indices.inverted import InvertedSegment, read_inverted
from reference_impl.indices.json_index import JsonDetails, JsonDetailsError, path_keys, read_json_details, value_at
from reference_impl.indices.ngram import NULL_TOKEN, NGramSegment, read_ngram, trigram_of, trigram_tokens
from reference_impl.indices.row_addr_map import RowAddrMapError, decode_row_addr_map
from reference_impl.indices.types import IndexType, compatibility

from ..context import VersionView
from ..facts.index_contents import segment_file
from ..facts.text_indices import Segment, address_text, outside_coverage, row_lookup, segments, shown


def _length_text(stored: np.ndarray, summed: np.ndarray, document: int) -> str:
    return f"{document} ({int(stored[document])} vs {int(summed[document])})"


def _row_text(addresses: np.ndarray, values: list, row: int) -> str:
    return f"{address_text(int(addresses[row]))} {values[row]!r}"


def _inverted(view: VersionView) -> list[Segment[InvertedSegment]]:
    return segments(view, IndexType.INVERTED, read_inverted)


def _at(view: VersionView, segment: Segment) -> str:
    return view.at(f"index_section.indices[{segment.position}]")


def _name(segment: Segment) -> str:
    return f"INVERTED segment {segment.index.uuid} ('{segment.index.name}')"


def inverted_decodes(view: VersionView):
    for segment in _inverted(view):
        if segment.error is not None:
            yield f"{_name(segment)} does not decode: {segment.error}", _at(view, segment)


def inverted_token_set(view: VersionView):
    for segment in _inverted(view):
        if segment.value is None:
            continue
        for partition in segment.value.partitions:
            where = f"{_name(segment)} partition {partition.id}"
            count = len(partition.postings)
            ids = sorted(partition.token_ids)
            if ids != list(range(len(ids))):
                repeated = [i for i, n in Counter(ids).items() if n > 1]
                yield (
                    f"{where}: the token ids are not 0..{len(ids) - 1}"
                    + (f" (repeated: {shown(repeated, str)})" if repeated else ""),
                    _at(view, segment),
                )
            if len(ids) != count:
                yield f"{where}: {len(ids)} tokens but {count} posting lists", _at(view, segment)
            if partition.checksum_ok is False:
                yield f"{where}: the token set's fst checksum does not match its bytes", _at(view, segment)
            if partition.token_next_id is not None and partition.token_next_id != len(ids):
                yield f"{where}: _token_next_id is {partition.token_next_id} for {len(ids)} tokens", _at(view, segment)
            total = sum(len(token) for token in partition.tokens)
            if partition.token_total_length is not None and partition.token_total_length != total:
                yield (
                    f"{where}: _token_total_length is {partition.token_total_length}, the tokens hold {total} bytes",
                    _at(view, segment),
                )


def inverted_postings(view: VersionView):
    for segment in _inverted(view):
        if segment.value is None:
            continue
        for partition in segment.value.partitions:
            documents = len(partition.row_ids)
            problems: list[str] = []
            for token_id, posting in enumerate(partition.postings):
                ids = posting.doc_ids.astype(np.int64)
                if len(ids) and (np.any(np.diff(ids) <= 0) or ids[-1] >= documents):
                    problems.append(f"token id {token_id}: document ids not ascending below {documents}")
                if np.any(posting.frequencies == 0):
                    problems.append(f"token id {token_id}: a frequency of 0")
                best = max(posting.block_scores, default=0.0)
                if len(posting.block_scores) and np.float32(best) != partition.max_scores[token_id]:
                    problems.append(
                        f"token id {token_id}: _max_score {partition.max_scores[token_id]} is not the best block "
                        f"score {best}"
                    )
                if partition.positions is not None:
                    for positions, frequency in zip(partition.positions[token_id], posting.frequencies, strict=True):
                        if len(positions) != frequency or np.any(np.diff(positions.astype(np.int64)) <= 0):
                            problems.append(f"token id {token_id}: positions do not match their frequency")
                            break
            if problems:
                yield f"{_name(segment)} partition {partition.id}: {shown(problems, str)}", _at(view, segment)


def inverted_doc_lengths(view: VersionView):
    for segment in _inverted(view):
        if segment.value is None:
            continue
        seen: Counter[int] = Counter()
        for partition in segment.value.partitions:
            where = f"{_name(segment)} partition {partition.id}"
            documents = len(partition.row_ids)
            summed = np.zeros(documents, dtype=np.uint64)
            for posting in partition.postings:
                inside = posting.doc_ids < documents
                np.add.at(summed, posting.doc_ids[inside].astype(np.int64), posting.frequencies[inside])
            wrong = np.flatnonzero(summed != partition.num_tokens).tolist()
            if wrong:
                yield (
                    f"{where}: documents whose _num_tokens is not the sum of their frequencies: "
                    + shown(wrong, partial(_length_text, partition.num_tokens, summed)),
                    _at(view, segment),
                )
            total = int(partition.num_tokens.sum())
            if partition.total_tokens is not None and partition.total_tokens != total:
                yield (
                    f"{where}: total_tokens is {partition.total_tokens}, _num_tokens sum to {total}",
                    _at(view, segment),
                )
            seen.update(partition.row_ids.tolist())
        repeated = [row for row, count in seen.items() if count > 1]
        if repeated:
            yield f"{_name(segment)}: rows stored as two documents: {shown(repeated, str)}", _at(view, segment)


def inverted_rows_covered(view: VersionView):
    for segment in _inverted(view):
        if segment.value is None or view.reader.uses_stable_row_ids:
            continue  # stable row ids name no fragment: only the contents rule places them
        stored = np.concatenate([p.row_ids for p in segment.value.partitions] or [np.zeros(0, np.uint64)])
        bad = outside_coverage(view, segment.index, stored, segment.value.deleted_fragments)
        if bad:
            yield (
                f"{_name(segment)} stores rows outside the fragments it covers: {shown(bad, address_text)}",
                _at(view, segment),
            )


def _index_tokens(value: InvertedSegment, lookup) -> dict[int, Counter]:
    """Covered row position -> Counter of (token, position) the index stores for it."""
    found: dict[int, Counter] = {}
    for partition in value.partitions:
        row_of = [lookup.by_key.get(int(key)) for key in partition.row_ids.tolist()]
        for token_id, posting in enumerate(partition.postings):
            if token_id >= len(partition.tokens):
                continue
            token = partition.tokens[token_id].decode("utf-8", "replace")
            for number, (doc, frequency) in enumerate(
                zip(posting.doc_ids.tolist(), posting.frequencies.tolist(), strict=True)
            ):
                row = row_of[doc] if doc < len(row_of) else None
                if row is None:
                    continue
                entries = found.setdefault(row, Counter())
                if partition.positions is not None:
                    entries.update((token, int(p)) for p in partition.positions[token_id][number].tolist())
                else:
                    entries[(token, None)] += frequency
    return found


def inverted_postings_match_rows(view: VersionView):
    for segment in _inverted(view):
        value = segment.value
        if value is None or fts_tokenizer.defined_exactly(value.params) is not None:
            continue
        lookup = row_lookup(view, segment.index, addresses=False)
        if lookup is None:
            continue
        stored = _index_tokens(value, lookup)
        with_positions = value.params.with_position
        wrong = []
        values = lookup.rows.values.to_pylist()
        for row, text in enumerate(values):
            if lookup.rows.deleted[row] or not (text is None or isinstance(text, str)):
                continue
            expected = [] if text is None else fts_tokenizer.tokens(value.params, text)
            if expected is None:
                continue
            want = Counter((t, p) if with_positions else (t, None) for t, p in expected)
            if stored.get(row, Counter()) != want:
                wrong.append(row)
        if wrong:
            rows = lookup.rows
            yield (
                f"{_name(segment)}: rows whose tokens differ from the {value.params.base_tokenizer} tokenizer's: "
                + shown(wrong, partial(_row_text, rows.row_addresses, values)),
                _at(view, segment),
            )


def inverted_unchecked(view: VersionView):
    for segment in _inverted(view):
        if segment.skipped:
            yield (f"{_name(segment)} is skipped: {segment.skipped}", _at(view, segment))
            continue
        if segment.value is None:
            continue
        why = fts_tokenizer.defined_exactly(segment.value.params)
        if why is not None:
            yield (
                f"{_name(segment)}: postings not compared with the rows ({why} is not defined exactly by fts.md)",
                _at(view, segment),
            )
            continue
        yield from _sample_notes(view, segment, _name(segment), addresses=False)


def _sample_notes(view: VersionView, segment: Segment, name: str, addresses: bool):
    lookup = row_lookup(view, segment.index, addresses)
    if lookup is None:
        return
    rows = lookup.rows
    if not rows.complete:
        yield (
            f"{name}: a default run compared the rows of fragments {list(rows.fragment_ids)} only "
            "(validate --deep compares every covered fragment)",
            _at(view, segment),
        )
    values = rows.values.to_pylist()
    other = sum(1 for v in values if isinstance(v, str) and not v.isascii())
    kinds = sum(1 for v in values if v is not None and not isinstance(v, str))
    if other or kinds:
        yield (
            f"{name}: {other + kinds} covered rows not compared ({other} values not ASCII, {kinds} not plain strings)",
            _at(view, segment),
        )


# -- NGRAM ----------------------------------------------------------------------------------------


def _ngram(view: VersionView) -> list[Segment[NGramSegment]]:
    return segments(view, IndexType.NGRAM, read_ngram)


def _ngram_name(segment: Segment) -> str:
    return f"NGRAM segment {segment.index.uuid} ('{segment.index.name}')"


def ngram_decodes(view: VersionView):
    for segment in _ngram(view):
        if segment.error is not None:
            yield f"{_ngram_name(segment)} does not decode: {segment.error}", _at(view, segment)


def ngram_tokens(view: VersionView):
    for segment in _ngram(view):
        if segment.value is None:
            continue
        tokens = segment.value.tokens
        bad = [t for t in tokens if t is None or (t != NULL_TOKEN and len(trigram_of(t)) != 3) or t >= 37**3]
        if bad:
            yield f"{_ngram_name(segment)}: tokens that are no trigram: {shown(bad, str)}", _at(view, segment)
        known = [t for t in tokens if t is not None]
        if any(b <= a for a, b in zip(known, known[1:], strict=False)):
            yield f"{_ngram_name(segment)}: the tokens are not ascending and unique", _at(view, segment)


def ngram_rows_covered(view: VersionView):
    for segment in _ngram(view):
        value = segment.value
        if value is None or (not value.row_addresses and view.reader.uses_stable_row_ids):
            continue  # stable row ids name no fragment
        stored = np.concatenate(list(value.postings) or [np.zeros(0, np.uint64)])
        bad = outside_coverage(view, segment.index, stored)
        if bad:
            yield (
                f"{_ngram_name(segment)} lists rows outside the fragments it covers: {shown(bad, address_text)}",
                _at(view, segment),
            )


def ngram_postings_match_rows(view: VersionView):
    for segment in _ngram(view):
        value = segment.value
        if value is None:
            continue
        lookup = row_lookup(view, segment.index, addresses=value.row_addresses)
        if lookup is None:
            continue
        stored: dict[int, set[int]] = {}
        for token, rows in zip(value.tokens, value.postings, strict=True):
            for key in rows.tolist():
                row = lookup.by_key.get(key)
                if row is not None and token is not None:
                    stored.setdefault(row, set()).add(token)
        values = lookup.rows.values.to_pylist()
        wrong = []
        for row, text in enumerate(values):
            if lookup.rows.deleted[row] or not (text is None or isinstance(text, str)):
                continue
            expected = {NULL_TOKEN} if text is None else trigram_tokens(text)
            if expected is not None and stored.get(row, set()) != expected:
                wrong.append(row)
        if wrong:
            yield (
                f"{_ngram_name(segment)}: rows listed under other trigrams than their value's: "
                + shown(wrong, partial(_row_text, lookup.rows.row_addresses, values)),
                _at(view, segment),
            )


def ngram_unchecked(view: VersionView):
    for segment in _ngram(view):
        if segment.skipped:
            yield f"{_ngram_name(segment)} is skipped: {segment.skipped}", _at(view, segment)
        elif segment.value is not None:
            yield from _sample_notes(view, segment, _ngram_name(segment), addresses=segment.value.row_addresses)


# -- JSON -----------------------------------------------------------------------------------------

#: The target index types whose key file the JSON rules compare, with its
#: name and key column (btree.md, bitmap.md).
_JSON_TARGET_KEYS = {
    IndexType.BTREE: ("page_data.lance", "values"),
    IndexType.BITMAP: ("bitmap_page_lookup.lance", "keys"),
}


def _json(view: VersionView):
    """(segment, details or the error decoding them) of the version's JSON segments."""
    out: list[tuple[Segment[None], JsonDetails | JsonDetailsError]] = []
    for position, index in enumerate(view.manifest_file.indices or []):
        compat = compatibility(index)
        if compat.index_type is not IndexType.JSON:
            continue
        segment: Segment[None] = Segment(position, index, None, None if compat.usable else compat.usability.value, None)
        try:
            out.append((segment, read_json_details(index.details or b"")))
        except JsonDetailsError as exc:
            out.append((segment, exc))
    return out


def _json_name(segment: Segment) -> str:
    return f"JSON segment {segment.index.uuid} ('{segment.index.name}')"


def json_details(view: VersionView):
    for segment, details in _json(view):
        if isinstance(details, JsonDetailsError):
            yield f"{_json_name(segment)}: the details do not decode: {details}", _at(view, segment)
        elif not details.path:
            yield f"{_json_name(segment)}: the details name no path", _at(view, segment)
        elif details.target_type in (None, IndexType.JSON, IndexType.VECTOR, IndexType.FRAGMENT_REUSE):
            yield (
                f"{_json_name(segment)}: the target type URL {details.target_type_url!r} names no scalar index type",
                _at(view, segment),
            )


def _target_keys(view: VersionView, segment: Segment, target: IndexType):
    """(key, stored row) pairs of the target's key file, or None when it did not load."""
    name, column = _JSON_TARGET_KEYS[target]
    loaded = segment_file(view, segment.index, name)
    if not loaded.ok:
        return None
    table = loaded.value.table
    if column not in table.column_names:
        return None
    keys = table.column(column)
    pairs = []
    if target is IndexType.BTREE:
        if "ids" not in table.column_names:
            return None
        pairs = list(zip(keys.to_pylist(), table.column("ids").to_pylist(), strict=True))
    else:
        if "bitmaps" not in table.column_names:
            return None
        for key, raw in zip(keys.to_pylist(), table.column("bitmaps").to_pylist(), strict=True):
            try:
                pairs.extend((key, int(row)) for row in decode_row_addr_map(raw or b""))
            except RowAddrMapError:
                return None  # the bitmap rules report the bitmap itself
    return keys.type, pairs


def _comparable(expected, key_type: pa.DataType) -> bool:
    """Whether a decoded JSON value has the target's key type (else not compared)."""
    if expected is None:
        return True
    if isinstance(expected, bool):
        return pa.types.is_boolean(key_type)
    if isinstance(expected, int):
        return pa.types.is_integer(key_type)
    if isinstance(expected, float):
        return pa.types.is_floating(key_type)
    if isinstance(expected, str):
        return pa.types.is_string(key_type) or pa.types.is_large_string(key_type)
    return False  # an array or object, stored as re-serialized JSONB


def json_target_matches_rows(view: VersionView):
    for segment, details in _json(view):
        if isinstance(details, JsonDetailsError) or segment.skipped or details.target_type not in _JSON_TARGET_KEYS:
            continue
        keys = path_keys(details.path)
        lookup = row_lookup(view, segment.index, addresses=False)
        found = _target_keys(view, segment, details.target_type)
        if keys is None or lookup is None or found is None:
            continue
        key_type, pairs = found
        stored: dict[int, list] = {}
        for key, row_key in pairs:
            row = lookup.by_key.get(row_key)
            if row is not None:
                stored.setdefault(row, []).append(key)
        documents = lookup.rows.values.to_pylist()
        wrong = []
        for row, document in enumerate(documents):
            if lookup.rows.deleted[row]:
                continue
            expected = value_at(document if isinstance(document, str) or document is None else None, keys)
            if not _comparable(expected, key_type):
                continue
            if stored.get(row) != [expected]:
                wrong.append(row)
        if wrong:
            yield (
                f"{_json_name(segment)}: rows the target does not hold under their value at '{details.path}': "
                + shown(wrong, partial(_row_text, lookup.rows.row_addresses, documents)),
                _at(view, segment),
            )


def json_unchecked(view: VersionView):
    for segment, details in _json(view):
        if isinstance(details, JsonDetailsError):
            continue
        if segment.skipped:
            yield f"{_json_name(segment)} is skipped: {segment.skipped}", _at(view, segment)
        elif details.target_type not in _JSON_TARGET_KEYS:
            yield f"{_json_name(segment)}: a {details.target_type_url} target is not compared", _at(view, segment)
        elif path_keys(details.path) is None:
            yield f"{_json_name(segment)}: the path {details.path!r} is not resolved here", _at(view, segment)
        else:
            lookup = row_lookup(view, segment.index, addresses=False)
            if lookup is not None and not lookup.rows.complete:
                yield (
                    f"{_json_name(segment)}: a default run compared the rows of fragments "
                    f"{list(lookup.rows.fragment_ids)} only (validate --deep compares every covered fragment)",
                    _at(view, segment),
                )
