"""Writer of Lance data files versions 2.1 and 2.2 in their simplest valid
form (upstream ``docs/src/format/file/encoding.md``, "Structural Encoding";
messages in ``protos/encodings_v2_1.proto``).

Only leaves own columns in 2.1+ (a fixed-size list of fixed-width items is a
leaf). A column's rows are cut into pages of equal row slices of at most
32 MiB (as the 2.0 writer cuts them; each page's ``priority`` its first row,
as file2.proto asks of 2.1+ writers); each page takes one of three layouts,
with no compression at all:

=============================  ==============================================
what the leaf's visible items   page layout
=============================  ==============================================
all null (or none visible)      ``constant_layout`` (2.1's all-null layout):
                                raw u16 repetition / definition levels in
                                buffers 0 and 1
values of 256 bytes or more     ``full_zip_layout``: control word, value
(strings, binary, vectors)      length (u32, u64 for the large types) and value bytes
                                zipped item by item; buffer 1 the row start
                                positions, byte packed
anything else                   ``mini_block_layout``: chunks of a power of two
                                values (at most 4Ki, at most 32 KiB), levels
                                ``flat(16)``, values ``flat``, ``variable``
                                (u32 offsets, u64 for the large types) or ``fixed_size_list``
=============================  ==============================================

Levels (:class:`_Levels`) are computed top down over whole numpy arrays: every
row starts as one item; a null struct, null list or empty list ends an item
(it keeps a definition level naming the layer), a list with ``k`` items
becomes ``k`` items. Definition levels count from the innermost layer
outwards, repetition levels from the innermost list, as encoding.md
("Repetition and Definition Levels") describes; a layer is declared nullable
or emptyable when its Arrow array holds such a value, even one hidden by an
outer null, and nullable under a struct with nulls (pylance 14 pushes struct
nulls into the children and refuses a list layer declared all valid under a
null struct).

Mini block chunks cut the levels the way readers expect: a chunk holds the
levels up to and including its last visible value; levels of items hidden
behind null or empty lists after it open the next chunk, the last chunk takes
the rest. The repetition index counts, per chunk, the rows that finish in it
and the items left after the last finished row.

2.2 differs from 2.1, for this writer, in the mini block pages only:
pylance 14 refuses a 2.2 mini block page without ``has_large_chunk``
("Lance v2.2 miniblock pages require the u32 chunk grammar"), which makes
the chunk metadata words u32 and the chunk header's value buffer sizes u32
(the level count and level sizes stay u16; docs/spec-discrepancies.md, "File
format 2.1 and 2.2", item 2). Full zip and constant pages are the same
bytes in both versions. What 2.2 adds beyond that (constant pages with an
inline value, compressed constant-page levels, variable packed structs, maps)
is optional, and this writer does not use it.

The container (buffers aligned to 64 bytes, column metadata with a 2.0
``ColumnEncoding{values}`` per column, the file descriptor as global buffer
0, the footer saying 2.1 or 2.2) is the one :mod:`.writer` writes for 2.0.

Size. One cohesive concept (about 800 lines): Arrow to 2.1/2.2 pages, from
the levels through the three layouts to the container; the layouts share
the levels and the value buffers, so splitting them would spread one walk
over several modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..schema import Field
from ..type_grammar import BLOB_METADATA_KEY
from ..wire import encodings_v2_0_pb2 as enc20
from ..wire import encodings_v2_1_pb2 as enc
from ..wire import file2_pb2, file_pb2
from . import bitmaps
from .footer import MAGIC, pack_any
from .writer import BUFFER_ALIGNMENT, MAX_PAGE_BYTES, PADDING, FieldTree, WrittenFile, split_for_pages, whole_column

V2_1_VERSION = (2, 1)
V2_2_VERSION = (2, 2)
#: The file versions this module writes (footer and manifest ``major.minor``).
WRITABLE_VERSIONS = (V2_1_VERSION, V2_2_VERSION)
# Values from this size on go to a full zip page (the cut-off encoding.md
# gives for that layout).
FULL_ZIP_MIN_VALUE_BYTES = 256
MAX_CHUNK_VALUES = 4096
MAX_CHUNK_BYTES = 32 * 1024
CHUNK_ALIGNMENT = 8
PACKED_METADATA_KEY = "lance-encoding:packed"


@dataclass
class _Leaf:
    """What one leaf column stores: its layers, levels and visible values."""

    field: Field
    layers: list[enc.RepDefLayer]  # innermost first
    rep: np.ndarray | None  # u16 per item
    definition: np.ndarray | None  # u16 per item
    visible: np.ndarray  # bool per item: whether the item has a value slot
    values: pa.Array  # one per visible item (nulls where the item is null)
    num_rows: int
    declared: list[tuple[str, bool, bool]]  # the walk's layers, outermost first


#: Layers (as :attr:`_Levels.layers` lists them) a page must declare at least, by leaf field id.
_Declared = dict[int, list[tuple[str, bool, bool]]]


class _Levels:
    """The items of one leaf's path while walking down from the rows.

    ``index`` is each item's position in the array of the current layer
    (-1 once the item has ended), ``ended_at`` the layer (counted from the
    outermost) where it ended and ``reason`` why (0 null, 1 empty list);
    ``starts`` is the outermost list each item starts (``len(lists)`` when it
    starts none). ``declared`` widens the layers of the leaves it names (all
    pages of a column declare the same layers: see :func:`_leaf_pages`).
    """

    def __init__(self, num_rows: int, declared: _Declared | None = None):
        self.declared = declared or {}
        self.index = np.arange(num_rows, dtype=np.int64)
        self.ended_at = np.full(num_rows, -1, dtype=np.int64)
        self.reason = np.zeros(num_rows, dtype=np.int8)
        self.starts = np.zeros(num_rows, dtype=np.int64)
        self.layers: list[tuple[str, bool, bool]] = []  # outermost first: (kind, has_null, has_empty)
        self.num_lists = 0

    def copy(self) -> _Levels:
        other = _Levels(0, self.declared)
        other.index, other.ended_at, other.reason = self.index.copy(), self.ended_at.copy(), self.reason.copy()
        other.starts, other.layers, other.num_lists = self.starts.copy(), list(self.layers), self.num_lists
        return other

    def _end(self, where: np.ndarray, reason: int) -> bool:
        if not where.any():
            return False
        self.ended_at[where] = len(self.layers)
        self.reason[where] = reason
        self.index[where] = -1
        return True

    def _under_null_struct(self) -> bool:
        """Whether the layer just outside is a struct with nulls: pylance
        pushes a struct's nulls down into its children, so their layers are
        nullable too."""
        return bool(self.layers) and self.layers[-1][0] == "item" and self.layers[-1][1]

    def item_layer(self, array: pa.Array) -> None:
        """A struct or leaf: items whose value is null end here."""
        alive = self.index >= 0
        nulls = np.zeros(len(self.index), dtype=bool)
        if array.null_count:
            nulls[alive] = ~_validity(array)[self.index[alive]]
        # Declared from the whole array, as pylance does: pylance cannot
        # read a layer declared all valid when an outer null hides its nulls.
        has_null = self._end(nulls, 0) or array.null_count > 0 or self._under_null_struct()
        self.layers.append(("item", has_null, False))

    def list_layer(self, offsets: np.ndarray, array: pa.Array) -> None:
        """A list: null and empty lists end their items, others become their children."""
        alive = self.index >= 0
        lengths = np.diff(offsets)
        nulls = np.zeros(len(self.index), dtype=bool)
        if array.null_count:
            nulls[alive] = ~_validity(array)[self.index[alive]]
        empty = np.zeros(len(self.index), dtype=bool)
        empty[alive] = lengths[self.index[alive]] == 0
        empty &= ~nulls
        has_null = self._end(nulls, 0) or array.null_count > 0 or self._under_null_struct()
        has_empty = self._end(empty, 1) or bool(np.any((lengths == 0) & _validity(array)))
        self.layers.append(("list", has_null, has_empty))
        alive = self.index >= 0
        counts = np.ones(len(self.index), dtype=np.int64)
        counts[alive] = lengths[self.index[alive]]
        total = int(counts.sum())
        first = np.cumsum(counts) - counts
        within = np.arange(total, dtype=np.int64) - np.repeat(first, counts)
        parent_alive = np.repeat(alive, counts)
        first_child = np.full(len(self.index), -1, dtype=np.int64)
        first_child[alive] = offsets[:-1][self.index[alive]]
        index = np.repeat(first_child, counts) + within
        index[~parent_alive] = -1
        starts = np.repeat(self.starts, counts)
        # Only the first child keeps the parent's start; the others start a
        # new item of this list (the list just inside, if any).
        starts[within > 0] = self.num_lists + 1
        self.index = index
        self.starts = starts
        self.ended_at = np.repeat(self.ended_at, counts)
        self.reason = np.repeat(self.reason, counts)
        self.num_lists += 1

    def finish(self, field: Field, leaf: pa.Array, num_rows: int) -> _Leaf:
        """The leaf's layers and levels, innermost first as the format counts them."""
        wider = self.declared.get(field.id)
        if wider is not None:
            self.layers = [
                (kind, has_null or null, has_empty or empty)
                for (kind, has_null, has_empty), (_, null, empty) in zip(self.layers, wider, strict=True)
            ]
        outer_first: list[enc.RepDefLayer] = []
        for kind, has_null, has_empty in self.layers:
            if kind == "item":
                outer_first.append(enc.REPDEF_NULLABLE_ITEM if has_null else enc.REPDEF_ALL_VALID_ITEM)
            elif has_null and has_empty:
                outer_first.append(enc.REPDEF_NULL_AND_EMPTY_LIST)
            elif has_null:
                outer_first.append(enc.REPDEF_NULLABLE_LIST)
            elif has_empty:
                outer_first.append(enc.REPDEF_EMPTYABLE_LIST)
            else:
                outer_first.append(enc.REPDEF_ALL_VALID_LIST)
        # Definition level of (layer, reason), numbered from the innermost layer.
        level_of = np.zeros((len(outer_first), 2), dtype=np.int64)
        base = 0
        for position in reversed(range(len(outer_first))):
            layer = outer_first[position]
            if layer == enc.REPDEF_NULLABLE_ITEM or layer == enc.REPDEF_NULLABLE_LIST:
                level_of[position, 0] = base + 1
                base += 1
            elif layer == enc.REPDEF_EMPTYABLE_LIST:
                level_of[position, 1] = base + 1
                base += 1
            elif layer == enc.REPDEF_NULL_AND_EMPTY_LIST:
                level_of[position, 0], level_of[position, 1] = base + 1, base + 2
                base += 2
        ended = self.ended_at >= 0
        definition = None
        if base:
            definition = np.zeros(len(self.index), dtype=np.uint16)
            definition[ended] = level_of[self.ended_at[ended], self.reason[ended]]
        rep = None
        if self.num_lists:
            rep = (self.num_lists - self.starts).astype(np.uint16)
        innermost_list = max((i for i, (kind, _, _) in enumerate(self.layers) if kind == "list"), default=-1)
        visible = ~ended | (self.ended_at > innermost_list)
        taken = self.index[visible]
        values = (
            leaf.take(pa.array(np.maximum(taken, 0), mask=taken < 0)) if len(leaf) else pa.nulls(len(taken), leaf.type)
        )
        return _Leaf(field, outer_first[::-1], rep, definition, visible, values, num_rows, self.layers)


