"""A deliberately wrong writing driver for the plugin's tests: the reference,
except that it claims ``write-at-version`` and ignores ``op.read_version``,
building every commit on the latest version. Races the conflict matrix
records as conflicts then commit."""

from __future__ import annotations

import dataclasses

from conformance.drivers import reference
from conformance.drivers.protocol import DriverInfo
from conformance.drivers.reference import UNREPORTED, describe, query, read_table, versions

__all__ = ["UNREPORTED", "describe", "info", "query", "read_table", "versions", "write"]


def info() -> DriverInfo:
    return dataclasses.replace(reference.info(), name="blind-writer", implementation="blind-writer")


def write(uri, op, **kwargs) -> int:
    return reference.write(uri, dataclasses.replace(op, read_version=None), **kwargs)
