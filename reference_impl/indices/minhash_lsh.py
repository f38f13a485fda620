"""The MinHash LSH index (upstream format/index/scalar/minhash_lsh.md): per
segment, ``signatures.lance`` (one row per indexed text: its row and its
``num_hashes`` 16-bit MinHash values) and ``bands.lance`` (one row per band
key and document, sorted by key then document, with a page table of the
largest key of every logical page in a global buffer).

:func:`parse_details` decodes ``MinHashLshIndexDetails`` (protos/index.proto:
``num_hashes`` = 1, ``num_bands`` = 2, ``shingle_size`` = 3, ``tokenizer`` =
4, a ``lance.table.InvertedIndexDetails``, ``signature_version`` = 5) and
checks the ranges of "Index Details". :func:`read_minhash_lsh` reads both
files as the page's "Opening a Segment" does; :func:`segment_of` decodes
files already read. Both raise :class:`IndexFormatError` for files that do
not hold what the page says. The signature procedure is
:mod:`.minhash_signature`; :func:`text_tokens` gives the tokens it starts
from where the tokenizer is one the project defines exactly
(:mod:`.fts_tokenizer`).

Layouts (``minhash_lsh_index_version``): the page defines 1, whose
signature rows name their row by physical ``_rowaddr``, and says 0 "stored
row ids": pylance 14 writes layout 0 (and ``index_version`` 0), whose
column is ``_rowid``: the stable row id where the dataset has them, else the
row address (docs/spec-discrepancies.md, "MINHASH_LSH").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..index_metadata import IndexMetadata
from . import fts_tokenizer
from .files import IndexFileContents, IndexFormatError, read_index_file
from .inverted import TokenizerParams
from .wire_fields import WireFormatError, message_fields, text_field

if TYPE_CHECKING:
    from ..dataset import Dataset

SIGNATURES_FILE = "signatures.lance"
BANDS_FILE = "bands.lance"
DETAILS_KEY = "minhash_lsh_details"
VERSION_KEY = "minhash_lsh_index_version"
NUM_DOCS_KEY = "minhash_lsh_num_docs"
PAGE_ROWS_KEY = "minhash_lsh_page_rows"
PAGE_TABLE_KEY = "minhash_lsh_page_table_buffer"
SIGNATURE, BAND_KEY, DOC_ID = "signature", "band_key", "doc_id"
#: The row column of each file layout the reference reads.
ROW_COLUMNS = {0: "_rowid", 1: "_rowaddr"}
#: "Index Details": the ranges a reader checks before reading a file.
MAX_NUM_HASHES, MAX_NUM_BANDS = 4096, 256


class DetailsError(ValueError):
    """Details bytes that are not a ``MinHashLshIndexDetails`` in range."""


@dataclass(frozen=True)
class MinHashDetails:
    num_hashes: int
    num_bands: int
    shingle_size: int
    signature_version: int
    #: The tokenizer as the FTS index records it (its wire fields by number).
    tokenizer_fields: tuple[tuple[int, object], ...]
    tokenizer: TokenizerParams

    @property
    def rows_per_band(self) -> int:
        return self.num_hashes // self.num_bands


def _uint(fields: dict, number: int, name: str) -> int:
    value = fields.get(number, [0])[-1]
    if not isinstance(value, int):
        raise DetailsError(f"{name} is not a varint")
    return value


def _tokenizer(raw: bytes) -> TokenizerParams:
    """The tokenizer settings (InvertedIndexDetails, index_old.proto) the
    project's tokenizer reads; the language is recorded as JSON text
    (``"English"`` with its quotes) by pylance 14."""
    try:
        fields = message_fields(raw)
    except WireFormatError as exc:
        raise DetailsError(f"the tokenizer: {exc}") from None

    def text(number: int, default: str) -> str:
        try:
            return text_field(fields, number, f"tokenizer field {number}", default) or default
        except WireFormatError as exc:
            raise DetailsError(str(exc)) from None

    def flag(number: int) -> bool:
        return bool(fields.get(number, [0])[-1])

    max_length = fields.get(4, [None])[-1]
    if max_length is not None and not isinstance(max_length, int):
        raise DetailsError("tokenizer max_token_length is not a varint")
    language = text(2, "")
    return TokenizerParams(
        raw={number: values[-1] for number, values in fields.items()},
        base_tokenizer=text(1, "simple"),
        lance_tokenizer=None,
        language=language.strip('"'),
        with_position=flag(3),
        max_token_length=max_length,
        lower_case=flag(5),
        stem=flag(6),
        remove_stop_words=flag(7),
        custom_stop_words=None,
        ascii_folding=flag(8),
    )


def parse_details(details: bytes | None) -> MinHashDetails:
    """The details of a segment, checked against "Index Details"'s ranges
    (:class:`DetailsError` otherwise)."""
    try:
        fields = message_fields(bytes(details or b""))
    except WireFormatError as exc:
        raise DetailsError(str(exc)) from None
    num_hashes = _uint(fields, 1, "num_hashes")
    num_bands = _uint(fields, 2, "num_bands")
    shingle_size = _uint(fields, 3, "shingle_size")
    version = _uint(fields, 5, "signature_version")
    if not 1 <= num_bands <= MAX_NUM_BANDS:
        raise DetailsError(f"num_bands is {num_bands}, not in [1, {MAX_NUM_BANDS}]")
    if not 1 <= num_hashes <= MAX_NUM_HASHES or num_hashes % num_bands:
        raise DetailsError(f"num_hashes is {num_hashes}, not in [1, {MAX_NUM_HASHES}] and a multiple of {num_bands}")
    if shingle_size < 1:
        raise DetailsError("shingle_size is 0")
    raw_tokenizer = fields.get(4, [None])[-1]
    if not isinstance(raw_tokenizer, bytes):
        raise DetailsError("the tokenizer, which is required, is missing")
    tokenizer = _tokenizer(raw_tokenizer)
    # By field number only: a hostile message may repeat a number with values of two wire types.
    recorded = message_fields(raw_tokenizer)
    flat = tuple((number, value) for number in sorted(recorded) for value in recorded[number])
    return MinHashDetails(num_hashes, num_bands, shingle_size, version, flat, tokenizer)


def text_tokens(details: MinHashDetails, value: str | None) -> list[bytes] | None:
    """The tokens of ``value`` as the index's tokenizer emits them (UTF-8),
    or None where the project does not define them exactly (see
    :func:`tokens_undefined`; a non-ASCII value). A null value has none."""
    if value is None:
        return []
    if tokens_undefined(details) is not None:
        return None
    pairs = fts_tokenizer.tokens(details.tokenizer, value)
    return None if pairs is None else [token.encode("utf-8") for token, _ in pairs]


def tokens_undefined(details: MinHashDetails) -> str | None:
    """None when :func:`text_tokens` applies (ASCII values) to the index's
    tokenizer, else why not."""
    return fts_tokenizer.defined_exactly(details.tokenizer)


# -- the files ---------------------------------------------------------------------


@dataclass(frozen=True)
class Signatures:
    path: str
    layout: int
    #: What each document's row column holds (row ids in layout 0, row
    #: addresses in 1), by document id.
    rows: np.ndarray
    #: ``(documents, num_hashes)`` uint16.
    values: np.ndarray


@dataclass(frozen=True)
class Bands:
    path: str
    layout: int
    keys: np.ndarray
    doc_ids: np.ndarray
    num_docs: int
    page_rows: int
    page_table: np.ndarray


@dataclass(frozen=True)
class MinHashSegment:
    details: MinHashDetails
    signatures: Signatures
    bands: Bands

    @property
    def rows_are_addresses(self) -> bool:
        return self.signatures.layout >= 1


def _number(contents: IndexFileContents, key: str) -> int:
    text = contents.text(key)
    if not text.isascii() or not text.isdigit():
        raise IndexFormatError(contents.path, f"{key} is {text!r}, not a decimal number")
    return int(text)


def _file_header(contents: IndexFileContents, details: MinHashDetails) -> int:
    """The file's layout version, after checking that its recorded details
    are the segment's, field by field."""
    text = contents.text(DETAILS_KEY)
    try:
        recorded = parse_details(bytes.fromhex(text))
    except ValueError as exc:  # DetailsError and bad hexadecimal alike
        raise IndexFormatError(contents.path, f"{DETAILS_KEY} does not decode: {exc}") from None
    if recorded != details:
        raise IndexFormatError(contents.path, f"{DETAILS_KEY} records {recorded}, not the segment's {details}")
    layout = _number(contents, VERSION_KEY)
    if layout not in ROW_COLUMNS:
        raise IndexFormatError(contents.path, f"{VERSION_KEY} {layout} is a layout the reference does not read")
    return layout


