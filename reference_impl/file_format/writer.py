"""Writer of Lance data files version 2.0 (file format: v2 layout, 2.0 encodings).

:func:`write_v2_0` turns an Arrow table into the bytes of one data file,
choosing the encodings pylance 14 chooses for ``data_storage_version="2.0"``
and none of the compressing ones (there are none by default in 2.0):

========================  ===================================================
Arrow type                page encoding (``protos/encodings_v2_0.proto``)
========================  ===================================================
fixed width (ints,        ``nullable{no_nulls|some_nulls|all_nulls}`` around
floats, bool, decimal,    ``flat{bits_per_value}``; validity is a ``flat(1)``
dates, times, ...)        bitmap in the page's first buffer
fixed_size_list           the same wrapper around ``fixed_size_list{items}``,
                          whose items carry their own wrapper
string, binary and the    ``binary{indices: nullable.no_nulls.flat(64),
large variants            bytes: flat(8), null_adjustment}``
string with at least 100  ``dictionary{indices: u8 codes (0 = null),
rows and fewer than 100   items: binary}``
distinct values
list, large_list          an offsets column ``list{offsets:
                          nullable.no_nulls.flat(64), null_offset_adjustment,
                          num_items}`` followed by the item columns
struct                    a header column with one ``struct{}`` page and no
                          buffers, followed by the child columns
large_binary marked       column encoding ``blob{inner: values}``; pages
``lance-encoding:blob``   ``packed_struct`` of (position u64, size u64) per
                          row, the values written elsewhere in the file
========================  ===================================================

Columns are numbered depth first, one per field (fixed-size lists are leaf
fields). Each page buffer is written at the current position and padded to a
multiple of 64 bytes with the byte ``0x48``, as pylance does; then come the
file descriptor (global buffer 0, unpadded), the column metadata, the two
offsets tables and the footer.

The table is treated as pylance treats a single batch: a column is split
into equal pages of at most 32 MiB, and the pages of columns over 8 MiB are
written first (pylance writes those as the batch arrives, the rest when the
file is finished). Given the same schema fields, the file is then byte for
byte the one pylance writes (checked by the tests); only sizes within a few
bytes of those thresholds may be judged differently, since pylance measures
Arrow memory rather than data bytes.

Blob columns (:func:`_encode_blob_page`) keep their values out of the pages:
every non-empty value is a buffer of its own, padded like a page buffer, and
these buffers open the file, in column order (depth first) and row order,
ahead of every page, because pylance writes them the moment a batch arrives.
The page of a blob column describes each row by the absolute position and
the size of its value: ``(0, 0)`` for an empty value (nothing is written),
``(1, 0)`` for a null. Whether a blob column is written early or split into
pages is judged on its descriptions (16 bytes a row), the array pylance
buffers, not on the values.

Version 2.0 cannot store struct validity: a struct with nulls is refused, as
pylance refuses it.

Size. One cohesive concept (about 670 lines): encoding Arrow as the 2.0
encodings; the 2.1 file format will be a writer module of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import TOP_LEVEL_PARENT, Field
from ..storage import Storage
from ..type_grammar import BLOB_METADATA_KEY
from ..wire import encodings_v2_0_pb2 as enc
from ..wire import file2_pb2, file_pb2
from . import bitmaps
from .footer import MAGIC, V2_0_FOOTER_VERSION, pack_any

BUFFER_ALIGNMENT = 64
PADDING = b"\x48" * BUFFER_ALIGNMENT
MAX_PAGE_BYTES = 32 * 1024 * 1024
# pylance buffers up to this much of a column before writing pages; a column
# (of one batch) larger than this is written as soon as the batch arrives,
# ahead of the smaller columns, which wait for the end of the file.
COLUMN_CACHE_BYTES = 8 * 1024 * 1024
# pylance dictionary-encodes a utf8 page of at least this many rows whose
# distinct non-null values number fewer than this (it estimates the count
# with HyperLogLog, which is exact at this size).
DICTIONARY_THRESHOLD = 100
# Rows looked at before counting the distinct values of a whole page, so that
# a high-cardinality column is rejected cheaply.
DICTIONARY_PROBE_ROWS = 4096
# A blob description: the value's position in the file and its size, u64 each.
BLOB_DESCRIPTION_BYTES = 16
# Position of a null blob value, described (1, 0): a zero-size range needs
# no position, so pylance marks nulls with it (an empty value is (0, 0)).
BLOB_NULL_POSITION = 1


@dataclass
class WrittenFile:
    """A data file ready to store, with the ``DataFile`` facts a manifest needs.

    ``fields`` lists the field ids stored in the file (depth first) and
    ``column_indices`` the column of each (-1 would mean no column of its
    own; version 2.0 gives every field one). ``major``/``minor`` are the
    version a manifest records (the footer itself says 0.3).

    The file's bytes are kept as the list of pieces they are made of (many
    of them views of the table's own buffers): :attr:`data` joins them on
    first use, :meth:`write_to` streams them without building one copy.
    """

    fields: list[int]
    column_indices: list[int]
    num_rows: int
    chunks: list = dc_field(repr=False, compare=False)
    major: int = 2
    minor: int = 0

    @property
    def size(self) -> int:
        return sum(len(chunk) for chunk in self.chunks)

    @property
    def data(self) -> bytes:
        if len(self.chunks) != 1 or not isinstance(self.chunks[0], bytes):
            self.chunks = [b"".join(self.chunks)]
        return self.chunks[0]

    def write_to(self, handle) -> None:
        """Write the file's bytes to a binary file object."""
        for chunk in self.chunks:
            handle.write(chunk)


