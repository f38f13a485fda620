"""A writing driver for the properties suite's tests: the reference, except
that it declares no data file versions and refuses to be told one, as a
writer that only ever writes its own default would."""

from __future__ import annotations

import dataclasses

from conformance.drivers import reference
from conformance.drivers.protocol import DriverInfo
from conformance.drivers.reference import UNREPORTED, describe, query, read_table, versions
from conformance.drivers.writes import Create, WriteNotSupported

__all__ = ["UNREPORTED", "describe", "info", "query", "read_table", "versions", "write"]


def info() -> DriverInfo:
    return dataclasses.replace(
        reference.info(), name="default-only", implementation="default-only", data_storage_versions=()
    )


def write(uri, op, **kwargs) -> int:
    if isinstance(op, Create) and op.data_storage_version is not None:
        raise WriteNotSupported(f"this writer writes its default only, not {op.data_storage_version}")
    return reference.write(uri, op, **kwargs)
