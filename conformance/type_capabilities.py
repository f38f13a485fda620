"""What a reader can represent of Arrow's types: the one vocabulary of type
capabilities a driver declares (``DriverInfo.types``, docs/drivers.md, "Type
capabilities") and the comparison honours (:mod:`conformance.comparison`).

A reader built on another type system (a SQL engine, a dataframe library)
cannot hand back every Arrow type a Lance dataset holds: it may have no
256-bit decimal or no duration, read every zoned timestamp as UTC, or keep
time only to the microsecond. Declared here, such a limit turns the columns
it concerns into *not applicable* observations (an unsupported type) or into
values compared at the declared zone and precision, while every other column
of the case is still compared.

This module imports only the standard library: the driver protocol
(:mod:`conformance.drivers.protocol`) uses it inside an old release's own
environment, and a worker in any language sends it as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class ArrowType(str, Enum):
    """An Arrow type a Lance dataset may hold (schema format page, "Type
    Conversion Reference"), named as Arrow names its type ids (pyarrow's
    rendering of the type without its parameters: ``decimal256`` for
    ``decimal256(40, 2)``, ``timestamp`` for ``timestamp[us, tz=UTC]``).
    ``bfloat16`` is the ``lance.bfloat16`` extension type."""

    NULL = "null"
    BOOL = "bool"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    UINT64 = "uint64"
    HALF_FLOAT = "halffloat"
    FLOAT = "float"
    DOUBLE = "double"
    BFLOAT16 = "bfloat16"
    DECIMAL128 = "decimal128"
    DECIMAL256 = "decimal256"
    STRING = "string"
    LARGE_STRING = "large_string"
    BINARY = "binary"
    LARGE_BINARY = "large_binary"
    FIXED_SIZE_BINARY = "fixed_size_binary"
    DATE32 = "date32"
    DATE64 = "date64"
    TIME32 = "time32"
    TIME64 = "time64"
    TIMESTAMP = "timestamp"
    DURATION = "duration"
    LIST = "list"
    LARGE_LIST = "large_list"
    FIXED_SIZE_LIST = "fixed_size_list"
    STRUCT = "struct"
    MAP = "map"
    DICTIONARY = "dictionary"


class TimeZones(str, Enum):
    """What a reader does with the time zone of a timestamp column."""

    #: It returns the zone the column declares (or an alias of it: ``Etc/UTC`` for ``UTC``).
    KEPT = "kept"
    #: It returns every zoned timestamp in UTC: the same instants, another zone.
    UTC = "utc"
    #: It returns every timestamp without a zone: the UTC wall-clock time of each instant.
    DROPPED = "dropped"


class TimeUnit(str, Enum):
    """Arrow's units of time, coarsest first (timestamps, times, durations)."""

    SECOND = "s"
    MILLISECOND = "ms"
    MICROSECOND = "us"
    NANOSECOND = "ns"

    @property
    def rank(self) -> int:
        """0 for seconds up to 3 for nanoseconds: a greater rank is finer."""
        return list(TimeUnit).index(self)


class TypeCapabilitiesError(ValueError):
    """A declaration of type capabilities that does not fit; the message names the field."""


@dataclass(frozen=True)
class TypeCapabilities:
    """The Arrow types a reader cannot represent and the limits of those it can.

    The default is a reader without limits: it represents every type, keeps
    every zone and every unit."""

    #: Types it cannot represent: a column holding one (at any depth) is not compared.
    unsupported: frozenset[ArrowType] = frozenset()
    time_zones: TimeZones = TimeZones.KEPT
    #: The finest unit it keeps: a timestamp, time or duration of a finer unit
    #: is compared to this unit (within one of it, whichever way the reader rounds).
    finest_time_unit: TimeUnit = TimeUnit.NANOSECOND

    @property
    def limited(self) -> bool:
        """Whether it declares any limit at all."""
        return self != TypeCapabilities()

    def to_json(self) -> dict[str, Any]:
        return {
            "unsupported": sorted(kind.value for kind in self.unsupported),
            "time_zones": self.time_zones.value,
            "finest_time_unit": self.finest_time_unit.value,
        }

    @classmethod
    def from_json(cls, document: Any) -> TypeCapabilities:
        """The declaration as a driver sent it; :class:`TypeCapabilitiesError`
        names what does not fit. Unknown type names are refused: a limit the
        suite cannot apply must not pass silently."""
        if not isinstance(document, dict):
            raise TypeCapabilitiesError(f"types: expected a JSON object, got {type(document).__name__}")
        unknown_keys = sorted(set(document) - {"unsupported", "time_zones", "finest_time_unit"})
        if unknown_keys:
            raise TypeCapabilitiesError(f"types: unknown fields {unknown_keys}")
        names = document.get("unsupported", [])
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise TypeCapabilitiesError("types: 'unsupported' must be a list of Arrow type names")
        return cls(
            unsupported=frozenset(_member(ArrowType, name, "unsupported") for name in names),
            time_zones=_member(TimeZones, document.get("time_zones", TimeZones.KEPT.value), "time_zones"),
            finest_time_unit=_member(
                TimeUnit, document.get("finest_time_unit", TimeUnit.NANOSECOND.value), "finest_time_unit"
            ),
        )


def _member(kind: type[Enum], value: Any, field: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        known = ", ".join(member.value for member in kind)
        raise TypeCapabilitiesError(f"types: {field}: unknown value {value!r} (known: {known})") from None


__all__ = ["ArrowType", "TimeUnit", "TimeZones", "TypeCapabilities", "TypeCapabilitiesError"]