def _validity(array: pa.Array) -> np.ndarray:
    return array.is_valid().to_numpy(zero_copy_only=False)


# -- collecting leaves ----------------------------------------------------------


def _is_packed(node: Field, data_type: pa.DataType) -> bool:
    value = node.metadata.get(PACKED_METADATA_KEY)
    return value is not None and pa.types.is_struct(data_type) and str(value).lower() not in ("false", "0", "")


def _collect(tree: FieldTree, node: Field, array: pa.Array, levels: _Levels, num_rows: int, out: list[_Leaf]) -> None:
    if isinstance(array.type, pa.BaseExtensionType):
        array = array.storage
    data_type = array.type
    children = tree.children[node.id]
    if not node.nullable and array.null_count:
        raise ValueError(f"field {node.name!r} is not nullable but holds {array.null_count} null value(s)")
    if BLOB_METADATA_KEY in node.metadata or _is_packed(node, data_type) or pa.types.is_dictionary(data_type):
        raise ValueError(f"field {node.name!r}: blob, packed and dictionary fields are not written by the 2.1 writer")
    if pa.types.is_struct(data_type):
        names = [data_type.field(i).name for i in range(data_type.num_fields)]
        if [c.name for c in children] != names:
            raise ValueError(f"field {node.name!r} has child fields {[c.name for c in children]} but Arrow has {names}")
        levels.item_layer(array)
        for position, child in enumerate(children):
            _collect(tree, child, array.field(position), levels.copy(), num_rows, out)
        return
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        if len(children) != 1:
            raise ValueError(f"list field {node.name!r} needs one child field, has {len(children)}")
        offsets = _offsets(array)
        levels.list_layer(offsets, array)
        _collect(tree, children[0], array.values, levels, num_rows, out)
        return
    if children:
        raise ValueError(f"field {node.name!r} has child fields but its Arrow type {data_type} is a leaf")
    if not (_is_variable(data_type) or _fixed_bits(data_type) or pa.types.is_null(data_type)):
        raise ValueError(f"field {node.name!r}: Arrow type {data_type} is not supported by the 2.1 writer")
    levels.item_layer(array)
    out.append(levels.finish(node, array, num_rows))


