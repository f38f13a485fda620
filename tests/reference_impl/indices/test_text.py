"""The text index readers (reference_impl/indices/inverted.py, fst.py,
postings.py, ngram.py, json_index.py) against indices pylance 14 builds:
what they decode agrees with the rows and with pylance's own full-text
answers; hostile bytes give the readers' errors, never another exception.
"""

from __future__ import annotations

import json
import random
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_impl.dataset import Dataset
from reference_impl.indices import fts_tokenizer
from reference_impl.indices.files import read_index_file
from reference_impl.indices.fst import FstError, decode_fst_map, masked_crc32c
from reference_impl.indices.inverted import read_inverted
from reference_impl.indices.json_index import JsonDetailsError, read_json_details, value_at
from reference_impl.indices.ngram import NULL_TOKEN, TreemapError, decode_treemap, read_ngram, token_of, trigram_tokens
from reference_impl.indices.postings import (
    PositionsCodec,
    PostingFormatError,
    TailCodec,
    decode_block_positions,
    decode_posting_list,
    unpack_block,
)
from reference_impl.indices.types import READ_VERSIONS, IndexType, compatibility
from reference_impl.scan import fragment_table
from tests.hypothesis_budget import examples

lance = pytest.importorskip("lance")

WORDS = [
    "Alpha",
    "beta",
    "gamma,",
    "delta",
    "x1",
    "zeta!",
    "th-eta",
    "iota",
    "Kappa",
    "lam",
    "common",
    "a" * 39,
    "b" * 40,
]


def _text(rng: random.Random, i: int) -> str | None:
    if i % 23 == 0:
        return None if i % 2 else ""
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 10))]
    if i % 3 == 0:
        words.append("common")  # a token of more than 128 documents: full posting blocks
    if i % 41 == 0:
        words.append("naïve")
    return " ".join(words)


def _rows(start: int, count: int) -> pa.Table:
    rng = random.Random(start)
    ids = list(range(start, start + count))
    docs = [None if i % 11 == 0 else json.dumps({"a": i % 6, "s": f"v{i % 4}"}) for i in ids]
    return pa.table({"id": ids, "text": [_text(rng, i) for i in ids], "doc": pa.array(docs, pa.json_(pa.utf8()))})


@pytest.fixture(scope="module")
def text_dataset(tmp_path_factory):
    """900 rows in three fragments, an INVERTED index without stemming or stop
    words and with positions, an NGRAM index and a JSON index; then an
    append, deletes and optimize_indices."""
    path = tmp_path_factory.mktemp("text-indices") / "ds"
    dataset = lance.write_dataset(_rows(0, 900), path, max_rows_per_file=300)
    dataset.create_scalar_index("text", "INVERTED", with_position=True, stem=False, remove_stop_words=False)
    dataset.create_scalar_index("text", "NGRAM", name="text_ngram")
    config = lance.indices.IndexConfig(index_type="json", parameters={"target_index_type": "btree", "path": "a"})
    dataset.create_scalar_index("doc", config, name="doc_a")
    dataset = lance.write_dataset(_rows(900, 200), path, mode="append")
    dataset.delete("id % 10 = 7")
    dataset.optimize.optimize_indices()
    return path


def _segment(path, kind: str):
    dataset = Dataset.open(str(path))
    (index,) = [index for index in dataset.indices if IndexType.of(index) is IndexType[kind]]
    return dataset, index


def _values_by_address(dataset: Dataset) -> dict[int, object]:
    """Every physical row's ``text`` value by row address, deleted rows included."""
    found = {}
    for fragment in dataset.fragments:
        table = fragment_table(dataset, fragment, include_deleted=True, columns=["text"])
        for offset, value in enumerate(table.column("text").to_pylist()):
            found[(fragment.id << 32) + offset] = value
    return found


def _live(path) -> set[int]:
    return set(lance.dataset(path).to_table(columns=["id"], with_row_address=True).column("_rowaddr").to_pylist())


def test_read_versions_name_the_text_types():
    assert {IndexType.INVERTED, IndexType.NGRAM, IndexType.JSON} <= set(READ_VERSIONS)


