"""A writing driver for the properties suite's tests: pylance, except that
the tables it creates without a named version are in the legacy file format
(0.1), as the default of releases before 2.0 files was."""

from __future__ import annotations

import dataclasses

from conformance.drivers import pylance_driver
from conformance.drivers.protocol import DriverInfo
from conformance.drivers.pylance_driver import UNREPORTED, describe, query, read_table, versions
from conformance.drivers.writes import Create

__all__ = ["UNREPORTED", "describe", "info", "query", "read_table", "versions", "write"]


def info() -> DriverInfo:
    return dataclasses.replace(pylance_driver.info(), name="legacy-default", implementation="legacy-default")


def write(uri, op, **kwargs) -> int:
    if isinstance(op, Create) and op.data_storage_version is None:
        op = dataclasses.replace(op, data_storage_version="0.1")
    return pylance_driver.write(uri, op, **kwargs)
