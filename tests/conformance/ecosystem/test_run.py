"""Which drivers the ecosystem matrix runs through writer conformance."""

from __future__ import annotations

from conformance.ecosystem.run import read_with_drivers

from . import read_only_reference


def test_writers_are_the_drivers_declaring_the_write_capability():
    """A driver is a writer when its DriverInfo declares ``write``: the
    reference is one; the same reader with a ``write()`` it does not declare
    is not."""
    run = read_with_drivers(["reference", read_only_reference.NAME], corpus=None)
    assert [entry.error for entry in run.entries] == [None, None]
    assert run.writers == ["reference"]
