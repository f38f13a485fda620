"""One 2.1+ page being decoded: its buffers, its error messages, and what
every structural layout yields (encoding.md, "Structural Encoding").

A layout module (:mod:`.mini_block`, :mod:`.full_zip`, :mod:`.all_null`,
:mod:`.blob`) turns a :class:`PageContext` into a :class:`DecodedPage`: the
repetition and definition levels of the page (``None`` when the page has
none), the meaning of each level layer, and the values of its visible items.
:mod:`.rep_def` turns the levels into Arrow validity and offsets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING

import numpy as np

from ...errors import CorruptFileError, UnsupportedFeatureError
from ...wire import encodings_v2_1_pb2 as enc
from .compression import DecompressionBudget
from .values import DecodedValues

if TYPE_CHECKING:  # rep_def imports this module
    from .rep_def import UnraveledLayer

# RepDefLayer values that describe list layers (the others are items).
LIST_LAYERS: frozenset[int] = frozenset(
    {
        enc.REPDEF_ALL_VALID_LIST,
        enc.REPDEF_NULLABLE_LIST,
        enc.REPDEF_EMPTYABLE_LIST,
        enc.REPDEF_NULL_AND_EMPTY_LIST,
    }
)
ITEM_LAYERS: frozenset[int] = frozenset({enc.REPDEF_ALL_VALID_ITEM, enc.REPDEF_NULLABLE_ITEM})
# Definition levels each kind of layer contributes.
DEF_LEVELS: dict[int, int] = {
    enc.REPDEF_ALL_VALID_ITEM: 0,
    enc.REPDEF_ALL_VALID_LIST: 0,
    enc.REPDEF_NULLABLE_ITEM: 1,
    enc.REPDEF_NULLABLE_LIST: 1,
    enc.REPDEF_EMPTYABLE_LIST: 1,
    enc.REPDEF_NULL_AND_EMPTY_LIST: 2,
}
# Deepest nesting accepted (each struct or list adds one layer).
MAX_LAYERS = 64


@dataclass(frozen=True)
class PageContext:
    """The buffers of one page and how to name it in errors."""

    path: str
    where: str  # "column 3 page 0"
    num_rows: int
    buffers: Sequence[memoryview]
    file_size: int
    # Reads (position, size) of the file; blob pages read their values with it.
    read: Callable[[int, int], bytes]
    # What general compression may produce for this page, all its chunks together.
    budget: DecompressionBudget = dc_field(default_factory=DecompressionBudget)

    def corrupt(self, problem: str) -> CorruptFileError:
        return CorruptFileError(self.path, f"{self.where}: {problem}")

    def unsupported(self, problem: str) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(self.path, f"{self.where}: {problem}")

    @property
    def value_where(self) -> str:
        """``where`` for :func:`.compression.decode_values` (file, column, page)."""
        return f"{self.path} ({self.where})"

    def buffer(self, index: int, what: str) -> memoryview:
        if index >= len(self.buffers):
            raise self.corrupt(f"{what} is page buffer {index} but the page has {len(self.buffers)} buffers")
        return self.buffers[index]


@dataclass(frozen=True)
class DecodedPage:
    """The levels and values of one page, before Arrow assembly."""

    layers: tuple[int, ...]  # RepDefLayer values, innermost first
    rep: np.ndarray | None  # uint16 repetition level per item, None: no lists
    definition: np.ndarray | None  # uint16 definition level per item, None: all valid
    num_items: int  # entries of the level sequences (rows when there are none)
    values: DecodedValues | None  # one per visible item; None: every item is null
    num_visible: int  # visible items: slots of the innermost Arrow array
    dictionary: DecodedValues | None = None  # when set, ``values`` are indices into it
    # A constant page's value as stored inline: ``values`` repeat its bytes,
    # but a boolean's one byte is a bitmap (bit 0), which only the field's
    # type tells apart from a one-byte integer.
    inline_value: bytes | None = None
    # A sparse page (2.3, :mod:`.sparse`) states its Arrow structure layer
    # by layer, outermost first, instead of levels (``rep`` and
    # ``definition`` are then None and ``layers`` names the layer kinds).
    structure: tuple[UnraveledLayer, ...] | None = None


def check_layers(page: PageContext, layers: Sequence[int]) -> tuple[int, ...]:
    """The layers of a layout, checked: known kinds, an item layer innermost."""
    if not layers:
        raise page.corrupt("a page layout without repetition/definition layers")
    if len(layers) > MAX_LAYERS:
        raise page.corrupt(f"{len(layers)} repetition/definition layers, more than {MAX_LAYERS}")
    for layer in layers:
        if layer not in DEF_LEVELS:
            raise page.corrupt(f"unknown repetition/definition layer {layer}")
    if layers[0] not in ITEM_LAYERS:
        raise page.corrupt("the innermost repetition/definition layer is not an item layer")
    return tuple(layers)


def max_visible_level(layers: Sequence[int]) -> int:
    """The highest definition level that still stands for a value slot: the
    levels of the item layers inside the innermost list."""
    level = 0
    for layer in layers:
        if layer in LIST_LAYERS:
            break
        level += DEF_LEVELS[layer]
    return level


def visible_mask(layers: Sequence[int], definition: np.ndarray | None, num_items: int) -> np.ndarray | None:
    """Which items are visible (None: all of them)."""
    if definition is None:
        return None
    limit = max_visible_level(layers)
    if not any(layer in LIST_LAYERS for layer in layers):
        return None
    return definition <= limit


def count_visible(layers: Sequence[int], definition: np.ndarray | None, num_items: int) -> int:
    mask = visible_mask(layers, definition, num_items)
    return num_items if mask is None else int(np.count_nonzero(mask))
