"""Drivers: one Lance implementation each, seen through the same small API.

A driver is anything that satisfies :class:`Driver` (a module does, by its
module-level names); ``docs/drivers.md`` documents the protocol
(:data:`~.protocol.PROTOCOL_VERSION`):

* ``versions(uri) -> list[int]`` (capability ``list-versions``): the
  versions it lists, ascending;
* ``describe(uri, version) -> Description`` (capability ``describe``): the
  canonical description (``conformance/schemas/describe.schema.json``) of
  one version;
* ``read_table(uri, version, *, schema=None) -> pyarrow.Table``: the visible
  rows of one version; ``schema`` is the Arrow schema the suite expects,
  which the driver may use (to build its query, to name its columns) or ignore;
* ``info() -> DriverInfo`` (optional): its name, implementation, exact
  versions, capabilities and type capabilities (:mod:`.protocol`); without
  it :func:`~.protocol.driver_info` takes the driver to do what its members
  allow (listing, describing, reading any version);
* ``UNREPORTED`` (optional, superseded by ``DriverInfo.unreported``):
  document paths it cannot report (skipped in comparisons).

Any of them raises when the implementation refuses the dataset. The drivers
shipped here are listed in :data:`DRIVERS` (:func:`installed_drivers` says
which of them can run here); a driver for another language plugs in as a
module with the same names, given by its module name (``my_driver``,
``third_party.lance_rs``) wherever a driver name is asked for. Known names
are looked up first.

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
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, cast

from ..describe import Description
from . import worker
from .protocol import CAPABILITY_MEMBERS, PROTOCOL_VERSION, Capability, DriverInfo, driver_info
from .worker import WORKER_PREFIX, is_worker_name
from .worker.errors import is_implementation_failure

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

#: ``pylance@VERSION``: the driver name of a release run in its own venv
#: (:mod:`.release`, which imports the worker client: not imported here).
RELEASE_SEPARATOR = "@"

#: Driver name -> module. Modules are imported on first use, so a driver whose
#: implementation is not installed costs nothing until it is asked for.
DRIVERS: dict[str, str] = {
    "reference": "conformance.drivers.reference",
    "pylance": "conformance.drivers.pylance_driver",
    "lancedb": "conformance.drivers.lancedb_driver",
    "lancedb-node": "conformance.drivers.lancedb_node",
    # Write-only drivers of distributed engines (conformance/drivers/engines).
    "pylance-distributed": "conformance.drivers.engines.pylance_distributed",
    "lance-ray": "conformance.drivers.engines.lance_ray",
    "daft": "conformance.drivers.engines.daft",
}

#: Shipped drivers that write only (conformance/drivers/engines): they declare
#: no reading capability, so default reader lists leave them out.
WRITE_ONLY: frozenset[str] = frozenset({"pylance-distributed", "lance-ray", "daft"})

#: Shipped driver name -> the Python module its implementation needs;
#: :func:`installed_drivers` lists the driver only when it is importable.
REQUIRED_MODULES: dict[str, str] = {
    "pylance": "lance",
    "lancedb": "lancedb",
    "pylance-distributed": "lance",
    "lance-ray": "lance_ray",
    "daft": "daft_lance",
}

__all__ = [
    "DRIVERS",
    "PROTOCOL_VERSION",
    "WRITE_ONLY",
    "Capability",
    "ClosableDriver",
    "DescribedDriver",
    "Driver",
    "DriverError",
    "DriverInfo",
    "close_driver",
    "driver_info",
    "greet_driver",
    "installed_drivers",
    "is_implementation_failure",
    "isolated_driver_name",
    "load_driver",
    "missing_members",
    "read_rows",
]


class Driver(Protocol):
    """One Lance implementation as the conformance checks see it.

    A module satisfies it structurally through its module-level names (the
    reference and pylance drivers), an object through its attributes (a
    release driver). Any method raises when the implementation refuses the
    dataset."""

    def versions(self, uri: str) -> list[int]:
        """The versions the implementation lists, ascending."""
        ...

    def describe(self, uri: str, version: int | None = None) -> Description:
        """The canonical description of one version (the latest by default)."""
        ...

    def read_table(self, uri: str, version: int | None = None, *, schema: pa.Schema | None = None) -> pa.Table:
        """The visible rows of one version; ``schema`` is the Arrow schema the
        suite expects (the driver may use it or ignore it)."""
        ...


class DescribedDriver(Driver, Protocol):
    """A driver that declares itself (every shipped driver does)."""

    def info(self) -> DriverInfo:
        """Its name, implementation, exact versions and capabilities."""
        ...


class ClosableDriver(Driver, Protocol):
    """A driver holding something to release (a release driver's child
    process); :func:`close_driver` calls :meth:`close`."""

    def close(self) -> None: ...


#: :class:`Driver`'s members: a driver module without ``info()`` needs at
#: least one of them (each is a capability of its own, ``versions`` and
#: ``describe`` as optional as ``read_table``).
DRIVER_MEMBERS = ("versions", "describe", "read_table")


def missing_members(obj: object, required: Iterable[str]) -> list[str]:
    """The names of ``required`` that ``obj`` (a module, a class, an object)
    lacks, in the order given: what a refusal of something that is not a
    driver (or a writer) names."""
    return [name for name in required if not hasattr(obj, name)]


class DriverError(Exception):
    """A driver name that names no usable driver."""


def load_driver(name: str, *, greet: bool = True) -> Driver:
    """The driver for ``name``: a key of :data:`DRIVERS`, ``worker:NAME``,
    ``cmd:COMMAND LINE``, ``pylance@VERSION``, or an importable module name.
    With ``greet`` False a worker's child is started but not waited for
    (:func:`.worker.open_worker_driver`), so that its start-up overlaps with
    the caller's; :func:`greet_driver` waits for it."""

    if worker.is_worker_name(name):
        from .worker.client import WorkerError  # lazy: the client imports reference_impl

        try:
            return worker.open_worker_driver(name, greet=greet)
        except (ValueError, WorkerError) as exc:
            raise DriverError(f"driver {name!r} cannot be loaded: {exc}") from None
    if RELEASE_SEPARATOR in name:
        # lazy: only release names need these; they need the worker client, which a
        # release's own venv (where load_driver serves the driver) cannot import.
        from ..peers.old_pylance import PeerUnavailableError
        from . import release

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
    if not callable(getattr(module, "info", None)) and len(missing_members(module, DRIVER_MEMBERS)) == len(
        DRIVER_MEMBERS
    ):
        raise DriverError(
            f"driver {name!r} ({module_name}) is not a driver: it has none of info, {', '.join(DRIVER_MEMBERS)}"
        )
    missing = missing_members(module, _required_members(module, name))
    if missing:
        raise DriverError(
            f"driver {name!r} ({module_name}) declares capabilities it has no member for: it lacks {', '.join(missing)}"
        )
    # The module is checked for the protocol's names just above; their
    # signatures are the module author's promise.
    return cast(Driver, module)