def _offsets(array: pa.Array) -> np.ndarray:
    """The ``len + 1`` offsets of a list array into ``array.values``."""
    dtype = np.int64 if pa.types.is_large_list(array.type) else np.int32
    buffer = array.buffers()[1]
    count = array.offset + len(array) + 1
    if buffer is None or buffer.size < count * np.dtype(dtype).itemsize:
        return np.zeros(len(array) + 1, dtype=np.int64)
    return np.frombuffer(buffer, dtype=dtype, count=count)[array.offset :].astype(np.int64)


def _is_variable(data_type: pa.DataType) -> bool:
    return (
        pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_binary(data_type)
        or pa.types.is_large_binary(data_type)
    )


def _fixed_bits(data_type: pa.DataType) -> int:
    """Bits of one value of a fixed-width type (0 when it is not one)."""
    if pa.types.is_boolean(data_type):
        return 1
    if pa.types.is_fixed_size_list(data_type):
        inner = _fixed_bits(data_type.value_type)
        return inner * data_type.list_size
    if pa.types.is_nested(data_type) or _is_variable(data_type) or pa.types.is_null(data_type):
        return 0
    try:
        return data_type.bit_width
    except ValueError:
        return 0


# -- values -----------------------------------------------------------------------


def _fixed_bytes(values: pa.Array) -> np.ndarray:
    """The value bytes of a fixed-width array (a fixed-size list flattened),
    booleans one bit each."""
    if pa.types.is_fixed_size_list(values.type):
        size = values.type.list_size
        items = values.values.slice(values.offset * size, len(values) * size)
        return _fixed_bytes(items)
    if pa.types.is_boolean(values.type):
        return np.frombuffer(bitmaps.pack_bits(values.buffers()[1], values.offset, len(values)), dtype=np.uint8)
    width = values.type.bit_width // 8
    buffer = values.buffers()[1]
    if buffer is None:
        return np.zeros(len(values) * width, dtype=np.uint8)
    return np.frombuffer(buffer, dtype=np.uint8)[values.offset * width : (values.offset + len(values)) * width]


