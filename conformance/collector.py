"""Pausing Python's cyclic garbage collector while many acyclic objects are
built and kept (a validation run, a description of a large table).

Such work builds hundreds of thousands of small objects that form no cycles
(fragments, data files, per-file facts, description dicts) and keeps them
to the end, so each pass of the collector walks them all again for
nothing: on a 10,000-fragment dataset its passes took a quarter of a
validation and half of a description. Reference counting still frees what
is dropped; the collector resumes (when it was enabled) as the work ends,
and collects any cycle then.

What the work returns and the caller keeps (a description: tens of
thousands of dicts and lists) would still be walked once, by the first
young-generation pass after the pause, which costs a tenth of a
description. So the objects still tracked as the pause ends are moved to
the oldest generation at once, as if they had survived the young passes
(:func:`gc.freeze` then :func:`gc.unfreeze`: two list splices, nothing
walked). The caller's young objects are promoted with them; a cycle among
them is collected by the next full pass rather than a young one. A process
that keeps objects frozen itself (before forking workers) is left as it
is: unfreezing would thaw its objects too.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the ``with`` block, then as it was,
    with the objects tracked by then in its oldest generation."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
