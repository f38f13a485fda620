"""Assembling Arrow arrays from the pages of 2.1+ columns (encoding.md,
"Structural Encoding", "Fixed Size List", "Struct Packing").

In 2.1+ only leaves have columns: a struct or list has none of its own, its
validity and offsets are layers of the levels of every leaf column beneath
it. A fixed-size list of fixed-width items is a leaf (its items are
flattened by the ``FixedSizeList`` compressive encoding); a packed struct
(field metadata ``lance-encoding:packed``) is a leaf whose values are whole
rows; a blob is a leaf of large binary values.

A :class:`LeafColumn` is one column decoded page by page: the structure of
every page unraveled (:mod:`.rep_def`) and joined across pages, layer by
layer from the outermost, plus the values of its visible items. Building a
field's array walks the field tree top down with a depth: a struct takes its
validity from the layer at that depth of its first leaf column, a list its
offsets and validity, a leaf its validity and values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CorruptFileError, UnsupportedFeatureError
from ...schema import Field
from .. import bitmaps
from ..read_plan import ReadPlan
from .page import DecodedPage
from .rep_def import UnraveledLayer, unravel
from .values import DecodedValues, FixedWidthValues, PackedStructValues, VariableWidthValues, concat_values

# Most values the reader creates for nulls no buffer backs (as in 2.0).
MAX_NULL_VALUES = 2**30
MAX_INT32_OFFSET = 2**31 - 1
PACKED_METADATA_KEY = "lance-encoding:packed"


@dataclass(frozen=True)
class LeafColumn:
    """One leaf column, all pages joined (the values when asked for, as the
    field's type is needed to read some pages' values)."""

    layers: list[UnraveledLayer]  # outermost first
    pages: tuple[DecodedPage, ...]
    num_visible: int
    corrupt: Callable[[str], CorruptFileError]

    def values(self, target: pa.DataType) -> DecodedValues | None:
        """The values of every page, for a leaf of Arrow type ``target``;
        None: every visible item is null."""
        pages = list(self.pages)
        if pa.types.is_boolean(target):
            pages = [_byte_booleans(_inline_boolean(page, self.corrupt)) for page in pages]
        return _page_values(pages, self.corrupt)


def is_packed(node: Field, target: pa.DataType) -> bool:
    """Whether a struct field is stored packed (one column for the struct)."""
    value = node.metadata.get(PACKED_METADATA_KEY)
    if value is None or not pa.types.is_struct(target):
        return False
    return (value.decode() if isinstance(value, bytes) else str(value)).lower() not in ("false", "0", "")


def join_pages(path: str, column_index: int, pages: list[DecodedPage]) -> LeafColumn:
    """The pages of a column as one :class:`LeafColumn`."""

    def corrupt(problem: str) -> CorruptFileError:
        return CorruptFileError(path, f"column {column_index}: {problem}")

    unraveled = [
        list(p.structure) if p.structure is not None else unravel(p.layers, p.rep, p.definition, p.num_items, corrupt)
        for p in pages
    ]
    if not pages:
        return LeafColumn([], (), 0, corrupt)
    depth = len(unraveled[0])
    if any(len(layers) != depth for layers in unraveled):
        raise corrupt("pages of one column nest to different depths")
    joined: list[UnraveledLayer] = []
    for level in range(depth):
        parts = [layers[level] for layers in unraveled]
        if any(part.is_list != parts[0].is_list for part in parts):
            raise corrupt("pages of one column disagree on which layers are lists")
        joined.append(_join_layer(parts))
    return LeafColumn(joined, tuple(pages), sum(p.num_visible for p in pages), corrupt)


def _inline_boolean(page: DecodedPage, corrupt) -> DecodedPage:
    """A constant boolean page's values as bits: its inline value is the
    one-byte bitmap of a one-value array (encoding.md, "Constant Page
    Layout"; the byte layout is pylance's)."""
    if page.inline_value is None:
        return page
    if len(page.inline_value) != 1:
        raise corrupt(f"a boolean constant of {len(page.inline_value)} bytes")
    bits = np.full(page.num_visible, page.inline_value[0] & 1, dtype=np.uint8)
    values = FixedWidthValues(np.packbits(bits, bitorder="little"), 1, page.num_visible)
    return replace(page, values=values, inline_value=None)


def _byte_booleans(page: DecodedPage) -> DecodedPage:
    """A boolean page whose values are one byte each, the value in bit 0, as
    pylance 14 writes booleans in a full zip page (2.2 and 2.3), as bits."""
    values = page.values
    if not isinstance(values, FixedWidthValues) or values.bits_per_value != 8 or values.list_validity:
        return page
    bits = np.packbits(values.data[: values.num_values] & 1, bitorder="little")
    return replace(page, values=FixedWidthValues(bits, 1, values.num_values))


def _join_layer(parts: list[UnraveledLayer]) -> UnraveledLayer:
    if len(parts) == 1:
        return parts[0]
    slots = sum(p.num_slots for p in parts)
    validity = None
    if any(p.validity is not None for p in parts):
        validity = np.concatenate([p.validity if p.validity is not None else np.ones(p.num_slots, bool) for p in parts])
    offsets = None
    if parts[0].is_list:
        pieces = [np.zeros(1, np.int64)]
        base = 0
        for p in parts:
            assert p.offsets is not None
            pieces.append(p.offsets[1:] + base)
            base += int(p.offsets[-1])
        offsets = np.concatenate(pieces)
    return UnraveledLayer(parts[0].is_list, slots, validity, offsets)


def _page_values(pages: list[DecodedPage], corrupt) -> DecodedValues | None:
    """The values of all pages (dictionaries resolved, null pages filled)."""
    blocks: list[DecodedValues] = []
    stored = [p for p in pages if p.values is not None]
    # A page of fixed-size lists whose items are all null stores them in 0
    # bits (.compression.constant); shaped like another page's, they join it.
    template = next((_resolved(p, corrupt) for p in stored if not _stores_nothing(p.values)), None)
    if template is None:
        template = next((_resolved(p, corrupt) for p in stored), None)
    if template is None:
        return None
    for page in pages:
        if page.values is None or (_stores_nothing(page.values) and not _stores_nothing(template)):
            blocks.append(_placeholder(template, page.num_visible, corrupt))
        else:
            blocks.append(_resolved(page, corrupt))
    try:
        return concat_values(blocks)
    except ValueError as exc:
        raise corrupt(str(exc)) from None


def _stores_nothing(values: DecodedValues | None) -> bool:
    """Fixed-size list items of 0 bits: all null, stored nowhere."""
    return isinstance(values, FixedWidthValues) and values.bits_per_value == 0 and bool(values.list_validity)


def _placeholder(template: DecodedValues, count: int, corrupt) -> DecodedValues:
    """``count`` zero values shaped like ``template`` (the slots of a page
    whose items are all null)."""
    if count > MAX_NULL_VALUES:
        raise corrupt(f"{count} null values, more than the {MAX_NULL_VALUES} this reader creates")
    if isinstance(template, FixedWidthValues):
        data = np.zeros((count * template.bits_per_value + 7) // 8, np.uint8)
        validity = (
            tuple(
                None if level is None else np.zeros(count * (len(level) // template.num_values), bool)
                for level in template.list_validity
            )
            if template.num_values
            else ()
        )
        return FixedWidthValues(data, template.bits_per_value, count, validity)
    if isinstance(template, PackedStructValues):
        children = []
        for child in template.children:
            placeholder = _placeholder(child, count, corrupt)
            assert not isinstance(placeholder, PackedStructValues)
            children.append(placeholder)
        return PackedStructValues(tuple(children), count)
    return VariableWidthValues(np.zeros(count + 1, template.offsets.dtype), np.zeros(0, np.uint8))


def _resolved(page: DecodedPage, corrupt) -> DecodedValues:
    """The page's values, looked up in its dictionary when it has one."""
    values = page.values
    assert values is not None
    if page.dictionary is None:
        return values
    if not isinstance(values, FixedWidthValues) or values.bits_per_value not in (8, 16, 32, 64):
        raise corrupt("dictionary indices are not 8, 16, 32 or 64-bit integers")
    indices = values.data[: values.num_bytes].view(f"<u{values.bits_per_value // 8}")
    dictionary = page.dictionary
    if len(indices) and (int(indices.max()) >= dictionary.num_values):
        raise corrupt(f"dictionary index {int(indices.max())} is past the {dictionary.num_values} items")
    if isinstance(dictionary, FixedWidthValues):
        if dictionary.bits_per_value % 8:
            raise corrupt("a dictionary of sub-byte values")
        width = dictionary.bits_per_value // 8
        items = dictionary.data[: dictionary.num_values * width].reshape(dictionary.num_values, width)
        # Items that are fixed-size lists carry their item validity (2.3).
        levels = tuple(
            None if level is None else level.reshape(dictionary.num_values, -1)[indices].reshape(-1)
            for level in (dictionary.list_validity if dictionary.num_values else ())
        )
        return FixedWidthValues(items[indices].reshape(-1), dictionary.bits_per_value, len(indices), levels)
    if not isinstance(dictionary, VariableWidthValues):
        raise corrupt("a dictionary of packed struct rows")
    return _look_up(dictionary, indices)


def _look_up(dictionary: VariableWidthValues, indices: np.ndarray) -> VariableWidthValues:
    """The variable-width items of ``dictionary`` at ``indices`` (checked to
    be below its count): Arrow's ``take`` over the items as a binary array,
    whose offsets the value decoders checked to rise within its bytes."""
    items = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(),
        dictionary.num_values,
        [None, pa.py_buffer(dictionary.offsets.astype(np.int64)), pa.py_buffer(dictionary.data)],
    )
    taken = items.take(pa.array(indices))
    _, offsets, data = taken.buffers()
    return VariableWidthValues(
        np.frombuffer(offsets, dtype=np.uint64, count=len(taken) + 1),
        np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8),
    )


class FieldAssembler:
    """Builds the Arrow arrays of requested fields from leaf columns."""

    def __init__(self, path: str, plan: ReadPlan, load: Callable[[int], LeafColumn]):
        self.path = path
        self.plan = plan
        self._load = load
        self._columns: dict[int, LeafColumn] = {}

    def corrupt(self, node: Field, problem: str) -> CorruptFileError:
        return CorruptFileError(self.path, f"field {node.name!r}: {problem}")

    def column(self, index: int) -> LeafColumn:
        if index not in self._columns:
            self._columns[index] = self._load(index)
        return self._columns[index]

    def first_column(self, node: Field, target: pa.DataType) -> int | None:
        """The column of the first leaf under ``node`` that the file stores."""
        if isinstance(target, pa.BaseExtensionType):
            target = target.storage_type
        own = self.plan.column_of(node)
        if own is not None and not pa.types.is_struct(target) and not _is_list(target):
            return own
        if is_packed(node, target) and own is not None:
            return own
        if pa.types.is_struct(target):
            for index in range(target.num_fields):
                child = self._child(node, target.field(index).name)
                found = self.first_column(child, target.field(index).type)
                if found is not None:
                    return found
            return None
        if _is_list(target) or is_structural_fsl(target):
            child = self._child(node, _item_name(target), only_child=True)
            return self.first_column(child, _item_type(target))
        return own

    def _child(self, node: Field, name: str, only_child: bool = False) -> Field:
        """The child field of the Arrow type's child ``name``; a file whose
        schema lacks it (its descriptor names other children) is corrupt."""
        try:
            return self.plan.child_named(node, name, only_child=only_child)
        except ValueError as exc:
            raise self.corrupt(node, str(exc)) from None

    def build(self, node: Field, target: pa.DataType, depth: int, count: int) -> pa.Array:
        """The array of ``node`` at nesting ``depth``, ``count`` slots long."""
        if isinstance(target, pa.BaseExtensionType):
            storage = self.build(node, target.storage_type, depth, count)
            return pa.ExtensionArray.from_storage(target, storage)
        column_index = self.first_column(node, target)
        if column_index is None:
            return _nulls(count, target, lambda problem: self.corrupt(node, problem))
        leaf = self.column(column_index)
        if not leaf.layers and count == 0:
            return pa.array([], type=target)  # a column without pages
        if depth >= len(leaf.layers):
            raise self.corrupt(node, f"column {column_index} nests {len(leaf.layers)} layers, fewer than the schema")
        layer = leaf.layers[depth]
        if is_structural_fsl(target):
            # The list's validity is an item layer repeated for each of its
            # elements; the elements are the next layer's slots.
            dimension = target.list_size
            if layer.is_list or layer.num_slots != count * dimension:
                raise self.corrupt(node, f"{layer.num_slots} elements for {count} lists of {dimension}")
            child = self._child(node, target.value_field.name, only_child=True)
            items = self.build(child, target.value_type, depth + 1, count * dimension)
            validity = _bitmap(layer.validity[::dimension] if layer.validity is not None else None)
            return pa.Array.from_buffers(target, count, [validity], children=[items])
        if layer.num_slots != count:
            raise self.corrupt(node, f"{layer.num_slots} values where {count} are expected")
        validity = _bitmap(layer.validity)
        if _is_list(target):
            if not layer.is_list:
                raise self.corrupt(node, "a list field whose levels have no list layer")
            assert layer.offsets is not None
            child = self._child(node, _item_name(target), only_child=True)
            items = self.build(child, _item_type(target), depth + 1, int(layer.offsets[-1]))
            offsets = _arrow_offsets(layer.offsets, pa.types.is_large_list(target), lambda p: self.corrupt(node, p))
            return pa.Array.from_buffers(target, count, [validity, offsets], children=[items])
        if layer.is_list:
            raise self.corrupt(node, f"a list layer where the schema has {target}")
        if pa.types.is_struct(target) and not is_packed(node, target):
            children = []
            for index in range(target.num_fields):
                arrow_child = target.field(index)
                child = self._child(node, arrow_child.name)
                children.append(self.build(child, arrow_child.type, depth + 1, count))
            return pa.Array.from_buffers(target, count, [validity], children=children)
        if depth != len(leaf.layers) - 1:
            raise self.corrupt(node, f"column {column_index} nests deeper than the schema's {target}")
        if leaf.num_visible != count:
            raise self.corrupt(node, f"{leaf.num_visible} values where {count} are expected")
        return self._leaf(node, target, leaf.values(target), count, validity)

    def _leaf(self, node: Field, target: pa.DataType, values: DecodedValues | None, count: int, validity):
        def corrupt(problem: str) -> CorruptFileError:
            return self.corrupt(node, problem)

        if values is None:
            return _nulls(count, target, corrupt)
        if values.num_values != count:
            raise corrupt(f"{values.num_values} stored values for {count} slots")
        if pa.types.is_dictionary(target):
            plain = self._leaf(node, target.value_type, values, count, validity)
            return pc.dictionary_encode(plain).cast(target)
        if pa.types.is_struct(target):
            return _packed_struct(target, values, count, validity, corrupt)
        if pa.types.is_fixed_size_list(target):
            return _fixed_size_list(target, values, count, validity, corrupt)
        return plain_array(target, values, count, validity, corrupt)


def _is_list(target: pa.DataType) -> bool:
    """Lists and maps (a map is a list of key/value entries)."""
    return pa.types.is_list(target) or pa.types.is_large_list(target) or pa.types.is_map(target)


def _item_type(target: pa.DataType) -> pa.DataType:
    if pa.types.is_map(target):
        return pa.struct([target.key_field, target.item_field])
    return target.value_type


def _item_name(target: pa.DataType) -> str:
    return "entries" if pa.types.is_map(target) else target.value_field.name


def is_structural_fsl(target: pa.DataType) -> bool:
    """A fixed-size list of structs or lists: flattened by the structural
    encoding (a layer of its own), not by the ``FixedSizeList`` compression."""
    if not pa.types.is_fixed_size_list(target):
        return False
    inner = target.value_type
    if isinstance(inner, pa.BaseExtensionType):
        inner = inner.storage_type
    return pa.types.is_struct(inner) or _is_list(inner) or is_structural_fsl(inner)


def _bitmap(validity: np.ndarray | None) -> pa.Buffer | None:
    return None if validity is None else pa.py_buffer(bitmaps.pack_mask(validity))


def plain_array(target: pa.DataType, values: DecodedValues, count: int, validity, corrupt) -> pa.Array:
    """An Arrow array of a primitive, binary or string type from values."""
    if isinstance(values, PackedStructValues):
        raise corrupt(f"packed struct rows where the schema expects {target}")
    if isinstance(values, VariableWidthValues):
        if not (
            pa.types.is_string(target)
            or pa.types.is_large_string(target)
            or pa.types.is_binary(target)
            or pa.types.is_large_binary(target)
        ):
            raise corrupt(f"variable-width values where the schema expects {target}")
        large = pa.types.is_large_string(target) or pa.types.is_large_binary(target)
        start, end = int(values.offsets[0]), int(values.offsets[-1])
        offsets = _arrow_offsets(values.offsets.astype(np.int64) - start, large, corrupt)
        array = pa.Array.from_buffers(target, count, [validity, offsets, pa.py_buffer(values.data[start:end])])
        if pa.types.is_string(target) or pa.types.is_large_string(target):
            try:
                array.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise corrupt(f"string values are not valid: {exc}") from None
        return array
    if values.list_validity:
        raise corrupt(f"fixed-size-list values where the schema expects {target}")
    try:
        width = 1 if pa.types.is_boolean(target) else target.bit_width
    except ValueError:
        width = 0
    if pa.types.is_nested(target) or width <= 0:
        raise UnsupportedFeatureError(str(corrupt("").path), f"reading {target} values is not supported")
    if values.bits_per_value != width:
        raise corrupt(f"{values.bits_per_value}-bit values where the schema expects {target}")
    return pa.Array.from_buffers(target, count, [validity, pa.py_buffer(values.data[: values.num_bytes])])


def _fixed_size_list(target: pa.FixedSizeListType, values: DecodedValues, count, validity, corrupt) -> pa.Array:
    dimension = target.list_size
    inner = target.value_type
    if not isinstance(values, FixedWidthValues) or values.bits_per_value % dimension:
        raise corrupt(f"values that are not {dimension} fixed-width items per list")
    item_bits = values.bits_per_value // dimension
    levels = values.list_validity
    items = FixedWidthValues(values.data, item_bits, count * dimension, levels[1:])
    item_validity = _bitmap(levels[0]) if levels else None
    if item_bits == 0 and not pa.types.is_fixed_size_list(inner):
        # Items of a constant without a value (.compression.constant): all
        # null, as the item validity must say when the list carries one
        # (pylance 14); Lance 6.0 writes the constant bare, without item
        # validity (.full_zip, "Values of zero bits").
        if levels and (levels[0] is None or levels[0].any()):
            raise corrupt("fixed-size list items without values are not all null")
        child = pa.nulls(count * dimension, inner)
    elif pa.types.is_fixed_size_list(inner):
        child = _fixed_size_list(inner, items, count * dimension, item_validity, corrupt)
    else:
        child = plain_array(inner, items, count * dimension, item_validity, corrupt)
    return pa.Array.from_buffers(target, count, [validity], children=[child])


def _packed_rows(target: pa.StructType, values: PackedStructValues, count, validity, corrupt) -> pa.Array:
    """A struct from the children of a variable packed struct (2.2), each
    decoded by its own encoding (:mod:`.compression.variable_packed_struct`)."""
    if len(values.children) != target.num_fields:
        raise corrupt(f"packed rows of {len(values.children)} children for a struct of {target.num_fields}")
    children = [
        plain_array(target.field(index).type, child, count, None, corrupt)
        for index, child in enumerate(values.children)
    ]
    return pa.Array.from_buffers(target, count, [validity], children=children)


def _packed_struct(target: pa.StructType, values: DecodedValues, count, validity, corrupt) -> pa.Array:
    """Split packed rows into the struct's children (whole-byte widths)."""
    if isinstance(values, PackedStructValues):
        return _packed_rows(target, values, count, validity, corrupt)
    widths = []
    for index in range(target.num_fields):
        child_type = target.field(index).type
        try:
            bits = child_type.bit_width
        except ValueError:
            bits = 0
        if bits <= 0 or bits % 8:
            raise UnsupportedFeatureError(
                str(corrupt("").path), f"packed struct child of type {child_type} is not supported"
            )
        widths.append(bits // 8)
    if not isinstance(values, FixedWidthValues) or values.bits_per_value != 8 * sum(widths):
        raise corrupt(f"packed rows are not {sum(widths)} bytes wide")
    rows = values.data[: count * sum(widths)].reshape(count, sum(widths))
    children = []
    start = 0
    for index, width in enumerate(widths):
        column = np.ascontiguousarray(rows[:, start : start + width]).reshape(-1)
        child_values = FixedWidthValues(column, 8 * width, count)
        children.append(plain_array(target.field(index).type, child_values, count, None, corrupt))
        start += width
    return pa.Array.from_buffers(target, count, [validity], children=children)


def _arrow_offsets(offsets: np.ndarray, large: bool, corrupt) -> pa.Buffer:
    """Arrow offsets of the requested width from int64 offsets starting at 0."""
    offsets = offsets.astype(np.int64, copy=False)
    total = int(offsets[-1])
    if not large and total > MAX_INT32_OFFSET:
        raise corrupt(f"{total} bytes or items do not fit 32-bit offsets; read the column as a large type")
    return pa.py_buffer(offsets if large else offsets.astype(np.int32))


def _nulls(count: int, target: pa.DataType, corrupt) -> pa.Array:
    values, inner = count, target
    while pa.types.is_fixed_size_list(inner):
        values *= inner.list_size
        inner = inner.value_type
    if values > MAX_NULL_VALUES:
        raise corrupt(f"asks for {values} null values, more than the {MAX_NULL_VALUES} this reader creates")
    return pa.nulls(count, target)
