"""Example counts that scale with the active Hypothesis profile.

The profile (``ci``, ``dev`` or ``nightly``, chosen in tests/conftest.py by
``HYPOTHESIS_PROFILE``) sets the default number of examples; a property that
is cheaper or dearer than most asks for a multiple of it here, so that every
profile scales every property instead of some being pinned to a fixed count.
"""

from __future__ import annotations

from hypothesis import settings


def examples(factor: float) -> int:
    """``factor`` times the active profile's example count, at least 1."""
    return max(1, round(factor * settings.default.max_examples))