@pytest.mark.requirements(
    "index.inverted-postings-match-rows", "index.inverted-doc-lengths", "index.inverted-token-set"
)
def test_inverted_postings_hold_the_tokenizers_tokens_and_positions(text_dataset):
    """Every live row's (token, position) pairs decoded from the index are
    those the recorded tokenizer gives its value, and every document's
    _num_tokens is the sum of its frequencies."""
    dataset, index = _segment(text_dataset, "INVERTED")
    assert compatibility(index).usable
    segment = read_inverted(dataset, index)
    assert fts_tokenizer.defined_exactly(segment.params) is None
    stored: dict[int, list] = {}
    for partition in segment.partitions:
        summed = np.zeros(len(partition.row_ids), dtype=np.uint64)
        for token_id, posting in enumerate(partition.postings):
            assert np.all(np.diff(posting.doc_ids.astype(np.int64)) > 0)
            np.add.at(summed, posting.doc_ids.astype(np.int64), posting.frequencies)
            for number, doc in enumerate(posting.doc_ids.tolist()):
                row = int(partition.row_ids[doc])
                token = partition.tokens[token_id].decode()
                stored.setdefault(row, []).extend((token, int(p)) for p in partition.positions[token_id][number])
        assert np.array_equal(summed, partition.num_tokens)
        assert sorted(partition.token_ids) == list(range(len(partition.postings)))
        assert partition.checksum_ok
    full_blocks = [p for part in segment.partitions for p in part.postings if len(p.doc_ids) >= 128]
    assert full_blocks, "the dataset must exercise full (bit-packed) posting blocks"
    live = _live(text_dataset)
    compared = 0
    for address, value in _values_by_address(dataset).items():
        if address not in live or value is None or not value.isascii():
            continue
        assert sorted(stored.get(address, [])) == sorted(fts_tokenizer.tokens(segment.params, value)), value
        compared += 1
    assert compared > 500


@pytest.mark.requirements("index.inverted-postings")
@pytest.mark.parametrize("token", ["common", "alpha", "x1", "th", "kappa"])
def test_decoded_postings_are_pylances_full_text_answers(text_dataset, token):
    """The live rows whose documents a token's postings name are the rows
    pylance's full-text match of that token returns."""
    dataset, index = _segment(text_dataset, "INVERTED")
    segment = read_inverted(dataset, index)
    decoded = set()
    for partition in segment.partitions:
        ids = {t.decode(): n for n, t in enumerate(partition.tokens)}
        if token in ids:
            decoded |= {int(partition.row_ids[d]) for d in partition.postings[ids[token]].doc_ids.tolist()}
    query = lance.query.MatchQuery(token, "text")
    answer = lance.dataset(text_dataset).to_table(
        full_text_query=query, columns=["id"], with_row_address=True, limit=100_000
    )
    rows = set(answer.column("_rowaddr").to_pylist())
    live = set(
        lance.dataset(text_dataset).to_table(columns=["id"], with_row_address=True).column("_rowaddr").to_pylist()
    )
    assert rows and rows == decoded & live


@pytest.mark.requirements("index.ngram-postings-match-rows", "index.ngram-tokens")
def test_ngram_postings_are_the_values_trigrams(text_dataset):
    dataset, index = _segment(text_dataset, "NGRAM")
    segment = read_ngram(dataset, index)
    assert list(segment.tokens) == sorted(segment.tokens)
    by_row: dict[int, set[int]] = {}
    for token, rows in zip(segment.tokens, segment.postings, strict=True):
        for row in rows.tolist():
            by_row.setdefault(row, set()).add(token)
    live = _live(text_dataset)
    for address, value in _values_by_address(dataset).items():
        expected = {NULL_TOKEN} if value is None else trigram_tokens(value)
        if address in live and expected is not None:
            assert by_row.get(address, set()) == expected, value


def test_trigram_tokens_follow_the_alphabet():
    assert token_of("000") == 37 * 37 + 37 + 1
    assert token_of("abc") == 11 * 37 * 37 + 12 * 37 + 13
    assert trigram_tokens("Ab-c1 ab") == set()  # every run of three holds a space or a dash
    assert trigram_tokens("XYZ12") == {token_of(t) for t in ("xyz", "yz1", "z12")}
    assert trigram_tokens("Tom lives") == {token_of(t) for t in ("tom", "liv", "ive", "ves")}
    assert trigram_tokens("naïve") is None


