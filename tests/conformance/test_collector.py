"""The collector pause (conformance.collector): no pass inside it, the
collector as it was after it, and what the work keeps already in the oldest
generation, so that no young pass walks it again."""

from __future__ import annotations

import gc
import weakref

import pytest

from conformance.collector import collector_paused


@pytest.fixture
def collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def _in_generation(obj, generation: int) -> bool:
    return any(candidate is obj for candidate in gc.get_objects(generation=generation))


def test_what_the_work_keeps_ends_in_the_oldest_generation(collector_enabled):
    with collector_paused():
        assert not gc.isenabled()
        kept = [[number] for number in range(1000)]
    assert gc.isenabled()
    assert _in_generation(kept, 2) and _in_generation(kept[-1], 2)
    assert not _in_generation(kept, 0)


def test_a_disabled_collector_stays_disabled_and_untouched():
    was = gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            kept = [[1]]
        assert not gc.isenabled()
        assert _in_generation(kept, 0), "nothing was moved for a caller that runs without the collector"
    finally:
        if was:
            gc.enable()


def test_objects_the_process_froze_stay_frozen(collector_enabled):
    frozen = [[0]]
    gc.freeze()
    try:
        with collector_paused():
            kept = [[1]]
        assert _in_generation(kept, 0), "with objects frozen, the pause moves nothing"
        # A frozen object is in no generation the collector walks (the count
        # of frozen objects is no measure: any of them may be freed meanwhile).
        assert not any(_in_generation(frozen, generation) for generation in range(3))
    finally:
        gc.unfreeze()


class _Node:
    def __init__(self) -> None:
        self.self = self


def test_a_cycle_made_in_the_pause_is_still_collected(collector_enabled):
    with collector_paused():
        node = _Node()
        watched = weakref.ref(node)
        del node
    assert watched() is not None, "a cycle outlives reference counting"
    gc.collect()
    assert watched() is None
