"""Mutations for the text index rules (conformance/validator/rules/index_text.py).

The "text_indices" base (bases.build_text_indices) has, in its latest
version, an INVERTED segment ``text_fts`` and an NGRAM segment
``text_ngram`` covering fragments 0-2, and a JSON segment ``doc_name`` with
a BITMAP target. Pylance 14 stores binary values (the token set's fst, the
posting blocks, position streams, Roaring bitmaps) and u32 columns such as
NGRAM's tokens as plain bytes inside the Lance files, so most mutations
find those bytes in the file and overwrite them with as many other bytes:
the file keeps its size and its Lance structure, and only the index's
contents change.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from reference_impl.dataset import Dataset
from reference_impl.index_metadata import IndexMetadata, encode_fragment_bitmap
from reference_impl.indices.files import read_index_file
from reference_impl.indices.inverted import read_inverted

from ..edit import edit_manifest, overwrite_once
from ..registry import mutation

BASE = "text_indices"


def _latest(root: Path, name: str) -> tuple[Dataset, IndexMetadata]:
    dataset = Dataset.open(str(root))
    (index,) = [index for index in dataset.indices if index.name == name]
    return dataset, index


def _file(root: Path, index: IndexMetadata, name: str) -> Path:
    return root / "_indices" / index.uuid / name


def _column(root: Path, name: str, file: str, column: str) -> tuple[Path, list]:
    dataset, index = _latest(root, name)
    contents = read_index_file(dataset, index, file)
    return _file(root, index, file), contents.table.column(column).to_pylist()


def _array_container(bitmap: bytes) -> tuple[int, int]:
    """Where the first container's values of a portable Roaring bitmap
    without runs start, and how many there are (an array container)."""
    cookie, count = struct.unpack_from("<II", bitmap, 0)
    assert cookie == 12346 and count >= 1
    _, cardinality = struct.unpack_from("<HH", bitmap, 8)
    (offset,) = struct.unpack_from("<I", bitmap, 8 + 4 * count)
    assert cardinality + 1 <= 4096
    return offset, cardinality + 1


def _with_member_changed(bitmap: bytes, at_end: bool) -> bytes:
    """The bitmap with one member of its first array container changed, the
    values staying ascending: the last one set to 65535 (``at_end``) or the
    first one moved to a neighbouring free offset."""
    offset, count = _array_container(bitmap)
    values = list(struct.unpack_from(f"<{count}H", bitmap, offset))
    if at_end:
        assert values[-1] < 0xFFFF
        values[-1] = 0xFFFF
    elif count == 1 or values[0] + 1 < values[1]:
        values[0] += 1
    else:
        assert values[0] > 0
        values[0] -= 1
    return bitmap[:offset] + struct.pack(f"<{count}H", *values) + bitmap[offset + 2 * count :]


# -- INVERTED -------------------------------------------------------------------------------------


def _fst(root: Path) -> tuple[Path, bytes]:
    path, values = _column(root, "text_fts", "part_0_tokens.lance", "_token_fst_bytes")
    return path, values[0]


@mutation("index-inverted/decodes", base=BASE)
def give_the_token_set_an_unknown_fst_version(root):
    path, fst = _fst(root)
    overwrite_once(path, fst, struct.pack("<Q", 9) + fst[8:])


@mutation("index-inverted/token-set", base=BASE)
def break_the_token_set_checksum(root):
    path, fst = _fst(root)
    overwrite_once(path, fst, fst[:-1] + bytes([fst[-1] ^ 0xFF]))


@mutation("index-inverted/postings", base=BASE)
def raise_a_block_score_above_max_score(root):
    """The first block of token id 0 claims twice the best score."""
    path, postings = _column(root, "text_fts", "part_0_invert.lance", "_posting")
    block = postings[0][0]
    (score,) = struct.unpack_from("<f", block, 0)
    overwrite_once(path, block, struct.pack("<f", score * 2 + 1) + block[4:])


@mutation("index-inverted/doc-lengths", base=BASE)
def change_the_total_token_count(root):
    """The docs file's ``total_tokens`` metadata value gets another last digit."""
    dataset, index = _latest(root, "text_fts")
    contents = read_index_file(dataset, index, "part_0_docs.lance")
    total = contents.text("total_tokens").encode()
    other = total[:-1] + (b"1" if total[-1:] != b"1" else b"2")
    path = _file(root, index, "part_0_docs.lance")
    data = path.read_bytes()
    key = data.index(b"total_tokens")
    at = data.index(total, key)
    path.write_bytes(data[:at] + other + data[at + len(total) :])


@mutation("index-inverted/rows-covered", base=BASE)
def drop_a_fragment_from_the_fts_bitmap(root):
    """The INVERTED segment's bitmap stops naming fragment 1, whose rows it holds."""
    dataset, index = _latest(root, "text_fts")

    def edit(manifest_file):
        for entry in manifest_file.indices or []:
            if entry.uuid == index.uuid:
                entry.fragment_bitmap = encode_fragment_bitmap([f for f in entry.fragment_ids() or [] if f != 1])
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = None

    for version in dataset.versions():
        listed = Dataset.open(str(root), version=version).indices
        if any(entry.uuid == index.uuid for entry in listed):
            edit_manifest(root, edit, version=version)


