"""How findings put things into words: lists of examples, names that may
hold any bytes, counted nouns.

Every message that lists examples goes through :func:`listed`, so that a
long list reads the same way in every rule: the first :data:`SHOWN` items,
then how many were left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized
from itertools import islice

#: How many examples a message lists before it says how many more there are.
SHOWN = 5


def listed(
    items: Iterable, limit: int = SHOWN, *, sep: str = ", ", sort: bool = False, total: int | None = None
) -> str:
    """The first ``limit`` of ``items`` as text, joined by ``sep``, followed by
    ``"{sep} and N more"`` (``", and 3 more"``) when some were left out.

    A sized collection (a list, a set, a Roaring bitmap) is not copied: only
    its first ``limit`` items are taken, so a bitmap of millions of ids costs
    no more than a short list. Anything else is read in full. ``sort`` sorts
    the items first (then every item is read). ``total`` is how many items
    there are in all when ``items`` holds only the first of them (a count
    too large to enumerate)."""
    if sort:
        items = sorted(items)
    elif not isinstance(items, Sized):
        items = list(items)
    if total is None:
        total = len(items)
    head = [str(item) for item in islice(items, limit)]
    text = sep.join(head)
    if total > len(head):
        text += f"{sep.rstrip()} and {total - len(head)} more"
    return text


def printable(text: str, limit: int = 120) -> str:
    """``text`` for a message: control characters escaped, long text cut."""
    if not isinstance(text, str):
        text = repr(text)
    elif not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``"1 file"`` / ``"3 files"``, ``"2 anomalies"`` with ``plural_noun``:
    a count with its noun agreeing (the one such helper of the project)."""
    return f"{count} {noun if count == 1 else (plural_noun or noun + 's')}"


def uses(count: int) -> str:
    """``"1 file uses"`` / ``"3 files use"``."""
    return f"{plural(count, 'file')} {'uses' if count == 1 else 'use'}"
