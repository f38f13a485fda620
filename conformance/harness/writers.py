"""Which writer a run's ``--writer`` names, loaded for one writer task.

A harness writer is a driver that writes (``docs/drivers.md``): it declares
``Capability.WRITE`` and the kinds it performs (``DriverInfo.write_operations``)
and commits the write vocabulary's operations with ``write(uri, op)``
(``conformance.drivers.writes``). So every shipped driver that writes
(``reference``, ``pylance``, ``lancedb``, the engine writers), any driver
plugged in by module path, ``worker:MODULE`` and ``cmd:COMMAND`` workers in
any language enter the harness with no code of their own. ``faulty:NAME``
names one of the faulty writers (:mod:`.faulty`); a run's injected fault
(``RunSpec.fault``) swaps the reference's store.

A driver module may define ``create_writer(writer_index)``, returning the
driver object writer ``writer_index`` uses (a writer that keeps state per
task), and ``engine_session()``, a context manager the runner enters around
the whole run (an engine started once for every writer task, such as a Ray
cluster on loopback).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.drivers import DriverError, close_driver, load_driver, missing_members
from conformance.drivers.protocol import Capability, DriverInfo, DriverInfoError, driver_info
from conformance.drivers.writes import WriteKind

from .spec import RunSpec

#: What the harness calls on a writer.
WRITER_MEMBERS = ("write",)
FAULTY_PREFIX = "faulty:"


class WriterLoadError(ValueError):
    """A ``--writer`` name that names no usable writer (the message says why)."""


@dataclass
class LoadedWriter:
    """One task's writer: the driver and what it declared."""

    name: str
    driver: Any
    info: DriverInfo

    @property
    def performed(self) -> frozenset[WriteKind]:
        """The kinds it performs (names the vocabulary does not know are left out)."""
        known = {kind.value for kind in WriteKind}
        return frozenset(WriteKind(name) for name in self.info.write_operations if name in known)

    @property
    def writes_at_version(self) -> bool:
        return self.info.has(Capability.WRITE_AT_VERSION)

    def close(self) -> None:
        close_driver(self.driver)


def load_writer(name: str, writer_index: int = 0, spec: RunSpec | None = None) -> LoadedWriter:
    """The writer ``--writer NAME`` names, for writer ``writer_index``."""
    from . import faulty  # lazy: the reference's faulty variants load only when named

    if name.startswith(FAULTY_PREFIX):
        try:
            fault = spec.fault if spec is not None else None
            driver: Any = faulty.create(name.removeprefix(FAULTY_PREFIX), fault, writer_index)
        except faulty.UnknownFaultyWriterError as exc:
            raise WriterLoadError(str(exc)) from None
    elif name == "reference" and spec is not None and spec.fault is not None:
        driver = faulty.with_fault(spec.fault, writer_index)
    else:
        try:
            driver = load_driver(name)
        except DriverError as exc:
            raise WriterLoadError(f"writer {name!r}: {exc}") from None
        create = getattr(driver, "create_writer", None)
        if callable(create):
            driver = create(writer_index)
    missing = missing_members(driver, WRITER_MEMBERS)
    if missing:
        raise WriterLoadError(f"writer {name!r} is not a writer: it lacks {', '.join(missing)}")
    try:
        info = driver_info(driver, name)
    except DriverInfoError as exc:
        raise WriterLoadError(f"writer {name!r}: {exc}") from None
    if not info.has(Capability.WRITE):
        raise WriterLoadError(f"writer {name!r} does not declare the {Capability.WRITE.value} capability")
    return LoadedWriter(name, driver, info)


def engine_session(name: str) -> Any:
    """The context manager the writer's driver module offers around a whole
    run (``engine_session()``), or None."""
    from conformance.drivers import worker  # lazy: only to tell a worker's name

    if name.startswith(FAULTY_PREFIX) or worker.is_worker_name(name) or "@" in name:
        return None  # a faulty writer, a worker or a release has no session to start
    try:
        driver = load_driver(name, greet=False)
    except DriverError:
        return None  # reported when the tasks load it
    session = getattr(driver, "engine_session", None)
    return session() if callable(session) else None
