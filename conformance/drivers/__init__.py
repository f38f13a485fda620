"""Drivers: one Lance implementation each, seen through the same small API.

A driver is anything that satisfies :class:`Driver` (a module does, by its
module-level names):

* ``versions(uri) -> list[int]``: the versions it lists, ascending;
* ``describe(uri, version) -> Description``: the canonical description
  (``conformance/schemas/describe.schema.json``) of one version;
* ``read_table(uri, version) -> pyarrow.Table``: the visible rows of one version;
* ``UNREPORTED``: document paths it cannot report (skipped in comparisons).

Any of them raises when the implementation refuses the dataset. The drivers
shipped here are listed in :data:`DRIVERS`; a driver for another language
(a subprocess that prints the document and writes Arrow IPC, say) plugs in by
adding a module with the same four names and either an entry here or its
module name (``my_driver``, ``third_party.lance_rs``) wherever a driver name
is asked for. Known names are looked up first.

An implementation in any language runs as a worker: a long-lived child
process speaking the worker protocol (:mod:`.worker`). ``worker:NAME`` runs
the Python driver ``NAME`` in one (isolated from the suite's process: a
crash fails one call, not the run); ``cmd:COMMAND LINE`` runs any program
that speaks the protocol.

``pylance@VERSION`` (``pylance@0.20.0``) runs the pylance driver inside the
virtual environment of that pylance release (one of
``conformance.peers.old_pylance.PINNED_REQUIREMENTS``), beside the project's
own pylance, in a worker: see :mod:`conformance.drivers.release`. Worker
drivers also have ``close()``, which stops their child process;
:func:`close_driver` calls it when there is one.

A Rust panic inside pylance surfaces as ``PanicException``, which derives
from ``BaseException``; :func:`~.worker.errors.is_implementation_failure` tells
callers that catch driver failures to count it as one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol, cast

from ..describe import Description
from .worker.errors import is_implementation_failure

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

#: Driver name -> module. Modules are imported on first use, so a driver whose
#: implementation is not installed costs nothing until it is asked for.
DRIVERS: dict[str, str] = {
    "reference": "conformance.drivers.reference",
    "pylance": "conformance.drivers.pylance_driver",
}

__all__ = [
    "DRIVERS",
    "ClosableDriver",
    "Driver",
    "DriverError",
    "close_driver",
    "is_implementation_failure",
    "load_driver",
]


class Driver(Protocol):
    """One Lance implementation as the conformance checks see it.

    A module satisfies it structurally through its module-level names (the
    reference and pylance drivers), an object through its attributes (a
    release driver). Any method raises when the implementation refuses the
    dataset."""

    #: Document paths (``fragments[].files[].base_id``) the implementation
    #: cannot report; comparisons skip them.
    UNREPORTED: frozenset[str]

    def versions(self, uri: str) -> list[int]:
        """The versions the implementation lists, ascending."""
        ...

    def describe(self, uri: str, version: int | None = None) -> Description:
        """The canonical description of one version (the latest by default)."""
        ...

    def read_table(self, uri: str, version: int | None = None) -> pa.Table:
        """The visible rows of one version."""
        ...


class ClosableDriver(Driver, Protocol):
    """A driver holding something to release (a release driver's child
    process); :func:`close_driver` calls :meth:`close`."""

    def close(self) -> None: ...


#: The names :func:`load_driver` checks a driver module for: :class:`Driver`'s members.
REQUIRED_NAMES = ("versions", "describe", "read_table", "UNREPORTED")


class DriverError(Exception):
    """A driver name that names no usable driver."""


def load_driver(name: str) -> Driver:
    """The driver for ``name``: a key of :data:`DRIVERS`, ``worker:NAME``,
    ``cmd:COMMAND LINE``, ``pylance@VERSION``, or an importable module name."""
    from . import release, worker

    if worker.is_worker_name(name):
        from .worker.client import WorkerError  # lazy: the client imports reference_impl

        try:
            return worker.open_worker_driver(name)
        except (ValueError, WorkerError) as exc:
            raise DriverError(f"driver {name!r} cannot be loaded: {exc}") from None
    if release.RELEASE_SEPARATOR in name:
        from ..peers.old_pylance import PeerUnavailableError

        try:
            return release.open_release_driver(name)
        except (ValueError, OSError, PeerUnavailableError, release.ReleaseCallError) as exc:
            raise DriverError(f"driver {name!r} cannot be loaded: {exc}") from None
    module_name = DRIVERS.get(name, name)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            known = ", ".join([*sorted(DRIVERS), "pylance@VERSION", "worker:NAME", "cmd:COMMAND LINE"])
            raise DriverError(f"unknown driver {name!r}: no such module; known drivers: {known}") from None
        raise DriverError(f"driver {name!r} cannot be loaded: {exc}") from None
    except ImportError as exc:
        raise DriverError(f"driver {name!r} cannot be loaded: {exc}") from None
    missing = [attribute for attribute in REQUIRED_NAMES if not hasattr(module, attribute)]
    if missing:
        raise DriverError(f"driver {name!r} ({module_name}) lacks {', '.join(missing)}")
    # The module is checked for the protocol's names just above; their
    # signatures are the module author's promise.
    return cast(Driver, module)


def close_driver(driver: Driver) -> None:
    """Release what a driver holds (a release driver's child process)."""
    close = getattr(driver, "close", None)
    if callable(close):
        close()


if TYPE_CHECKING:  # pragma: no cover - typing only
    # mypy checks that the shipped drivers satisfy the protocol.
    from . import pylance_driver, reference
    from .worker.client import WorkerDriver

    _SHIPPED: tuple[Driver, ...] = (reference, pylance_driver)
    _WORKER: ClosableDriver = cast(WorkerDriver, None)
