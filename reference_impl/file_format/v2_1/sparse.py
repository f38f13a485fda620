"""The sparse structure of 2.3 pages (upstream discussion "Planar Page
Layout for Lance 2.3" and ``SparseLayout`` of ``encodings_v2_1.proto`` at
upstream head; pylance 14's wire shape in ``protos/encodings_v2_3.proto``:
``SparseStructure``).

Where a dense page encodes its structure as repetition and definition
levels, a sparse page states it layer by layer, outermost first, each layer
mapping a domain of slots (numbered from 0) to the next:

* a validity layer (a nullable item or struct) keeps its domain and says
  which of its slots are null;
* a list layer says which of its slots hold a non-empty list and how many
  children each has (the child domain is the sum); a valid slot not listed
  is an empty list, a null list has no children;
* a fixed-size list layer multiplies its domain by its dimension.

The outermost domain is the page's rows; when fixed-size lists wrap the
column before any list, the page's length counts their elements (as a
dense page's does) and the rows are that over the dimensions. The innermost
domain is the leaf value slots; a leaf without nulls has no layer of its
own.

Sets of slots ("positions") and the children counts are u64 sequences under
a compressive encoding (``Range``, ``Constant``, ``Delta``, ``Flat``,
bitpacking...): metadata alone or page buffers, which follow the buffers of
the value plane in layer order and, within a layer, field order. A set's
``meaning`` says whether its positions are the null slots or the valid ones.

The values (:mod:`.planar` decodes the value plane): mini block chunks
without levels hold one value per leaf slot, null slots included; zipped
values hold the valid leaf slots only (a slot is valid when every validity
layer down to the leaf, through fixed-size lists, says so), which this
module spreads back over the slots; a constant fills every slot; no values
means every leaf slot is null.

This module turns the layers into :class:`.rep_def.UnraveledLayer` values,
the Arrow structure :mod:`.columns` assembles, shaped as a dense page's
would be (a fixed-size list layer as an item layer of its elements, its
validity repeated for each).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...wire import encodings_v2_1_pb2 as enc
from ...wire import encodings_v2_3_pb2 as enc23
from .compression import SCHEMES, ValueContext
from .compression.base import BufferCursor, ValueDecoder
from .page import PageContext
from .rep_def import UnraveledLayer
from .values import FixedWidthValues

# Most slots a layer may have: the values of one page (2.0's cap on nulls).
MAX_SLOTS = 2**31
_NULL = enc23.SparseValiditySet.SPARSE_VALIDITY_NULL_POSITIONS
_VALID = enc23.SparseValiditySet.SPARSE_VALIDITY_VALID_POSITIONS


@dataclass(frozen=True)
class SparseStructure:
    """A sparse page's structure, decoded."""

    layers: tuple[UnraveledLayer, ...]  # outermost first, a leaf item layer last
    kinds: tuple[int, ...]  # the equivalent RepDefLayer of each, innermost first
    num_slots: int  # leaf value slots
    # Per leaf slot, whether every validity layer down to it says valid
    # (None: all are): the slots zipped values are stored for.
    leaf_valid: np.ndarray | None


def structural_buffers(values: enc23.ValuePlane) -> int:
    """Page buffers of the value plane, before the structure's: chunk
    metadata, chunks and a dictionary; zipped values and, for variable-width
    values, their positions (pylance 14's layouts, shared with 2.2)."""
    kind = values.WhichOneof("codec")
    if kind == "chunked":
        return 3 if values.chunked.HasField("dictionary") else 2
    if kind == "zipped":
        return 2 if values.zipped.WhichOneof("details") == "bits_per_offset" else 1
    return 0


def decode_structure(structure: enc23.SparseStructure, first_buffer: int, page: PageContext) -> SparseStructure:
    """The layers of ``structure``, their sequences read from the page
    buffers from ``first_buffer`` on (all of them must be used)."""
    decoder = ValueDecoder(f"{page.value_where} structure", ValueContext.BLOCK, SCHEMES, budget=page.budget)
    cursor = BufferCursor(page.buffers[first_buffer:], decoder)
    reader = _Sequences(page, decoder, cursor)
    domain = _rows(structure, page)
    layers: list[UnraveledLayer] = []
    kinds: list[int] = []
    valid: np.ndarray | None = None
    kind: str | None = None
    for number, layer in enumerate(structure.layers):
        kind = layer.WhichOneof("layer")
        what = f"structural layer {number}"
        if kind == "validity":
            mask = reader.validity(layer.validity, domain, what)
            layers.append(UnraveledLayer(False, domain, mask))
            kinds.append(enc.REPDEF_ALL_VALID_ITEM if mask is None else enc.REPDEF_NULLABLE_ITEM)
            valid = _both(valid, mask)
        elif kind == "list":
            layers.append(reader.list_layer(layer.list, domain, what))
            kinds.append(enc.REPDEF_NULL_AND_EMPTY_LIST)
            domain, valid = int(layer.list.num_child_slots), None
        elif kind == "fixed_size_list":
            dimension = int(layer.fixed_size_list.dimension)
            if dimension == 0 or domain * dimension > MAX_SLOTS:
                raise page.corrupt(f"{what}: a fixed-size list of dimension {dimension} over {domain} slots")
            mask = reader.validity(layer.fixed_size_list.validity, domain, what)
            valid = _both(valid, mask)
            domain *= dimension
            repeated = None if mask is None else np.repeat(mask, dimension)
            layers.append(UnraveledLayer(False, domain, repeated))
            kinds.append(enc.REPDEF_ALL_VALID_ITEM if mask is None else enc.REPDEF_NULLABLE_ITEM)
            valid = None if valid is None else np.repeat(valid, dimension)
        else:
            raise page.unsupported(f"{what}: sparse layer {kind or '(unknown)'} is not supported")
    if kind != "validity":
        # A leaf without nulls has no layer: its slots are all valid.
        layers.append(UnraveledLayer(False, domain, None))
        kinds.append(enc.REPDEF_ALL_VALID_ITEM)
    if cursor.remaining:
        raise page.corrupt(f"{cursor.remaining} page buffers are left over after the sparse structure")
    return SparseStructure(tuple(layers), tuple(reversed(kinds)), domain, valid)


