"""A test driver: the reference reader, except that every timestamp zoned
``UTC`` comes back zoned ``Etc/UTC`` (the same instants, an alias of the
zone), at any depth, as some engines name it. It declares no type limits."""

from __future__ import annotations

import pyarrow as pa

from conformance.drivers import reference
from conformance.drivers.protocol import DriverInfo
from tests.conformance.ecosystem.read_only_reference import reader_info

ALIAS = "Etc/UTC"


def info() -> DriverInfo:
    return reader_info(
        name="etc-utc",
        implementation="etc-utc",
    )


versions = reference.versions
describe = reference.describe


def read_table(uri, version=None, *, schema=None):
    table = reference.read_table(uri, version)
    renamed = pa.schema([f.with_type(_renamed(f.type)) for f in table.schema])
    return table.cast(renamed)


def _renamed(t: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(t) and t.tz == "UTC":
        return pa.timestamp(t.unit, tz=ALIAS)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_renamed(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_renamed(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_renamed(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_renamed(t.value_type)), t.list_size)
    return t