@pytest.mark.requirements("index.json-details")
def test_json_details_and_the_value_at_the_path(text_dataset):
    _, index = _segment(text_dataset, "JSON")
    details = read_json_details(index.details)
    assert details.path == "a" and details.target_type is IndexType.BTREE
    assert value_at('{"a": 3}', ["a"]) == 3 and value_at('{"b": 1}', ["a"]) is None and value_at(None, ["a"]) is None


def test_crc32c_is_castagnolis():
    # The CRC-32C check value of "123456789" is 0xE3069283; the stored form is masked.
    crc = 0xE3069283
    assert masked_crc32c(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _pack4x(values: list[int], width: int) -> bytes:
    """BitPacker4x written out bit by bit from postings.py's description."""
    words = [[0] * width for _ in range(4)]
    for index, value in enumerate(values):
        lane, slot = index % 4, index // 4
        for bit in range(width):
            if value >> bit & 1:
                position = slot * width + bit
                words[lane][position // 32] |= 1 << (position % 32)
    return b"".join(struct.pack("<I", words[lane][w]) for w in range(width) for lane in range(4))


@settings(max_examples=examples(1 / 2), deadline=None)
@given(width=st.integers(0, 32), data=st.data())
def test_bitpacked_blocks_unpack_to_their_values(width, data):
    values = data.draw(st.lists(st.integers(0, (1 << width) - 1), min_size=128, max_size=128))
    unpacked, end = unpack_block(b"x" + _pack4x(values, width), 1, width)
    assert unpacked.tolist() == values and end == 1 + 16 * width


@settings(max_examples=examples(1 / 2), deadline=None)
@given(data=st.lists(st.integers(0, 5000), min_size=1, max_size=127, unique=True), freq=st.integers(1, 3))
def test_a_varint_tail_block_decodes_to_its_postings(data, freq):
    ids = sorted(data)
    varints = b""
    deltas = [b - a for a, b in zip([0, *ids], ids, strict=False)]
    for value in deltas + [freq] * len(ids):
        while value >= 0x80:
            varints += bytes([value & 0x7F | 0x80])
            value >>= 7
        varints += bytes([value])
    posting = decode_posting_list([struct.pack("<f", 1.5) + varints], len(ids), TailCodec.VARINT_DELTA)
    assert posting.doc_ids.tolist() == ids and posting.frequencies.tolist() == [freq] * len(ids)
    assert posting.block_scores == (1.5,)


@settings(max_examples=examples(1), deadline=None)
@given(raw=st.binary(max_size=300))
def test_hostile_bytes_give_the_decoders_errors(raw):
    for decode, errors in (
        (decode_fst_map, FstError),
        (decode_treemap, TreemapError),
        (read_json_details, JsonDetailsError),
        (lambda b: decode_posting_list([b], 3, TailCodec.VARINT_DELTA), PostingFormatError),
        (lambda b: decode_posting_list([b[:300], b], 130, TailCodec.FIXED32), PostingFormatError),
        (
            lambda b: decode_block_positions(b, np.array([2, 1], np.uint64), PositionsCodec.PACKED_DELTA),
            PostingFormatError,
        ),
    ):
        try:
            decode(raw)
        except errors:
            pass


@pytest.fixture(scope="module")
def token_set(text_dataset) -> bytes:
    """The fst bytes of partition 0 of the INVERTED segment."""
    dataset, index = _segment(text_dataset, "INVERTED")
    return read_index_file(dataset, index, "part_0_tokens.lance").table.column("_token_fst_bytes")[0].as_py()


@settings(max_examples=examples(1 / 2), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, 10_000), value=st.integers(0, 255))
def test_a_changed_byte_of_a_real_token_set_is_refused_or_decodes(token_set, at, value):
    """One byte of pylance's fst changed: the checksum catches it, or the map
    is refused, never another exception."""
    raw = bytearray(token_set)
    at %= len(raw)
    if raw[at] == value:
        return
    raw[at] = value
    try:
        decoded = decode_fst_map(bytes(raw))
    except FstError:
        return
    assert decoded.checksum_ok is not True
