"""The garbage collector and lance-conformance (conformance.collector): the
library functions ``validate()`` and the reference driver's ``describe()``
leave the calling process's collector as they found it, raising or not, and
run with it as the caller has it; only the command line's own run of
``validate`` and ``describe`` pauses it, and restores it after."""

from __future__ import annotations

import gc
import io
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa
import pytest

from conformance.cli import main
from conformance.drivers.reference import describe
from conformance.validator import validate
from reference_impl.errors import InvalidOperationError, NotADatasetError


@dataclass(frozen=True)
class CollectorState:
    enabled: bool
    threshold: tuple[int, ...]
    frozen: int

    @classmethod
    def now(cls) -> CollectorState:
        return cls(gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())


#: The states a caller may have set: the default, its collector off, its
#: own thresholds, objects it froze (before forking, say).
STATES = {
    "enabled": (True, None, False),
    "disabled": (False, None, False),
    "own-thresholds": (True, (500, 7, 9), False),
    "frozen-objects": (True, None, True),
}


@contextmanager
def caller_state(name: str) -> Iterator[CollectorState]:
    """The collector set as a caller might have it (``STATES[name]``); the
    test process's own state put back afterwards."""
    enabled, threshold, freeze = STATES[name]
    before = CollectorState.now()
    try:
        if threshold is not None:
            gc.set_threshold(*threshold)
        if freeze:
            gc.collect()
            gc.freeze()
        if not enabled:
            gc.disable()
        yield CollectorState.now()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before.threshold)
        if before.enabled:
            gc.enable()
        else:
            gc.disable()


def _assert_left_as(found: CollectorState) -> None:
    now = CollectorState.now()
    assert (now.enabled, now.threshold) == (found.enabled, found.threshold)
    if found.frozen == 0:
        assert now.frozen == 0, "the call froze objects and left them frozen"
    else:
        # Nothing frozen by the call, nothing thawed. Not equality: a frozen
        # object that reference counting frees leaves the count (the test's
        # own context manager frees one or two).
        assert 0 < now.frozen <= found.frozen


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A few versions written by pylance: appends and a delete."""
    import lance

    root = tmp_path_factory.mktemp("collector") / "ds"
    for number in range(3):
        lance.write_dataset(pa.table({"id": [number, number + 10]}), root, mode="append" if number else "create")
    lance.dataset(root).delete("id = 10")
    return root


def _library_calls(root) -> dict[str, Callable[[], object]]:
    return {
        "validate": lambda: validate(root),
        "validate-all-versions": lambda: validate(root, all_versions=True),
        "describe": lambda: describe(str(root)),
        "describe-version": lambda: describe(str(root), 1),
    }


#: Library calls that raise from inside their work (no dataset there, a
#: malformed URI), with what they raise.
RAISING_CALLS: dict[str, tuple[Callable[[str], object], type[Exception]]] = {
    "validate-not-a-dataset": (lambda missing: validate(missing), NotADatasetError),
    "validate-bad-uri": (lambda missing: validate("s3://"), InvalidOperationError),
    "describe-not-a-dataset": (lambda missing: describe(missing), NotADatasetError),
}


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("call", ["validate", "validate-all-versions", "describe", "describe-version"])
def test_a_library_call_leaves_the_collector_as_it_found_it(call, state, dataset):
    run = _library_calls(dataset)[call]
    run()
    with caller_state(state) as found:
        run()
        _assert_left_as(found)


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("call", list(RAISING_CALLS))
def test_a_library_call_that_raises_leaves_the_collector_as_it_found_it(call, state, tmp_path):
    run, error = RAISING_CALLS[call]
    missing = str(tmp_path / "missing")
    with pytest.raises(error):
        run(missing)
    with caller_state(state) as found:
        with pytest.raises(error):
            run(missing)
        _assert_left_as(found)


#: A function at the heart of each library call's work.
WORK = {"validate": "_read_facts", "describe": "describe_fragment_messages"}


@pytest.mark.parametrize("enabled", [True, False], ids=["enabled", "disabled"])
@pytest.mark.parametrize("call", list(WORK))
def test_the_work_runs_with_the_collector_as_the_caller_has_it(call, enabled, dataset):
    """No pause inside the library: each time the call enters the function
    doing its work, the collector is on or off as the caller set it."""
    seen: list[bool] = []

    def watch(frame, event, arg) -> None:
        if event == "call" and frame.f_code.co_name == WORK[call]:
            seen.append(gc.isenabled())

    with caller_state("enabled" if enabled else "disabled"):
        sys.setprofile(watch)
        try:
            _library_calls(dataset)[call]()
        finally:
            sys.setprofile(None)
    assert seen and set(seen) == {enabled}, seen


class _CollectorWitness(io.StringIO):
    """Standard output that notes, at each write, whether the collector is on."""

    def __init__(self) -> None:
        super().__init__()
        self.collector_on: list[bool] = []

    def write(self, text: str) -> int:
        self.collector_on.append(gc.isenabled())
        return super().write(text)


@pytest.mark.parametrize("command", ["validate", "describe"])
def test_the_command_line_pauses_the_collector_for_its_run_only(command, dataset, monkeypatch):
    """The command prints its result with the collector off, and the
    collector is back on after :func:`conformance.cli.main` returns."""
    witness = _CollectorWitness()
    monkeypatch.setattr(sys, "stdout", witness)
    with caller_state("enabled") as found:
        assert main([command, str(dataset)]) == 0
        _assert_left_as(found)
    assert witness.collector_on and not any(witness.collector_on), witness.collector_on


def test_another_command_keeps_the_collector(monkeypatch):
    """A command that may run long (here the rule list) keeps the collector."""
    witness = _CollectorWitness()
    monkeypatch.setattr(sys, "stdout", witness)
    with caller_state("enabled"):
        assert main(["rules"]) == 0
    assert witness.collector_on and all(witness.collector_on)
