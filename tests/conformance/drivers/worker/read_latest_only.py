"""A test driver declaring one capability, ``read-latest``: it has no
``versions`` or ``describe`` and answers a read of an explicit version that
is not the latest ``unsupported`` (``NotImplementedError``), as a reader of a
table's current state does. The protocol check must pass it: a worker is
held to what it declares, and nothing else."""

from __future__ import annotations

from conformance.drivers import reference
from conformance.drivers.protocol import Capability, DriverInfo

NAME = "tests.conformance.drivers.worker.read_latest_only"


def info() -> DriverInfo:
    return DriverInfo(
        name=NAME,
        implementation="read-latest-only",
        version=reference.info().version,
        lance_version=None,
        capabilities=frozenset({Capability.READ_LATEST}),
    )


def read_table(uri, version=None, *, schema=None):
    latest = reference.versions(uri)[-1]
    if version is not None and version != latest:
        raise NotImplementedError(f"reads the latest version ({latest}) only, not {version}")
    return reference.read_table(uri, None)