@dataclass
class _Page:
    length: int
    encoding: enc.ArrayEncoding
    buffers: list = dc_field(default_factory=list)
    # Written with the batch (before the pages of smaller columns).
    early: bool = False

    def add_buffer(self, data) -> int:
        """Append a page buffer and return its index within the page."""
        self.buffers.append(data)
        return len(self.buffers) - 1


@dataclass
class _Column:
    field_id: int
    pages: list[_Page] = dc_field(default_factory=list)
    # A blob column: its ColumnEncoding says so (``blob{inner: values}``).
    blob: bool = False


# -- protobuf builders --------------------------------------------------------


def _flat(bits_per_value: int, buffer_index: int) -> enc.ArrayEncoding:
    return enc.ArrayEncoding(flat=enc.Flat(bits_per_value=bits_per_value, buffer=enc.Buffer(buffer_index=buffer_index)))


def _no_nulls(values: enc.ArrayEncoding) -> enc.ArrayEncoding:
    return enc.ArrayEncoding(nullable=enc.Nullable(no_nulls=enc.Nullable.NoNull(values=values)))


def _some_nulls(validity: enc.ArrayEncoding, values: enc.ArrayEncoding) -> enc.ArrayEncoding:
    return enc.ArrayEncoding(nullable=enc.Nullable(some_nulls=enc.Nullable.SomeNull(validity=validity, values=values)))


def _all_nulls() -> enc.ArrayEncoding:
    return enc.ArrayEncoding(nullable=enc.Nullable(all_nulls=enc.Nullable.AllNull()))


# -- Arrow buffer access ------------------------------------------------------


def _is_binary_like(data_type: pa.DataType) -> bool:
    return (
        pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_binary(data_type)
        or pa.types.is_large_binary(data_type)
    )


def _is_fixed_width(data_type: pa.DataType) -> bool:
    if pa.types.is_boolean(data_type):
        return True
    if pa.types.is_fixed_size_list(data_type):
        return _is_fixed_width(data_type.value_type)
    if pa.types.is_dictionary(data_type) or pa.types.is_nested(data_type) or _is_binary_like(data_type):
        return False
    try:
        return data_type.bit_width > 0
    except ValueError:
        return False


def _offsets(array: pa.Array) -> np.ndarray:
    """The ``len + 1`` offsets of a list or binary array, slice applied."""
    wide = (
        pa.types.is_large_string(array.type)
        or pa.types.is_large_binary(array.type)
        or pa.types.is_large_list(array.type)
    )
    dtype = np.int64 if wide else np.int32
    buffer = array.buffers()[1]
    count = array.offset + len(array) + 1
    if buffer is None or buffer.size < count * np.dtype(dtype).itemsize:
        # Empty arrays may come without an offsets buffer.
        return np.zeros(len(array) + 1, dtype=dtype)
    return np.frombuffer(buffer, dtype=dtype, count=count)[array.offset :]


