"""Reader of Lance data files version 2.0 (file format: v2 layout, 2.0 encodings).

:class:`LanceFileReader` opens a v2.0 file, checks its footer and metadata
(:mod:`.footer`), and decodes the columns of the requested schema fields into
Arrow. The page encodings it implements are those a 2.0 writer produces
without compression (``protos/encodings_v2_0.proto``): ``nullable``,
``flat``, ``fixed_size_list``, ``binary``, ``dictionary`` (of strings, and
of Arrow dictionary fields), the
``list`` offsets column and the ``struct`` header column, and blob columns
(column encoding ``blob``, see :meth:`LanceFileReader._read_blob`). Any
other encoding, a compressed buffer, or a file of a version above 2.2 raises
:class:`UnsupportedFeatureError` instead of guessing.

Mapping schema fields to columns follows the table format: a data file lists
the field ids it stores and, per field, the index of its column
(``DataFile.fields``/``column_indices``). In version 2.0 every field has a
column: a struct's header column is followed by its children's columns, a
list's offsets column by its item's columns, and a fixed-size list is a
single leaf column. A requested field the file does not store reads as nulls.

Nothing read from disk is trusted: buffer ranges are checked against the
file, and value counts against the buffers that hold the values, so a count
can only make the reader allocate what the file backs (blob values too: each
must lie inside the file, and a column's values may not add up to more bytes
than the file holds). The exception is
nulls, which Arrow materializes without any stored data (an all-null page,
a field the file lacks): those are capped by :data:`MAX_NULL_VALUES`.

Files of version 2.1 and 2.2 are opened here too (footer, column metadata,
page buffers) and decoded by :mod:`.v2_1` (``StructuralFileReader``).

Size. One cohesive concept (about 640 lines): decoding the 2.0 encodings;
the 2.1+ structural encodings are the package :mod:`.v2_1`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import jsonb
from ..arrow_schema import schema_to_arrow
from ..errors import CorruptFileError, UnsupportedFeatureError
from ..schema import Field, Schema
from ..storage import Storage
from ..wire import encodings_v2_0_pb2 as enc
from ..wire import file2_pb2
from . import bitmaps
from .footer import (
    ARRAY_ENCODING_TYPE,
    COLUMN_ENCODING_TYPE,
    NEWEST_VERSION,
    PAGE_LAYOUT_TYPE,
    PLANAR_LAYOUT_TYPE,
    PLANAR_VERSION,
    V2_0_VERSION,
    V2Metadata,
    read_v2_metadata,
    unpack_encoding,
)
from .read_plan import ReadPlan
from .v2_1 import StructuralFileReader, leaf_fields

# Most values the reader creates for nulls that no buffer backs (per page or
# missing field). An all-null int64 page of this many rows takes 8 GiB in
# Arrow; the cap stops a few bytes of hostile metadata from asking for more.
MAX_NULL_VALUES = 2**30
# Deepest encoding tree accepted (real files nest a handful of levels).
MAX_ENCODING_DEPTH = 64
# Largest offsets 32-bit and 64-bit Arrow offsets can hold.
MAX_INT32_OFFSET = 2**31 - 1
MAX_INT64_OFFSET = 2**63 - 1

_UNSIGNED_BY_BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

# A blob description is a packed (position u64, size u64) row. A range of
# size 0 needs no position, so the position of a zero-size row is free to
# tell a null, (1, 0), from an empty value (pylance writes (0, 0)).
BLOB_DESCRIPTION_BITS = [64, 64]
BLOB_NULL_POSITION = 1


class _PageDecoder:
    """Decodes one page's ArrayEncoding tree into an Arrow array."""

    def __init__(self, reader: LanceFileReader, column_index: int, page_number: int, buffers: list[pa.Buffer]):
        self.reader = reader
        self.where = f"column {column_index} page {page_number}"
        self.column_index = column_index
        self.buffers = buffers

    # -- errors and buffers ---------------------------------------------------

    def corrupt(self, problem: str) -> CorruptFileError:
        return CorruptFileError(self.reader.path, f"{self.where}: {problem}")

    def unsupported(self, problem: str) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(self.reader.path, f"{self.where}: {problem}")

    def buffer(self, reference: enc.Buffer) -> pa.Buffer:
        index = reference.buffer_index
        kind = reference.buffer_type
        if kind == enc.Buffer.page:
            if index >= len(self.buffers):
                raise self.corrupt(f"refers to page buffer {index} but the page has {len(self.buffers)}")
            return self.buffers[index]
        if kind == enc.Buffer.column:
            return self.reader.column_buffer(self.column_index, index)
        if kind == enc.Buffer.file:
            return self.reader.global_buffer(index)
        raise self.corrupt(f"unknown buffer type {kind}")

    def flat_buffer(self, flat: enc.Flat, count: int) -> pa.Buffer:
        """The bytes of ``count`` values of a flat encoding, size-checked."""
        if _compressed(flat):
            raise self.unsupported(f"compressed buffers (scheme {flat.compression.scheme!r}) are not supported")
        if not flat.HasField("buffer"):
            raise self.corrupt("flat encoding without a buffer")
        buffer = self.buffer(flat.buffer)
        needed = (count * flat.bits_per_value + 7) // 8
        if buffer.size < needed:
            raise self.corrupt(
                f"{count} values of {flat.bits_per_value} bits need {needed} bytes but the buffer has {buffer.size}"
            )
        return buffer.slice(0, needed)

    def unsigned(self, node: enc.ArrayEncoding, count: int, what: str) -> np.ndarray:
        """Integers that may not be null (binary indices, list offsets, dictionary codes)."""
        if node.WhichOneof("array_encoding") == "nullable" and node.nullable.WhichOneof("nullability") == "no_nulls":
            node = node.nullable.no_nulls.values
        if node.WhichOneof("array_encoding") != "flat":
            kind = node.WhichOneof("array_encoding")
            raise self.unsupported(f"{what} encoded as {kind} are not supported (expected flat integers)")
        dtype = _UNSIGNED_BY_BITS.get(node.flat.bits_per_value)
        if dtype is None:
            raise self.corrupt(f"{what} have {node.flat.bits_per_value} bits per value")
        return np.frombuffer(self.flat_buffer(node.flat, count), dtype=np.dtype(dtype).newbyteorder("<"), count=count)

    def bitmap(self, node: enc.ArrayEncoding, count: int) -> pa.Buffer:
        if node.WhichOneof("array_encoding") != "flat" or node.flat.bits_per_value != 1:
            raise self.corrupt("a validity bitmap must be a flat encoding of 1 bit per value")
        return self.flat_buffer(node.flat, count)

    # -- encodings ------------------------------------------------------------

    def decode(self, node: enc.ArrayEncoding, count: int, target: pa.DataType, validity=None, depth: int = 0):
        """``count`` values of type ``target``; ``validity`` (a bitmap or None)
        comes from an enclosing nullable wrapper."""
        if depth > MAX_ENCODING_DEPTH:
            raise self.corrupt(f"encoding tree deeper than {MAX_ENCODING_DEPTH} levels")
        kind = node.WhichOneof("array_encoding")
        if kind == "nullable":
            return self._nullable(node.nullable, count, target, validity, depth)
        if kind == "flat":
            return self._flat(node.flat, count, target, validity)
        if kind == "fixed_size_list":
            return self._fixed_size_list(node.fixed_size_list, count, target, validity, depth)
        if kind == "binary":
            return self._binary(node.binary, count, target, validity)
        if kind == "dictionary":
            return self._dictionary(node.dictionary, count, target, validity, depth)
        if kind in ("struct", "list"):
            raise self.corrupt(f"a {kind} encoding where the schema expects a {target} column")
        if kind is None:
            raise self.corrupt("empty array encoding")
        raise self.unsupported(f"encoding {kind} is not supported")

    def _nullable(self, node: enc.Nullable, count, target, validity, depth):
        kind = node.WhichOneof("nullability")
        if kind == "no_nulls":
            return self.decode(node.no_nulls.values, count, target, validity, depth + 1)
        if kind == "all_nulls":
            return _nulls(count, target, self.corrupt)
        if kind == "some_nulls":
            own = self.bitmap(node.some_nulls.validity, count)
            combined = bitmaps.and_bitmaps(validity, own, count)
            return self.decode(node.some_nulls.values, count, target, combined, depth + 1)
        raise self.corrupt("nullable encoding without a nullability case")

    def _flat(self, flat: enc.Flat, count, target, validity):
        if not _is_flat_type(target):
            raise self.corrupt(f"flat values where the schema expects {target}")
        if flat.bits_per_value != target.bit_width:
            raise self.corrupt(f"{flat.bits_per_value}-bit values where the schema expects {target}")
        return pa.Array.from_buffers(target, count, [validity, self.flat_buffer(flat, count)])

    def _fixed_size_list(self, node: enc.FixedSizeList, count, target, validity, depth):
        if not pa.types.is_fixed_size_list(target) or target.list_size != node.dimension:
            raise self.corrupt(f"fixed-size lists of dimension {node.dimension} where the schema expects {target}")
        items = self.decode(node.items, count * node.dimension, target.value_type, None, depth + 1)
        return pa.Array.from_buffers(target, count, [validity], children=[items])

    def _stored_ends(self, node: enc.ArrayEncoding, count: int, adjustment: int, what: str):
        """Per-value ends and validity of the binary/list offset scheme."""
        stored = self.unsigned(node, count, what).astype(np.uint64, copy=False)
        valid = stored < np.uint64(adjustment)
        ends = np.where(valid, stored, stored - np.uint64(adjustment)) if not valid.all() else stored
        if count and (np.any(ends[1:] < ends[:-1])):
            raise self.corrupt(f"{what} decrease")
        return ends, valid

    def _binary(self, node: enc.Binary, count, target, validity):
        if not _is_binary_type(target):
            raise self.corrupt(f"variable-width values where the schema expects {target}")
        ends, valid = self._stored_ends(node.indices, count, node.null_adjustment, "binary indices")
        total = int(ends[-1]) if count else 0
        stored = node.bytes
        # pylance releases before 0.17 wrap the bytes in a "no nulls" layer
        # (their nulls live in the indices); it holds the same flat bytes.
        if (
            stored.WhichOneof("array_encoding") == "nullable"
            and stored.nullable.WhichOneof("nullability") == "no_nulls"
        ):
            stored = stored.nullable.no_nulls.values
        if stored.WhichOneof("array_encoding") != "flat" or stored.flat.bits_per_value != 8:
            raise self.unsupported("binary bytes that are not a flat encoding of 8 bits")
        data = self.flat_buffer(stored.flat, total)
        offsets = _arrow_offsets(ends, _has_large_offsets(target), self.corrupt)
        own = None if valid.all() else pa.py_buffer(bitmaps.pack_mask(valid))
        combined = bitmaps.and_bitmaps(validity, own, count)
        array = pa.Array.from_buffers(target, count, [combined, offsets, data])
        if pa.types.is_string(target) or pa.types.is_large_string(target):
            try:
                array.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise self.corrupt(f"string values are not valid: {exc}") from None
        return array

    def _dictionary(self, node: enc.Dictionary, count, target, validity, depth):
        if pa.types.is_dictionary(target):
            return self._arrow_dictionary(node, count, target, validity, depth)
        if not _is_binary_type(target):
            raise self.unsupported(f"dictionary encoding of {target} values is not supported")
        num_items = node.num_dictionary_items
        items = self.decode(node.items, num_items, target, None, depth + 1)
        codes = self.unsigned(node.indices, count, "dictionary indices")
        if count and int(codes.max()) > num_items:
            raise self.corrupt(f"dictionary index {int(codes.max())} is past the {num_items} items")
        # Code 0 is null; code i + 1 is item i.
        positions = pa.array(codes.astype(np.int64) - 1, mask=codes == 0)
        array = pc.take(items, positions)
        if validity is not None:
            own = array.buffers()[0] if array.null_count else None
            array = pa.Array.from_buffers(
                target, count, [bitmaps.and_bitmaps(validity, own, count)] + array.buffers()[1:], offset=0
            )
        return array

    def _arrow_dictionary(self, node: enc.Dictionary, count, target: pa.DictionaryType, validity, depth):
        """A field of an Arrow dictionary type: the indices are the Arrow keys
        as they are (0 is the first item), the items the page's dictionary
        (encodings_v2_0.proto, ``Dictionary``). pylance stores a null row as a
        key to a null item it appends to the dictionary and reads such a key
        as a null key; so does this reader."""
        num_items = node.num_dictionary_items
        keys = self.decode(node.indices, count, target.index_type, validity, depth + 1)
        items = self.decode(node.items, num_items, target.value_type, None, depth + 1)
        positions = keys.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        outside = np.asarray(keys.is_valid()) & ((positions < 0) | (positions >= num_items))
        if outside.any():
            raise self.corrupt(f"dictionary key {int(positions[outside][0])} is outside the {num_items} items")
        if items.null_count:
            hidden = np.asarray(keys.is_null()) | np.asarray(items.is_null())[positions]
            keys = pa.array(positions, type=keys.type, mask=hidden)
        return pa.DictionaryArray.from_arrays(keys, items, ordered=target.ordered)

    def blob_descriptions(self, node: enc.ArrayEncoding, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The positions and sizes of ``count`` blob values.

        A 2.0 blob page is a ``packed_struct`` whose two children are 64-bit
        flat values: its one buffer holds the rows back to back, each the
        value's position in the file then its size (u64, little endian). The
        children's own buffer references carry no data in this layout.
        """
        kind = node.WhichOneof("array_encoding")
        if kind != "packed_struct":
            raise self.corrupt(f"a blob column page is encoded as {kind}, not as packed (position, size) descriptions")
        packed = node.packed_struct
        widths = [self._packed_child_bits(child) for child in packed.inner]
        if widths != BLOB_DESCRIPTION_BITS:
            raise self.corrupt(f"blob descriptions must be two 64-bit values (position, size), found widths {widths}")
        if not packed.HasField("buffer"):
            raise self.corrupt("packed blob descriptions without a buffer")
        buffer = self.buffer(packed.buffer)
        row_bytes = sum(BLOB_DESCRIPTION_BITS) // 8
        if buffer.size < count * row_bytes:
            raise self.corrupt(
                f"{count} blob descriptions need {count * row_bytes} bytes but the buffer has {buffer.size}"
            )
        rows = np.frombuffer(buffer, dtype=np.dtype("<u8"), count=2 * count).reshape(count, 2)
        return rows[:, 0], rows[:, 1]

    def _packed_child_bits(self, child: enc.ArrayEncoding) -> int:
        """Bits per value of one fixed-width child of a packed struct."""
        if child.WhichOneof("array_encoding") == "nullable" and child.nullable.WhichOneof("nullability") == "no_nulls":
            child = child.nullable.no_nulls.values
        if child.WhichOneof("array_encoding") != "flat":
            raise self.unsupported(
                f"packed struct child encoded as {child.WhichOneof('array_encoding')} is not supported"
            )
        if _compressed(child.flat):
            raise self.unsupported(f"compressed buffers (scheme {child.flat.compression.scheme!r}) are not supported")
        return child.flat.bits_per_value


def _compressed(flat: enc.Flat) -> bool:
    """Whether a flat buffer is compressed. pylance 14 records the scheme
    ``none`` for a field whose metadata asks for no compression (its
    scalar index files do): the bytes are then plain."""
    return flat.HasField("compression") and flat.compression.scheme not in ("", "none")


def _is_flat_type(data_type: pa.DataType) -> bool:
    if pa.types.is_nested(data_type) or pa.types.is_dictionary(data_type) or _is_binary_type(data_type):
        return False
    try:
        return data_type.bit_width > 0
    except ValueError:
        return False


def _is_binary_type(data_type: pa.DataType) -> bool:
    return (
        pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_binary(data_type)
        or pa.types.is_large_binary(data_type)
    )


def _has_large_offsets(data_type: pa.DataType) -> bool:
    return (
        pa.types.is_large_string(data_type) or pa.types.is_large_binary(data_type) or pa.types.is_large_list(data_type)
    )


def _arrow_offsets(ends: np.ndarray, large: bool, corrupt) -> pa.Buffer:
    """Arrow offsets (a leading 0, then the ends) of the requested width."""
    total = int(ends[-1]) if len(ends) else 0
    if not large and total > MAX_INT32_OFFSET:
        raise corrupt(f"{total} bytes or items do not fit 32-bit offsets; read the column as a large type")
    if total > MAX_INT64_OFFSET:
        raise corrupt(f"{total} bytes or items do not fit 64-bit offsets")
    offsets = np.empty(len(ends) + 1, dtype=np.int64 if large else np.int32)
    offsets[0] = 0
    offsets[1:] = ends
    return pa.py_buffer(offsets)


def _nulls(count: int, data_type: pa.DataType, corrupt) -> pa.Array:
    """``count`` nulls, refusing counts whose Arrow form would be absurdly large."""
    values, inner = count, data_type
    while pa.types.is_fixed_size_list(inner):
        values *= inner.list_size
        inner = inner.value_type
    if values > MAX_NULL_VALUES:
        raise corrupt(f"asks for {values} null values, more than the {MAX_NULL_VALUES} this reader creates")
    return pa.nulls(count, data_type)


def _concat(chunks: list[pa.Array], data_type: pa.DataType) -> pa.Array:
    if not chunks:
        return pa.array([], type=data_type)
    if len(chunks) == 1:
        return chunks[0]
    return pa.concat_arrays(chunks)


class LanceFileReader:
    """A Lance 2.0 data file opened for reading.

    Opening reads the footer, the column metadata and the file descriptor
    (the file's own schema, global buffer 0) and checks them; data pages are
    read by :meth:`read`.
    """

    def __init__(self, storage: Storage, relpath: str):
        self.storage = storage
        self.relpath = relpath
        self.metadata: V2Metadata = read_v2_metadata(storage, relpath)
        self.path = self.metadata.path
        # Files of 2.1 and later describe pages with the structural encodings
        # of lance.encodings21.PageLayout (2.3: lance.encodings23.PlanarLayout):
        # the v2_1 package reads them.
        self._structural: StructuralFileReader | None = None
        if self.metadata.version != V2_0_VERSION:
            major, minor = self.metadata.version
            if not V2_0_VERSION < self.metadata.version <= NEWEST_VERSION:
                raise UnsupportedFeatureError(
                    self.path,
                    f"file format version {major}.{minor} is not supported: this reader implements 2.0 to "
                    f"{NEWEST_VERSION[0]}.{NEWEST_VERSION[1]}",
                )
            page_type = PLANAR_LAYOUT_TYPE if self.metadata.version >= PLANAR_VERSION else PAGE_LAYOUT_TYPE
            self._structural = StructuralFileReader(
                self.path,
                self.metadata.columns,
                self.metadata.size,
                self._page_buffers,
                lambda encoding, what: self._unpack(encoding, page_type, what),
                lambda position, size: self.storage.read(self.relpath, position, size),
            )
        self.num_rows = self.metadata.num_rows
        descriptor = self.metadata.descriptor
        if self._structural is not None and descriptor is not None:
            # 2.1+ pages of a fixed-size list of structs count list elements,
            # not rows: the descriptor has the rows.
            self.num_rows = descriptor.length
        elif descriptor is not None and self.metadata.columns and descriptor.length != self.num_rows:
            raise CorruptFileError(
                self.path,
                f"the file descriptor says {descriptor.length} rows but column 0 holds {self.num_rows}",
            )
        # Columns whose ColumnEncoding is ``blob``: their pages describe values
        # stored elsewhere in the file.
        self.blob_columns: set[int] = {
            index for index, column in enumerate(self.metadata.columns) if self._is_blob_column(index, column)
        }

    def _is_blob_column(self, index: int, column: file2_pb2.ColumnMetadata) -> bool:
        """Whether a column is a blob column; refuses column encodings this
        reader does not implement (a blob may only wrap plain values)."""
        if not column.HasField("encoding"):
            return False
        column_encoding = self._unpack(column.encoding, COLUMN_ENCODING_TYPE, f"column {index}")
        kind = column_encoding.WhichOneof("column_encoding")
        if kind in (None, "values"):
            return False
        if kind == "blob":
            inner = column_encoding.blob.inner.WhichOneof("column_encoding")
            if inner not in (None, "values"):
                raise UnsupportedFeatureError(self.path, f"column {index}: a blob column over {inner} is not supported")
            return True
        raise UnsupportedFeatureError(self.path, f"column {index}: column encoding {kind} is not supported")

    # -- the file's own schema ------------------------------------------------

    @property
    def structural(self) -> StructuralFileReader | None:
        """The 2.1+ half of the reader (None for a 2.0 file): decodes one
        leaf column without its field's type (file_format/verify.py)."""
        return self._structural

    @property
    def num_columns(self) -> int:
        return len(self.metadata.columns)

    @property
    def file_fields(self) -> list[Field]:
        """The fields of the file's own schema (empty without a descriptor)."""
        descriptor = self.metadata.descriptor
        if descriptor is None:
            return []
        return [Field.from_proto(f) for f in descriptor.schema.fields]

    @property
    def schema_metadata(self) -> dict[str, bytes]:
        descriptor = self.metadata.descriptor
        return dict(descriptor.schema.metadata) if descriptor is not None else {}

    # -- buffers --------------------------------------------------------------

    def _unpack(self, encoding: file2_pb2.Encoding, expected: str, what: str):
        return unpack_encoding(self.storage, self.relpath, self.metadata.size, encoding, expected, what)

    def column_buffer(self, column_index: int, index: int) -> pa.Buffer:
        column = self._column(column_index)
        if index >= len(column.buffer_offsets):
            raise CorruptFileError(self.path, f"column {column_index} has no column buffer {index}")
        return pa.py_buffer(self.storage.read(self.relpath, column.buffer_offsets[index], column.buffer_sizes[index]))

    def global_buffer(self, index: int) -> pa.Buffer:
        if index >= len(self.metadata.global_buffers):
            raise CorruptFileError(self.path, f"the file has no global buffer {index}")
        position, size = self.metadata.global_buffers[index]
        return pa.py_buffer(self.storage.read(self.relpath, position, size))

    def _page_buffers(self, page: file2_pb2.ColumnMetadata.Page) -> list[pa.Buffer]:
        """A page's buffers, read in one request when they lie close together."""
        ranges = list(
            # Equal lengths: footer.check_column_metadata rejected the file otherwise.
            zip(page.buffer_offsets, page.buffer_sizes, strict=True)
        )
        if not ranges:
            return []
        start = min(position for position, _ in ranges)
        end = max(position + size for position, size in ranges)
        payload = sum(size for _, size in ranges)
        if end - start <= 2 * payload + 64 * len(ranges):
            block = pa.py_buffer(self.storage.read(self.relpath, start, end - start))
            return [block.slice(position - start, size) for position, size in ranges]
        return [pa.py_buffer(self.storage.read(self.relpath, position, size)) for position, size in ranges]

    def _column(self, column_index: int) -> file2_pb2.ColumnMetadata:
        if not 0 <= column_index < self.num_columns:
            raise CorruptFileError(
                self.path, f"column index {column_index} is out of range (the file has {self.num_columns} columns)"
            )
        return self.metadata.columns[column_index]

    def _pages(self, column_index: int):
        """(length, ArrayEncoding, decoder) for the non-empty pages of a column."""
        for number, page in enumerate(self._column(column_index).pages):
            if page.length == 0:
                # Empty pages (pylance writes some for empty list items) hold nothing.
                continue
            encoding = self._unpack(page.encoding, ARRAY_ENCODING_TYPE, f"column {column_index} page {number}")
            yield page.length, encoding, _PageDecoder(self, column_index, number, self._page_buffers(page))

    def _column_length(self, column_index: int) -> int:
        return sum(page.length for page in self._column(column_index).pages)

    def _check_length(self, column_index: int, expected: int, what: str) -> None:
        actual = self._column_length(column_index)
        if actual != expected:
            raise CorruptFileError(
                self.path, f"column {column_index} ({what}) holds {actual} values, expected {expected}"
            )

    # -- fields ---------------------------------------------------------------

    def _read_field(self, node: Field, target: pa.DataType, count: int, plan: ReadPlan) -> list[pa.Array]:
        """The values of one field as a list of chunks."""
        if isinstance(target, pa.BaseExtensionType):
            chunks = self._read_field(node, target.storage_type, count, plan)
            return [pa.ExtensionArray.from_storage(target, chunk) for chunk in chunks]
        column_index = plan.column_of(node)
        if pa.types.is_struct(target):
            return [self._read_struct(node, target, count, plan, column_index)]
        if column_index is None:
            return [
                _nulls(count, target, lambda problem: CorruptFileError(self.path, f"field {node.name!r} {problem}"))
            ]
        if column_index in self.blob_columns:
            return [self._read_blob(node, target, count, column_index)]
        if pa.types.is_list(target) or pa.types.is_large_list(target):
            return [self._read_list(node, target, count, plan, column_index)]
        if pa.types.is_nested(target) and not pa.types.is_fixed_size_list(target):
            raise UnsupportedFeatureError(self.path, f"field {node.name!r}: reading {target} is not supported")
        self._check_length(column_index, count, f"field {node.name!r}")
        return [decoder.decode(encoding, length, target) for length, encoding, decoder in self._pages(column_index)]

    def _read_struct(self, node, target: pa.StructType, count, plan, column_index) -> pa.Array:
        if column_index is not None:
            self._check_length(column_index, count, f"struct field {node.name!r}")
            for _, encoding, decoder in self._pages(column_index):
                if encoding.WhichOneof("array_encoding") != "struct":
                    raise decoder.corrupt(
                        f"struct field {node.name!r} is stored as {encoding.WhichOneof('array_encoding')}"
                    )
        children = []
        for index in range(target.num_fields):
            arrow_child = target.field(index)
            child = plan.child_named(node, arrow_child.name)
            children.append(_concat(self._read_field(child, arrow_child.type, count, plan), arrow_child.type))
        return pa.Array.from_buffers(target, count, [None], children=children)

    def _read_blob(self, node: Field, target: pa.DataType, count: int, column_index: int) -> pa.Array:
        """A blob column (2.0 ``ColumnEncoding.blob``): each page describes its
        rows as (position, size) of a value stored elsewhere in the file.

        ``(1, 0)`` is a null and a size of 0 an empty value (pylance writes
        ``(0, 0)``); any other row names the byte range of its value. Every
        range must lie inside the file, and the values of the column may not
        add up to more than the file's size (a writer stores each value once;
        descriptions sharing bytes to add up to more would make the reader
        allocate what the file does not back), so nothing is allocated from
        an unchecked size.
        """
        if not (pa.types.is_large_binary(target) or pa.types.is_binary(target)):
            raise CorruptFileError(
                self.path, f"column {column_index} is a blob column but field {node.name!r} is read as {target}"
            )
        self._check_length(column_index, count, f"blob field {node.name!r}")
        file_size = self.metadata.size
        remaining = file_size
        chunks = []
        for length, encoding, decoder in self._pages(column_index):
            positions, sizes = decoder.blob_descriptions(encoding, length)
            valid = (positions != BLOB_NULL_POSITION) | (sizes != 0)
            stored = sizes != 0
            # position + size <= file size, written so that u64 cannot wrap.
            outside = stored & ((sizes > file_size) | (positions > file_size - np.minimum(sizes, file_size)))
            if outside.any():
                row = int(np.flatnonzero(outside)[0])
                start, size = int(positions[row]), int(sizes[row])
                raise decoder.corrupt(
                    f"blob value of row {row} at [{start}, {start + size}) lies outside the file ({file_size} bytes)"
                )
            # A float sum cannot wrap: it rules out totals near 2**64 before
            # the exact u64 sum is taken and compared.
            if float(sizes.sum(dtype=np.float64)) > 2 * remaining or int(sizes.sum(dtype=np.uint64)) > remaining:
                raise decoder.corrupt(
                    f"blob values of field {node.name!r} add up to more bytes than the file holds ({file_size})"
                )
            remaining -= int(sizes.sum(dtype=np.uint64))
            data = self._blob_values(positions[stored], sizes[stored])
            offsets = _arrow_offsets(np.cumsum(sizes, dtype=np.uint64), _has_large_offsets(target), decoder.corrupt)
            validity = None if valid.all() else pa.py_buffer(bitmaps.pack_mask(valid))
            chunks.append(pa.Array.from_buffers(target, length, [validity, offsets, data]))
        return _concat(chunks, target)

    def _blob_values(self, positions: np.ndarray, sizes: np.ndarray) -> pa.Buffer:
        """The bytes of the given (range-checked) values, concatenated; read
        in one request when they lie close together, as a writer puts them."""
        if len(positions) == 0:
            return pa.py_buffer(b"")
        start = int(positions.min())
        end = int((positions + sizes).max())
        payload = int(sizes.sum())
        if end - start <= 2 * payload + 64 * len(positions):
            block = memoryview(self.storage.read(self.relpath, start, end - start))
            pieces: list[memoryview] | list[bytes] = [
                block[int(p) - start : int(p) - start + int(s)] for p, s in zip(positions, sizes, strict=True)
            ]
        else:
            pieces = [self.storage.read(self.relpath, int(p), int(s)) for p, s in zip(positions, sizes, strict=True)]
        return pa.py_buffer(b"".join(pieces))

    def _read_list(self, node, target, count, plan, column_index) -> pa.Array:
        self._check_length(column_index, count, f"list field {node.name!r}")
        ends_per_page, valid_per_page = [], []
        items_before = 0
        for length, encoding, decoder in self._pages(column_index):
            if encoding.WhichOneof("array_encoding") != "list":
                raise decoder.corrupt(f"list field {node.name!r} is stored as {encoding.WhichOneof('array_encoding')}")
            layout = encoding.list
            if layout.null_offset_adjustment == 0:
                raise decoder.corrupt("list offsets with a null offset adjustment of 0")
            stored = decoder.unsigned(layout.offsets, length, "list offsets").astype(np.uint64, copy=False)
            adjustment = np.uint64(layout.null_offset_adjustment)
            valid = stored < adjustment
            ends = stored % adjustment
            if np.any(ends[1:] < ends[:-1]) or int(ends[-1]) > layout.num_items:
                raise decoder.corrupt(f"list offsets decrease or run past the page's {layout.num_items} items")
            ends_per_page.append(ends + np.uint64(items_before))
            valid_per_page.append(valid)
            items_before += layout.num_items
        ends = np.concatenate(ends_per_page) if ends_per_page else np.zeros(0, np.uint64)
        valid = np.concatenate(valid_per_page) if valid_per_page else np.ones(0, bool)
        offsets = _arrow_offsets(
            ends, pa.types.is_large_list(target), lambda problem: CorruptFileError(self.path, problem)
        )
        child = plan.child_named(node, target.value_field.name, only_child=True)
        items = _concat(self._read_field(child, target.value_type, items_before, plan), target.value_type)
        validity = None if valid.all() else pa.py_buffer(bitmaps.pack_mask(valid))
        return pa.Array.from_buffers(target, count, [validity, offsets], children=[items])

    def read(
        self,
        fields: list[Field] | None = None,
        *,
        file_field_ids: list[int] | None = None,
        column_indices: list[int] | None = None,
        arrow_schema: pa.Schema | None = None,
    ) -> pa.Table:
        """Read the requested fields (schema order, depth first) as a table.

        ``fields`` defaults to the file's own schema. ``file_field_ids`` and
        ``column_indices`` are the data file's ``fields``/``column_indices``
        from the manifest; by default every field of the file's schema, in
        order, owns the next column. ``arrow_schema`` gives the Arrow types of
        the top-level fields (for example a large_string column may be read
        as string); by default it is derived from the fields' logical types.
        """
        # Fields taken from the file's own schema that disagree with the
        # requested Arrow schema make the file corrupt, not the call.
        fields_from_file = fields is None
        if fields is None:
            fields = self.file_fields
        if file_field_ids is None:
            owners = self.file_fields
            if self._structural is not None:
                # In 2.1+ only leaves (and packed structs) own columns.
                owners = leaf_fields(self.file_fields, schema_to_arrow(Schema(list(self.file_fields))))
            file_field_ids = [f.id for f in owners]
            column_indices = list(range(len(file_field_ids)))
        if column_indices is None or len(column_indices) != len(file_field_ids):
            raise ValueError("file_field_ids and column_indices must be given together, with equal lengths")
        plan = ReadPlan(self.path, fields, file_field_ids, column_indices)
        if arrow_schema is None:
            # As stored: a JSON field's documents are binary (the table
            # layer, reference_impl.scan, shows them as text).
            arrow_schema = jsonb.stored_schema(schema_to_arrow(Schema(list(fields))))
        names = [f.name for f in plan.top_level]
        if arrow_schema.names != names:
            problem = f"arrow schema columns {arrow_schema.names} do not match the top-level fields {names}"
            if fields_from_file:
                raise CorruptFileError(self.path, f"the file's schema: {problem}")
            raise ValueError(problem)
        if self._structural is not None:
            arrays = self._structural.read_fields(plan, arrow_schema, self.num_rows)
            return pa.Table.from_arrays(arrays, schema=arrow_schema)
        columns = []
        for node, arrow_field in zip(plan.top_level, arrow_schema, strict=True):
            chunks = self._read_field(node, arrow_field.type, self.num_rows, plan)
            columns.append(pa.chunked_array(chunks, type=arrow_field.type))
        return pa.Table.from_arrays(columns, schema=arrow_schema)


def read_v2_0(
    storage: Storage,
    relpath: str,
    fields: list[Field],
    file_field_ids: list[int],
    column_indices: list[int],
    arrow_schema: pa.Schema | None = None,
) -> pa.Table:
    """Read ``fields`` from the 2.0 data file at ``relpath`` (see :meth:`LanceFileReader.read`)."""
    return LanceFileReader(storage, relpath).read(
        fields, file_field_ids=file_field_ids, column_indices=column_indices, arrow_schema=arrow_schema
    )
