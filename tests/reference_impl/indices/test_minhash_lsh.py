"""The MINHASH_LSH reader (reference_impl/indices/minhash_lsh.py,
minhash_signature.py): the page's known-answer vectors
(format/index/scalar/minhash_lsh.md, "Known-Answer Vectors"), and the
segments pylance 14 writes through appends, delta and merged segments,
deletes, updates and compaction, with and without stable row ids, read the
way pylance answers through them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reference_impl.dataset import Dataset
from reference_impl.indices.files import IndexFileContents, IndexFormatError
from reference_impl.indices.minhash_lsh import (
    DetailsError,
    MinHashSegment,
    parse_details,
    read_minhash_lsh,
    segment_of,
    text_tokens,
)
from reference_impl.indices.minhash_signature import (
    Signer,
    band_keys,
    coefficients,
    hash_byte_strings,
    shingles,
    sign_many,
)
from reference_impl.indices.types import READ_VERSIONS, IndexType, compatibility
from reference_impl.scan import fragment_table
from tests.index_scenarios import IndexSpec, build_single_index

lance = pytest.importorskip("lance")

SPEC = IndexSpec("text_minhash", "text", "MINHASHLSH")
UPDATES = {"text": "'updated text'"}
#: The details of the known-answer vectors: 4 hashes, 2 bands, shingles of
#: 2, the default tokenizer (simple, lower case, tokens under 40 bytes).
SMALL = bytes.fromhex("08041002180222") + bytes([12]) + b"\x0a\x06simple" + bytes.fromhex("20282801")


def test_the_known_answer_vectors():
    a, b, c = coefficients(4)
    assert [hex(int(x)) for x in a] == [
        "0xbdd732262feb6e95",
        "0x47526757130f9f53",
        "0x9bc585a244823f3",
        "0x37e9671c45376d5d",
    ]
    assert [hex(int(x)) for x in b] == [
        "0x28efe333b266f103",
        "0x581ce1ff0e4ae394",
        "0xde4431fa3c80db06",
        "0xccf635ee9e9e2fa4",
    ]
    assert [hex(int(x)) for x in c] == [
        "0x5705b8770b3d7dd5",
        "0x9e54d738297f77af",
        "0x3474724a775b19bf",
        "0x7e348a0e451650bf",
    ]
    details = parse_details(SMALL)
    assert (details.num_hashes, details.num_bands, details.shingle_size) == (4, 2, 2)
    tokens = text_tokens(details, "The quick brown fox")
    assert tokens == [b"the", b"quick", b"brown", b"fox"]
    assert [hex(int(h)) for h in hash_byte_strings(shingles(tokens, 2))] == [
        "0x4c0b0d36203ce55f",
        "0x9c7ae895d82b184",
        "0x68e7f4b1be7b4c1f",
    ]
    signer = Signer(4, 2)
    assert [hex(int(m)) for m in signer.minima(tokens)] == [
        "0x959767d77eafad7",
        "0x464e4457275cd2a1",
        "0x50f41804abaa5973",
        "0x8944bd01067b09e7",
    ]
    signature = signer.signature(tokens)
    assert signature.tolist() == [0xB00F, 0x59D6, 0x511A, 0xCD2C]
    assert band_keys(signature[None, :], 2)[0].tolist() == [0x00F30F3501D458EA, 0x01AEC5DF28D04915]
    fox = signer.signature(text_tokens(details, "Fox"))
    assert fox.tolist() == [0x2970, 0xD6DB, 0x65F8, 0xADFC]
    assert band_keys(fox[None, :], 2)[0].tolist() == [0x003CF6E803312ECA, 0x017C5504FBC83F36]
    for empty in ("", "  \n", None):
        assert signer.signature(text_tokens(details, empty)) is None


def test_many_texts_are_signed_as_one_at_a_time():
    signer = Signer(16, 3)
    texts = [[b"a", b"b", b"c", b"d"], [], [b"x"], [b"p", b"q"], [b"w"] * 40]
    together, signed = sign_many(signer, texts)
    assert signed.tolist() == [True, False, True, True, True]
    for tokens, row in zip(texts, together, strict=True):
        alone = signer.signature(tokens)
        assert (alone is None and not row.any()) or np.array_equal(alone, row)


def test_a_tokenizer_field_repeated_with_two_wire_types_keeps_the_last():
    tokenizer = bytes.fromhex("0805") + b"\x0a\x06simple"  # base_tokenizer as a varint, then as text
    details = parse_details(bytes.fromhex("080410021802220a") + tokenizer)
    assert details.tokenizer.base_tokenizer == "simple"
    assert details.tokenizer_fields == ((1, 5), (1, b"simple"))


@pytest.mark.parametrize(
    ("details", "problem"),
    [
        (b"", "num_bands"),
        (bytes.fromhex("0805100218022200"), "num_hashes"),  # 5 hashes in 2 bands
        (bytes.fromhex("0804100218002200"), "shingle_size"),
        (bytes.fromhex("080410021802"), "tokenizer"),
        (bytes.fromhex("0880"), "varint"),
    ],
)
def test_details_out_of_range_are_refused(details, problem):
    with pytest.raises(DetailsError, match=problem):
        parse_details(details)


@pytest.fixture(scope="module", params=[False, True], ids=["addresses", "stable-row-ids"])
def walked(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("minhash") / "ds"
    return build_single_index(path, SPEC, UPDATES, stable_row_ids=request.param)


def _segments(dataset: Dataset) -> list[tuple[object, MinHashSegment]]:
    found = []
    for index in dataset.indices:
        if IndexType.of(index) is IndexType.MINHASH_LSH:
            assert compatibility(index).usable, index
            found.append((index, read_minhash_lsh(dataset, index)))
    return found


def _covered_texts(dataset: Dataset, index, by_address: bool) -> dict[int, tuple[str | None, bool]]:
    """What the segment names each covered row by -> (its text, deleted)."""
    out = {}
    by_id = {fragment.id: fragment for fragment in dataset.fragments}
    for fragment_id in index.fragment_ids() or []:
        if fragment_id not in by_id:
            continue
        fragment = by_id[fragment_id]
        texts = fragment_table(dataset, fragment, include_deleted=True, columns=["text"]).column("text").to_pylist()
        deleted = set(dataset.deleted_offsets(fragment))
        stable = dataset.row_ids(fragment)
        for offset, text in enumerate(texts):
            key = (fragment_id << 32) + offset if by_address or stable is None else int(stable[offset])
            out[key] = (text, offset in deleted)
    return out


def test_every_segment_pylance_writes_reads_with_its_documents_signed_as_the_page_says(walked):
    assert READ_VERSIONS[IndexType.MINHASH_LSH] >= 0
    dataset = Dataset.open(walked.path)
    deferred = walked.steps.get("compacted_deferred")
    checked = 0
    for version in dataset.versions():
        at = dataset.checkout(version)
        for index, segment in _segments(at):
            details = segment.details
            assert (details.num_hashes, details.num_bands, details.shingle_size, details.signature_version) == (
                128,
                16,
                3,
                0,
            )
            assert segment.signatures.layout == 0 and index.index_version == 0  # pylance 14's layout
            expected = band_keys(segment.signatures.values, details.num_bands)
            stored = np.zeros_like(expected)
            stored[segment.bands.doc_ids, (segment.bands.keys >> np.uint64(56)).astype(np.int64)] = segment.bands.keys
            assert np.array_equal(stored, expected) and len(segment.bands.keys) == expected.size
            if deferred is not None and version >= deferred:
                continue  # the segment's rows name fragments the reuse index maps
            covered = _covered_texts(at, index, segment.rows_are_addresses)
            signer = Signer(details.num_hashes, details.shingle_size)
            named = segment.signatures.rows.tolist()
            assert len(set(named)) == len(named)
            mine = [doc for doc, row in enumerate(named) if row in covered]
            for doc in mine:
                tokens = text_tokens(details, covered[named[doc]][0])
                assert np.array_equal(segment.signatures.values[doc], signer.signature(tokens)), (version, doc)
            with_tokens = {
                row for row, (text, deleted) in covered.items() if text_tokens(details, text) and not deleted
            }
            assert with_tokens <= set(named), (version, sorted(with_tokens - set(named))[:5])
            checked += len(mine)
    assert checked > 1000


def _reference_answer(dataset: Dataset, text: str) -> list[tuple[int, float]]:
    """(row id, distance) of the indexed rows that share a band key with
    ``text``, deleted rows left out: what the page's query evaluation gives."""
    answer = []
    deleted = {
        (fragment.id << 32) + offset for fragment in dataset.fragments for offset in dataset.deleted_offsets(fragment)
    }
    present = {fragment.id for fragment in dataset.fragments}
    for index, segment in _segments(dataset):
        details = segment.details
        query = Signer(details.num_hashes, details.shingle_size).signature(text_tokens(details, text))
        keys = band_keys(query[None, :], details.num_bands)[0]
        for doc in sorted(set(segment.bands.doc_ids[np.isin(segment.bands.keys, keys)].tolist())):
            row = int(segment.signatures.rows[doc])
            if row in deleted or row >> 32 not in present or row >> 32 not in (index.fragment_ids() or []):
                continue
            equal = int((segment.signatures.values[doc] == query).sum())
            answer.append((row, round(1 - equal / details.num_hashes, 5)))
    return sorted(answer)


