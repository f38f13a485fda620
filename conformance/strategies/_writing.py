"""How the strategies write: every dataset a recipe or a schedule builds is
written through a driver's ``write(uri, op)`` (:mod:`conformance.drivers.writes`,
the one write vocabulary), the reference driver unless the caller names
another one."""

from __future__ import annotations

import os
from enum import Enum
from types import ModuleType
from typing import Any

from conformance.drivers import load_driver
from conformance.drivers.protocol import Capability, WriteNotSupported, driver_info
from conformance.drivers.writes import Create, WriteOp, WriteResult, write_result

#: The driver recipes and schedules are written with unless told otherwise.
REFERENCE = "reference"

#: A driver as the strategies take it: a loaded driver (a module such as
#: ``conformance.drivers.reference``, or an object), or a name
#: :func:`conformance.drivers.load_driver` knows.
DriverLike = Any


class ManifestNaming(str, Enum):
    """How a dataset names its manifest files (the reference's ``manifest_naming``)."""

    V2 = "v2"
    V1 = "v1"


def resolve_driver(driver: DriverLike) -> Any:
    """The driver ``driver`` names (a name is loaded; anything else is taken as it is)."""
    return load_driver(driver) if isinstance(driver, str) else driver


def driver_name(driver: DriverLike) -> str:
    """A name another process can load ``driver`` by: the name itself, or
    the module's name (a driver that is an object has none: refused)."""
    if isinstance(driver, str):
        return driver
    if isinstance(driver, ModuleType):
        return driver.__name__
    raise TypeError(f"a driver run in other processes is named or a module, not {type(driver).__name__}")


def require_writes(driver: Any, *capabilities: Capability) -> None:
    """Refuse (:class:`WriteNotSupported`) a driver that lacks ``write`` or
    declares none of ``capabilities``' needs."""
    name = getattr(driver, "__name__", type(driver).__name__)
    missing = driver_info(driver, name).missing(Capability.WRITE, *capabilities)
    if missing or not callable(getattr(driver, "write", None)):
        needed = ", ".join(c.value for c in (missing or [Capability.WRITE]))
        raise WriteNotSupported(f"driver {name} does not declare {needed}")


def write(driver: Any, path: str | os.PathLike, op: WriteOp) -> WriteResult:
    """``driver.write(path, op)`` as a :class:`WriteResult`."""
    return write_result(driver.write(str(path), op))


def create(driver: Any, path: str | os.PathLike, op: Create, naming: ManifestNaming) -> WriteResult:
    """Create the dataset ``op`` describes at ``path`` with ``naming``.

    V2 names are every implementation's default: the driver creates it.
    The vocabulary's :class:`~conformance.drivers.writes.Create` has no way
    yet to ask for V1 names, so a V1 dataset's first version is written by
    the reference implementation, which can; every later write is the
    driver's, which keeps the scheme it finds."""
    if ManifestNaming(naming) is ManifestNaming.V2:
        return write(driver, path, op)
    # lazy: only V1 creation needs the reference writer itself
    from reference_impl.dataset import Dataset
    from reference_impl.fragment_writer import DEFAULT_DATA_STORAGE_VERSION

    created = Dataset.create(
        path,
        op.rows,
        manifest_naming=ManifestNaming.V1.value,
        data_storage_version=op.data_storage_version or DEFAULT_DATA_STORAGE_VERSION,
        stable_row_ids=op.stable_row_ids,
        max_rows_per_file=op.max_rows_per_file,
    )
    return WriteResult(versions=(created.version,))
