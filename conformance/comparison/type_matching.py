"""Pairing an expected Arrow field with the one a reader returned: which
differences are representation only (observations) and which change what the
column can hold (problems, which fail).

The logical types are those of the schema format page ("Data Types", "Type
Conversion Reference"); a representation difference is one the page's own
logical types do not distinguish in values: the nullable flag is compared as
a flag, child names of lists and maps carry no data, ``large_*`` types hold the
same values as their plain counterparts, a dictionary decodes to its values,
and a wider type holds every value of the narrower one exactly.

Time zones are compared as zones (:mod:`.time_zones`: ``Etc/UTC`` is
``UTC``). A reader's declared type capabilities
(:class:`conformance.type_capabilities.TypeCapabilities`) widen what is
representation: a zoned timestamp read in UTC (or without a zone) by a reader
that declares so, and a timestamp, time or duration read at the coarser unit
a reader declares as its finest, are observations, their values compared at
that zone and unit (:mod:`.values`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from ..type_capabilities import TimeUnit, TimeZones, TypeCapabilities
from .arrow_types import BFLOAT16_EXTENSION, is_bfloat16
from .observations import Observation, ObservationKind
from .time_zones import same_zone

# The requirement each kind of observation concerns (conformance/data/requirements.json).
NULLABILITY_REQUIREMENT = "schema.non-nullable-has-no-nulls"
LIST_CHILD_REQUIREMENT = "schema.list-element-child"
MAP_CHILDREN_REQUIREMENT = "schema.map-children"
FIXED_SIZE_LIST_REQUIREMENT = "schema.fixed-size-list-format"
OFFSET_WIDTH_REQUIREMENT = "schema.large-offset-types"
TYPE_CONVERSION_REQUIREMENT = "schema.arrow-type-conversion"
DICTIONARY_REQUIREMENT = "schema.dictionary-format"
TIMESTAMP_REQUIREMENT = "schema.timestamp-format"
DATE_TIME_REQUIREMENT = "schema.date-time-units"
DECIMAL_REQUIREMENT = "schema.decimal-format"
EXTENSION_REQUIREMENT = "schema.extension-metadata-namespace"
BFLOAT16_REQUIREMENT = "schema.bfloat16-in-fixed-size-list"


# Bits of an integer's magnitude a float's significand holds exactly, by float width.
_SIGNIFICAND_BITS = {16: 11, 32: 24, 64: 53}
# Decimal digits of the largest magnitude of each integer type, by (signed, bit width).
_INTEGER_DIGITS = {
    (True, 8): 3,
    (True, 16): 5,
    (True, 32): 10,
    (True, 64): 19,
    (False, 8): 3,
    (False, 16): 5,
    (False, 32): 10,
    (False, 64): 20,
}


@dataclass(frozen=True)
class TypeMatch:
    """How an actual field relates to the expected one: representation
    differences to note, and problems (the column cannot hold the expected
    values as they are) that fail."""

    observations: tuple[Observation, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def comparable(self) -> bool:
        """Whether the values can be compared: no problem with the types."""
        return not self.problems


@dataclass
class _Collector:
    capabilities: TypeCapabilities
    observations: list[Observation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def observe(self, path: str, kind: ObservationKind, expected: object, actual: object, requirement: str) -> None:
        self.observations.append(Observation(path, kind.value, str(expected), str(actual), requirement))

    def problem(self, path: str, message: str) -> None:
        self.problems.append(f"column {path!r}: {message}")


def match_fields(
    expected: pa.Field,
    actual: pa.Field,
    path: str | None = None,
    capabilities: TypeCapabilities = TypeCapabilities(),  # noqa: B008 - immutable
) -> TypeMatch:
    """Pair ``actual`` (what a reader returned) with ``expected``; ``path``
    names the field in messages (default: the expected field's name);
    ``capabilities`` are the reader's declared type limits."""
    collector = _Collector(capabilities)
    _match_field(expected, actual, expected.name if path is None else path, collector)
    return TypeMatch(tuple(dict.fromkeys(collector.observations)), tuple(collector.problems))


def _match_field(expected: pa.Field, actual: pa.Field, path: str, out: _Collector) -> None:
    if expected.nullable != actual.nullable:
        out.observe(
            path, ObservationKind.NULLABILITY, _nullability(expected), _nullability(actual), NULLABILITY_REQUIREMENT
        )
    if is_bfloat16(expected) and bfloat16_widened_to(actual.type):
        out.observe(path, ObservationKind.WIDER_TYPE, BFLOAT16_EXTENSION, actual.type, BFLOAT16_REQUIREMENT)
        return
    _match_type(expected.type, actual.type, path, out)


def bfloat16_widened_to(actual: pa.DataType) -> bool:
    """Whether ``actual`` holds every bfloat16 value exactly (it has float32's exponent range)."""
    return pa.types.is_float32(actual) or pa.types.is_float64(actual)


def _nullability(f: pa.Field) -> str:
    return "nullable" if f.nullable else "not null"


def _match_type(expected: pa.DataType, actual: pa.DataType, path: str, out: _Collector) -> None:
    if isinstance(expected, pa.BaseExtensionType) or isinstance(actual, pa.BaseExtensionType):
        _match_extension(expected, actual, path, out)
    elif pa.types.is_dictionary(expected) or pa.types.is_dictionary(actual):
        _match_dictionary(expected, actual, path, out)
    elif _layout_family(expected) is not None and _layout_family(expected) == _layout_family(actual):
        _match_layout(expected, actual, path, out)
    elif pa.types.is_struct(expected) and pa.types.is_struct(actual):
        _match_struct(expected, actual, path, out)
    elif pa.types.is_map(expected) and pa.types.is_map(actual):
        _match_map(expected, actual, path, out)
    elif pa.types.is_fixed_size_list(expected) and pa.types.is_fixed_size_list(actual):
        _match_fixed_size_list(expected, actual, path, out)
    elif expected.equals(actual):
        pass
    elif _is_temporal_with_unit(expected) and expected.id == actual.id:
        _match_temporal(expected, actual, path, out)
    elif holds_exactly(expected, actual):
        out.observe(path, ObservationKind.WIDER_TYPE, expected, actual, _wider_type_requirement(expected))
    else:
        out.problem(path, f"expected type {expected}, got {actual}{_why(expected, actual)}")


def _is_temporal_with_unit(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_time(t)


def _match_temporal(expected: pa.DataType, actual: pa.DataType, path: str, out: _Collector) -> None:
    """A timestamp, time or duration read as the same kind of type: its zone
    compared as a zone (and as the reader declares it reads zones), its unit
    no coarser than the expected one unless the reader declares that finest."""
    if pa.types.is_timestamp(expected) and not _zone_accepted(expected.tz, actual.tz, path, out):
        out.problem(path, f"expected type {expected}, got {actual}{_why(expected, actual)}")
        return
    expected_unit, actual_unit = TimeUnit(expected.unit), TimeUnit(actual.unit)
    if actual_unit.rank > expected_unit.rank:
        out.observe(path, ObservationKind.WIDER_TYPE, expected, actual, _wider_type_requirement(expected))
    elif actual_unit.rank < expected_unit.rank:
        if actual_unit is not out.capabilities.finest_time_unit:
            out.problem(
                path, f"expected type {expected}, got {actual} (narrower: {actual} cannot hold every {expected} value)"
            )
            return
        out.observe(
            path,
            ObservationKind.PRECISION,
            expected_unit.value,
            f"{actual_unit.value} (the reader declares {actual_unit.value} its finest unit)",
            _wider_type_requirement(expected),
        )


def _zone_accepted(expected: str | None, actual: str | None, path: str, out: _Collector) -> bool:
    """Whether a timestamp of zone ``expected`` read with zone ``actual``
    holds the same instants (the same zone under another name, or the zone
    the reader declares it reads every timestamp in); noted as an observation."""
    if expected == actual:
        return True
    if same_zone(expected, actual):
        out.observe(path, ObservationKind.TIME_ZONE, expected, f"{actual} (the same zone)", TIMESTAMP_REQUIREMENT)
        return True
    declared = out.capabilities.time_zones
    if expected is not None and declared is TimeZones.UTC and same_zone(actual, "UTC"):
        out.observe(
            path,
            ObservationKind.TIME_ZONE,
            expected,
            f"{actual} (the reader declares it reads zones as UTC)",
            TIMESTAMP_REQUIREMENT,
        )
        return True
    if expected is not None and declared is TimeZones.DROPPED and actual is None:
        out.observe(
            path,
            ObservationKind.TIME_ZONE,
            expected,
            "none (the reader declares it drops zones: UTC wall-clock time)",
            TIMESTAMP_REQUIREMENT,
        )
        return True
    return False


def _why(expected: pa.DataType, actual: pa.DataType) -> str:
    if pa.types.is_timestamp(expected) and pa.types.is_timestamp(actual) and expected.tz != actual.tz:
        return f" (time zone {expected.tz or 'none'} became {actual.tz or 'none'})"
    if holds_exactly(actual, expected):
        return f" (narrower: {actual} cannot hold every {expected} value)"
    return ""


def _match_extension(expected: pa.DataType, actual: pa.DataType, path: str, out: _Collector) -> None:
    expected_is_extension = isinstance(expected, pa.BaseExtensionType)
    actual_is_extension = isinstance(actual, pa.BaseExtensionType)
    if expected_is_extension and actual_is_extension:
        if expected.extension_name != actual.extension_name:
            out.problem(path, f"expected extension type {expected.extension_name}, got {actual.extension_name}")
            return
    else:
        out.observe(path, ObservationKind.EXTENSION, expected, actual, EXTENSION_REQUIREMENT)
    _match_type(_storage(expected), _storage(actual), path, out)


def _storage(t: pa.DataType) -> pa.DataType:
    return t.storage_type if isinstance(t, pa.BaseExtensionType) else t


def _match_dictionary(expected: pa.DataType, actual: pa.DataType, path: str, out: _Collector) -> None:
    expected_is_dictionary = pa.types.is_dictionary(expected)
    actual_is_dictionary = pa.types.is_dictionary(actual)
    if expected_is_dictionary != actual_is_dictionary or (
        expected_is_dictionary and not expected.index_type.equals(actual.index_type)
    ):
        out.observe(path, ObservationKind.DICTIONARY, expected, actual, DICTIONARY_REQUIREMENT)
    _match_type(_dictionary_values(expected), _dictionary_values(actual), path, out)


def _dictionary_values(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _layout_family(t: pa.DataType) -> str | None:
    """``string``, ``binary`` or ``list`` for the Arrow types that hold those
    values with 32-bit or 64-bit offsets or as views; None for others."""
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return "list"
    return None


def is_view(t: pa.DataType) -> bool:
    """Whether ``t`` is one of Arrow's view layouts (string, binary or list views)."""
    return (
        pa.types.is_string_view(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    )


def _is_large(t: pa.DataType) -> bool:
    return (
        pa.types.is_large_string(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_large_list(t)
        or pa.types.is_large_list_view(t)
    )


def _layout_name(t: pa.DataType) -> str:
    base = {"string": "string", "binary": "binary", "list": "list"}[_layout_family(t) or ""]
    return ("large_" if _is_large(t) else "") + base + ("_view" if is_view(t) else "")


def _match_layout(expected: pa.DataType, actual: pa.DataType, path: str, out: _Collector) -> None:
    if is_view(expected) != is_view(actual):
        kind = ObservationKind.VIEW_LAYOUT
        requirement = TYPE_CONVERSION_REQUIREMENT
    else:
        kind = ObservationKind.OFFSET_WIDTH
        requirement = OFFSET_WIDTH_REQUIREMENT
    if _layout_name(expected) != _layout_name(actual):
        out.observe(path, kind, _layout_name(expected), _layout_name(actual), requirement)
    if _layout_family(expected) == "list":
        _match_child(expected.value_field, actual.value_field, path, LIST_CHILD_REQUIREMENT, out)


def _match_child(expected: pa.Field, actual: pa.Field, path: str, requirement: str, out: _Collector) -> None:
    if expected.name != actual.name:
        out.observe(path, ObservationKind.CHILD_NAME, expected.name, actual.name, requirement)
    _match_field(expected, actual, f"{path}.{expected.name}", out)


def _match_fixed_size_list(expected: pa.DataType, actual: pa.DataType, path: str, out: _Collector) -> None:
    if expected.list_size != actual.list_size:
        out.problem(path, f"expected fixed-size lists of {expected.list_size}, got {actual.list_size}")
        return
    _match_child(expected.value_field, actual.value_field, path, FIXED_SIZE_LIST_REQUIREMENT, out)


def _match_map(expected: pa.MapType, actual: pa.MapType, path: str, out: _Collector) -> None:
    _match_child(expected.key_field, actual.key_field, path, MAP_CHILDREN_REQUIREMENT, out)
    _match_child(expected.item_field, actual.item_field, path, MAP_CHILDREN_REQUIREMENT, out)


def _match_struct(expected: pa.StructType, actual: pa.StructType, path: str, out: _Collector) -> None:
    expected_names = [f.name for f in expected]
    actual_names = [f.name for f in actual]
    missing = [n for n in expected_names if n not in actual_names]
    unexpected = [n for n in actual_names if n not in expected_names]
    if missing or unexpected:
        if missing:
            out.problem(path, f"struct fields {missing} missing")
        if unexpected:
            out.problem(path, f"unexpected struct fields {unexpected}")
        return
    if expected_names != actual_names:
        # Field order is part of the schema: reordering is a schema change of its own.
        out.problem(path, f"struct fields in order {expected_names}, got {actual_names}")
        return
    for expected_child, actual_child in zip(expected, actual, strict=True):
        _match_field(expected_child, actual_child, f"{path}.{expected_child.name}", out)


def holds_exactly(expected: pa.DataType, actual: pa.DataType) -> bool:
    """Whether every value of the leaf type ``expected`` is a value of
    ``actual`` too (a different type that widens it without loss)."""
    if expected.equals(actual):
        return False
    if pa.types.is_null(expected):
        return True
    if pa.types.is_integer(expected):
        return _integer_fits(expected, actual)
    if pa.types.is_floating(expected):
        return pa.types.is_floating(actual) and actual.bit_width > expected.bit_width
    if pa.types.is_decimal(expected):
        return (
            pa.types.is_decimal(actual)
            and actual.scale >= expected.scale
            and actual.precision - actual.scale >= expected.precision - expected.scale
        )
    if pa.types.is_timestamp(expected):
        return pa.types.is_timestamp(actual) and same_zone(actual.tz, expected.tz) and _finer(expected, actual)
    if pa.types.is_duration(expected):
        return pa.types.is_duration(actual) and _finer(expected, actual)
    if pa.types.is_time(expected):
        return pa.types.is_time(actual) and _finer(expected, actual)
    return pa.types.is_date32(expected) and pa.types.is_date64(actual)


def _integer_fits(expected: pa.DataType, actual: pa.DataType) -> bool:
    signed = pa.types.is_signed_integer(expected)
    magnitude_bits = expected.bit_width - 1 if signed else expected.bit_width
    if pa.types.is_integer(actual):
        if pa.types.is_signed_integer(actual):
            return actual.bit_width - 1 >= magnitude_bits
        return not signed and actual.bit_width >= expected.bit_width
    if pa.types.is_floating(actual):
        return _SIGNIFICAND_BITS[actual.bit_width] >= magnitude_bits
    if pa.types.is_decimal(actual):
        return actual.precision - actual.scale >= _INTEGER_DIGITS[(signed, expected.bit_width)]
    return False


def _finer(expected: pa.DataType, actual: pa.DataType) -> bool:
    return TimeUnit(actual.unit).rank > TimeUnit(expected.unit).rank


def _wider_type_requirement(expected: pa.DataType) -> str:
    if pa.types.is_timestamp(expected):
        return TIMESTAMP_REQUIREMENT
    if pa.types.is_date(expected) or pa.types.is_time(expected) or pa.types.is_duration(expected):
        return DATE_TIME_REQUIREMENT
    if pa.types.is_decimal(expected):
        return DECIMAL_REQUIREMENT
    return TYPE_CONVERSION_REQUIREMENT