def _both(outer: np.ndarray | None, inner: np.ndarray | None) -> np.ndarray | None:
    if outer is None:
        return inner
    if inner is None:
        return outer
    return outer & inner


def _rows(structure: enc23.SparseStructure, page: PageContext) -> int:
    """The outermost domain: the page's length over the dimensions of the
    fixed-size lists before the first list layer."""
    elements = page.num_rows
    divisor = 1
    for layer in structure.layers:
        kind = layer.WhichOneof("layer")
        if kind == "list":
            break
        if kind == "fixed_size_list":
            divisor *= max(int(layer.fixed_size_list.dimension), 1)
    if elements % divisor:
        raise page.corrupt(f"a page of {elements} elements under fixed-size lists of {divisor} elements per row")
    if elements // divisor > MAX_SLOTS:
        raise page.corrupt(f"{elements} rows, more than this reader creates")
    return elements // divisor


class _Sequences:
    """Reads a layer's position and count sequences."""

    def __init__(self, page: PageContext, decoder: ValueDecoder, cursor: BufferCursor):
        self.page = page
        self.decoder = decoder
        self.cursor = cursor

    def numbers(self, encoding: enc.CompressiveEncoding, present: bool, count: int, what: str) -> np.ndarray:
        """``count`` unsigned integers as int64."""
        if count > MAX_SLOTS:
            raise self.page.corrupt(f"{what}: {count} values, more than this reader creates")
        if not present:
            if count:
                raise self.page.corrupt(f"{what}: {count} values without an encoding")
            return np.zeros(0, np.int64)
        decoded = self.decoder.decode(encoding, self.cursor, count)
        if not count:
            return np.zeros(0, np.int64)  # an empty set: a constant without a value
        if not isinstance(decoded, FixedWidthValues) or decoded.bits_per_value not in (8, 16, 32, 64):
            raise self.page.corrupt(f"{what} are not whole unsigned integers")
        if decoded.num_values != count:
            raise self.page.corrupt(f"{what}: {decoded.num_values} values decoded for {count}")
        words = decoded.data[: decoded.num_bytes].view(f"<u{decoded.bits_per_value // 8}")
        if count and int(words.max()) >= MAX_SLOTS:
            raise self.page.corrupt(f"{what}: value {int(words.max())} is past any slot this reader creates")
        return words.astype(np.int64)

    def positions(self, encoding, present: bool, count: int, domain: int, what: str) -> np.ndarray:
        """A set of ``count`` slots of ``domain``: increasing and inside it."""
        found = self.numbers(encoding, present, count, what)
        if count and (int(found[-1]) >= domain or (count > 1 and not bool(np.all(np.diff(found) > 0)))):
            raise self.page.corrupt(f"{what} are not increasing slots of a domain of {domain}")
        return found

    def validity(self, validity: enc23.SparseValiditySet, domain: int, what: str) -> np.ndarray | None:
        """Per slot whether it is valid (None: all are)."""
        if validity.meaning == enc23.SparseValiditySet.SPARSE_VALIDITY_UNSPECIFIED and not validity.num_positions:
            return None
        if validity.meaning not in (_NULL, _VALID):
            raise self.page.corrupt(f"{what}: a validity set of meaning {validity.meaning}")
        count = int(validity.num_positions)
        where = f"{what} {'null' if validity.meaning == _NULL else 'valid'} positions"
        found = self.positions(validity.positions, validity.HasField("positions"), count, domain, where)
        if validity.meaning == _NULL:
            if not count:
                return None
            mask = np.ones(domain, bool)
            mask[found] = False
            return mask
        if count == domain:
            return None
        mask = np.zeros(domain, bool)
        mask[found] = True
        return mask

    def list_layer(self, layer: enc23.SparseListLayer, domain: int, what: str) -> UnraveledLayer:
        # Buffers come in field order: positions, counts, validity.
        count = int(layer.num_non_empty)
        starts = self.positions(
            layer.non_empty_positions, layer.HasField("non_empty_positions"), count, domain, f"{what} list positions"
        )
        children = self.numbers(layer.counts, layer.HasField("counts"), count, f"{what} list lengths")
        validity = self.validity(layer.validity, domain, what)
        if count and int(children.min()) == 0:
            raise self.page.corrupt(f"{what}: a non-empty list of no children")
        total = int(children.sum())
        if total != layer.num_child_slots or total > MAX_SLOTS:
            raise self.page.corrupt(f"{what}: lists of {total} children where the layer says {layer.num_child_slots}")
        if validity is not None and count and not bool(validity[starts].all()):
            raise self.page.corrupt(f"{what}: a null list has children")
        lengths = np.zeros(domain, np.int64)
        lengths[starts] = children
        offsets = np.zeros(domain + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return UnraveledLayer(True, domain, validity, offsets)
