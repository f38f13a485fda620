"""Session fixtures built once per test run, not once per xdist worker.

A session fixture is set up in every worker process that runs a test using
it: with two workers, the pylance datasets the validator tests read were
written twice, each time by pylance itself. :func:`built_once` builds such a
fixture's files in a directory the workers of one run share (the parent of
their base temporary directories, unique to the run), under a lock: the
first worker to get there builds, the others wait for it and read what it
built. Whoever built it, a test gets the same bytes; tests only read these
datasets (a test that changes one works on a copy), so sharing them between
processes is as safe as sharing them between the tests of one process.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

#: What a finished build leaves beside its files: the fixture's value, pickled.
_VALUE = "value.pickle"
#: Whether file locks can be taken here (POSIX); without them nothing is shared.
_CAN_LOCK = importlib.util.find_spec("fcntl") is not None


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (waiting for it)."""
    import fcntl  # lazy: POSIX only (_CAN_LOCK)

    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """``build(directory)``'s value, ``directory`` built once for the whole run.

    Without xdist (one process: nothing to share), or where ``fcntl`` is
    missing, it is built in a fresh temporary directory of this process, as
    a plain session fixture would. Under xdist, the first worker to ask
    builds it under the run's shared directory and pickles the value; the
    others wait on the lock and unpickle it. A build that failed (an
    exception, or a worker killed half-way) left no value: the next worker
    to ask removes what it left and builds again, failing with its own
    reason if the build fails again."""
    if not _CAN_LOCK or os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent / "built-once"
    shared.mkdir(exist_ok=True)
    home = shared / name
    with _exclusive(shared / f"{name}.lock"):
        value = home / _VALUE
        if value.exists():
            return pickle.loads(value.read_bytes())
        if home.exists():
            shutil.rmtree(home)
        (home / "files").mkdir(parents=True)
        result = build(home / "files")
        staging = home / f"{_VALUE}.partial"
        staging.write_bytes(pickle.dumps(result))
        staging.rename(value)
        return result