def _column(contents: IndexFileContents, name: str, data_type: pa.DataType) -> pa.Array:
    field = contents.table.schema.field(name) if name in contents.table.column_names else None
    if field is None or field.type != data_type:
        found = field.type if field is not None else "missing"
        raise IndexFormatError(contents.path, f"column {name!r} is {found}, not {data_type}")
    column = contents.column(name).combine_chunks()
    if column.null_count:
        raise IndexFormatError(contents.path, f"column {name!r} holds {column.null_count} nulls")
    return column


def _signatures(contents: IndexFileContents, details: MinHashDetails) -> Signatures:
    layout = _file_header(contents, details)
    rows = _column(contents, ROW_COLUMNS[layout], pa.uint64()).to_numpy()
    signature = _column(contents, SIGNATURE, pa.list_(pa.uint16(), details.num_hashes))
    flat = signature.flatten()
    if flat.null_count:
        raise IndexFormatError(contents.path, f"{flat.null_count} signature values are null")
    values = flat.to_numpy(zero_copy_only=False).reshape(len(rows), details.num_hashes)
    return Signatures(contents.path, layout, rows, values)


def _bands(contents: IndexFileContents, details: MinHashDetails, documents: int) -> Bands:
    layout = _file_header(contents, details)
    keys = _column(contents, BAND_KEY, pa.uint64()).to_numpy()
    doc_ids = _column(contents, DOC_ID, pa.uint32()).to_numpy()
    num_docs, page_rows, buffer = (_number(contents, key) for key in (NUM_DOCS_KEY, PAGE_ROWS_KEY, PAGE_TABLE_KEY))
    if page_rows == 0:
        raise IndexFormatError(contents.path, f"{PAGE_ROWS_KEY} is 0")
    if num_docs != documents:
        raise IndexFormatError(
            contents.path, f"{NUM_DOCS_KEY} is {num_docs} but {SIGNATURES_FILE} has {documents} rows"
        )
    if not 0 < buffer < len(contents.global_buffers):
        raise IndexFormatError(contents.path, f"{PAGE_TABLE_KEY} {buffer} names no global buffer of the file")
    raw = contents.global_buffers[buffer]
    pages = -(-len(keys) // page_rows)
    if len(raw) != 8 * pages:
        raise IndexFormatError(
            contents.path, f"the page table holds {len(raw)} bytes, not 8 for each of the {pages} pages"
        )
    if len(doc_ids) and int(doc_ids.max()) >= num_docs:
        raise IndexFormatError(contents.path, f"doc_id {int(doc_ids.max())} is not below {NUM_DOCS_KEY} {num_docs}")
    return Bands(contents.path, layout, keys, doc_ids, num_docs, page_rows, np.frombuffer(raw, dtype="<u8"))


def segment_of(index: IndexMetadata, signatures: IndexFileContents, bands: IndexFileContents) -> MinHashSegment:
    """Decode a segment's two files, already read, as "Opening a Segment"
    does."""
    try:
        details = parse_details(index.details)
    except DetailsError as exc:
        raise IndexFormatError(signatures.path, f"the segment's details are not usable: {exc}") from None
    decoded = _signatures(signatures, details)
    banded = _bands(bands, details, len(decoded.rows))
    if banded.layout != decoded.layout:
        raise IndexFormatError(bands.path, f"{VERSION_KEY} {banded.layout}, but {decoded.layout} in {SIGNATURES_FILE}")
    return MinHashSegment(details, decoded, banded)


def read_minhash_lsh(dataset: Dataset, index: IndexMetadata) -> MinHashSegment:
    """Segment ``index`` of ``dataset``, both files read whole."""
    return segment_of(
        index, read_index_file(dataset, index, SIGNATURES_FILE), read_index_file(dataset, index, BANDS_FILE)
    )