def _required_members(module: object, name: str) -> list[str]:
    """The members ``module`` must have: those its capabilities call
    (:data:`~.protocol.CAPABILITY_MEMBERS`), declared by its ``info()`` or,
    without one, implied by the members it has."""
    try:
        declared = driver_info(module, name)
    except Exception as exc:  # a driver's own info() failing: its author's bug, said as such
        raise DriverError(f"driver {name!r}: info() failed: {type(exc).__name__}: {exc}") from None
    return sorted({CAPABILITY_MEMBERS[capability] for capability in declared.capabilities})


def installed_drivers(*, readers: bool = False) -> list[str]:
    """The shipped drivers that can run here, cheaply (nothing is imported or
    installed): those of :data:`DRIVERS` whose implementation is importable
    (a driver module may add ``available() -> bool`` for what an import
    cannot tell, such as a Node.js runtime), then ``pylance@VERSION`` for
    every pinned release whose venv is already built. ``readers`` leaves out
    the drivers that write only (:data:`WRITE_ONLY`)."""
    # lazy: release needs the worker client, which a release's own venv cannot import
    from ..peers.old_pylance import PINNED_REQUIREMENTS, venv_ready
    from .release import RELEASE_SEPARATOR

    names = []
    for name, module_name in DRIVERS.items():
        if readers and name in WRITE_ONLY:
            continue
        required = REQUIRED_MODULES.get(name)
        if required is not None and importlib.util.find_spec(required) is None:
            continue
        if not _module_says_available(module_name):
            continue
        names.append(name)
    names += [f"pylance{RELEASE_SEPARATOR}{v}" for v in PINNED_REQUIREMENTS if venv_ready(v)]
    return names


