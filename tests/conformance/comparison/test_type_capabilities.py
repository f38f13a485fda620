"""Zones compared as zones and declared type capabilities in the comparison
(conformance/comparison/time_zones.py, type_matching.py, values.py, tables.py;
conformance/type_capabilities.py), and their place in DriverInfo."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pytest

from conformance.comparison import compare_tables
from conformance.comparison.time_zones import same_zone
from conformance.drivers.protocol import Capability, DriverInfo, DriverInfoError
from conformance.type_capabilities import ArrowType, TimeUnit, TimeZones, TypeCapabilities


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("UTC", "Etc/UTC", True),
        ("UTC", "Etc/GMT", True),
        ("UTC", "+00:00", True),
        ("UTC", "Z", True),
        ("Etc/GMT+5", "-05:00", True),
        ("US/Eastern", "America/New_York", True),
        ("UTC", "America/New_York", False),
        ("Europe/London", "UTC", False),  # offset zero only in winter
        ("Asia/Kolkata", "+05:30", False),  # other offsets in its history
        ("UTC", "No/Such_Zone", False),
        (None, "UTC", False),
        (None, None, True),
    ],
)
def test_zones_are_compared_as_zones(a, b, same):
    assert same_zone(a, b) is same and same_zone(b, a) is same


def _ts(values, unit="ms", tz="UTC"):
    return pa.table({"ts": pa.array(values, pa.timestamp(unit, tz=tz))})


def test_an_alias_of_the_zone_is_an_observation_and_the_instants_are_compared():
    same = compare_tables(_ts([0, 1500]), _ts([0, 1500], tz="Etc/UTC"))
    assert same.equal and [o.kind for o in same.observations] == ["time-zone"]
    moved = compare_tables(_ts([0, 1500]), _ts([0, 1501], tz="Etc/UTC"))
    assert moved.differences and "row 1" in moved.differences[0]
    assert not compare_tables(_ts([0]), _ts([0], tz="America/New_York")).equal


def test_a_declared_utc_reader_reads_zones_as_utc_and_a_dropping_one_without_zone():
    utc = TypeCapabilities(time_zones=TimeZones.UTC)
    assert compare_tables(_ts([5], tz="America/New_York"), _ts([5]), utc).equal
    assert not compare_tables(_ts([5], tz="America/New_York"), _ts([5])).equal
    dropped = TypeCapabilities(time_zones=TimeZones.DROPPED)
    assert compare_tables(_ts([5], tz="Asia/Tokyo"), _ts([5], tz=None), dropped).equal
    assert not compare_tables(_ts([5], tz="Asia/Tokyo"), _ts([5], tz=None), utc).equal


def test_a_declared_finest_unit_compares_values_rounded_either_way():
    microseconds = TypeCapabilities(finest_time_unit=TimeUnit.MICROSECOND)
    expected = _ts([1_000_001_500, -1_000_001_500], unit="ns")
    for read in ([1_000_001, -1_000_002], [1_000_002, -1_000_001]):  # floor, ceiling
        assert compare_tables(expected, _ts(read, unit="us"), microseconds).equal
    off = compare_tables(expected, _ts([1_000_003, -1_000_001], unit="us"), microseconds)
    assert len(off.differences) == 1 and "column 'ts' row 0" in off.differences[0]
    # Undeclared, the coarser unit cannot hold the values: a difference of type.
    assert "narrower" in compare_tables(expected, _ts([1_000_001, -1_000_002], unit="us")).differences[0]


def test_a_declared_unsupported_type_leaves_that_column_out_at_any_depth():
    expected = pa.table(
        {
            "id": pa.array([1, 2]),
            "big": pa.array([decimal.Decimal("1.5"), None], pa.decimal256(40, 2)),
            "nested": pa.array([{"d": decimal.Decimal("2")}, None], pa.struct([("d", pa.decimal256(40, 0))])),
        }
    )
    lacking = TypeCapabilities(unsupported=frozenset({ArrowType.DECIMAL256}))
    read = pa.table({"id": pa.array([1, 3])})  # the reader returns neither decimal256 column
    compared = compare_tables(expected, read, lacking)
    assert compared.differences == ("column 'id' row 1: expected 2, got 3",)
    assert sorted(o.column for o in compared.observations if o.kind == "not-applicable") == ["big", "nested"]


def test_type_capabilities_travel_in_driver_info_json():
    types = TypeCapabilities(frozenset({ArrowType.DURATION}), TimeZones.UTC, TimeUnit.MICROSECOND)
    info = DriverInfo("x", "x", "1", None, frozenset({Capability.READ_LATEST}), types=types)
    assert DriverInfo.from_json(info.to_json()) == info
    assert DriverInfo.from_json({k: v for k, v in info.to_json().items() if k != "types"}).types == TypeCapabilities()
    with pytest.raises(DriverInfoError, match="decimal512"):
        DriverInfo.from_json({**info.to_json(), "types": {"unsupported": ["decimal512"]}})
    with pytest.raises(DriverInfoError, match="finest_time_unit"):
        DriverInfo.from_json({**info.to_json(), "types": {"finest_time_unit": "fortnight"}})
