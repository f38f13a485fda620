"""What the row checker keeps as it walks the versions: when each row id was
visible, what the operations committed at one version are expected to
change, and the multiset hash that compares two tables in constant time."""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .history import Attempt

HASH_MASK = (1 << 64) - 1


def row_hash(key: tuple[int, int]) -> int:
    """A row's share of the multiset hash of a table (sums of these compare
    two tables in O(1); ints hash the same in every process)."""
    return hash(key) & HASH_MASK


class Intervals:
    """When each id was visible: sorted, disjoint [from, to) version ranges."""

    def __init__(self) -> None:
        self.starts: dict[int, list[int]] = defaultdict(list)
        self.ends: dict[int, list[int | None]] = defaultdict(list)

    def appear(self, row_id: int, version: int) -> None:
        self.starts[row_id].append(version)
        self.ends[row_id].append(None)

    def disappear(self, row_id: int, version: int) -> None:
        ends = self.ends.get(row_id)
        if ends and ends[-1] is None:
            ends[-1] = version

    def visible_at(self, row_id: int, version: int | None) -> bool:
        if version is None:
            return False
        starts = self.starts.get(row_id)
        if not starts:
            return False
        position = bisect.bisect_right(starts, version) - 1
        if position < 0:
            return False
        end = self.ends[row_id][position]
        return end is None or version < end


@dataclass
class Expected:
    """What the operations committed at one version should change."""

    delta: Counter = field(default_factory=Counter)
    #: (id, value) -> the op expected to add / remove that row.
    adds: dict = field(default_factory=dict)
    removes: dict = field(default_factory=dict)
    #: The whole table the version must hold (an overwrite or a restore), with its op.
    whole: tuple[Counter, Attempt] | None = None
    #: The multiset hash of that table (:func:`row_hash`), to skip building it when it matches.
    whole_hash: int | None = None
    #: Builds ``whole`` when the hashes differ (a restore's table is costly to rebuild).
    whole_later: tuple[object, Attempt] | None = None
