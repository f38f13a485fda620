"""Mutations for the BITMAP and LABEL_LIST rules
(conformance/validator/rules/index_bitmap.py).

Each starts from the "plain" base and has pylance 14 give it a list column
``labels`` (``["l{id % 3}", "l{id % 4}"]``, null where ``id % 5 == 0``), a
BITMAP index ``name_idx`` on ``name`` (one key per row, ``row {id}``, null
every fourth row) and a LABEL_LIST index ``labels_idx`` (keys ``l0`` to
``l3``); then it edits bytes of an index file in place. Every edit keeps
the file's size (a key changed, a row moved between keys, a bit flipped, a
fragment id or a Roaring cookie changed), since pylance 14 stores keys and
bitmaps verbatim: the size recorded in the manifest still matches, and only
the contents are wrong.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pyarrow as pa

from reference_impl.dataset import Dataset
from reference_impl.indices.bitmap import BITMAP_FILE, BITMAPS_COLUMN, KEYS_COLUMN
from reference_impl.indices.files import read_index_file
from reference_impl.indices.label_list import LIST_NULLS_KEY

from ..edit import edit_untracked
from ..registry import mutation

#: A fragment id no fragment of the base ever had.
NEVER_ASSIGNED_FRAGMENT = 0x7FFF


def _labels(batch: pa.RecordBatch) -> pa.RecordBatch:
    ids = batch.column("id").to_pylist()
    lists = [None if i % 5 == 0 else [f"l{i % 3}", f"l{i % 4}"] for i in ids]
    return pa.record_batch([pa.array(lists, pa.list_(pa.string()))], names=["labels"])


def _with_indices(root: Path) -> None:
    import lance  # lazy: pylance is optional (the test extra); only these mutations need it

    dataset = lance.dataset(str(root))
    dataset.add_columns(_labels, read_columns=["id"])
    dataset = lance.dataset(str(root))
    dataset.create_scalar_index("name", "BITMAP", name="name_idx")
    dataset.create_scalar_index("labels", "LABEL_LIST", name="labels_idx")


class _IndexFile:
    """The lookup file of one index of the mutated dataset, and its rows."""

    def __init__(self, root: Path, name: str):
        dataset = Dataset.open(str(root))
        (index,) = [index for index in dataset.indices if index.name == name]
        contents = read_index_file(dataset, index, BITMAP_FILE)
        self.path = root / "_indices" / index.uuid / BITMAP_FILE
        self.bitmaps = dict(
            zip(
                contents.column(KEYS_COLUMN).to_pylist(),
                contents.column(BITMAPS_COLUMN).to_pylist(),
                strict=True,
            )
        )
        self.buffers = contents.global_buffers

    def replace(self, *edits: tuple[bytes, bytes]) -> None:
        """Replace the one occurrence of each ``old`` with its ``new``, as
        long (all found before any is written)."""
        data = bytearray(self.path.read_bytes())
        positions = []
        for old, new in edits:
            if len(old) != len(new) or data.count(old) != 1:
                raise AssertionError(f"{len(old)} bytes to replace occur {data.count(old)} times in {self.path}")
            positions.append(data.find(old))
        for position, (_old, new) in zip(positions, edits, strict=True):
            data[position : position + len(new)] = new
        self.path.write_bytes(bytes(data))


def _date_forward(root: Path, name: str, index_version: int) -> None:
    """Record ``index_version`` for index ``name`` in the latest version,
    whose transaction record is dropped (the change is none an operation made)."""

    def edit(manifest_file):
        for index in manifest_file.indices:
            if index.name == name:
                index.index_version = index_version

    edit_untracked(root, edit)


def _first_fragment_field(raw: bytes, last: bool = False) -> int:
    """Where the id of the first (or last) fragment of a row address map is."""
    (count,) = struct.unpack_from("<I", raw, 0)
    position = 4
    for _ in range(count - 1 if last else 0):
        (size,) = struct.unpack_from("<I", raw, position + 4)
        position += 8 + size
    return position


def _first_value(raw: bytes) -> int:
    """Where the first u16 value of the first fragment's first container is
    (the fragment's bitmap: cookie, container count, keys and cardinalities,
    container offsets, then the containers)."""
    start = _first_fragment_field(raw) + 8
    (containers,) = struct.unpack_from("<I", raw, start + 4)
    return start + 8 + 8 * containers


def _with_value(raw: bytes, position: int, value: int) -> bytes:
    return raw[:position] + struct.pack("<H", value) + raw[position + 2 :]


def _shift_a_value_up(raw: bytes) -> bytes:
    """A bit flipped in the first container: its first value ``a`` with a gap
    after it becomes ``a + 1`` (order kept): row ``a`` leaves the set, row
    ``a + 1`` joins it."""
    position = _first_value(raw)
    while True:
        here, after = struct.unpack_from("<HH", raw, position)
        if after - here >= 2:
            return _with_value(raw, position, here + 1)
        position += 2


# -- BITMAP -----------------------------------------------------------------------


@mutation("index-bitmap/file-decodes", breaks="index.bitmap-file-layout")
def break_the_roaring_cookie_of_a_bitmap(root):
    _with_indices(root)
    index = _IndexFile(root, "name_idx")
    raw = index.bitmaps["row 10"]
    cookie = _first_fragment_field(raw) + 8
    index.replace((raw, raw[:cookie] + b"\xff\xff\xff\xff" + raw[cookie + 4 :]))


@mutation("index-bitmap/keys-unique", also=("index-bitmap/rows-match-values",))
def change_a_key_into_the_next(root):
    _with_indices(root)
    _IndexFile(root, "name_idx").replace((b"row 998row 999", b"row 999row 999"))


@mutation("index-bitmap/rows-match-values")
def swap_the_rows_of_two_keys(root):
    _with_indices(root)
    index = _IndexFile(root, "name_idx")
    ten, hundred_one = index.bitmaps["row 10"], index.bitmaps["row 101"]
    index.replace((ten, hundred_one), (hundred_one, ten))


@mutation("index-bitmap/null-rows-match")
def move_a_null_row_onto_a_deleted_row(root):
    # Row 4 (null) leaves the null bitmap; row 2, deleted before the index
    # was built and so under no key, joins it: no key but the null one changes.
    _with_indices(root)
    index = _IndexFile(root, "name_idx")
    raw = index.bitmaps[None]
    index.replace((raw, _with_value(raw, _first_value(raw), 2)))


@mutation("index-bitmap/rows-in-one-key", also=("index-bitmap/rows-match-values",))
def put_a_row_under_a_second_key(root):
    _with_indices(root)
    index = _IndexFile(root, "name_idx")
    raw = index.bitmaps["row 101"]
    index.replace((raw, _with_value(raw, _first_value(raw), 10)))


@mutation("index-bitmap/rows-exist", also=("index-bitmap/rows-match-values",))
def point_a_bitmap_at_a_fragment_never_written(root):
    _with_indices(root)
    index = _IndexFile(root, "name_idx")
    raw = index.bitmaps["row 10"]
    field = _first_fragment_field(raw)
    index.replace((raw, raw[:field] + struct.pack("<I", NEVER_ASSIGNED_FRAGMENT) + raw[field + 4 :]))


@mutation("index-bitmap/sampled")
def record_a_bitmap_version_the_page_does_not_define(root):
    # The segment is then skipped, as index.md says readers skip it: said as info.
    _with_indices(root)
    _date_forward(root, "name_idx", 7)


# -- LABEL_LIST --------------------------------------------------------------------


@mutation("index-label-list/file-decodes", breaks="index.label-list-file-layout")
def name_a_missing_buffer_for_the_list_nulls(root):
    _with_indices(root)
    key = LIST_NULLS_KEY.encode()
    # A map entry of the schema metadata: the key, then the value field (tag 2, length 1).
    _IndexFile(root, "labels_idx").replace((key + b"\x12\x011", key + b"\x12\x017"))


@mutation("index-label-list/keys-unique", also=("index-label-list/rows-match-labels",))
def change_a_label_into_another(root):
    _with_indices(root)
    _IndexFile(root, "labels_idx").replace((b"l0l1l2l3", b"l0l0l2l3"))


@mutation("index-label-list/rows-match-labels")
def flip_a_bit_of_a_label_bitmap(root):
    _with_indices(root)
    index = _IndexFile(root, "labels_idx")
    raw = index.bitmaps["l0"]
    index.replace((raw, _shift_a_value_up(raw)))


@mutation("index-label-list/list-nulls-match")
def flip_a_bit_of_the_list_null_set(root):
    _with_indices(root)
    index = _IndexFile(root, "labels_idx")
    raw = index.buffers[1]
    index.replace((raw, _shift_a_value_up(raw)))


@mutation("index-label-list/rows-exist", also=("index-label-list/rows-match-labels",))
def point_a_label_at_a_fragment_never_written(root):
    _with_indices(root)
    index = _IndexFile(root, "labels_idx")
    raw = index.bitmaps["l3"]
    field = _first_fragment_field(raw, last=True)
    index.replace((raw, raw[:field] + struct.pack("<I", NEVER_ASSIGNED_FRAGMENT) + raw[field + 4 :]))


@mutation("index-label-list/sampled")
def record_a_label_list_version_the_page_does_not_define(root):
    _with_indices(root)
    _date_forward(root, "labels_idx", 7)
