"""Mutations for the BTREE index rules (conformance/validator/rules/index_btree.py).

The "plain" base has one BTREE segment, ``id_idx`` on ``id`` (fragments 0 to
3, rows deleted before it was built left out: 2,697 entries, keys 3 to 3,499
without 1,000 to 1,799, one page). pylance 14 bit-packs its columns, so each
mutation changes the segment's contents while keeping every file's size: it
flips one bit of a file and keeps the first flip whose decoded table shows
exactly the intended change (one key, one row id, one page bound), searching
the flip's target column's page buffers from their middle (or the whole
small lookup file), or re-encodes the lookup's schema metadata at its own
length. The manifests are left as they are: the files keep the sizes they
record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.arrow_schema import schema_from_arrow
from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.file_format.reader import LanceFileReader
from reference_impl.fragment_writer import encode_lance_file
from reference_impl.indices.btree import (
    BATCH_SIZE_KEY,
    DATA_FILE,
    LOOKUP_FILE,
    PAGES_PER_PARTITION_KEY,
    RANGE_PARTITIONED_KEY,
)
from reference_impl.storage import LocalStorage
from reference_impl.storage.memory import MemoryStorage
from reference_impl.wire import file_pb2

from ..edit import edit_untracked
from ..registry import mutation
from .indices import INDEXED_VERSIONS

INDEX_NAME = "id_idx"
#: Flips tried before a search gives up (each decodes a file of a few KiB).
MAX_TRIES = 20_000

Accept = Callable[[pa.Table, pa.Table], bool]


class NoSuchFlipError(RuntimeError):
    """No single-bit flip of the file makes the change a mutation wants."""


def _segment_file(root: Path, name: str) -> Path:
    (index,) = [i for i in Dataset.open(root).indices if i.name == INDEX_NAME]
    return Path(root) / "_indices" / index.uuid / name


def _decode(data: bytes) -> pa.Table | None:
    try:
        return LanceFileReader(MemoryStorage({"file": data}, "mutation"), "file").read()
    except Exception:  # a flipped bit can break the file in many ways; such a flip is simply not kept
        return None


def _middle_out(start: int, size: int) -> Iterable[int]:
    middle = start + size // 2
    for step in range(size):
        position = middle + (step + 1) // 2 * (1 if step % 2 else -1)
        if start <= position < start + size:
            yield position


def _column_positions(path: Path, column: int) -> list[int]:
    """Byte positions of the page buffers of a column, each from its middle."""
    metadata = read_v2_metadata(LocalStorage(path.parent), path.name)
    positions: list[int] = []
    for page in metadata.columns[column].pages:
        for offset, size in zip(page.buffer_offsets, page.buffer_sizes, strict=True):
            positions.extend(_middle_out(offset, size))
    return positions


def _flip_until(path: Path, accept: Accept, positions: Iterable[int]) -> None:
    """Flip the first bit (positions in order, high bits first) after which
    the file decodes to a table ``accept(original, changed)`` approves."""
    raw = path.read_bytes()
    original = _decode(raw)
    assert original is not None, f"{path} does not decode before the mutation"
    tries = 0
    for position in positions:
        for bit in range(7, -1, -1):
            changed = bytearray(raw)
            changed[position] ^= 1 << bit
            table = _decode(bytes(changed))
            if table is not None and table.num_rows == original.num_rows and accept(original, table):
                path.write_bytes(bytes(changed))
                return
            tries += 1
            if tries >= MAX_TRIES:
                raise NoSuchFlipError(f"{path}: no flip among the first {MAX_TRIES} made the change")
    raise NoSuchFlipError(f"{path}: no single-bit flip made the change")


def _one_change(original: pa.Table, changed: pa.Table, column: str) -> int | None:
    """The one position where ``column`` changed when nothing else did."""
    for name in original.column_names:
        if name != column and not original.column(name).equals(changed.column(name)):
            return None
    before = original.column(column).combine_chunks()
    after = changed.column(column).combine_chunks()
    same = pc.or_(pc.fill_null(pc.equal(before, after), False), pc.and_(pc.is_null(before), pc.is_null(after)))
    differs = np.flatnonzero(~np.asarray(same, dtype=bool))
    return int(differs[0]) if len(differs) == 1 else None


def _flip_in_data(root: Path, column: str, accept: Callable[[np.ndarray, int, int], bool]) -> None:
    """Change one entry of ``column`` (``values`` or ``ids``) of the page
    data; ``accept(old column, position, new value)``."""
    path = _segment_file(root, DATA_FILE)

    def check(original: pa.Table, changed: pa.Table) -> bool:
        at = _one_change(original, changed, column)
        if at is None:
            return False
        old = original.column(column).to_numpy()
        return accept(old, at, int(changed.column(column)[at].as_py()))

    _flip_until(path, check, _column_positions(path, ["values", "ids"].index(column)))


def _flip_in_lookup(root: Path, column: str, accept: Callable[[int, int], bool]) -> None:
    """Change page 0's ``column`` of the page lookup; ``accept(old, new)``.
    The lookup of one page keeps its values in the column metadata, near
    the end of the file: searched from there."""
    path = _segment_file(root, LOOKUP_FILE)

    def check(original: pa.Table, changed: pa.Table) -> bool:
        if _one_change(original, changed, column) != 0:
            return False
        return accept(original.column(column)[0].as_py(), changed.column(column)[0].as_py())

    _flip_until(path, check, range(path.stat().st_size - 1, -1, -1))


def _live_addresses(root: Path) -> set[int]:
    dataset = Dataset.open(root)
    live: set[int] = set()
    for fragment in dataset.fragments:
        deleted = set(dataset.deleted_offsets(fragment))
        live.update((fragment.id << 32) | offset for offset in range(fragment.physical_rows) if offset not in deleted)
    return live


@mutation("index-btree/files-decode")
def garble_the_batch_size(root):
    # "4096" -> "40x6": same length, so the file keeps its size.
    path = _segment_file(root, LOOKUP_FILE)
    raw = path.read_bytes()
    marker = BATCH_SIZE_KEY.encode()
    at = raw.index(b"4096", raw.index(marker))
    path.write_bytes(raw[:at] + b"40x6" + raw[at + 4 :])


@mutation("index-btree/page-layout")
def renumber_the_page(root):
    _flip_in_lookup(root, "page_idx", lambda old, new: new != old)


@mutation("index-btree/page-bounds")
def narrow_the_page_maximum(root):
    _flip_in_lookup(root, "max", lambda old, new: 3 <= new < old)


@mutation("index-btree/page-bounds")
def count_nulls_the_page_lacks(root):
    _flip_in_lookup(root, "null_count", lambda old, new: new != old)


@mutation("index-btree/keys-sorted", also=("index-btree/entries-valid",))
def change_a_key_out_of_order(root):
    # The new key stays within the page's bounds, so only the order (and
    # the row's value) is wrong.
    def accept(keys, at, new):
        return (
            0 < at < len(keys) - 1 and int(keys[0]) <= new <= int(keys[-1]) and not keys[at - 1] <= new <= keys[at + 1]
        )

    _flip_in_data(root, "values", accept)


@mutation("index-btree/entries-valid", also=("index-btree/rows-present",))
def move_a_row_id_onto_another_row(root):
    # The entry now names another live row (which then has two entries,
    # while the entry's own row has none).
    live = _live_addresses(root)
    _flip_in_data(root, "ids", lambda ids, at, new: new in live and new != int(ids[at]))


@mutation("index-btree/rows-present", also=("index-btree/entries-valid",))
def move_a_row_id_past_its_fragment(root):
    # The entry names an offset past the end of its fragment (no row), so
    # its own row has no entry. (The packed ids keep only the bits the
    # largest address needs, so no flip reaches a fragment not covered.)
    sizes = {fragment.id: fragment.physical_rows for fragment in Dataset.open(root).fragments}
    _flip_in_data(root, "ids", lambda ids, at, new: new & 0xFFFFFFFF >= sizes.get(new >> 32, 0) and new >> 32 in sizes)


@mutation("index-btree/files-decode")
def mark_the_segment_range_partitioned_without_its_page_counts(root):
    # "false" -> "true", the descriptor re-encoded at its own length: a
    # range-partitioned lookup without the key locating its pages (pylance
    # 14 panics reading it).
    path = _segment_file(root, LOOKUP_FILE)
    raw = path.read_bytes()
    position, size = read_v2_metadata(LocalStorage(path.parent), path.name).global_buffers[0]
    descriptor = file_pb2.FileDescriptor.FromString(raw[position : position + size])
    metadata = descriptor.schema.metadata
    metadata[RANGE_PARTITIONED_KEY] = b"true"
    # one byte shorter: "04096" still reads as 4096
    metadata[BATCH_SIZE_KEY] = b"0" * (size - len(descriptor.SerializeToString())) + bytes(metadata[BATCH_SIZE_KEY])
    encoded = descriptor.SerializeToString()
    assert len(encoded) == size, (len(encoded), size)
    path.write_bytes(raw[:position] + encoded + raw[position + size :])


@mutation("index-btree/sampled", breaks="index.btree-rows-present")
def rewrite_the_segment_range_partitioned(root):
    # A layout the reference does not read: skipped, and said so. The lookup
    # is written anew (larger), and the manifests record its new size.
    path = _segment_file(root, LOOKUP_FILE)
    reader = LanceFileReader(LocalStorage(path.parent), path.name)
    table = reader.read()
    metadata = dict(reader.metadata.descriptor.schema.metadata)
    metadata[RANGE_PARTITIONED_KEY] = b"true"
    metadata[PAGES_PER_PARTITION_KEY] = b"[[0,1]]"
    fields = schema_from_arrow(table.schema).fields
    major, minor = reader.metadata.version  # the file keeps its version
    data = encode_lance_file(table, fields, metadata, version=f"{major}.{minor}").data
    path.write_bytes(data)

    def record_size(manifest_file):
        for index in manifest_file.indices or []:
            for listed in index.files if index.name == INDEX_NAME else []:
                if listed.path == LOOKUP_FILE:
                    listed.size_bytes = len(data)

    for version in INDEXED_VERSIONS:
        edit_untracked(root, record_size, version=version)
