"""INVERTED (full-text search) segments as plain data (upstream
format/index/scalar/fts.md, "Storage Layout").

A segment holds ``metadata.lance`` (schema metadata: ``partitions``, the
JSON ``params`` of the tokenizer, and in pylance 14 ``format_version``,
``token_set_format``, ``posting_block_size``, ``posting_tail_codec`` and the
positions' layout and codec; one column ``deleted_fragments``) and, per
partition ``N``, ``part_N_tokens.lance`` (the token set: an ``fst`` map in
``_token_fst_bytes``, see :mod:`.fst`, or the ``_token``/``_token_id``
columns the page lists), ``part_N_docs.lance`` (``_rowid``, ``_num_tokens``;
a document's id is its row number) and ``part_N_invert.lance`` (one row per
token id: posting blocks, see :mod:`.postings`).

A layout this module does not read (a posting block size other than 128,
a token set or codec it does not know, positions in the older per-document
layout) raises :class:`UnreadLayout`: readers skip such a segment the way
index.md skips an index version they do not know, and the validator says
so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from pyroaring import BitMap

from ..index_metadata import IndexMetadata
from .files import IndexFileContents, IndexFormatError, read_index_file
from .fst import FstError, decode_fst_map
from .postings import (
    BLOCK_SIZE,
    PositionsCodec,
    PostingFormatError,
    PostingList,
    TailCodec,
    decode_block_positions,
    decode_posting_list,
)

if TYPE_CHECKING:
    from ..dataset import Dataset

METADATA_FILE = "metadata.lance"
#: The ``format_version`` of the posting lists read here (pylance 14's).
NEWEST_FORMAT_VERSION = 2
#: A partition count above this is refused before any file is opened.
MAX_PARTITIONS = 1 << 16


class UnreadLayout(Exception):
    """A segment in a layout the reference does not read (not a corrupt one)."""

    def __init__(self, path: str, what: str):
        super().__init__(f"{path}: {what}")
        self.path = path
        self.what = what


@dataclass(frozen=True)
class TokenizerParams:
    """The recorded ``params`` (fts.md, "InvertedIndexParams Structure"),
    with the page's defaults for keys left out."""

    raw: dict
    base_tokenizer: str
    lance_tokenizer: str | None
    language: str
    with_position: bool
    max_token_length: int | None
    lower_case: bool
    stem: bool
    remove_stop_words: bool
    custom_stop_words: tuple[str, ...] | None
    ascii_folding: bool

    @classmethod
    def parse(cls, path: str, text: str) -> TokenizerParams:
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise IndexFormatError(path, f"params is not JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise IndexFormatError(path, "params is not a JSON object")

        def typed(key: str, kind: type | tuple[type, ...], default):
            value = raw.get(key, default)
            if value is not None and not isinstance(value, kind):
                raise IndexFormatError(path, f"params.{key} is {value!r}, not a {kind}")
            return value

        stop_words = typed("custom_stop_words", list, None)
        return cls(
            raw=raw,
            base_tokenizer=typed("base_tokenizer", str, "simple"),
            lance_tokenizer=typed("lance_tokenizer", str, None),
            language=typed("language", str, "English"),
            with_position=bool(typed("with_position", bool, False)),
            max_token_length=typed("max_token_length", int, 40),
            lower_case=bool(typed("lower_case", bool, True)),
            stem=bool(typed("stem", bool, True)),
            remove_stop_words=bool(typed("remove_stop_words", bool, True)),
            custom_stop_words=None if stop_words is None else tuple(str(word) for word in stop_words),
            ascii_folding=bool(typed("ascii_folding", bool, True)),
        )


@dataclass(frozen=True)
class Partition:
    """One partition's token set, documents and posting lists."""

    id: int
    #: Token by token id (the token set's values), bytes as stored.
    tokens: tuple[bytes, ...]
    #: The token ids as the token set maps them, in token order (for checks
    #: that they are dense and unique).
    token_ids: tuple[int, ...]
    token_next_id: int | None
    token_total_length: int | None
    #: Whether the fst's checksum matched (None: no fst, or no checksum).
    checksum_ok: bool | None
    #: Per document (its id is its position): what the index stores for the
    #: row (``_rowid``) and its token count.
    row_ids: np.ndarray
    num_tokens: np.ndarray
    #: ``total_tokens`` of the docs file's metadata, when present.
    total_tokens: int | None
    #: Per row of the invert file (a token id).
    postings: tuple[PostingList, ...]
    lengths: np.ndarray
    max_scores: np.ndarray
    #: Per token, per document of its postings, the positions (None without
    #: ``with_position``).
    positions: tuple[tuple[np.ndarray, ...], ...] | None


@dataclass(frozen=True)
class InvertedSegment:
    params: TokenizerParams
    metadata: dict[str, str]
    format_version: int
    partitions: tuple[Partition, ...]
    #: Fragments ``deleted_fragments`` names: the segment's rows in them are gone.
    deleted_fragments: tuple[int, ...]


def _text_metadata(contents: IndexFileContents) -> dict[str, str]:
    out = {}
    for key in contents.metadata:
        out[key] = contents.text(key)
    return out


def _integer(path: str, metadata: dict[str, str], key: str, default: int | None) -> int | None:
    if key not in metadata:
        return default
    try:
        return int(metadata[key])
    except ValueError:
        raise IndexFormatError(path, f"{key} is {metadata[key]!r}, not a decimal integer") from None


def read_inverted(dataset: Dataset, index: IndexMetadata) -> InvertedSegment:
    """The segment ``index`` of ``dataset``, decoded; raises
    :class:`IndexFormatError` for files that do not hold what the layout
    says and :class:`UnreadLayout` for a layout not read here."""
    meta = read_index_file(dataset, index, METADATA_FILE)
    metadata = _text_metadata(meta)
    path = meta.path
    params = TokenizerParams.parse(path, meta.text("params"))
    format_version = _integer(path, metadata, "format_version", 1) or 1
    if format_version != NEWEST_FORMAT_VERSION:
        # Version 1 (no key) is the posting layout of releases before the
        # block scores and codecs were recorded; it is not read here.
        raise UnreadLayout(path, f"posting format_version {format_version} (read: {NEWEST_FORMAT_VERSION})")
    block_size = _integer(path, metadata, "posting_block_size", BLOCK_SIZE)
    if block_size != BLOCK_SIZE:
        raise UnreadLayout(path, f"posting blocks of {block_size} documents (read: {BLOCK_SIZE})")
    try:
        partition_ids = json.loads(meta.text("partitions"))
    except ValueError:
        raise IndexFormatError(path, "partitions is not JSON") from None
    if not isinstance(partition_ids, list) or not all(
        isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in partition_ids
    ):
        raise IndexFormatError(path, f"partitions is {partition_ids!r}, not a list of partition ids")
    if len(partition_ids) > MAX_PARTITIONS:
        raise IndexFormatError(path, f"lists {len(partition_ids)} partitions, more than {MAX_PARTITIONS}")
    deleted = _deleted_fragments(meta)
    partitions = tuple(_partition(dataset, index, number, metadata, params) for number in partition_ids)
    return InvertedSegment(params, metadata, format_version, partitions, deleted)


def _deleted_fragments(meta: IndexFileContents) -> tuple[int, ...]:
    if "deleted_fragments" not in meta.table.column_names:
        return ()
    found: set[int] = set()
    for raw in meta.table.column("deleted_fragments").to_pylist():
        if not raw:
            continue
        try:
            found.update(BitMap.deserialize(bytes(raw)))
        except Exception as exc:  # pyroaring raises several types on bad input
            raise IndexFormatError(meta.path, f"deleted_fragments does not decode: {exc}") from None
    return tuple(sorted(found))


def _partition(dataset, index, number: int, metadata: dict[str, str], params: TokenizerParams) -> Partition:
    tokens_file = read_index_file(dataset, index, f"part_{number}_tokens.lance")
    docs = read_index_file(dataset, index, f"part_{number}_docs.lance")
    invert = read_index_file(dataset, index, f"part_{number}_invert.lance")
    tokens, token_ids, next_id, total_length, checksum_ok = _token_set(tokens_file, metadata)
    row_ids = _numbers(docs, "_rowid")
    num_tokens = _numbers(docs, "_num_tokens")
    total_tokens = _integer(docs.path, _text_metadata(docs), "total_tokens", None)
    invert_meta = _text_metadata(invert)
    tail_name = invert_meta.get("posting_tail_codec", metadata.get("posting_tail_codec", TailCodec.FIXED32.value))
    try:
        tail = TailCodec(tail_name)
    except ValueError:
        raise UnreadLayout(invert.path, f"posting_tail_codec {tail_name!r}") from None
    lengths = _numbers(invert, "_length")
    max_scores = np.asarray(invert.column("_max_score").to_numpy(zero_copy_only=False), dtype=np.float32)
    blocks = invert.column("_posting").to_pylist()
    postings = []
    for token_id, (token_blocks, length) in enumerate(zip(blocks, lengths.tolist(), strict=True)):
        try:
            postings.append(decode_posting_list(token_blocks or [], int(length), tail))
        except PostingFormatError as exc:
            raise IndexFormatError(invert.path, f"the postings of token id {token_id}: {exc}") from None
    positions = _positions(invert, invert_meta, postings) if params.with_position else None
    return Partition(
        number,
        tokens,
        token_ids,
        next_id,
        total_length,
        checksum_ok,
        row_ids,
        num_tokens,
        total_tokens,
        tuple(postings),
        lengths,
        max_scores,
        positions,
    )


def _numbers(contents: IndexFileContents, name: str) -> np.ndarray:
    column = contents.column(name)
    if column.null_count:
        raise IndexFormatError(contents.path, f"{name} holds {column.null_count} nulls")
    return np.asarray(column.to_numpy(), dtype=np.uint64)


def _token_set(contents: IndexFileContents, metadata: dict[str, str]):
    """Tokens by id, the ids in token order, the stored next id and total
    length, and the fst checksum result."""
    names = contents.table.column_names
    if "_token_fst_bytes" in names:
        if contents.table.num_rows != 1:
            raise IndexFormatError(contents.path, f"holds {contents.table.num_rows} rows, not the one fst row")
        raw = contents.column("_token_fst_bytes")[0].as_py() or b""
        try:
            fst = decode_fst_map(raw)
        except FstError as exc:
            raise IndexFormatError(contents.path, f"_token_fst_bytes: {exc}") from None
        keys, ids = fst.keys, fst.values
        next_id = int(_numbers(contents, "_token_next_id")[0]) if "_token_next_id" in names else None
        total = int(_numbers(contents, "_token_total_length")[0]) if "_token_total_length" in names else None
        checksum_ok = fst.checksum_ok
    elif "_token" in names:
        column = contents.column("_token")
        if column.null_count:
            raise IndexFormatError(contents.path, "_token holds nulls")
        keys = tuple(token.encode("utf-8") for token in column.to_pylist())
        ids = tuple(int(v) for v in _numbers(contents, "_token_id").tolist())
        next_id = total = checksum_ok = None
    else:
        raise UnreadLayout(contents.path, f"a token set of columns {names}")
    by_id: dict[int, bytes] = {}
    for key, token_id in zip(keys, ids, strict=True):
        by_id.setdefault(int(token_id), key)
    # Tokens by id where the ids are dense; a gap or repeat is for the rules
    # to report, so the tuple keeps what there is in id order.
    tokens = tuple(by_id[token_id] for token_id in sorted(by_id))
    return tokens, tuple(int(token_id) for token_id in ids), next_id, total, checksum_ok


def _positions(invert: IndexFileContents, metadata: dict[str, str], postings: list[PostingList]):
    names = invert.table.column_names
    layout = metadata.get("positions_layout")
    if layout != "shared_stream_v2" or "_position_block_offset" not in names:
        raise UnreadLayout(invert.path, f"positions in the layout {layout!r} (read: shared_stream_v2)")
    codec_name = metadata.get("positions_codec", "")
    try:
        codec = PositionsCodec(codec_name)
    except ValueError:
        raise UnreadLayout(invert.path, f"positions_codec {codec_name!r}") from None
    streams = invert.column("_compressed_position").to_pylist()
    offsets = invert.column("_position_block_offset").to_pylist()
    out = []
    for token_id, (stream, block_offsets, posting) in enumerate(zip(streams, offsets, postings, strict=True)):
        stream = bytes(stream or b"")
        block_offsets = list(block_offsets or [])
        blocks = (len(posting.doc_ids) + BLOCK_SIZE - 1) // BLOCK_SIZE
        if len(block_offsets) != blocks:
            raise IndexFormatError(
                invert.path, f"token id {token_id} has {len(block_offsets)} position block offsets for {blocks} blocks"
            )
        bounds = block_offsets + [len(stream)]
        documents: list[np.ndarray] = []
        for number in range(blocks):
            start, end = bounds[number], bounds[number + 1]
            if not 0 <= start <= end <= len(stream):
                raise IndexFormatError(invert.path, f"token id {token_id}: position block {number} at {start}..{end}")
            frequencies = posting.frequencies[number * BLOCK_SIZE : (number + 1) * BLOCK_SIZE]
            try:
                documents.extend(decode_block_positions(stream[start:end], frequencies, codec))
            except PostingFormatError as exc:
                raise IndexFormatError(invert.path, f"token id {token_id}, position block {number}: {exc}") from None
        out.append(tuple(documents))
    return tuple(out)
