"""A test driver: the reference, declaring itself a reader only.

It keeps the reference's ``write()`` (as a worker's client always has one)
but does not declare the ``write`` capability: the ecosystem must not take it
for a writer.
"""

from __future__ import annotations

from dataclasses import replace

from conformance.drivers import reference
from conformance.drivers.protocol import Capability, DriverInfo

NAME = "tests.conformance.ecosystem.read_only_reference"

versions = reference.versions
describe = reference.describe
read_table = reference.read_table
write = reference.write


def reader_info(**changes) -> DriverInfo:
    """The reference's declaration without writing or index queries, with
    ``changes`` (the other test drivers built on the reference's reader use
    it too)."""
    declared = reference.info()
    return replace(
        declared,
        capabilities=declared.capabilities - {Capability.WRITE, Capability.WRITE_AT_VERSION, Capability.QUERY},
        write_operations=frozenset(),
        query_kinds=frozenset(),
        data_storage_versions=(),
        **changes,
    )


def info() -> DriverInfo:
    return reader_info(name=NAME)
