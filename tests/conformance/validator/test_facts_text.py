"""The one way findings list examples (conformance.validator.facts.text.listed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyroaring import BitMap64

from conformance.validator.facts.text import SHOWN, listed, plural


def test_a_short_list_is_listed_whole():
    assert listed([3, 1, 2]) == "3, 1, 2"
    assert listed([]) == ""


def test_a_long_list_says_how_many_were_left_out():
    assert listed(range(SHOWN + 3)) == "0, 1, 2, 3, 4, and 3 more"
    assert listed(["a", "b", "c"], 2, sep="; ") == "a; b; and 1 more"


def test_sorting_and_a_known_total():
    assert listed({5, 3, 9}, 2, sort=True) == "3, 5, and 1 more"
    assert listed(x for x in [7, 8]) == "7, 8"
    assert listed([10, 11], 10, total=12) == "10, 11, and 10 more"


class _CountedReads:
    """A sized collection that counts the items read from it."""

    def __init__(self, items: BitMap64) -> None:
        self.items = items
        self.read = 0

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[int]:
        for item in self.items:
            self.read += 1
            yield item


def test_a_huge_bitmap_costs_no_more_than_its_first_items():
    """Only the first ``limit`` items of a sized collection are read: listing
    2^33 row ids (eight billion; reading them all would take minutes and
    gigabytes) reads five of them."""
    ids = BitMap64()
    ids.add_range(0, 1 << 33)
    assert listed(ids) == f"0, 1, 2, 3, 4, and {(1 << 33) - 5} more"
    counted = _CountedReads(ids)
    assert listed(counted, SHOWN) == f"0, 1, 2, 3, 4, and {(1 << 33) - 5} more"
    assert counted.read == SHOWN


@pytest.mark.parametrize(
    ("count", "noun", "plural_noun", "expected"),
    [
        (1, "file", None, "1 file"),
        (0, "file", None, "0 files"),
        (3, "tolerated departure", None, "3 tolerated departures"),
        (1, "anomaly", "anomalies", "1 anomaly"),
        (2, "anomaly", "anomalies", "2 anomalies"),
    ],
)
def test_a_count_and_its_noun_agree(count, noun, plural_noun, expected):
    assert plural(count, noun, plural_noun) == expected
