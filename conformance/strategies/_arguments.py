"""Argument checks shared by the public strategies, and the size defaults.

A caller's mistake (a negative size, a minimum above its maximum, a name no
strategy knows) raises :class:`hypothesis.errors.InvalidArgument` when the
strategy is *built*, not when the first example is drawn, so the traceback
points at the call that is wrong.

Size arguments follow one convention everywhere: keyword-only ``min_<thing>``
and ``max_<thing>``; ``max_<thing>=None`` means "the larger of
``min_<thing>`` and the default below", so raising only the minimum never
makes a call invalid.
"""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis.errors import InvalidArgument

#: Default upper bounds of the size arguments (``max_<thing>=None``).
DEFAULT_MAX = {
    "rows": 8,
    "fields": 4,
    "fragments": 4,
    "indices": 3,
    "writers": 4,
    "steps": 6,
}

#: ``max_leaves`` of the recursive type strategies.
DEFAULT_MAX_LEAVES = 10


def check_count(name: str, value: object, *, at_least: int = 0) -> int:
    """``value`` if it is an int (not a bool) of at least ``at_least``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name}={value!r} must be an int")
    if value < at_least:
        raise InvalidArgument(f"{name}={value!r} must be at least {at_least}")
    return value


def size_range(thing: str, min_value: object, max_value: object, *, at_least: int = 0) -> tuple[int, int]:
    """The checked ``(min_<thing>, max_<thing>)``, ``None`` resolved to the
    larger of the minimum and :data:`DEFAULT_MAX`."""
    low = check_count(f"min_{thing}", min_value, at_least=at_least)
    if max_value is None:
        return low, max(low, DEFAULT_MAX[thing])
    high = check_count(f"max_{thing}", max_value, at_least=at_least)
    if high < low:
        raise InvalidArgument(f"min_{thing}={low} is above max_{thing}={high}")
    return low, high


def check_optional_bool(name: str, value: object) -> bool | None:
    """``value`` if it is True, False or None."""
    if value is not None and not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be True, False or None")
    return value


def selection(what: str, chosen: Iterable[str] | None, known: Iterable[str]) -> list[str]:
    """The sorted names of ``chosen`` (every one of ``known`` when None);
    an unknown name, a bare string or an empty selection is refused."""
    available = set(known)
    if chosen is None:
        return sorted(available)
    if isinstance(chosen, str):
        raise InvalidArgument(f"{what}={chosen!r} must be a collection of names, not one string")
    picked = sorted(set(chosen))
    unknown = [name for name in picked if name not in available]
    if unknown:
        raise InvalidArgument(f"unknown {what}: {unknown} (known: {sorted(available)})")
    if not picked:
        raise InvalidArgument(f"an empty selection of {what}")
    return picked
