"""Literals and predicates of the write vocabulary (:mod:`.writes`).

A predicate compares one top-level column with literals: :class:`Compare`
(``column op value``) and :class:`IsIn` (``column IN (values...)``). Each
renders as SQL (:meth:`Compare.to_sql`: standard SQL by default, identifiers
double-quoted, what a SQL engine takes; :attr:`SqlDialect.LANCE` for the
filter language of Lance, which pylance, LanceDB and the engines embedding
Lance parse) and as a pyarrow compute expression (:meth:`Compare.to_arrow`,
what the reference implementation takes); they mean the same, SQL's null
semantics included (a comparison with a null selects nothing). A
comparison's operator is its SQL text (``str(Comparison.LT) == "<"``). Data
types are named by their pyarrow alias (:func:`arrow_type`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Union

import pyarrow as pa
import pyarrow.compute as pc

#: A value a predicate, an update or a config entry can hold.
Literal = Union[None, bool, int, float, str]


class WriteOpError(ValueError):
    """A write operation (or its JSON document) that is not well formed."""


# -- literals and predicates ------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def check_literal(value: object, what: str) -> Literal:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise WriteOpError(f"{what}: {value!r} has no SQL literal")
        return value
    raise WriteOpError(f"{what}: {value!r} is not a literal (None, bool, int, float or str)")


def check_column(column: object, what: str) -> str:
    if not isinstance(column, str) or not column:
        raise WriteOpError(f"{what}: a column name must be a non-empty string, not {column!r}")
    return column


class SqlDialect(Enum):
    """How the SQL a predicate renders quotes identifiers (the value: the quote)."""

    #: Standard SQL: every identifier double-quoted, a double quote in it doubled.
    STANDARD = '"'
    #: Lance's filter and expression language (pylance 14 and LanceDB): it
    #: reads double-quoted text as a string literal (``"id" < 3`` compares the
    #: text 'id'), so a name that is not a plain identifier is back-quoted and
    #: a plain one left bare. A dialect, not a departure from the spec: the
    #: format says nothing about filters.
    LANCE = "`"


def sql_identifier(column: str, dialect: SqlDialect = SqlDialect.STANDARD) -> str:
    """``column`` as a SQL identifier of ``dialect``."""
    if dialect is SqlDialect.LANCE and _IDENTIFIER.match(column):
        return column
    quote = dialect.value
    return quote + column.replace(quote, quote + quote) + quote


def sql_literal(value: Literal) -> str:
    """``value`` as a SQL literal (strings single-quoted, quotes doubled)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + value.replace("'", "''") + "'"


class Comparison(str, Enum):
    """The comparison operators of :class:`Compare`."""

    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="

    def __str__(self) -> str:
        # The operator's SQL text, in f-strings and messages (not "Comparison.LT").
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def sql(self) -> str:
        """The operator as SQL writes it (``<``)."""
        return self.value


_ARROW_COMPARISONS = {
    Comparison.EQ: lambda left, right: left == right,
    Comparison.NE: lambda left, right: left != right,
    Comparison.LT: lambda left, right: left < right,
    Comparison.LE: lambda left, right: left <= right,
    Comparison.GT: lambda left, right: left > right,
    Comparison.GE: lambda left, right: left >= right,
}


@dataclass(frozen=True)
class Compare:
    """``column op value``: rows whose (top-level) column compares true.
    A null value selects nothing, as in SQL (use :class:`IsIn` for sets)."""

    column: str
    op: Comparison
    value: Literal

    def __post_init__(self) -> None:
        check_column(self.column, "compare")
        object.__setattr__(self, "op", Comparison(self.op))
        check_literal(self.value, f"compare {self.column}")

    def to_sql(self, dialect: SqlDialect = SqlDialect.STANDARD) -> str:
        return f"{sql_identifier(self.column, dialect)} {self.op.sql} {sql_literal(self.value)}"

    def to_arrow(self) -> pc.Expression:
        return _ARROW_COMPARISONS[self.op](pc.field(self.column), pc.scalar(self.value))

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "op": self.op.value, "value": self.value}


@dataclass(frozen=True)
class IsIn:
    """``column IN (values...)``: rows whose column equals one of ``values``
    (non-null literals of one type)."""

    column: str
    values: tuple[Literal, ...]

    def __post_init__(self) -> None:
        check_column(self.column, "in")
        values = tuple(check_literal(value, f"in {self.column}") for value in self.values)
        if not values or any(value is None for value in values):
            raise WriteOpError(f"in {self.column}: needs at least one value and no null")
        object.__setattr__(self, "values", values)

    def to_sql(self, dialect: SqlDialect = SqlDialect.STANDARD) -> str:
        values = ", ".join(sql_literal(value) for value in self.values)
        return f"{sql_identifier(self.column, dialect)} IN ({values})"

    def to_arrow(self) -> pc.Expression:
        return pc.field(self.column).isin(pa.array(list(self.values)))

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "op": "in", "values": list(self.values)}


Predicate = Union[Compare, IsIn]


def predicate_from_json(document: object) -> Predicate:
    if not isinstance(document, Mapping):
        raise WriteOpError(f"a predicate is an object, not {document!r}")
    if document.get("op") == "in":
        values = document.get("values")
        if not isinstance(values, list):
            raise WriteOpError(f"an IN predicate needs a list of values, not {values!r}")
        return IsIn(document.get("column"), tuple(values))  # type: ignore[arg-type]
    try:
        op = Comparison(document.get("op"))
    except ValueError:
        raise WriteOpError(f"unknown predicate operator {document.get('op')!r}") from None
    return Compare(document.get("column"), op, document.get("value"))  # type: ignore[arg-type]


# -- data types -------------------------------------------------------------------


def arrow_type(alias: str) -> pa.DataType:
    """The Arrow type a pyarrow alias names (``"int32"``, ``"string"``, ``"float64"``)."""
    try:
        return pa.type_for_alias(alias)
    except (ValueError, KeyError, TypeError):
        raise WriteOpError(f"unknown Arrow type name {alias!r}") from None
