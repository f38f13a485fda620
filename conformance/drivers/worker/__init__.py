"""Isolated workers: drivers whose implementation runs in a child process that
speaks the worker protocol, a versioned JSON-lines protocol over its stdin and
stdout (``docs/drivers.md``, "Workers"; JSON Schema
``conformance/schemas/worker-protocol.schema.json``).

A crash, a panic, a hang or garbage output of the implementation under test
fails the one call it happened in, with what was seen, and the next call gets
a fresh worker: the run goes on. Python drivers run in process or in a worker;
an implementation in any language runs in a worker.

Driver names (resolved by :func:`conformance.drivers.load_driver`):

* ``worker:NAME``: the Python driver ``NAME`` served by
  ``python -m conformance.drivers.worker --driver NAME`` (:mod:`.server`);
* ``cmd:COMMAND LINE``: any program speaking the protocol, its command line
  split as a POSIX shell would (no shell runs it).

This package's own module imports only the standard library: the server
runs inside old pylance releases' environments, where the client's
dependencies (the reference implementation's errors) are not installed.

Modules: :mod:`.errors` (the typed error kinds), :mod:`.messages` (the wire
format), :mod:`.server` (serves a Python driver), :mod:`.client`
(:class:`WorkerDriver`), :mod:`.protocol_check` (checks any worker command
against the protocol), :mod:`.bootstrap` (starts the server in a foreign
environment).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ErrorKind, is_implementation_failure
from .messages import WORKER_PROTOCOL_VERSION, RequestKind

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .client import WorkerDriver

#: ``worker:NAME``: a Python driver served by this package's server.
WORKER_PREFIX = "worker:"
#: ``cmd:COMMAND LINE``: any program speaking the protocol.
COMMAND_PREFIX = "cmd:"

__all__ = [
    "COMMAND_PREFIX",
    "WORKER_PREFIX",
    "WORKER_PROTOCOL_VERSION",
    "ErrorKind",
    "RequestKind",
    "is_implementation_failure",
    "child_python_path",
    "is_worker_name",
    "open_worker_driver",
    "python_worker_command",
]


def is_worker_name(name: str) -> bool:
    """Whether ``name`` names a worker (``worker:...`` or ``cmd:...``)."""
    return name.startswith((WORKER_PREFIX, COMMAND_PREFIX))


def python_worker_command(driver: str, python: str = sys.executable) -> list[str]:
    """The command line serving the Python driver ``driver`` with ``python``."""
    return [python, "-m", "conformance.drivers.worker", "--driver", driver]


def child_python_path() -> list[str]:
    """The ``PYTHONPATH`` of a ``worker:NAME`` child: the directory of the
    ``conformance`` package this process runs, then the directories this
    process imports from that the child's interpreter would not search by
    itself (a driver module found here, put on ``sys.path`` by a test or a
    tool, is found there too), then this process's own ``PYTHONPATH``."""
    package_root = str(Path(__file__).resolve().parents[3])
    # The interpreter's own directories (standard library, site-packages) it searches anyway.
    own = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    entries = [package_root]
    for entry in sys.path:
        if entry and os.path.isdir(entry) and not (os.path.realpath(entry) + os.sep).startswith(own):
            entries.append(os.path.abspath(entry))
    inherited = os.environ.get("PYTHONPATH")
    entries += inherited.split(os.pathsep) if inherited else []
    return list(dict.fromkeys(entries))


def open_worker_driver(name: str, *, timeout: float | None = None, greet: bool = True) -> WorkerDriver:
    """The worker driver for ``worker:NAME`` or ``cmd:COMMAND LINE``, its child
    started and greeted (raises :class:`WorkerError` when it does not answer
    ``hello``, ``ValueError`` for a name that names no command). With
    ``greet`` False the child is started but not waited for: its start-up
    overlaps with the caller's, and the first call greets it (raising
    :class:`WorkerError` then)."""
    if name.startswith(WORKER_PREFIX):
        served = name[len(WORKER_PREFIX) :].strip()
        if not served:
            raise ValueError("worker: needs a driver name (worker:reference)")
        command = python_worker_command(served)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(child_python_path()))
    elif name.startswith(COMMAND_PREFIX):
        try:
            command = shlex.split(name[len(COMMAND_PREFIX) :])
        except ValueError as exc:
            raise ValueError(f"cannot split the command line of {name!r}: {exc}") from None
        if not command:
            raise ValueError("cmd: needs a command line (cmd:node worker.js)")
        env = None
    else:
        raise ValueError(f"{name!r} names no worker (worker:NAME or cmd:COMMAND LINE)")
    from .client import WorkerDriver  # lazy: the client needs reference_impl, absent where the server runs

    driver = WorkerDriver(name, command, env=env, timeout=timeout)
    try:
        driver.driver_json() if greet else driver.spawn()
    except BaseException:
        driver.close()
        raise
    return driver
