"""A Lance driver for the conformance suite: a template to copy.

Copy this file into your project, rename it, and replace the body of
:func:`_read_with_your_implementation` with a call to your implementation
(a SQL engine's Lance extension, a dataframe library's reader). Then run it,
as a worker (its own process: a crash of native code fails one case, not the
run)::

    PYTHONPATH=path/to/your/module lance-conformance fixtures verify --driver worker:my_lance_driver

Until you replace it, it reads through the suite's reference implementation
and hands back the rows as a typical SQL engine would: no 256-bit decimals
(returned as text), no durations (returned as integers), dates as days,
fixed-size binaries as binaries, every zoned timestamp in UTC, time to the
microsecond. It declares exactly that in :func:`info`, so the suite compares
everything else and reports those columns as not applicable (or compared at
the declared zone and precision). Declare what your implementation really
does: an undeclared limit is a failure, and a declared one that is not
needed hides nothing but is easy to spot in the report.

The driver protocol (calls, ``DriverInfo``, capabilities, type capabilities)
is documented in ``docs/drivers.md``.
"""

from __future__ import annotations

import pyarrow as pa

from conformance.drivers.protocol import Capability, DriverInfo
from conformance.type_capabilities import ArrowType, TimeUnit, TimeZones, TypeCapabilities

#: What this reader cannot represent, and the limits of what it can.
TYPES = TypeCapabilities(
    unsupported=frozenset({ArrowType.DECIMAL256, ArrowType.DURATION, ArrowType.DATE64, ArrowType.FIXED_SIZE_BINARY}),
    time_zones=TimeZones.UTC,
    finest_time_unit=TimeUnit.MICROSECOND,
)


def info() -> DriverInfo:
    """Who this driver is and what it can do. It reads the latest version
    only: no version listing, no description, no time travel (the suite
    checks older versions on copies of each case that end there)."""
    return DriverInfo(
        name="my-lance-driver",
        implementation="my-lance-driver",
        version="0.1.0",
        lance_version=None,
        capabilities=frozenset({Capability.READ_LATEST}),
        types=TYPES,
    )


def read_table(uri: str, version: int | None = None, *, schema: pa.Schema | None = None) -> pa.Table:
    """The visible rows of the latest version (``version`` is always None for
    a driver without ``time-travel``). ``schema`` is the Arrow schema the
    suite expects; a SQL engine may use it to build its query."""
    table = _read_with_your_implementation(uri)
    return table.cast(pa.schema([f.with_type(_as_sql_engine_returns(f.type)) for f in table.schema]), safe=False)


def _read_with_your_implementation(uri: str) -> pa.Table:
    """Replace this: the reference implementation stands in for yours."""
    from reference_impl.dataset import Dataset  # lazy: the stand-in, not part of a real driver

    return Dataset.open(uri).to_table()


def _as_sql_engine_returns(t: pa.DataType) -> pa.DataType:
    """The Arrow type a typical SQL engine hands back for ``t`` (the limits declared in :data:`TYPES`)."""
    if isinstance(t, pa.BaseExtensionType):
        return t
    if pa.types.is_decimal256(t):
        return pa.string()
    if pa.types.is_duration(t):
        return pa.int64()
    if pa.types.is_date64(t):
        return pa.date32()
    if pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_timestamp(t):
        unit = "us" if t.unit == "ns" else t.unit
        return pa.timestamp(unit, tz="UTC" if t.tz is not None else None)
    if pa.types.is_time64(t):
        return pa.time64("us")
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_as_sql_engine_returns(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        value_field = t.value_field.with_type(_as_sql_engine_returns(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(value_field, t.list_size)
        return pa.large_list(value_field) if pa.types.is_large_list(t) else pa.list_(value_field)
    return t