def _fsl_items(values: pa.Array) -> pa.Array:
    size = values.type.list_size
    return values.values.slice(values.offset * size, len(values) * size)


def _fsl_item_nulls(values: pa.Array) -> bool:
    """Whether a fixed-size list holds a null item inside a valid list (the
    items behind a null list do not matter), at any depth."""
    if not pa.types.is_fixed_size_list(values.type):
        return False
    items = _fsl_items(values)
    if values.null_count:
        items = items.filter(pa.array(np.repeat(_validity(values), values.type.list_size)))
    return items.null_count > 0 or _fsl_item_nulls(items)


def _fsl_item_bitmap(values: pa.Array) -> bytes:
    """The items' validity of a fixed-size list, one bit per item (the
    ``has_validity`` buffer of the ``FixedSizeList`` encoding)."""
    return bitmaps.pack_mask(_validity(_fsl_items(values)))


def _offset_bytes(data_type: pa.DataType) -> int:
    """Width of stored offsets and lengths: pylance wants 64 bits for the
    large types, 32 for the others."""
    return 8 if pa.types.is_large_string(data_type) or pa.types.is_large_binary(data_type) else 4


def _value_compression(data_type: pa.DataType) -> enc.CompressiveEncoding:
    if _is_variable(data_type):
        offsets = enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=8 * _offset_bytes(data_type)))
        return enc.CompressiveEncoding(variable=enc.Variable(offsets=offsets))
    if pa.types.is_fixed_size_list(data_type):
        inner = _value_compression(data_type.value_type)
        return enc.CompressiveEncoding(
            fixed_size_list=enc.FixedSizeList(items_per_value=data_type.list_size, values=inner)
        )
    return enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=_fixed_bits(data_type)))


