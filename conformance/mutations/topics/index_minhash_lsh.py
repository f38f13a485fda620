"""Mutations for the MINHASH_LSH index rules
(conformance/validator/rules/index_minhash_lsh.py), on the ``minhash_lsh``
base (conformance/mutations/bases.py, :func:`build_minhash_lsh`).

Each keeps the size of the file it changes, the way a faulty writer or a
damaged disk would: in ``bands.lance`` (stored without compression, as the
page says) a metadata value spoiled, two documents of a bucket swapped, a
page table entry or a band key changed; in a data file of format 2.0 (its
strings are stored as their bytes) a row's text changed, so that its
stored signature or its very presence no longer follows from it. Values
are located through the files' own structure (a column's page buffers, a
global buffer), never by a position guessed from outside.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.indices.minhash_lsh import BANDS_FILE, NUM_DOCS_KEY, PAGE_TABLE_KEY, read_minhash_lsh
from reference_impl.indices.types import IndexType
from reference_impl.storage import LocalStorage

from ..edit import overwrite_once
from ..registry import mutation

BASE = "minhash_lsh"


def _column_buffers(path: Path, column: str) -> list[tuple[int, int]]:
    """(position, size) of every page buffer of the column ``column`` (one
    column per field of these flat files, in schema order)."""
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    assert metadata.descriptor is not None
    names = [field.name for field in metadata.descriptor.schema.fields]
    pages = metadata.columns[names.index(column)].pages
    return [pair for page in pages for pair in zip(page.buffer_offsets, page.buffer_sizes, strict=True)]


def _descriptor_region(path: Path) -> list[tuple[int, int]]:
    """Global buffer 0, the file descriptor holding the schema metadata."""
    return [read_v2_metadata(LocalStorage(path.parent), path.name).global_buffers[0]]


def _bands(root: Path):
    dataset = Dataset.open(root)
    (index,) = [index for index in dataset.indices if IndexType.of(index) is IndexType.MINHASH_LSH]
    path = Path(root) / dataset.index_file_location(index, BANDS_FILE).relpath
    return read_minhash_lsh(dataset, index), path


def _edit_text(root: Path, old: str, new: str) -> None:
    """Replace the text ``old`` of one row with ``new`` (as long) in the data file holding it."""
    assert len(old.encode()) == len(new.encode()), (old, new)
    holding = [p for p in (Path(root) / "data").glob("*.lance") if p.read_bytes().count(old.encode()) == 1]
    assert len(holding) == 1, holding
    data = holding[0].read_bytes()
    holding[0].write_bytes(data.replace(old.encode(), new.encode()))


@mutation("index-minhash-lsh/file", base=BASE)
def spoil_the_document_count(root):
    """minhash_lsh_num_docs in bands.lance's schema metadata one off the rows of signatures.lance."""
    segment, path = _bands(root)
    count = str(segment.bands.num_docs).encode()
    other = str(segment.bands.num_docs - 1).encode()
    other = other if len(other) == len(count) else str(segment.bands.num_docs + 1).encode()
    key = NUM_DOCS_KEY.encode()
    overwrite_once(
        path,
        key + b"\x12" + bytes([len(count)]) + count,
        key + b"\x12" + bytes([len(other)]) + other,
        _descriptor_region(path),
    )


def _count(data: bytes, pattern: bytes) -> int:
    """Occurrences of ``pattern`` in ``data``, overlapping ones included."""
    count, at = 0, data.find(pattern)
    while at >= 0:
        count, at = count + 1, data.find(pattern, at + 1)
    return count


@mutation("index-minhash-lsh/bands-sorted", base=BASE)
def swap_two_documents_of_a_bucket(root):
    """Two neighbouring rows of one bucket trade their doc_id: the pairs are
    the same, their order is not."""
    segment, path = _bands(root)
    keys, docs = segment.bands.keys, segment.bands.doc_ids
    regions = _column_buffers(path, "doc_id")
    data = path.read_bytes()
    for row in np.flatnonzero(keys[1:] == keys[:-1]).tolist():
        pair = struct.pack("<II", int(docs[row]), int(docs[row + 1]))
        if sum(_count(data[p : p + s], pair) for p, s in regions) == 1:
            overwrite_once(path, pair, struct.pack("<II", int(docs[row + 1]), int(docs[row])), regions)
            return
    raise AssertionError("no bucket of two documents to swap")


@mutation("index-minhash-lsh/page-table", base=BASE)
def change_a_page_table_entry(root):
    """The page table's first entry one above its page's last key."""
    _, path = _bands(root)
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    position, _ = metadata.global_buffers[_page_table_buffer(path)]
    data = bytearray(path.read_bytes())
    entry = struct.unpack_from("<Q", data, position)[0]
    struct.pack_into("<Q", data, position, entry + 1)
    path.write_bytes(bytes(data))


def _page_table_buffer(path: Path) -> int:
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    assert metadata.descriptor is not None
    return int(metadata.descriptor.schema.metadata[PAGE_TABLE_KEY])


@mutation("index-minhash-lsh/band-keys", base=BASE)
def change_a_band_key(root):
    """One band key, alone in its bucket and not the last of its page, one
    higher: still sorted, but no longer its signature's."""
    segment, path = _bands(root)
    keys, page_rows = segment.bands.keys, segment.bands.page_rows
    alone = (keys[1:-1] > keys[:-2]) & (keys[1:-1] + np.uint64(1) < keys[2:])
    row = next(int(r) + 1 for r in np.flatnonzero(alone) if (int(r) + 2) % page_rows)
    old = int(keys[row])
    overwrite_once(path, struct.pack("<Q", old), struct.pack("<Q", old + 1), _column_buffers(path, "band_key"))


@mutation("index-minhash-lsh/rows-indexed", base=BASE)
def blank_an_indexed_text(root):
    """Row 10's text becomes spaces (no tokens) while its document stays."""
    _edit_text(root, "unique words of row 0010 here", " " * len("unique words of row 0010 here"))


@mutation("index-minhash-lsh/signatures", base=BASE)
def change_an_indexed_text(root):
    """Row 10's text names another row: its stored signature is now another text's."""
    _edit_text(root, "unique words of row 0010 here", "unique words of row 0011 here")


@mutation("index-minhash-lsh/sampled", breaks="index.minhash-lsh-rows-indexed", base=BASE)
def defer_the_minhash_remap(root):
    """pylance 14 compacts with the remap deferred and appends a row: the
    segment's documents under the compacted fragment go unchecked, and the
    info says so."""
    import lance  # lazy: pylance is optional (the test extra), as for the bases

    dataset = lance.dataset(str(root))
    dataset.optimize.compact_files(target_rows_per_fragment=5000, defer_index_remap=True)
    lance.write_dataset(dataset.to_table(limit=1), str(root), mode="append")
