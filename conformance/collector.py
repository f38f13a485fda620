"""The command line's pause of Python's cyclic garbage collector.

``lance-conformance validate`` and ``describe`` build hundreds of thousands
of small objects that form no cycles (fragments, data files, per-file facts,
description dicts) and keep them to the end, so each pass of the collector
walks them all again for nothing. The command's own process turns the
collector off for the command's run (:func:`conformance.cli.main`);
reference counting still frees whatever is dropped.

Only the command line does this: the library functions (``validate()``, the
reference driver's ``describe()``) leave the collector of the process that
calls them alone, since that process's collector is its own business.
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
