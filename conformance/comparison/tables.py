"""Whole tables compared by meaning: columns paired by name, their types
paired (:mod:`.type_matching`), their values compared whole (:mod:`.values`),
and the first few differing rows of each column described."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from ..type_capabilities import TypeCapabilities
from .arrow_types import types_held
from .blobs import blob_payloads
from .observations import Observation, ObservationKind
from .type_matching import TYPE_CONVERSION_REQUIREMENT, match_fields
from .values import mismatched_rows, readable

#: Rows described per column; more differing rows are counted, not listed.
MAX_ROWS_SHOWN = 3
# A value shown in a message is cut to this many characters.
_MAX_VALUE_CHARS = 120


@dataclass(frozen=True)
class TableComparison:
    """The outcome of :func:`compare_tables`.

    ``differences`` are messages, each naming the column (and the row, for a
    value) and both sides: they fail. ``observations`` are representation
    differences: they do not."""

    differences: tuple[str, ...]
    observations: tuple[Observation, ...]
    #: The differences of each column that has some (a subset of ``differences``):
    #: what an expectation naming a column or a type is matched against.
    column_differences: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def equal(self) -> bool:
        """The tables hold the same values (observations aside)."""
        return not self.differences

    def to_json(self) -> dict:
        return {
            "equal": self.equal,
            "differences": list(self.differences),
            "observations": [observation.to_json() for observation in self.observations],
        }


def compare_tables(
    expected: pa.Table,
    actual: pa.Table,
    capabilities: TypeCapabilities = TypeCapabilities(),  # noqa: B008 - immutable
) -> TableComparison:
    """Compare ``actual`` (what an implementation returned) with ``expected``
    by meaning: representation differences become observations, value and
    schema differences become differences. Chunking and metadata are ignored.

    ``capabilities`` are the reader's declared type limits: a column holding
    a type it declares unsupported (at any depth) is not compared, whether
    the reader returns it or not, and is noted as a ``not-applicable``
    observation; zone and precision limits are applied by :func:`match_fields`.
    Every other column is compared as usual."""
    differences: list[str] = []
    observations: list[Observation] = []
    by_column: dict[str, list[str]] = {}
    duplicates = _duplicate_names(expected) + _duplicate_names(actual)
    if duplicates:
        return TableComparison((f"column names are not unique: {sorted(set(duplicates))}",), ())
    skipped = _not_applicable(expected.schema, actual.schema, capabilities)
    observations += skipped
    expected, actual, payloads = blob_payloads(expected, actual)
    observations += payloads
    left_out = {observation.column for observation in skipped}
    expected_names = [name for name in expected.column_names if name not in left_out]
    actual_names = [name for name in actual.column_names if name not in left_out]
    for name in expected_names:
        if name not in actual_names:
            by_column[name] = [f"column {name!r} missing"]
    for name in actual_names:
        if name not in expected_names:
            by_column[name] = [f"unexpected column {name!r}"]
    differences += [message for messages in by_column.values() for message in messages]
    common = [name for name in expected_names if name in actual_names]
    in_actual_order = [name for name in actual_names if name in expected_names]
    if common != in_actual_order:
        # Column order is part of the schema (reordering columns is a schema change).
        differences.append(f"columns in order {common}, got {in_actual_order}")
    same_rows = expected.num_rows == actual.num_rows
    if not same_rows:
        differences.append(f"expected {expected.num_rows} rows, got {actual.num_rows}")
    for name in common:
        match = match_fields(expected.schema.field(name), actual.schema.field(name), capabilities=capabilities)
        observations += match.observations
        found = list(match.problems)
        if match.comparable and same_rows:
            found += _value_differences(expected.schema.field(name), expected.column(name), actual.column(name))
        if found:
            by_column[name] = found
            differences += found
    return TableComparison(
        tuple(differences),
        tuple(dict.fromkeys(observations)),
        {name: tuple(messages) for name, messages in by_column.items()},
    )


def _not_applicable(expected: pa.Schema, actual: pa.Schema, capabilities: TypeCapabilities) -> list[Observation]:
    """One observation per expected column holding a type the reader declares unsupported."""
    if not capabilities.unsupported:
        return []
    found = []
    for f in expected:
        lacked = sorted(kind.value for kind in types_held(f) & capabilities.unsupported)
        if lacked:
            returned = str(actual.field(f.name).type) if f.name in actual.names else "(not returned)"
            found.append(
                Observation(
                    f.name,
                    ObservationKind.NOT_APPLICABLE.value,
                    str(f.type),
                    f"{returned}: not compared, the reader declares it lacks {', '.join(lacked)}",
                    TYPE_CONVERSION_REQUIREMENT,
                )
            )
    return found


def _duplicate_names(table: pa.Table) -> list[str]:
    names = table.column_names
    return [name for name in names if names.count(name) > 1]


def _value_differences(field: pa.Field, expected: pa.ChunkedArray, actual: pa.ChunkedArray) -> list[str]:
    if expected.type.equals(actual.type) and expected.equals(actual):
        return []  # the common case, without a pass over the rows
    name = field.name
    expected_values = expected.combine_chunks()
    rows = mismatched_rows(expected_values, actual.combine_chunks(), field).nonzero()[0]
    if len(rows):
        expected_values = readable(expected_values, field)
    messages = [
        f"column {name!r} row {row}: expected {_shown(expected_values[row])}, got {_shown(actual[row])}"
        for row in rows[:MAX_ROWS_SHOWN].tolist()
    ]
    if len(rows) > MAX_ROWS_SHOWN:
        messages.append(f"column {name!r}: {len(rows)} rows differ, the first {MAX_ROWS_SHOWN} shown")
    return messages


def _shown(value: pa.Scalar) -> str:
    try:
        text = repr(value.as_py())
    except (OverflowError, ValueError, pa.ArrowException):
        # No Python value for it (a timestamp beyond the datetime range): Arrow's own rendering.
        text = " ".join(pa.array([value], type=value.type).to_string().split())[1:-1].strip()
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 3] + "..."
