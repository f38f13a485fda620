"""A deliberately wrong writing driver for the conflicts command's tests: the
reference, except that it misreads its implementation's conflict signal: a
write that lost the race is reported as committed (the version it returns is
the latest, which the loser did not commit)."""

from __future__ import annotations

import dataclasses

from conformance.drivers import reference
from conformance.drivers.protocol import DriverInfo, WriteConflict
from conformance.drivers.reference import UNREPORTED, describe, query, read_table, versions

__all__ = ["UNREPORTED", "describe", "info", "query", "read_table", "versions", "write"]


def info() -> DriverInfo:
    return dataclasses.replace(reference.info(), name="swallowing-writer", implementation="swallowing-writer")


def write(uri, op, **kwargs):
    try:
        return reference.write(uri, op, **kwargs)
    except WriteConflict:
        return reference.versions(uri)[-1]
