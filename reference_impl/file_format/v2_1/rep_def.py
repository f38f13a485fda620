"""Repetition and definition levels to Arrow validity and offsets
(encoding.md, "Repetition and Definition Levels").

Each struct, list or leaf on the path from a column's top-level field down
to its values is one layer (``RepDefLayer``, listed innermost first). Level 0
means "valid at every layer"; each nullable item layer adds one definition
level (null here), each nullable or emptyable list layer one (null list,
empty list), a list with both two (null first, then empty); the levels are
numbered from the innermost layer outwards, so the smallest non-zero level
is the innermost reason a value is missing. A repetition level of ``r > 0``
starts a new list at the ``r``-th list layer counted from the innermost
(``r`` = number of list layers: a new row); 0 continues the current list.

:func:`unravel` peels the layers off from the innermost outwards over whole
numpy arrays: at a list layer every item with a non-zero repetition level
starts a list (unless its definition level says it belongs to an outer layer
that is null or empty), the others are children of the current list; the
entries that start lists are kept, with their repetition level lowered by
one, as the items of the next layer. An item layer's slots are the entries
visible at it; their definition level says whether each is valid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import CorruptFileError
from ...wire import encodings_v2_1_pb2 as enc
from .page import DEF_LEVELS, ITEM_LAYERS, LIST_LAYERS


@dataclass(frozen=True)
class UnraveledLayer:
    """The Arrow structure one layer contributes."""

    is_list: bool
    num_slots: int  # values of this layer's Arrow array
    validity: np.ndarray | None  # bool per slot, None when all are valid
    offsets: np.ndarray | None = None  # int64, num_slots + 1 (lists only)


def level_table(layers: Sequence[int]) -> np.ndarray:
    """For each definition level, how many list layers lie inside the layer
    that defines it (an entry with that level is a slot of the layers outside
    that many lists)."""
    table = [0]
    lists = 0
    for layer in layers:
        if layer in LIST_LAYERS:
            lists += 1
        table.extend([lists] * DEF_LEVELS[layer])
    return np.array(table, dtype=np.int64)


def unravel(
    layers: Sequence[int],
    rep: np.ndarray | None,
    definition: np.ndarray | None,
    num_items: int,
    corrupt: Callable[[str], CorruptFileError],
) -> list[UnraveledLayer]:
    """The layers of one page as Arrow structure, outermost first."""
    table = level_table(layers)
    if definition is not None:
        if len(definition) != num_items:
            raise corrupt(f"{len(definition)} definition levels for {num_items} items")
        if num_items and int(definition.max()) >= len(table):
            raise corrupt(f"definition level {int(definition.max())} is beyond the {len(table) - 1} the layers define")
    if rep is not None:
        if len(rep) != num_items:
            raise corrupt(f"{len(rep)} repetition levels for {num_items} items")
        max_rep = sum(1 for layer in layers if layer in LIST_LAYERS)
        if num_items and int(rep.max()) > max_rep:
            raise corrupt(f"repetition level {int(rep.max())} is beyond the {max_rep} list layers")
        if num_items and int(rep[0]) != max_rep:
            raise corrupt("the first item of a page does not start a row")
    elif any(layer in LIST_LAYERS for layer in layers):
        raise corrupt("a page with list layers has no repetition levels")
    cur_rep = None if rep is None else rep.astype(np.int64)
    cur_def = None if definition is None else definition.astype(np.int64)
    count = num_items
    lists_inside = 0
    def_base = 0  # definition levels used by the layers already peeled
    result: list[UnraveledLayer] = []
    for index, layer in enumerate(layers):
        if layer in ITEM_LAYERS:
            if cur_def is None:
                result.append(UnraveledLayer(False, count, None))
                continue
            visible = table[cur_def] <= lists_inside
            levels = cur_def[visible] if not visible.all() else cur_def
            validity = None
            if layer == enc.REPDEF_NULLABLE_ITEM:
                validity = levels <= def_base
                def_base += 1
                if validity.all():
                    validity = None
            result.append(UnraveledLayer(False, len(levels), validity))
            continue
        assert cur_rep is not None  # checked above: list layers come with levels
        null_level = empty_level = -1
        if layer == enc.REPDEF_NULLABLE_LIST:
            null_level = def_base + 1
        elif layer == enc.REPDEF_EMPTYABLE_LIST:
            empty_level = def_base + 1
        elif layer == enc.REPDEF_NULL_AND_EMPTY_LIST:
            null_level, empty_level = def_base + 1, def_base + 2
        def_base += DEF_LEVELS[layer]
        # Levels up to own_top are this list's or inside it; levels of null
        # structs directly around the list (up to visible_top) show as a
        # null list; anything higher belongs to an outer list layer.
        own_top = def_base
        visible_top = own_top
        for outer in layers[index + 1 :]:
            if outer == enc.REPDEF_NULLABLE_ITEM:
                visible_top += 1
            elif outer != enc.REPDEF_ALL_VALID_ITEM:
                break
        starts = cur_rep != 0
        if cur_def is None:
            new_list = starts
            has_child = np.ones(len(cur_rep), dtype=bool)
            is_null = None
        else:
            d = cur_def
            shown = d <= visible_top
            is_null = shown & ((d == null_level) | (d > own_top))
            is_empty = shown & (d == empty_level)
            new_list = starts & shown
            has_child = ~starts | (shown & ~is_null & ~is_empty)
        children_before = np.cumsum(has_child, dtype=np.int64) - has_child
        total_children = int(np.count_nonzero(has_child))
        offsets = np.append(children_before[new_list], np.int64(total_children))
        validity = None
        if is_null is not None:
            nulls = is_null[new_list]
            if nulls.any():
                validity = ~nulls
        if total_children != count_children(result):
            raise corrupt(
                f"a list layer has {total_children} children but the layer inside it has {count_children(result)} slots"
            )
        result.append(UnraveledLayer(True, len(offsets) - 1, validity, offsets))
        cur_rep = cur_rep[starts] - 1
        if cur_def is not None:
            cur_def = cur_def[starts]
        count = len(cur_rep)
        lists_inside += 1
    result.reverse()
    return result


def count_children(inner: list[UnraveledLayer]) -> int:
    """Slots of the layer just inside (the last one peeled)."""
    return inner[-1].num_slots if inner else 0
