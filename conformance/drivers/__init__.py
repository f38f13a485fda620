"""Drivers: one Lance implementation each, seen through the same small API.

A driver is a module offering

* ``versions(uri) -> list[int]``: the versions it lists, ascending;
* ``describe(uri, version) -> dict``: the canonical description
  (``conformance/schemas/describe.schema.json``) of one version;
* ``read_table(uri, version) -> pyarrow.Table``: the visible rows of one version;
* ``UNREPORTED``: document paths it cannot report (skipped in comparisons).

Any of them raises when the implementation refuses the dataset. The drivers
shipped here are listed in :data:`DRIVERS`; a driver for another language
(a subprocess that prints the document and writes Arrow IPC, say) plugs in by
adding a module with the same four names and either an entry here or its
dotted module path wherever a driver name is asked for.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Driver name -> module. Modules are imported on first use, so a driver whose
#: implementation is not installed costs nothing until it is asked for.
DRIVERS: dict[str, str] = {
    "reference": "conformance.drivers.reference",
    "pylance": "conformance.drivers.pylance_driver",
}

REQUIRED_NAMES = ("versions", "describe", "read_table", "UNREPORTED")


class DriverError(Exception):
    """A driver name that names no usable driver."""


def load_driver(name: str) -> ModuleType:
    """The driver module for ``name`` (a key of :data:`DRIVERS` or a dotted
    module path)."""
    module_name = DRIVERS.get(name, name if "." in name else None)
    if module_name is None:
        raise DriverError(f"unknown driver {name!r}; known drivers: {', '.join(sorted(DRIVERS))}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DriverError(f"driver {name!r} cannot be loaded: {exc}") from None
    missing = [attribute for attribute in REQUIRED_NAMES if not hasattr(module, attribute)]
    if missing:
        raise DriverError(f"driver {name!r} ({module_name}) lacks {', '.join(missing)}")
    return module
