"""Pages of 2.3 files: the planar layout (upstream discussion "Planar Page
Layout for Lance 2.3"; ``PlanarLayout`` in ``protos/encodings_v2_3.proto``,
type name ``lance.encodings23.PlanarLayout``). Upstream marks 2.3 unstable;
this module reads what pylance 14 writes.

A planar page crosses a structural plane (dense levels, or the sparse
layers of :mod:`.sparse`) with a value plane (mini block chunks, zipped
values, a constant, or none). The dense combinations keep 2.2's bytes, so
they are translated to the 2.1 layout messages and read by the 2.1 modules:

* dense x chunked: :mod:`.mini_block` (always with 32-bit chunk words, as
  2.2 writers' ``has_large_chunk``);
* dense x zipped: :mod:`.full_zip`;
* dense x constant or none: :mod:`.all_null` (a page without buffers: a
  constant or null page with levels is written sparse).

The sparse combinations decode the same value planes without levels
(:mod:`.sparse` says how many values each holds) and take their Arrow
structure from the sparse layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from ...wire import encodings_v2_1_pb2 as enc
from ...wire import encodings_v2_3_pb2 as enc23
from . import all_null, full_zip, mini_block
from .all_null import MAX_INLINE_BYTES
from .page import DecodedPage, PageContext
from .sparse import decode_structure, structural_buffers
from .values import DecodedValues, FixedWidthValues, PackedStructValues, VariableWidthValues


def decode(layout: enc23.PlanarLayout, page: PageContext) -> DecodedPage:
    """The levels (or structure) and values of one 2.3 page."""
    structure = _which(layout.structure, "codec", "structural plane", page) if layout.HasField("structure") else None
    values = _which(layout.values, "codec", "value plane", page) if layout.HasField("values") else None
    if structure is None or values is None:
        raise page.corrupt("a planar page without a structural plane or a value plane")
    if structure == "dense":
        return _dense(layout.structure.dense, layout.values, values, page)
    return _sparse(layout.structure.sparse, layout.values, values, page)


def _which(message: Message, oneof: str, what: str, page: PageContext) -> str:
    kind = message.WhichOneof(oneof)
    if kind is None:
        unknown = sorted(field.field_number for field in UnknownFieldSet(message))
        if unknown:
            raise page.unsupported(f"{what} field {unknown[0]} (a kind this reader does not know)")
        raise page.corrupt(f"a {what} without a kind")
    return kind


def _dense(structure: enc23.DenseStructure, plane: enc23.ValuePlane, kind: str, page: PageContext) -> DecodedPage:
    layers = list(structure.layers)
    if kind == "chunked":
        return mini_block.decode(_mini_block(plane.chunked, layers), page)
    if kind == "zipped":
        return full_zip.decode(_full_zip(plane.zipped, layers), page)
    if page.buffers:
        raise page.unsupported(f"a dense {kind} page with {len(page.buffers)} buffers")
    constant = enc.ConstantLayout(layers=layers)
    if kind == "constant":
        constant.inline_value = plane.constant.value
    return all_null.decode(constant, page)


def _mini_block(chunked: enc23.ChunkedValues, layers: Sequence[enc.RepDefLayer]) -> enc.MiniBlockLayout:
    layout = enc.MiniBlockLayout(
        value_compression=chunked.compression,
        layers=layers,
        num_buffers=chunked.num_buffers,
        num_items=chunked.num_items,
        has_large_chunk=True,
    )
    if chunked.HasField("dictionary"):
        layout.dictionary.CopyFrom(chunked.dictionary)
        layout.num_dictionary_items = chunked.num_dictionary_items
    if chunked.HasField("levels"):
        levels = chunked.levels
        if levels.HasField("rep_compression"):
            layout.rep_compression.CopyFrom(levels.rep_compression)
        if levels.HasField("def_compression"):
            layout.def_compression.CopyFrom(levels.def_compression)
        layout.repetition_index_depth = levels.repetition_index_depth
    return layout


def _full_zip(zipped: enc23.ZippedValues, layers: Sequence[enc.RepDefLayer]) -> enc.FullZipLayout:
    layout = enc.FullZipLayout(
        bits_rep=zipped.levels.bits_rep,
        bits_def=zipped.levels.bits_def,
        num_items=zipped.num_items,
        num_visible_items=zipped.num_visible_items,
        value_compression=zipped.compression,
        layers=layers,
    )
    if zipped.WhichOneof("details") == "bits_per_value":
        layout.bits_per_value = zipped.bits_per_value
    elif zipped.WhichOneof("details") == "bits_per_offset":
        layout.bits_per_offset = zipped.bits_per_offset
    return layout


def _sparse(structure: enc23.SparseStructure, plane: enc23.ValuePlane, kind: str, page: PageContext) -> DecodedPage:
    if kind in ("chunked", "zipped") and getattr(plane, kind).HasField("levels"):
        raise page.corrupt(f"a sparse page whose {kind} values carry levels")
    first = structural_buffers(plane)
    if first > len(page.buffers):
        raise page.corrupt(f"{kind} values need {first} page buffers, the page has {len(page.buffers)}")
    shape = decode_structure(structure, first, page)
    count = shape.num_slots
    flat = [enc.RepDefLayer.REPDEF_ALL_VALID_ITEM]
    value_page = replace(page, buffers=page.buffers[:first], num_rows=count)
    values: DecodedValues | None = None
    dictionary = inline = None
    if kind == "chunked":
        layout = _mini_block(plane.chunked, flat)
        layout.num_items = count
        decoded = mini_block.decode(layout, value_page)
        values, dictionary = decoded.values, decoded.dictionary
    elif kind == "zipped":
        valid = np.ones(count, bool) if shape.leaf_valid is None else shape.leaf_valid
        stored = int(np.count_nonzero(valid))
        layout = _full_zip(plane.zipped, flat)
        if layout.num_items != stored or layout.num_visible_items != stored:
            raise page.corrupt(f"{layout.num_items} zipped values for {stored} valid leaf slots")
        decoded = full_zip.decode(layout, replace(value_page, num_rows=stored))
        values = None if decoded.values is None else _spread(decoded.values, valid, page)
    elif kind == "constant":
        inline = bytes(plane.constant.value)
        if not 0 < len(inline) <= MAX_INLINE_BYTES:
            raise page.corrupt(f"a constant of {len(inline)} bytes")
        values = FixedWidthValues(np.tile(np.frombuffer(inline, np.uint8), count), 8 * len(inline), count)
    elif count and (shape.leaf_valid is None or shape.leaf_valid.any()):
        # kind "none": every leaf slot must be null.
        raise page.corrupt("a page without values has valid leaf slots")
    return DecodedPage(
        shape.kinds, None, None, count, values, count, dictionary, inline_value=inline, structure=shape.layers
    )


def _spread(values: DecodedValues, valid: np.ndarray, page: PageContext) -> DecodedValues:
    """Values of the valid slots laid over every slot (zeros at the nulls)."""
    slots = np.flatnonzero(valid)
    if values.num_values != len(slots):
        raise page.corrupt(f"{values.num_values} zipped values for {len(slots)} valid leaf slots")
    if isinstance(values, VariableWidthValues):
        lengths = np.zeros(len(valid), np.int64)
        lengths[slots] = np.diff(values.offsets.astype(np.int64))
        offsets = np.empty(len(valid) + 1, np.uint64)
        offsets[0] = values.offsets[0]
        np.cumsum(lengths, out=offsets[1:])
        offsets[1:] += values.offsets[0]
        return VariableWidthValues(offsets, values.data)
    if isinstance(values, PackedStructValues):
        children = tuple(_spread(child, valid, page) for child in values.children)
        return PackedStructValues(children, len(valid))  # type: ignore[arg-type]
    if values.bits_per_value % 8:
        raise page.unsupported(f"zipped values of {values.bits_per_value} bits in a sparse page")
    width = values.bits_per_value // 8
    data = np.zeros((len(valid), width), np.uint8)
    data[slots] = values.data[: values.num_bytes].reshape(len(slots), width)
    levels: list[np.ndarray | None] = []
    for level in values.list_validity:
        if level is None:
            levels.append(None)
            continue
        per_value = len(level) // max(len(slots), 1)
        spread = np.zeros((len(valid), per_value), bool)
        spread[slots] = level.reshape(len(slots), per_value)
        levels.append(spread.reshape(-1))
    return FixedWidthValues(data.reshape(-1), values.bits_per_value, len(valid), tuple(levels))