def _variable_parts(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(lengths, bytes) of variable-width values, nulls empty."""
    large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    dtype = np.int64 if large else np.int32
    offsets_buffer, data_buffer = values.buffers()[1], values.buffers()[2]
    if offsets_buffer is None or len(values) == 0:
        return np.zeros(len(values), dtype=np.int64), np.zeros(0, dtype=np.uint8)
    offsets = np.frombuffer(offsets_buffer, dtype=dtype, count=values.offset + len(values) + 1)[values.offset :]
    offsets = offsets.astype(np.int64)
    lengths = np.diff(offsets)
    if values.null_count:
        lengths[~_validity(values)] = 0
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    keep = np.repeat(offsets[:-1] - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
    return lengths, data[keep]


# -- pages --------------------------------------------------------------------------


@dataclass
class _Page:
    layout: enc.PageLayout
    buffers: list[bytes]
    num_rows: int
    first_row: int = 0  # of the file: the page's priority


def _pad8(size: int) -> int:
    return -size % CHUNK_ALIGNMENT


def _encode_leaf(leaf: _Leaf, large_chunks: bool) -> _Page:
    values = leaf.values
    num_visible = len(values)
    if num_visible == 0 or values.null_count == num_visible or pa.types.is_null(values.type):
        return _constant_page(leaf)
    if _is_variable(values.type):
        lengths, data = _variable_parts(values)
        if int(lengths.max()) >= FULL_ZIP_MIN_VALUE_BYTES:
            return _full_zip_page(leaf, lengths, data, variable=True)
        return _mini_block_page(leaf, lengths, data, large_chunks=large_chunks)
    item_validity = _fsl_item_nulls(values)
    if item_validity and _fsl_item_nulls(_fsl_items(values)):
        raise ValueError(
            f"field {leaf.field.name!r}: nested fixed-size lists with null items are not written by the 2.1 writer"
        )
    bits = _fixed_bits(values.type)
    if item_validity:
        return _mini_block_page(leaf, None, None, item_validity=True, large_chunks=large_chunks)
    if bits >= 8 * FULL_ZIP_MIN_VALUE_BYTES and bits % 8 == 0:
        width = bits // 8
        lengths = np.full(num_visible, width, dtype=np.int64)
        return _full_zip_page(leaf, lengths, _fixed_bytes(values), variable=False)
    return _mini_block_page(leaf, None, None, large_chunks=large_chunks)


def _levels_bytes(levels: np.ndarray | None) -> bytes:
    return b"" if levels is None else levels.astype("<u2").tobytes()


def _constant_page(leaf: _Leaf) -> _Page:
    layout = enc.ConstantLayout(layers=leaf.layers)
    buffers = []
    if leaf.rep is not None or leaf.definition is not None:
        buffers = [_levels_bytes(leaf.rep), _levels_bytes(leaf.definition)]
    return _Page(enc.PageLayout(constant_layout=layout), buffers, leaf.num_rows)


def _mini_block_page(
    leaf: _Leaf,
    lengths: np.ndarray | None,
    data: np.ndarray | None,
    *,
    item_validity: bool = False,
    large_chunks: bool = False,
) -> _Page:
    """Chunks of a power of two visible values, each at most 32 KiB; with
    ``item_validity`` (fixed-size lists with null items) each chunk's first
    value buffer is the items' validity bitmap. With ``large_chunks`` (2.2)
    the chunk metadata words and the chunks' value buffer sizes are u32
    (``has_large_chunk``), the level count and level sizes stay u16."""
    values = leaf.values
    num_values = len(values)
    num_levels = len(leaf.visible)
    has_levels = leaf.rep is not None or leaf.definition is not None
    # Position just after each visible value's item, among all items.
    ends_at = np.flatnonzero(leaf.visible) + 1
    level_buffers = sum(x is not None for x in (leaf.rep, leaf.definition))
    value_buffers = 2 if item_validity else 1
    size_word = np.dtype("<u4") if large_chunks else np.dtype("<u2")
    header = 2 + 2 * level_buffers + size_word.itemsize * value_buffers
    header += _pad8(header)
    width = _offset_bytes(values.type)
    if lengths is not None:
        value_starts = np.concatenate([[0], np.cumsum(lengths)])
    else:
        bits = _fixed_bits(values.type)

    def level_range(first: int, count: int, last: bool) -> tuple[int, int]:
        start = 0 if first == 0 else int(ends_at[first - 1])
        end = num_levels if last else int(ends_at[first + count - 1])
        return (start, end) if has_levels else (first, first + count)

    def chunk_size(first: int, count: int, last: bool) -> int:
        start, end = level_range(first, count, last)
        size = header + level_buffers * ((end - start) * 2 + _pad8((end - start) * 2))
        if lengths is not None:
            body = width * (count + 1) + int(value_starts[first + count] - value_starts[first])
            body += -body % width
        else:
            body = (count * bits + 7) // 8
        if item_validity:
            bitmap = (count * values.type.list_size + 7) // 8
            size += bitmap + _pad8(bitmap)
        return size + body + _pad8(body)

    chunks: list[bytes] = []
    metadata: list[int] = []
    rep_index: list[tuple[int, int]] = []
    first = 0
    max_rep = int(leaf.rep.max()) if leaf.rep is not None else 0
    while first < num_values:
        remaining = num_values - first
        if remaining <= MAX_CHUNK_VALUES and chunk_size(first, remaining, True) <= MAX_CHUNK_BYTES:
            count, log, last = remaining, 0, True
        else:
            log = min(12, remaining.bit_length() - 1)
            while log > 0 and chunk_size(first, 1 << log, False) > MAX_CHUNK_BYTES:
                log -= 1
            count, last = 1 << log, False
            if count == remaining:
                last, log = True, 0
            if chunk_size(first, count, last) > MAX_CHUNK_BYTES:
                raise ValueError(f"field {leaf.field.name!r}: a value or its levels do not fit a 32 KiB mini block")
        start, end = level_range(first, count, last)
        bodies = [_chunk_values(values, first, count, lengths, data, value_starts if lengths is not None else None)]
        if item_validity:
            bodies.insert(0, _fsl_item_bitmap(values.slice(first, count)))
        level_pieces = [_levels_bytes(x[start:end]) for x in (leaf.rep, leaf.definition) if x is not None]
        level_sizes = [end - start if has_levels else 0, *(len(p) for p in level_pieces)]
        head = np.array(level_sizes, dtype="<u2").tobytes() + np.array([len(b) for b in bodies], size_word).tobytes()
        pieces = [head]
        pieces.append(b"\0" * _pad8(len(pieces[0])))
        for piece in [*level_pieces, *bodies]:
            pieces.append(piece)
            pieces.append(b"\0" * _pad8(len(piece)))
        chunk = b"".join(pieces)
        chunks.append(chunk)
        metadata.append(((len(chunk) // CHUNK_ALIGNMENT - 1) << 4) | log)
        if leaf.rep is not None:
            rep_index.append(_rep_index_entry(leaf.rep[start:end], max_rep, first == 0, last, rep_index))
        first += count
    value_compression = _value_compression(values.type)
    if item_validity:
        value_compression.fixed_size_list.has_validity = True
    layout = enc.MiniBlockLayout(
        value_compression=value_compression,
        layers=leaf.layers,
        num_buffers=value_buffers,
        num_items=num_values,
        has_large_chunk=large_chunks,
    )
    level_encoding = enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=16))
    if leaf.rep is not None:
        layout.rep_compression.CopyFrom(level_encoding)
        layout.repetition_index_depth = 1
    if leaf.definition is not None:
        layout.def_compression.CopyFrom(level_encoding)
    buffers = [np.array(metadata, dtype=size_word).tobytes(), b"".join(chunks)]
    if leaf.rep is not None:
        buffers.append(np.array(rep_index, dtype="<u8").reshape(-1).tobytes())
    return _Page(enc.PageLayout(mini_block_layout=layout), buffers, leaf.num_rows)


def _chunk_values(values, first, count, lengths, data, value_starts) -> bytes:
    """The value buffer of a chunk: fixed-width bytes, or u32 offsets from the
    buffer's start followed by the bytes."""
    if lengths is None:
        part = values.slice(first, count)
        return _fixed_bytes(part).tobytes()
    width = _offset_bytes(values.type)
    begin, end = int(value_starts[first]), int(value_starts[first + count])
    offsets = width * (count + 1) + (value_starts[first : first + count + 1] - begin)
    body = offsets.astype(f"<u{width}").tobytes() + data[begin:end].tobytes()
    # pylance wants the buffer in whole offset-sized words.
    return body + b"\0" * (-len(body) % width)


def _rep_index_entry(
    rep: np.ndarray, max_rep: int, is_first: bool, is_last: bool, previous: list[tuple[int, int]]
) -> tuple[int, int]:
    """(rows finishing in the chunk, items left after the last of them).

    A row finishes where the next one starts (the maximum repetition level);
    the start at the chunk's first item finishes the previous chunk's row,
    which that chunk may have counted as left over."""
    new_rows = np.flatnonzero(rep == max_rep)
    rows = int(np.count_nonzero(new_rows > 0))
    if is_last:
        leftovers = 0
        rows += 1
    else:
        leftovers = len(rep) - int(new_rows[-1]) if len(new_rows) else len(rep)
    if not is_first and len(rep) and rep[0] == max_rep and previous and previous[-1][1] != 0:
        previous[-1] = (previous[-1][0] + 1, 0)
    return rows, leftovers


def _full_zip_page(leaf: _Leaf, lengths: np.ndarray, data: np.ndarray, *, variable: bool) -> _Page:
    """Control word, length (variable values) and bytes, item by item."""
    bits_rep = int(leaf.rep.max()).bit_length() if leaf.rep is not None and len(leaf.rep) else 0
    bits_def = int(leaf.definition.max()).bit_length() if leaf.definition is not None and len(leaf.definition) else 0
    if leaf.rep is not None:
        bits_rep = max(bits_rep, 1)
    if leaf.definition is not None:
        bits_def = max(bits_def, 1)
    total_bits = bits_rep + bits_def
    word_bytes = 0 if total_bits == 0 else 1 if total_bits <= 8 else 2 if total_bits <= 16 else 4
    num_items = len(leaf.visible)
    rep = leaf.rep.astype(np.uint32) if leaf.rep is not None else np.zeros(num_items, np.uint32)
    definition = leaf.definition.astype(np.uint32) if leaf.definition is not None else np.zeros(num_items, np.uint32)
    words = (rep << bits_def) | definition
    # Bytes each item takes: its word, then for a visible item its value
    # (a variable value's length too, and nothing for a null one).
    item_size = np.full(num_items, word_bytes, dtype=np.int64)
    value_size = np.zeros(num_items, dtype=np.int64)
    visible_positions = np.flatnonzero(leaf.visible)
    prefix_bytes = _offset_bytes(leaf.values.type)
    if variable:
        valid = definition[visible_positions] == 0
        value_size[visible_positions[valid]] = prefix_bytes + lengths[valid]
    else:
        value_size[visible_positions] = lengths
    item_size += value_size
    starts = np.cumsum(item_size) - item_size
    out = np.zeros(int(item_size.sum()), dtype=np.uint8)
    if word_bytes:
        word_bytes_array = words.astype(f"<u{word_bytes}").view(np.uint8).reshape(num_items, word_bytes)
        for byte in range(word_bytes):
            out[starts + byte] = word_bytes_array[:, byte]
    value_starts = starts + word_bytes
    if variable:
        valid_items = visible_positions[definition[visible_positions] == 0]
        valid_lengths = value_size[valid_items] - prefix_bytes
        prefix = valid_lengths.astype(f"<u{prefix_bytes}").view(np.uint8).reshape(-1, prefix_bytes)
        for byte in range(prefix_bytes):
            out[value_starts[valid_items] + byte] = prefix[:, byte]
        body_starts = value_starts[valid_items] + prefix_bytes
    else:
        valid_lengths = value_size[visible_positions]
        body_starts = value_starts[visible_positions]
    total = int(valid_lengths.sum())
    if total:
        shift = np.repeat(body_starts - (np.cumsum(valid_lengths) - valid_lengths), valid_lengths)
        out[np.arange(total, dtype=np.int64) + shift] = data[:total]
    layout = enc.FullZipLayout(
        bits_rep=bits_rep,
        bits_def=bits_def,
        num_items=num_items,
        num_visible_items=len(visible_positions),
        value_compression=_value_compression(leaf.values.type),
        layers=leaf.layers,
    )
    if variable:
        layout.bits_per_offset = 8 * prefix_bytes
    else:
        layout.bits_per_value = 8 * int(lengths[0])
    buffers = [out.tobytes()]
    if variable or leaf.rep is not None:
        row_starts = starts[rep == int(rep.max())] if leaf.rep is not None else starts
        index = np.append(row_starts, len(out)).astype(np.uint64)
        width = next(w for w in (1, 2, 4, 8) if len(out) < 1 << (8 * w))
        buffers.append(index.astype(f"<u{width}").tobytes())
    return _Page(enc.PageLayout(full_zip_layout=layout), buffers, leaf.num_rows)


# -- file assembly --------------------------------------------------------------------


def _assemble(
    columns: list[list[_Page]],
    descriptor: file_pb2.FileDescriptor,
    version: tuple[int, int],
    extra_buffers: Sequence[bytes] = (),
) -> list:
    chunks: list = []
    position = 0

    def append(data, *, pad: bool) -> int:
        nonlocal position
        start = position
        chunks.append(data)
        position += len(data)
        padding = -len(data) % BUFFER_ALIGNMENT if pad else 0
        if padding:
            chunks.append(PADDING[:padding])
            position += padding
        return start

    column_encoding = file2_pb2.Encoding(
        direct=file2_pb2.DirectEncoding(encoding=pack_any(enc20.ColumnEncoding(values={})))
    )
    column_messages = []
    for pages in columns:
        message = file2_pb2.ColumnMetadata(encoding=column_encoding)
        for page in pages:
            offsets = [append(buffer, pad=True) for buffer in page.buffers]
            message.pages.append(
                file2_pb2.ColumnMetadata.Page(
                    buffer_offsets=offsets,
                    buffer_sizes=[len(buffer) for buffer in page.buffers],
                    length=page.num_rows,
                    encoding=file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(page.layout))),
                    # file2.proto: 2.1+ writers order pages by their first row.
                    priority=page.first_row,
                )
            )
        column_messages.append(message)
    descriptor_bytes = descriptor.SerializeToString(deterministic=True)
    global_buffers = [(append(descriptor_bytes, pad=False), len(descriptor_bytes))]
    for buffer in extra_buffers:
        # pylance refuses a 2.1+ file whose global buffers past the first do not start 64-byte aligned.
        if position % BUFFER_ALIGNMENT:
            append(PADDING[: -position % BUFFER_ALIGNMENT], pad=False)
        global_buffers.append((append(bytes(buffer), pad=False), len(buffer)))
    column_metadata_start = position
    locations = []
    for message in column_messages:
        raw = message.SerializeToString(deterministic=True)
        locations.append((append(raw, pad=False), len(raw)))
    column_table_start = position
    append(np.array(locations, dtype="<u8").reshape(-1).tobytes(), pad=False)
    buffer_table_start = position
    append(np.array(global_buffers, dtype="<u8").reshape(-1).tobytes(), pad=False)
    footer = np.array([column_metadata_start, column_table_start, buffer_table_start], dtype="<u8").tobytes()
    footer += np.array([len(global_buffers), len(columns)], dtype="<u4").tobytes()
    footer += np.array(version, dtype="<u2").tobytes() + MAGIC
    append(footer, pad=False)
    return chunks


