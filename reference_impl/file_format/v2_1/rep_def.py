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
    # The levels stay 16-bit: every step below is a comparison or a selection.
    cur_rep = rep
    cur_def = definition
    count = num_items
    lists_inside = 0
    def_base = 0  # definition levels used by the layers already peeled
    result: list[UnraveledLayer] = []
    for index, layer in enumerate(layers):
        if layer in ITEM_LAYERS:
            if cur_def is None:
                result.append(UnraveledLayer(False, count, None))
                continue
            # An entry is a slot of this layer when the layer that defines its
            # level lies inside at most ``lists_inside`` lists: the table rises
            # with the level, so those are the levels up to ``top``.
            top = int(np.searchsorted(table, lists_inside, side="right")) - 1
            levels = cur_def if count == 0 or int(cur_def.max()) <= top else np.compress(cur_def <= top, cur_def)
            validity = None
            if layer == enc.REPDEF_NULLABLE_ITEM:
                validity = levels <= def_base
                def_base += 1
                if validity.all():
                    validity = None
            result.append(UnraveledLayer(False, len(levels), validity))
            continue
        assert cur_rep is not None  # checked above: list layers come with levels
        inner_top = def_base  # the highest level of the layers inside this list
        # A null list has the first level this layer adds (an empty one the
        # next, or the first when the list cannot be null).
        null_level = def_base + 1 if layer in (enc.REPDEF_NULLABLE_LIST, enc.REPDEF_NULL_AND_EMPTY_LIST) else -1
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
        # The entries that start a list (the others continue one), by
        # position: numpy selects by positions faster than by a mask.
        starts = np.flatnonzero(cur_rep != 0)
        start_levels = None if cur_def is None else cur_def[starts]
        validity = None
        if start_levels is None:
            children_before = starts  # every entry has a child
            total_children = len(cur_rep)
        else:
            # An entry that starts a list is a list of this layer unless its
            # level belongs to an outer list layer; it is also the list's first
            # child unless its level says the list (or a struct around it) is
            # null or empty: a level above those of the layers inside.
            is_list = start_levels <= visible_top
            childless = start_levels > inner_top
            # A list's offset counts the children before its first entry:
            # the entries before it but the childless ones.
            childless_before = np.cumsum(childless, dtype=np.int64) - childless
            children_before = np.compress(is_list, starts - childless_before)
            total_children = len(cur_rep) - int(np.count_nonzero(childless))
            list_levels = np.compress(is_list, start_levels)
            nulls = (list_levels == null_level) | (list_levels > own_top)
            if nulls.any():
                validity = ~nulls
        offsets = np.append(children_before, np.int64(total_children))
        if total_children != count_children(result):
            raise corrupt(
                f"a list layer has {total_children} children but the layer inside it has {count_children(result)} slots"
            )
        result.append(UnraveledLayer(True, len(offsets) - 1, validity, offsets))
        cur_rep = cur_rep[starts] - 1
        cur_def = start_levels
        count = len(cur_rep)
        lists_inside += 1
    result.reverse()
    return result


def count_children(inner: list[UnraveledLayer]) -> int:
    """Slots of the layer just inside (the last one peeled)."""
    return inner[-1].num_slots if inner else 0