@mutation("index-inverted/postings-match-rows", base=BASE)
def move_a_position_of_a_token(root):
    """The first position of each token's first document moves one word on
    (tokens of one block whose positions are all varints, the first one
    byte: some of those documents are rows the version still has)."""
    dataset, index = _latest(root, "text_fts")
    (partition,) = [p for p in read_inverted(dataset, index).partitions if p.id == 0]
    path, streams = _column(root, "text_fts", "part_0_invert.lance", "_compressed_position")
    moved = 0
    for stream, posting in zip(streams, partition.postings, strict=True):
        varints_only = len(posting.doc_ids) < 128 and int(posting.frequencies.sum()) < 128
        if varints_only and stream and stream[0] < 0x7E and path.read_bytes().count(stream) == 1:
            overwrite_once(path, stream, bytes([stream[0] + 1]) + stream[1:])
            moved += 1
    assert moved, "no token with a varint position stream"


@mutation("index-inverted/postings-match-rows", base=BASE, also=("index-inverted/doc-lengths",))
def move_a_posting_to_another_document(root):
    """A token's last document id (the last id delta of its tail block) grows by one."""
    path, postings = _column(root, "text_fts", "part_0_invert.lance", "_posting")
    _, lengths = _column(root, "text_fts", "part_0_invert.lance", "_length")
    for blocks, length in zip(postings, lengths, strict=True):
        tail = blocks[-1]
        count = length % 128
        if count < 2:
            continue
        # Varints: count id deltas, then count frequencies; find the last delta.
        at, ends = 4, []
        for _ in range(count):
            while tail[at] & 0x80:
                at += 1
            at += 1
            ends.append(at)
        last = ends[-1] - 1
        if ends[-1] - ends[-2] == 1 and tail[last] < 0x7F:
            overwrite_once(path, tail, tail[:last] + bytes([tail[last] + 1]) + tail[last + 1 :])
            return
    raise AssertionError("no tail block with a one-byte last delta")


# -- NGRAM ----------------------------------------------------------------------------------------


def _ngram_postings(root: Path) -> tuple[Path, list[int], list[bytes]]:
    path, tokens = _column(root, "text_ngram", "ngram_postings.lance", "tokens")
    _, postings = _column(root, "text_ngram", "ngram_postings.lance", "posting_list")
    return path, tokens, postings


def _small_posting(postings: list[bytes]) -> bytes:
    """A posting list whose first fragment's rows are held in an array container."""
    for raw in postings:
        (count,) = struct.unpack_from("<Q", raw, 0)
        if count >= 1 and struct.unpack_from("<I", raw, 12)[0] == 12346:
            return raw
    raise AssertionError("no posting list starting with an array container")


@mutation("index-ngram/decodes", base=BASE)
def break_a_posting_bitmap_cookie(root):
    path, _, postings = _ngram_postings(root)
    raw = _small_posting(postings)
    overwrite_once(path, raw, raw[:12] + b"\x00\x00\x00\x00" + raw[16:])


@mutation("index-ngram/tokens", base=BASE, also=("index-ngram/postings-match-rows",))
def store_a_token_that_is_no_trigram(root):
    """The second token becomes 5, a token of one character."""
    path, tokens, _ = _ngram_postings(root)
    old = np.asarray(tokens, dtype="<u4")
    new = old.copy()
    new[1] = 5
    overwrite_once(path, old.tobytes(), new.tobytes())


@mutation("index-ngram/rows-covered", base=BASE, also=("index-ngram/postings-match-rows",))
def list_a_row_past_its_fragment(root):
    path, _, postings = _ngram_postings(root)
    raw = _small_posting(postings)
    overwrite_once(path, raw, raw[:12] + _with_member_changed(raw[12:], at_end=True))


@mutation("index-ngram/postings-match-rows", base=BASE)
def move_a_row_to_another_trigram(root):
    path, _, postings = _ngram_postings(root)
    raw = _small_posting(postings)
    overwrite_once(path, raw, raw[:12] + _with_member_changed(raw[12:], at_end=False))


# -- JSON -----------------------------------------------------------------------------------------


@mutation("index-json/details", base=BASE)
def give_the_json_index_undecodable_details(root):
    dataset, index = _latest(root, "doc_name")

    def edit(manifest_file):
        for entry in manifest_file.indices or []:
            if entry.uuid == index.uuid:
                entry.details = b"\x0a\x7f"  # a path claiming 127 bytes in two
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = None

    edit_manifest(root, edit)


@mutation("index-json/target-matches-rows", base=BASE)
def move_a_row_to_another_json_value(root):
    """A row of one key's bitmap (a RowAddrTreeMap) moves to another offset of its first fragment."""
    path, bitmaps = _column(root, "doc_name", "bitmap_page_lookup.lance", "bitmaps")
    for raw in bitmaps:
        count, _, size = struct.unpack_from("<III", raw, 0)
        if raw and count >= 1 and struct.unpack_from("<I", raw, 12)[0] == 12346:
            overwrite_once(
                path, raw, raw[:12] + _with_member_changed(raw[12 : 12 + size], at_end=False) + raw[12 + size :]
            )
            return
    raise AssertionError("no bitmap of one fragment in an array container")


def _record_a_newer_index_version(root: Path, name: str) -> None:
    """The segment ``name`` records an ``index_version`` newer than any the
    reference reads: readers skip it (index.md, "Index Compatibility"), and
    its topic's unchecked rule says so. Nothing else changes."""
    _, index = _latest(root, name)

    def edit(manifest_file):
        for entry in manifest_file.indices or []:
            if entry.uuid == index.uuid:
                entry.index_version = 99
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = None

    edit_manifest(root, edit)


@mutation("index-inverted/unchecked", base=BASE)
def record_a_newer_inverted_index_version(root):
    _record_a_newer_index_version(root, "text_fts")


@mutation("index-ngram/unchecked", base=BASE)
def record_a_newer_ngram_index_version(root):
    _record_a_newer_index_version(root, "text_ngram")


@mutation("index-json/unchecked", base=BASE)
def record_a_newer_json_index_version(root):
    _record_a_newer_index_version(root, "doc_name")