def write_v2_1(
    table: pa.Table,
    fields: list[Field],
    schema_metadata: dict[str, bytes] | None = None,
    *,
    version: tuple[int, int] = V2_1_VERSION,
    max_page_bytes: int = MAX_PAGE_BYTES,
    global_buffers: Sequence[bytes] = (),
) -> WrittenFile:
    """Encode ``table`` as a Lance data file of ``version`` (2.1 or 2.2).

    ``fields`` are the schema fields of the table's columns (top-level fields
    in column order, children found by ``parent_id``); all of them are
    stored as the file's schema, the leaves own the columns. A column is cut
    into pages of equal row slices of at most ``max_page_bytes`` (Arrow
    bytes) each, as the 2.0 writer cuts them. Raises
    ValueError when the table does not fit the fields or holds something this
    writer does not write (blob, packed struct and dictionary fields,
    fixed-size lists with null items), or for another ``version``.
    ``global_buffers`` follow the descriptor (global buffer 0), as in a 2.0
    file (index files keep data there).
    """
    if version not in WRITABLE_VERSIONS:
        raise ValueError(f"file version {version} is not one this writer writes ({WRITABLE_VERSIONS})")
    tree = FieldTree(fields)
    names = [f.name for f in tree.top_level]
    if names != table.column_names:
        raise ValueError(f"top-level fields {names} do not match the table's columns {table.column_names}")
    # 2.2 readers accept mini block pages only with 32-bit chunk words.
    large_chunks = version >= V2_2_VERSION
    columns: list[tuple[Field, list[_Page]]] = []
    for node, column in zip(tree.top_level, table.columns, strict=True):
        columns += _leaf_pages(tree, node, whole_column(column), large_chunks, max_page_bytes)
    schema = file_pb2.Schema(fields=[f.to_proto() for f in _depth_first(tree)])
    for key, value in (schema_metadata or {}).items():
        schema.metadata[key] = value
    descriptor = file_pb2.FileDescriptor(schema=schema, length=table.num_rows)
    return WrittenFile(
        fields=[field.id for field, _ in columns],
        column_indices=list(range(len(columns))),
        num_rows=table.num_rows,
        chunks=_assemble([pages for _, pages in columns], descriptor, version, global_buffers),
        major=version[0],
        minor=version[1],
    )


