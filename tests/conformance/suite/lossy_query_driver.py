"""A deliberately wrong query driver for the index-query suite's tests:
pylance's answers, except that every filter answer loses its largest row id
and every nearest-neighbour answer comes back reversed. It declares every
kind, by a scan and through an index, as pylance does."""

from __future__ import annotations

import dataclasses

from conformance.drivers import pylance_driver
from conformance.drivers.protocol import Capability, QueryKind
from conformance.drivers.pylance_driver import read_table, versions

__all__ = ["info", "query", "read_table", "versions"]


def info():
    return dataclasses.replace(
        pylance_driver.info(),
        name="lossy",
        implementation="lossy",
        capabilities=frozenset({Capability.READ_LATEST, Capability.LIST_VERSIONS, Capability.QUERY}),
        write_operations=frozenset(),
    )


def query(uri, query, *, use_index):
    answer = pylance_driver.query(uri, query, use_index=use_index)
    if query.kind is QueryKind.NEAREST:
        return dataclasses.replace(answer, row_ids=answer.row_ids[::-1])
    return dataclasses.replace(answer, row_ids=tuple(sorted(answer.row_ids))[:-1])
