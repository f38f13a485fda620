"""A driver run inside another release's own environment: ``pylance@VERSION``.

An older pylance needs an older pyarrow (and numpy) than the project, so it
cannot be imported beside it. ``pylance@0.20.0`` therefore runs the very same
:mod:`conformance.drivers.pylance_driver` inside the venv
:func:`conformance.peers.old_pylance.ensure_venv` builds for that release, in
a worker (:mod:`conformance.drivers.worker`): one long-lived child process
per driver speaking the worker protocol, the same one every other worker
speaks.

The child runs ``python -I`` on :mod:`.worker.bootstrap` (no ``PYTHONPATH``,
no user site), which loads the ``conformance`` package from its own directory
without putting that directory's parent on ``sys.path``, so it sees only the
release's own site-packages. Everything it imports is the standard library,
``conformance.describe``, the driver, and the release's ``lance`` and
``pyarrow``.

A failure of the release, a Rust panic included (``PanicException``, which
is not an ``Exception``), comes back as a typed error naming the error type
and message; the child keeps serving. A child that dies or stops answering
within the worker's timeout is killed, the call fails with what was seen, and
the next call starts a new one.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..peers.old_pylance import PINNED_REQUIREMENTS, ensure_venv
from . import RELEASE_SEPARATOR
from .worker.client import WorkerDriver, WorkerError, WorkerProcessError
from .worker.errors import is_implementation_failure

#: Drivers that can run in a release's venv, by the name before the ``@``:
#: the driver name its worker serves.
RELEASE_MODULES = {"pylance": "pylance"}
#: The old name of a failed call into a release: any worker error.
ReleaseCallError = WorkerError
BOOTSTRAP = Path(__file__).resolve().parent / "worker" / "bootstrap.py"

__all__ = [
    "RELEASE_MODULES",
    "RELEASE_SEPARATOR",
    "ReleaseCallError",
    "ReleaseDriver",
    "is_implementation_failure",
    "open_release_driver",
]


class ReleaseDriver(WorkerDriver):
    """The pylance driver served from a release's venv by a worker; its
    ``hello`` must report the release it was asked for."""

    def __init__(self, name: str, served: str, python: Path, release: str, *, timeout: float | None = None):
        env = dict(os.environ, LANCE_LOG="error")
        env.pop("PYTHONPATH", None)
        super().__init__(name, [str(python), "-I", str(BOOTSTRAP), "--driver", served], env=env, timeout=timeout)
        self.release = release
        self.python = Path(python)

    def driver_json(self) -> dict:
        document = super().driver_json()
        reported = {document.get("version"), document.get("lance_version")}
        if self.release not in reported:
            self.close()
            raise WorkerProcessError(f"{self.name}: the worker runs {document.get('version')}, not {self.release}")
        return document


def open_release_driver(name: str) -> ReleaseDriver:
    """The driver for a name ``DRIVER@RELEASE`` (``pylance@0.20.0``), its
    worker started; builds the release's venv on first use. Raises
    ``ValueError`` for an unknown driver or release, ``PeerUnavailableError``
    when the release cannot be installed, :class:`WorkerError` when its
    worker does not start."""
    driver, _, release = name.partition(RELEASE_SEPARATOR)
    if driver not in RELEASE_MODULES:
        raise ValueError(f"only {', '.join(sorted(RELEASE_MODULES))} run in a release's venv, not {driver!r}")
    if release not in PINNED_REQUIREMENTS:
        known = ", ".join(f"{driver}{RELEASE_SEPARATOR}{v}" for v in sorted(PINNED_REQUIREMENTS))
        raise ValueError(f"no pinned release {release!r} of {driver}; known: {known}")
    opened = ReleaseDriver(name, RELEASE_MODULES[driver], ensure_venv(release), release)
    try:
        opened.driver_json()
    except BaseException:
        opened.close()
        raise
    return opened