def _leaf_pages(
    tree: FieldTree, node: Field, array: pa.Array, large_chunks: bool, max_page_bytes: int
) -> list[tuple[Field, list[_Page]]]:
    """The leaf columns of top-level field ``node``, each with its pages: one
    per row slice, none for an empty column (as pylance skips empty batches).

    Every page of a column declares the layers the whole column needs (a
    layer nullable or emptyable in one page is so in all): pylance 14 sizes a
    struct's validity from the declarations and fails on a column whose pages
    differ ("Incorrect number of nulls for StructArray"); its own writer
    declares the same layers in every page of a column."""
    leaves: list[_Leaf] = []
    _collect(tree, node, array, _Levels(len(array)), len(array), leaves)
    if len(array) == 0:
        return [(leaf.field, []) for leaf in leaves]
    parts = split_for_pages(array, max_bytes=max_page_bytes)
    if len(parts) == 1:
        return [(leaf.field, [_encode_leaf(leaf, large_chunks)]) for leaf in leaves]
    declared = {leaf.field.id: leaf.declared for leaf in leaves}
    columns: list[tuple[Field, list[_Page]]] = []
    first_row = 0
    for part in parts:
        leaves = []
        _collect(tree, node, part, _Levels(len(part), declared), len(part), leaves)
        if not columns:
            columns = [(leaf.field, []) for leaf in leaves]
        for (_, pages), leaf in zip(columns, leaves, strict=True):
            page = _encode_leaf(leaf, large_chunks)
            page.first_row = first_row
            pages.append(page)
        first_row += len(part)
    return columns


def _depth_first(tree: FieldTree) -> list[Field]:
    ordered: list[Field] = []

    def walk(node: Field) -> None:
        ordered.append(node)
        for child in tree.children[node.id]:
            walk(child)

    for node in tree.top_level:
        walk(node)
    return ordered