def _stored_ends(offsets: np.ndarray, validity: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Lance's per-value end offsets and the adjustment marking nulls.

    Ends are counted from the first value; a null value's end is increased by
    the adjustment (one more than the total length), so ``end >= adjustment``
    means null. An empty array has adjustment 0, as pylance writes it.
    """
    ends = (offsets[1:] - offsets[0]).astype(np.uint64)
    if len(ends) == 0:
        return ends, 0
    adjustment = int(ends[-1]) + 1
    if validity is not None:
        ends[~validity] += np.uint64(adjustment)
    return ends, adjustment


def _fixed_width_values(array: pa.Array) -> bytes | memoryview:
    """The value bytes of a fixed-width array (not nested), slice applied."""
    if pa.types.is_boolean(array.type):
        return bitmaps.pack_bits(array.buffers()[1], array.offset, len(array))
    width = array.type.bit_width // 8
    buffer = array.buffers()[1]
    if buffer is None:
        return b""
    return memoryview(buffer)[array.offset * width : (array.offset + len(array)) * width]


def _fsl_items(array: pa.FixedSizeListArray) -> pa.Array:
    """The items of a fixed-size-list array, slice applied (``.values`` ignores it)."""
    size = array.type.list_size
    return array.values.slice(array.offset * size, len(array) * size)


def _list_items(array: pa.Array, offsets: np.ndarray) -> pa.Array:
    start = int(offsets[0])
    return array.values.slice(start, int(offsets[-1]) - start)


# -- page encoders ------------------------------------------------------------


def _encode_basic(array: pa.Array, page: _Page) -> enc.ArrayEncoding:
    """A fixed-width (or fixed-size-list) array under the nullable wrapper."""
    if len(array) == 0 or array.null_count == len(array):
        return _all_nulls()
    if array.null_count:
        validity_index = page.add_buffer(bitmaps.validity_bitmap(array))
        return _some_nulls(_flat(1, validity_index), _encode_fixed_width(array, page))
    return _no_nulls(_encode_fixed_width(array, page))


def _encode_fixed_width(array: pa.Array, page: _Page) -> enc.ArrayEncoding:
    if pa.types.is_fixed_size_list(array.type):
        items = _encode_basic(_fsl_items(array), page)
        return enc.ArrayEncoding(
            fixed_size_list=enc.FixedSizeList(dimension=array.type.list_size, items=items, has_validity=False)
        )
    values_index = page.add_buffer(_fixed_width_values(array))
    return _flat(array.type.bit_width, values_index)


def _encode_binary(array: pa.Array, page: _Page) -> enc.ArrayEncoding:
    """Variable-width values; nulls live in the indices, there is no wrapper."""
    if len(array) and array.null_count == len(array):
        # Like pylance, an all-null page stores empty values whatever bytes
        # the Arrow array keeps behind its nulls.
        ends, adjustment = _stored_ends(np.zeros(len(array) + 1, dtype=np.int64), np.zeros(len(array), bool))
        data: bytes | memoryview = b""
    else:
        offsets = _offsets(array)
        validity = bitmaps.validity_mask(array) if array.null_count else None
        ends, adjustment = _stored_ends(offsets, validity)
        data_buffer = array.buffers()[2]
        data = b"" if data_buffer is None else memoryview(data_buffer)[int(offsets[0]) : int(offsets[-1])]
    indices_index = page.add_buffer(ends.tobytes())
    bytes_index = page.add_buffer(data)
    return enc.ArrayEncoding(
        binary=enc.Binary(
            indices=_no_nulls(_flat(64, indices_index)),
            bytes=_flat(8, bytes_index),
            null_adjustment=adjustment,
        )
    )


def _wants_dictionary(array: pa.Array) -> bool:
    """pylance's rule for dictionary-encoding a 2.0 page of utf8 strings."""
    if not pa.types.is_string(array.type) or len(array) < DICTIONARY_THRESHOLD:
        return False
    probe = array.slice(0, DICTIONARY_PROBE_ROWS)
    if pc.count_distinct(probe, mode="only_valid").as_py() >= DICTIONARY_THRESHOLD:
        return False
    return pc.count_distinct(array, mode="only_valid").as_py() < DICTIONARY_THRESHOLD


def _encode_dictionary(array: pa.Array, page: _Page) -> enc.ArrayEncoding:
    """u8 codes (0 for null, i + 1 for item i, items in order of first
    appearance) and the items as a binary array."""
    encoded = pc.dictionary_encode(array)
    codes = pc.add(encoded.indices.fill_null(-1), 1).to_numpy(zero_copy_only=False).astype(np.uint8)
    items = encoded.dictionary
    if len(items) == 0:
        # pylance keeps one null item rather than an empty dictionary.
        items = pa.array([None], array.type)
    codes_index = page.add_buffer(codes.tobytes())
    items_encoding = _encode_binary(items, page)
    return enc.ArrayEncoding(
        dictionary=enc.Dictionary(
            indices=_no_nulls(_flat(8, codes_index)), items=items_encoding, num_dictionary_items=len(items)
        )
    )


def _encode_leaf_page(array: pa.Array) -> _Page:
    page = _Page(length=len(array), encoding=enc.ArrayEncoding())
    if _wants_dictionary(array):
        page.encoding = _encode_dictionary(array, page)
    elif _is_binary_like(array.type):
        page.encoding = _encode_binary(array, page)
    else:
        page.encoding = _encode_basic(array, page)
    return page


def split_for_pages(array: pa.Array, nbytes: int | None = None, max_bytes: int = MAX_PAGE_BYTES) -> list[pa.Array]:
    """Equal row slices of at most ``max_bytes`` each (pylance's split of a
    batch); ``nbytes`` is the size pylance measures, by default the array's."""
    nbytes = array.nbytes if nbytes is None else nbytes
    parts = min(-(-nbytes // max_bytes), len(array))
    if parts <= 1:
        return [array]
    rows_per_part = -(-len(array) // parts)
    return [array.slice(start, rows_per_part) for start in range(0, len(array), rows_per_part)]


def _encode_blob_page(descriptions: np.ndarray) -> _Page:
    """A page of blob descriptions: ``packed_struct`` of two 64-bit children.

    The single page buffer holds the rows one after the other, each as its
    position then its size (little-endian u64), which is how a packed struct
    lays out fixed-width children: row by row, not child by child. The
    children's own flat encodings name buffer 0 too, as pylance writes them;
    only the packed struct's buffer holds data.
    """
    page = _Page(length=len(descriptions), encoding=enc.ArrayEncoding())
    index = page.add_buffer(descriptions.astype("<u8", copy=False).tobytes())
    child = _no_nulls(_flat(64, index))
    page.encoding = enc.ArrayEncoding(
        packed_struct=enc.PackedStruct(inner=[child, child], buffer=enc.Buffer(buffer_index=index))
    )
    return page


def _encode_list_offsets(array: pa.Array) -> tuple[_Page, pa.Array]:
    offsets = _offsets(array)
    validity = bitmaps.validity_mask(array) if array.null_count else None
    ends, _ = _stored_ends(offsets, validity)
    num_items = int(offsets[-1] - offsets[0])
    page = _Page(length=len(array), encoding=enc.ArrayEncoding())
    offsets_index = page.add_buffer(ends.tobytes())
    # Unlike binary, an empty list page still says 1: one more than 0 items.
    page.encoding = enc.ArrayEncoding(
        list=enc.List(
            offsets=_no_nulls(_flat(64, offsets_index)), null_offset_adjustment=num_items + 1, num_items=num_items
        )
    )
    return page, _list_items(array, offsets)


# -- schema walk --------------------------------------------------------------


class FieldTree:
    """The caller's flat field list as a tree (children in list order)."""

    def __init__(self, fields: list[Field]):
        self.fields = list(fields)
        ids = [f.id for f in self.fields]
        if len(set(ids)) != len(ids):
            raise ValueError(f"field ids are not unique: {ids}")
        known = set(ids)
        self.children: dict[int, list[Field]] = {f.id: [] for f in self.fields}
        self.top_level: list[Field] = []
        for f in self.fields:
            if f.parent_id == TOP_LEVEL_PARENT:
                self.top_level.append(f)
            elif f.parent_id in known:
                self.children[f.parent_id].append(f)
            else:
                raise ValueError(f"field {f.name!r} (id {f.id}) has parent id {f.parent_id}, which is not in the list")


class _Encoder:
    """Walks fields and arrays depth first, one column per field."""

    def __init__(self, tree: FieldTree, num_rows: int):
        self.tree = tree
        self.columns: list[_Column] = []
        self.file_fields: list[Field] = []
        # An empty table gets no data pages at all (pylance skips empty
        # batches); empty lists inside a non-empty table still get an empty
        # items page.
        self.write_empty_pages = num_rows > 0
        # Values of blob columns, in the order they open the file, and the
        # position after the last one (padding included).
        self.blob_values: list = []
        self.blob_end = 0

    def _new_column(self, node: Field) -> _Column:
        column = _Column(node.id)
        self.columns.append(column)
        self.file_fields.append(node)
        return column

    def encode(self, node: Field, array: pa.Array, early: bool = False) -> None:
        """Add the columns of ``node``; ``early`` forces its pages to be
        written with the batch (a list whose offsets are does so for its items)."""
        if isinstance(array.type, pa.BaseExtensionType):
            # Extension types are stored as their storage type; the name
            # lives in the field's metadata.
            array = array.storage
        data_type = array.type
        children = self.tree.children[node.id]
        if not node.nullable and array.null_count:
            raise ValueError(f"field {node.name!r} is not nullable but holds {array.null_count} null value(s)")
        if BLOB_METADATA_KEY in node.metadata:
            self._encode_blob(node, array, children, early)
        elif pa.types.is_struct(data_type):
            self._encode_struct(node, array, children, early)
        elif pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
            self._encode_list(node, array, children, early)
        elif _is_binary_like(data_type) or _is_fixed_width(data_type) or pa.types.is_null(data_type):
            if children:
                raise ValueError(f"field {node.name!r} has child fields but its Arrow type {data_type} is a leaf")
            column = self._new_column(node)
            if len(array) == 0:
                if self.write_empty_pages:
                    column.pages.append(_encode_leaf_page(array))
            else:
                column.pages.extend(_encode_leaf_page(part) for part in split_for_pages(array))
            for page in column.pages:
                page.early = early or array.nbytes > COLUMN_CACHE_BYTES
        else:
            raise ValueError(f"field {node.name!r}: Arrow type {data_type} is not supported by the 2.0 writer")

    def _encode_blob(self, node: Field, array: pa.Array, children: list[Field], early: bool) -> None:
        """A column marked ``lance-encoding:blob``: its values go to the front
        of the file, its pages describe where they are.

        pylance treats the key's presence as the mark, whatever its value
        (older table format page shows "true"/"false"), and reads a marked column only in
        this encoding, so the writer follows it. pylance accepts only
        large_binary there.
        """
        if not pa.types.is_large_binary(array.type):
            raise ValueError(
                f"field {node.name!r} is marked {BLOB_METADATA_KEY} but its Arrow type is {array.type}; "
                "a blob column must be large_binary"
            )
        if children:
            raise ValueError(f"field {node.name!r} has child fields but a blob column is a leaf")
        column = self._new_column(node)
        column.blob = True
        descriptions_bytes = BLOB_DESCRIPTION_BYTES * len(array)
        if len(array) == 0:
            # pylance 14 cannot write an empty blob page (it panics on the
            # empty items of a list of blobs); leave the column without one.
            return
        for part in split_for_pages(array, descriptions_bytes):
            page = _encode_blob_page(self._place_blob_values(part))
            page.early = early or descriptions_bytes > COLUMN_CACHE_BYTES
            column.pages.append(page)

    def _place_blob_values(self, array: pa.Array) -> np.ndarray:
        """Queue the non-empty values of ``array`` to open the file and return
        one (position, size) row per value: ``(1, 0)`` for a null, ``(0, 0)``
        for an empty value (neither is written)."""
        offsets = _offsets(array)
        sizes = np.diff(offsets).astype(np.uint64)
        positions = np.zeros(len(array), dtype=np.uint64)
        if array.null_count:
            nulls = ~bitmaps.validity_mask(array)
            sizes[nulls] = 0
            positions[nulls] = BLOB_NULL_POSITION
        stored = np.flatnonzero(sizes)
        if len(stored):
            # Each value is a buffer of its own, padded to the alignment.
            padded = -(-sizes[stored] // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT
            ends = self.blob_end + np.cumsum(padded, dtype=np.uint64)
            positions[stored] = ends - padded
            self.blob_end = int(ends[-1])
            data = memoryview(array.buffers()[2])
            self.blob_values.extend(data[int(offsets[row]) : int(offsets[row + 1])] for row in stored)
        return np.column_stack([positions, sizes])

    def _encode_struct(self, node: Field, array: pa.StructArray, children: list[Field], early: bool) -> None:
        if array.null_count:
            raise ValueError(
                f"struct field {node.name!r} holds {array.null_count} null value(s); "
                "Lance file version 2.0 cannot store struct validity"
            )
        arrow_children = [array.type.field(i) for i in range(array.type.num_fields)]
        _check_children(node, children, [f.name for f in arrow_children])
        header = self._new_column(node)
        for index, child in enumerate(children):
            self.encode(child, array.field(index), early)
        # The header page carries only the row count; pylance adds it when the
        # file is finished, after every data page.
        header.pages.append(_Page(length=len(array), encoding=enc.ArrayEncoding(struct=enc.SimpleStruct())))

    def _encode_list(self, node: Field, array: pa.Array, children: list[Field], early: bool) -> None:
        _check_children(node, children, [array.type.value_field.name])
        column = self._new_column(node)
        page, items = _encode_list_offsets(array)
        # pylance buffers the Arrow offsets and validity of a list together.
        offsets_width = 8 if pa.types.is_large_list(array.type) else 4
        buffered = (len(array) + 1) * offsets_width + (bitmaps.num_bytes(len(array)) if array.null_count else 0)
        page.early = early or buffered > COLUMN_CACHE_BYTES
        if len(array) or self.write_empty_pages:
            column.pages.append(page)
        self.encode(children[0], items, page.early)


def _check_children(node: Field, children: list[Field], arrow_names: list[str]) -> None:
    names = [child.name for child in children]
    if names != arrow_names:
        raise ValueError(f"field {node.name!r} has child fields {names} but its Arrow type has {arrow_names}")


def whole_column(column: pa.ChunkedArray) -> pa.Array:
    if column.num_chunks == 1:
        return column.chunk(0)
    if column.num_chunks == 0:
        return pa.array([], type=column.type)
    return pa.concat_arrays(column.chunks)


# -- file assembly ------------------------------------------------------------


def _encoding_message(message) -> file2_pb2.Encoding:
    return file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(message)))


def _assemble(
    columns: list[_Column],
    descriptor: file_pb2.FileDescriptor,
    blob_values: list,
    blob_end: int,
    extra_buffers: Sequence[bytes] = (),
) -> list:
    """The pieces of the file, in order: blob values, page buffers, the
    descriptor and any further global buffers, column metadata, offsets
    tables and footer."""
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

    # Blob values first: their positions were fixed when the pages were
    # encoded, on the assumption that they open the file.
    for value in blob_values:
        append(value, pad=True)
    if position != blob_end:
        raise AssertionError(f"blob values end at {position}, their descriptions expect {blob_end}")

    # Page buffers: the early pages of every column, then the others, each
    # group in column order (the order pylance writes one batch in).
    buffer_offsets: dict[int, list[int]] = {}
    for early in (True, False):
        for column in columns:
            for page in column.pages:
                if page.early == early:
                    buffer_offsets[id(page)] = [append(buffer, pad=True) for buffer in page.buffers]

    column_messages = []
    plain_column = _encoding_message(enc.ColumnEncoding(values={}))
    blob_column = _encoding_message(enc.ColumnEncoding(blob=enc.Blob(inner=enc.ColumnEncoding(values={}))))
    for column in columns:
        message = file2_pb2.ColumnMetadata(encoding=blob_column if column.blob else plain_column)
        for page in column.pages:
            message.pages.append(
                file2_pb2.ColumnMetadata.Page(
                    buffer_offsets=buffer_offsets[id(page)],
                    buffer_sizes=[len(buffer) for buffer in page.buffers],
                    length=page.length,
                    encoding=_encoding_message(page.encoding),
                    priority=0,
                )
            )
        column_messages.append(message)

    descriptor_bytes = descriptor.SerializeToString(deterministic=True)
    global_buffers = [(append(descriptor_bytes, pad=False), len(descriptor_bytes))]
    global_buffers += [(append(bytes(buffer), pad=False), len(buffer)) for buffer in extra_buffers]

    column_metadata_start = position
    metadata_locations = []
    for message in column_messages:
        raw = message.SerializeToString(deterministic=True)
        metadata_locations.append((append(raw, pad=False), len(raw)))

    column_table_start = position
    append(np.array(metadata_locations, dtype="<u8").reshape(-1).tobytes(), pad=False)
    buffer_table_start = position
    append(np.array(global_buffers, dtype="<u8").reshape(-1).tobytes(), pad=False)
    footer = np.array([column_metadata_start, column_table_start, buffer_table_start], dtype="<u8").tobytes()
    footer += np.array([len(global_buffers), len(columns)], dtype="<u4").tobytes()
    footer += np.array(V2_0_FOOTER_VERSION, dtype="<u2").tobytes() + MAGIC
    append(footer, pad=False)
    return chunks


def write_v2_0(
    table: pa.Table,
    fields: list[Field],
    schema_metadata: dict[str, bytes] | None = None,
    global_buffers: Sequence[bytes] = (),
) -> WrittenFile:
    """Encode ``table`` as a Lance 2.0 data file.

    ``fields`` are the schema fields of the table's columns, depth first
    (top-level fields in column order, with their ids; children found by
    ``parent_id``). They are stored as the file's schema together with
    ``schema_metadata``. ``global_buffers`` follow the descriptor (global
    buffer 0) as buffers 1, 2, ... (index files keep structures there).
    Raises ValueError when the table does not fit the fields or holds
    something version 2.0 cannot store.
    """
    tree = FieldTree(fields)
    names = [f.name for f in tree.top_level]
    if names != table.column_names:
        raise ValueError(f"top-level fields {names} do not match the table's columns {table.column_names}")
    encoder = _Encoder(tree, table.num_rows)
    for node, column in zip(tree.top_level, table.columns, strict=True):
        encoder.encode(node, whole_column(column))
    stored = {f.id for f in encoder.file_fields}
    unused = [f.name for f in tree.fields if f.id not in stored]
    if unused:
        raise ValueError(f"fields {unused} do not belong to any column of the table")

    schema = file_pb2.Schema(fields=[f.to_proto() for f in encoder.file_fields])
    for key, value in (schema_metadata or {}).items():
        schema.metadata[key] = value
    descriptor = file_pb2.FileDescriptor(schema=schema, length=table.num_rows)
    return WrittenFile(
        fields=[f.id for f in encoder.file_fields],
        column_indices=list(range(len(encoder.columns))),
        num_rows=table.num_rows,
        chunks=_assemble(encoder.columns, descriptor, encoder.blob_values, encoder.blob_end, global_buffers),
    )


def write_file(
    storage: Storage,
    relpath: str,
    table: pa.Table,
    fields: list[Field],
    schema_metadata: dict[str, bytes] | None = None,
    global_buffers: Sequence[bytes] = (),
) -> WrittenFile:
    """:func:`write_v2_0` and store the result as a new file (never replacing one)."""
    written = write_v2_0(table, fields, schema_metadata, global_buffers)
    storage.put_if_not_exists(relpath, written.chunks)
    return written