def test_pylance_answers_through_the_index_what_the_reference_reads(tmp_path):
    scenario = build_single_index(tmp_path / "ds", SPEC, UPDATES)
    dataset = Dataset.open(scenario.path)
    queries = ["north river number 5", "east cloud number 12", "updated text", "stone ember number 0"]
    answered = 0
    for step in ("created", "delta", "merged", "deleted", "update_indexed", "compacted"):
        version = scenario.steps[step]
        theirs = lance.dataset(str(scenario.path), version=version)
        for text in queries:
            table = theirs.to_table(
                nearest=lance.query.MinHashQuery(text, "text"),
                limit=100_000,
                columns=["id", "_distance"],
                with_row_id=True,
                fast_search=True,
            )
            answer = sorted(
                zip(
                    table.column("_rowid").to_pylist(),
                    np.round(table.column("_distance").to_numpy(), 5).tolist(),
                    strict=True,
                )
            )
            assert answer == _reference_answer(dataset.checkout(version), text), (step, text)
            answered += len(answer)
    assert answered > 20


def _contents(path: str, table: pa.Table, metadata: dict[str, bytes], buffers=(b"",)) -> IndexFileContents:
    return IndexFileContents(path, table, metadata, tuple(buffers))


def test_files_that_do_not_hold_what_the_page_says_are_refused(walked):
    dataset = Dataset.open(walked.path)
    index, segment = _segments(dataset.checkout(walked.steps["created"]))[0]
    details_hex = index.details.hex().encode()
    signatures = pa.table(
        {"_rowid": pa.array([0], pa.uint64()), "signature": pa.array([[1] * 128], pa.list_(pa.uint16(), 128))}
    )
    bands = pa.table({"band_key": pa.array([1], pa.uint64()), "doc_id": pa.array([0], pa.uint32())})
    good_meta = {"minhash_lsh_details": details_hex, "minhash_lsh_index_version": b"0"}
    bands_meta = {
        **good_meta,
        "minhash_lsh_num_docs": b"1",
        "minhash_lsh_page_rows": b"4096",
        "minhash_lsh_page_table_buffer": b"1",
    }
    page_table = (1).to_bytes(8, "little")
    ok = segment_of(index, _contents("s", signatures, good_meta), _contents("b", bands, bands_meta, (b"", page_table)))
    assert ok.signatures.rows.tolist() == [0]
    cases = [
        (signatures.rename_columns(["_rowaddr", "signature"]), bands, good_meta, bands_meta, "_rowid"),
        (signatures, bands, {**good_meta, "minhash_lsh_index_version": b"7"}, bands_meta, "layout"),
        (signatures, bands, {**good_meta, "minhash_lsh_details": b"zz"}, bands_meta, "does not decode"),
        (signatures, bands, good_meta, {**bands_meta, "minhash_lsh_num_docs": b"2"}, "num_docs"),
        (signatures, bands, good_meta, {**bands_meta, "minhash_lsh_page_rows": b"0"}, "page_rows"),
        (signatures, bands, good_meta, {**bands_meta, "minhash_lsh_page_table_buffer": b"5"}, "global buffer"),
        (signatures, bands.set_column(1, "doc_id", pa.array([3], pa.uint32())), good_meta, bands_meta, "doc_id 3"),
    ]
    for sig_table, band_table, sig_meta, band_meta, problem in cases:
        with pytest.raises(IndexFormatError, match=problem):
            segment_of(
                index, _contents("s", sig_table, sig_meta), _contents("b", band_table, band_meta, (b"", page_table))
            )
    with pytest.raises(IndexFormatError, match="page table"):
        segment_of(index, _contents("s", signatures, good_meta), _contents("b", bands, bands_meta, (b"", b"\0" * 3)))