def _module_says_available(module_name: str) -> bool:
    """A driver module's own ``available()``, when it has one; True otherwise."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return False
    available = getattr(module, "available", None)
    return bool(available()) if callable(available) else True


def read_rows(driver: Driver, uri: str, version: int | None = None, *, schema: pa.Schema | None = None) -> pa.Table:
    """``driver.read_table`` with the expected ``schema`` handed over, or
    without it for a driver written before ``read_table`` took one."""

    try:
        parameters = list(inspect.signature(driver.read_table).parameters.values())
    except (TypeError, ValueError):  # no introspectable signature: assume the current protocol
        parameters = []
    takes_schema = not parameters or any(
        parameter.name == "schema" or parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters
    )
    if takes_schema:
        return driver.read_table(uri, version, schema=schema)
    return driver.read_table(uri, version)


def greet_driver(driver: Driver, name: str) -> None:
    """Wait for the worker ``load_driver(name, greet=False)`` started to
    answer its ``hello`` (nothing for a driver that is not a worker); the
    :class:`DriverError` :func:`load_driver` raises, the driver closed, when
    it does not."""
    if not worker.is_worker_name(name):
        return
    from .worker.client import WorkerDriver, WorkerError  # lazy: the client imports reference_impl

    if not isinstance(driver, WorkerDriver):
        raise TypeError(f"driver {name!r} is a {type(driver).__name__}, not the WorkerDriver load_driver gives")
    try:
        driver.driver_json()
    except WorkerError as exc:
        close_driver(driver)
        raise DriverError(f"driver {name!r} cannot be loaded: {exc}") from None


def isolated_driver_name(name: str, *, in_process: bool = False) -> str:
    """The name a user's driver runs under: a driver *module* (an importable
    module path that is not a shipped driver, a ``worker:``/``cmd:`` name or
    ``pylance@VERSION``) runs as ``worker:MODULE`` in a child process, so a
    crash of native code in it (a Rust panic that aborts, a segfault) fails
    one call, not the suite's process; ``in_process`` (``--in-process``)
    keeps it in this process. Every other name is returned as given. The one
    place the commands (``fixtures verify``, ``matrix``, ``writer-check``,
    the pytest plugin) decide how a user's driver runs. A name whose
    top-level module is found nowhere (nothing is imported to tell) is
    returned as given too: :func:`load_driver` then says it names no driver."""
    if in_process or name in DRIVERS or is_worker_name(name) or RELEASE_SEPARATOR in name:
        return name
    top = name.partition(".")[0]
    # Where the worker looks: this process's sys.path, and the current directory (python -m).
    if not top.isidentifier() or importlib.machinery.PathFinder.find_spec(top, [*sys.path, os.getcwd()]) is None:
        return name
    return WORKER_PREFIX + name


def close_driver(driver: Driver) -> None:
    """Release what a driver holds (a release driver's child process)."""
    close = getattr(driver, "close", None)
    if callable(close):
        close()


if TYPE_CHECKING:  # pragma: no cover - typing only
    # mypy checks that the shipped drivers satisfy the protocol.
    from . import pylance_driver, reference
    from .worker.client import WorkerDriver

    _SHIPPED: tuple[DescribedDriver, ...] = (reference, pylance_driver)
    _WORKER: ClosableDriver = cast(WorkerDriver, None)
    _WORKER_DESCRIBED: DescribedDriver = cast(WorkerDriver, None)
