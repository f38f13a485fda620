"""A query driver that claims more than it does, for the index-query
suite's tests: it declares every kind through an index, but answers every
query by the reference's scan (right rows, no index read)."""

from __future__ import annotations

import dataclasses

from conformance.drivers import reference
from conformance.drivers.protocol import Capability
from conformance.drivers.reference import query, read_table, versions

__all__ = ["info", "query", "read_table", "versions"]


def info():
    declared = reference.info()
    return dataclasses.replace(
        declared,
        name="scanning",
        implementation="scanning",
        capabilities=frozenset({Capability.READ_LATEST, Capability.LIST_VERSIONS, Capability.QUERY}),
        write_operations=frozenset(),
        indexed_query_kinds=declared.query_kinds,
    )
