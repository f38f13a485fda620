"""Pausing Python's cyclic garbage collector while many acyclic objects are
built and kept (a validation run, a description of a large table).

Such work builds hundreds of thousands of small objects that form no cycles
(fragments, data files, per-file facts, description dicts) and keeps them
to the end, so each pass of the collector walks them all again for
nothing: on a 10,000-fragment dataset its passes took a quarter of a
validation and half of a description. Reference counting still frees what
is dropped; the collector resumes (when it was enabled) as the work ends,
and collects any cycle then.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the ``with`` block, then as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
