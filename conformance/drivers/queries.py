"""The index-query vocabulary: the queries a driver answers with and without
an index, the index type each exercises, and the reference's answer.

Issue 30 ("Answers through an index") asks every driver to answer a suite
of queries through its index and without it, each answer equal to the
reference's scan. A query is a frozen dataclass of one
:class:`~.protocol.QueryKind` (the kinds are declared in :mod:`.protocol`,
where ``DriverInfo.query_kinds`` and ``indexed_query_kinds`` name them):

* the filter kinds (:class:`Equals`, :class:`Range`, :class:`In`,
  :class:`IsNull`, :class:`LabelContains`, :class:`FullTextMatch`) select
  rows; their answer is a *set* of row ids. Each renders as a filter of
  Lance's language (:meth:`to_sql`, reusing the write vocabulary's
  :class:`~.write_predicates.Compare` and :class:`~.write_predicates.IsIn`)
  and says in plain Python whether one value is selected (:meth:`selects`,
  SQL's null semantics: a null is selected only by ``IS NULL``);
* :class:`Nearest` asks for the ``k`` nearest vectors by L2 distance; its
  answer is an *ordered* list of row ids, searched exhaustively (every IVF
  partition probed, so an IVF_FLAT index gives the exact answer).

The reference's answer (:func:`reference_answer`) is the reference
implementation's scan (``Dataset.to_table(with_row_id=True)``) filtered
here, row by row, or ranked by exhaustive distance: the executable spec,
planned through no index. :func:`answer_problems` compares a driver's
:class:`QueryAnswer` with it. Row ids are ``_rowid`` as each
implementation reports it (row addresses unless the dataset has stable row
ids).

Full-text matching is defined here for what the fixtures use and the FTS
page fixes: one word, matched case-insensitively against the words of the
text (runs of letters and digits). Stemming and stop words are tokenizer
options the fixtures stay clear of (their words are no stop words and no
two share a stem).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Union

from .protocol import QueryKind
from .write_predicates import (
    Compare,
    Comparison,
    IsIn,
    Literal,
    SqlDialect,
    WriteOpError,
    check_column,
    sql_identifier,
    sql_literal,
)


class IndexKind(str, Enum):
    """The index types the queries exercise, by the names pylance's
    ``create_scalar_index`` / ``create_index`` take (as
    :class:`~.writes.CreateIndex` names them)."""

    BTREE = "BTREE"
    BITMAP = "BITMAP"
    ZONEMAP = "ZONEMAP"
    LABEL_LIST = "LABEL_LIST"
    INVERTED = "INVERTED"
    IVF_FLAT = "IVF_FLAT"


class QueryError(WriteOpError):
    """A query that is not well formed (a subclass of the write vocabulary's
    error, whose literal checks the queries reuse)."""


@contextmanager
def _as_query_error() -> Iterator[None]:
    """The write vocabulary's checks of columns and literals, raising :class:`QueryError`."""
    try:
        yield
    except QueryError:
        raise
    except WriteOpError as exc:
        raise QueryError(str(exc)) from None


@dataclass(frozen=True)
class Equals:
    """``column = value`` (a non-null literal)."""

    kind: ClassVar[QueryKind] = QueryKind.EQUALS
    column: str
    value: Literal

    def __post_init__(self) -> None:
        if self.value is None:
            raise QueryError(f"equals {self.column}: a null selects nothing; ask IsNull")
        with _as_query_error():
            Compare(self.column, Comparison.EQ, self.value)

    def to_sql(self, dialect: SqlDialect = SqlDialect.LANCE) -> str:
        return Compare(self.column, Comparison.EQ, self.value).to_sql(dialect)

    def selects(self, value: Any) -> bool:
        return value is not None and value == self.value


@dataclass(frozen=True)
class Range:
    """``lower <= column < upper``; either bound may be None (unbounded), not both."""

    kind: ClassVar[QueryKind] = QueryKind.RANGE
    column: str
    lower: Literal = None
    upper: Literal = None

    def __post_init__(self) -> None:
        if self.lower is None and self.upper is None:
            raise QueryError(f"range {self.column}: needs a lower or an upper bound")
        with _as_query_error():
            self._comparisons()

    def _comparisons(self) -> list[Compare]:
        bounds = [(Comparison.GE, self.lower), (Comparison.LT, self.upper)]
        return [Compare(self.column, op, bound) for op, bound in bounds if bound is not None]

    def to_sql(self, dialect: SqlDialect = SqlDialect.LANCE) -> str:
        return " AND ".join(comparison.to_sql(dialect) for comparison in self._comparisons())

    def selects(self, value: Any) -> bool:
        if value is None:
            return False
        return (self.lower is None or value >= self.lower) and (self.upper is None or value < self.upper)


@dataclass(frozen=True)
class In:
    """``column IN (values...)`` (non-null literals)."""

    kind: ClassVar[QueryKind] = QueryKind.IN
    column: str
    values: tuple[Literal, ...]

    def __post_init__(self) -> None:
        with _as_query_error():
            object.__setattr__(self, "values", IsIn(self.column, tuple(self.values)).values)

    def to_sql(self, dialect: SqlDialect = SqlDialect.LANCE) -> str:
        return IsIn(self.column, self.values).to_sql(dialect)

    def selects(self, value: Any) -> bool:
        return value is not None and value in self.values


@dataclass(frozen=True)
class IsNull:
    """``column IS NULL``."""

    kind: ClassVar[QueryKind] = QueryKind.IS_NULL
    column: str

    def __post_init__(self) -> None:
        with _as_query_error():
            check_column(self.column, "is-null")

    def to_sql(self, dialect: SqlDialect = SqlDialect.LANCE) -> str:
        return f"{sql_identifier(self.column, dialect)} IS NULL"

    def selects(self, value: Any) -> bool:
        return value is None


@dataclass(frozen=True)
class LabelContains:
    """A list column holds ``label`` among its items (``array_has_any``, the
    form a LABEL_LIST index answers)."""

    kind: ClassVar[QueryKind] = QueryKind.LABEL_CONTAINS
    column: str
    label: Literal

    def __post_init__(self) -> None:
        if self.label is None:
            raise QueryError(f"label-contains {self.column}: the label must not be null")
        with _as_query_error():
            Compare(self.column, Comparison.EQ, self.label)

    def to_sql(self, dialect: SqlDialect = SqlDialect.LANCE) -> str:
        return f"array_has_any({sql_identifier(self.column, dialect)}, [{sql_literal(self.label)}])"

    def selects(self, value: Any) -> bool:
        return value is not None and self.label in value


#: A word of a text, as the full-text queries here match it.
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """The lower-cased words (runs of letters and digits) of ``text``."""
    return {word.lower() for word in _WORD.findall(text)}


@dataclass(frozen=True)
class FullTextMatch:
    """A text column holds ``word`` (one word: see the module docstring).

    Through an INVERTED index it is a full-text match query; without one,
    :meth:`to_sql` gives Lance's ``contains_tokens`` filter, which tokenizes
    the scanned text."""

    kind: ClassVar[QueryKind] = QueryKind.FULL_TEXT
    column: str
    word: str

    def __post_init__(self) -> None:
        with _as_query_error():
            check_column(self.column, "full-text")
        if not isinstance(self.word, str) or words(self.word) != {self.word.lower()}:
            raise QueryError(f"full-text {self.column}: {self.word!r} is not one word")

    def to_sql(self, dialect: SqlDialect = SqlDialect.LANCE) -> str:
        return f"contains_tokens({sql_identifier(self.column, dialect)}, {sql_literal(self.word)})"

    def selects(self, value: Any) -> bool:
        return value is not None and self.word.lower() in words(value)


@dataclass(frozen=True)
class Nearest:
    """The ``k`` rows whose vectors are nearest ``vector`` by L2 distance,
    nearest first (rows with a null vector never count)."""

    kind: ClassVar[QueryKind] = QueryKind.NEAREST
    column: str
    vector: tuple[float, ...]
    k: int

    def __post_init__(self) -> None:
        with _as_query_error():
            check_column(self.column, "nearest")
        vector = tuple(float(x) for x in self.vector)
        if not vector or not all(math.isfinite(x) for x in vector):
            raise QueryError(f"nearest {self.column}: the query vector must be non-empty and finite")
        if not isinstance(self.k, int) or self.k < 1:
            raise QueryError(f"nearest {self.column}: k must be a positive integer, not {self.k!r}")
        object.__setattr__(self, "vector", vector)

    def distance(self, value: Sequence[float]) -> float:
        """The squared L2 distance of ``value`` from the query vector (the
        order the metric gives; pylance reports the squared distance too)."""
        if len(value) != len(self.vector):
            raise QueryError(f"nearest {self.column}: a vector of {len(value)} dimensions, not {len(self.vector)}")
        return sum((float(a) - b) ** 2 for a, b in zip(value, self.vector, strict=True))


FilterQuery = Union[Equals, Range, In, IsNull, LabelContains, FullTextMatch]
Query = Union[FilterQuery, Nearest]


def query_text(query: Query) -> str:
    """The query in one line: its Lance filter, or ``nearest(column, k=K)``."""
    if isinstance(query, Nearest):
        return f"nearest({query.column}, k={query.k})"
    return query.to_sql()


def is_ordered(query: Query) -> bool:
    """Whether the answer is an ordered list (nearest first) rather than a set."""
    return query.kind is QueryKind.NEAREST


#: Each kind's dataclass.
QUERY_TYPES: dict[QueryKind, type] = {
    query_type.kind: query_type for query_type in (Equals, Range, In, IsNull, LabelContains, FullTextMatch, Nearest)
}


def query_to_json(query: Query) -> dict[str, Any]:
    """The query as JSON (what the worker protocol's ``query`` request
    carries): its kind and its fields, tuples as lists."""
    document: dict[str, Any] = {"kind": query.kind.value}
    for field in dataclasses.fields(query):
        value = getattr(query, field.name)
        document[field.name] = list(value) if isinstance(value, tuple) else value
    return document


def query_from_json(document: object) -> Query:
    """The query a JSON document describes; :class:`QueryError` names what
    does not fit."""
    if not isinstance(document, Mapping):
        raise QueryError(f"a query is an object, not {document!r:.200}")
    try:
        kind = QueryKind(document.get("kind"))
    except ValueError:
        known = ", ".join(kind.value for kind in QueryKind)
        raise QueryError(f"unknown query kind {document.get('kind')!r:.100}; known: {known}") from None
    query_type = QUERY_TYPES[kind]
    names = [field.name for field in dataclasses.fields(query_type)]
    unknown = sorted(set(document) - {"kind", *names})
    if unknown:
        raise QueryError(f"{kind.value} query: unknown fields {unknown}")
    values = {name: document[name] for name in names if name in document}
    for name in ("values", "vector"):
        if name in values:
            if not isinstance(values[name], list):
                raise QueryError(f"{kind.value} query: {name!r} must be a list")
            values[name] = tuple(values[name])
    try:
        return query_type(**values)
    except TypeError as exc:  # a missing field
        raise QueryError(f"{kind.value} query: {exc}") from None


@dataclass(frozen=True)
class QueryCase:
    """One query of the suite, named, and the index type it exercises."""

    name: str
    query: Query
    index: IndexKind


@dataclass(frozen=True)
class QueryAnswer:
    """A driver's answer: the row ids (in its order for nearest-neighbour
    queries), and whether its plan went through an index (None when the
    driver cannot tell), with the plan text when it shows one."""

    row_ids: tuple[int, ...]
    used_index: bool | None = None
    plan: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"row_ids": list(self.row_ids), "used_index": self.used_index, "plan": self.plan}

    @classmethod
    def from_json(cls, document: object) -> QueryAnswer:
        """The answer a worker sent; :class:`QueryError` names what does not fit."""
        if not isinstance(document, Mapping):
            raise QueryError(f"an answer is an object, not {document!r:.200}")
        row_ids = document.get("row_ids")
        if not isinstance(row_ids, list) or not all(
            isinstance(row_id, int) and not isinstance(row_id, bool) and row_id >= 0 for row_id in row_ids
        ):
            raise QueryError("an answer's 'row_ids' must be a list of non-negative integers")
        used_index = document.get("used_index")
        if used_index is not None and not isinstance(used_index, bool):
            raise QueryError(f"an answer's 'used_index' must be true, false or null, not {used_index!r:.100}")
        plan = document.get("plan", "")
        if not isinstance(plan, str):
            raise QueryError("an answer's 'plan' must be a string")
        return cls(tuple(row_ids), used_index, plan)


def answer_from_rows(query: Query, row_ids: Sequence[int], values: Sequence[Any]) -> tuple[int, ...]:
    """The answer to ``query`` over rows given as parallel lists of row ids
    and the queried column's values: the selected ids ascending, or the
    ``k`` nearest (ties broken by row id)."""
    if isinstance(query, Nearest):
        ranked = sorted(
            (query.distance(value), row_id) for row_id, value in zip(row_ids, values, strict=True) if value is not None
        )
        return tuple(row_id for _, row_id in ranked[: query.k])
    return tuple(sorted(row_id for row_id, value in zip(row_ids, values, strict=True) if query.selects(value)))


def reference_answer(uri: str | os.PathLike[str], query: Query, version: int | None = None) -> tuple[int, ...]:
    """The reference's answer: its scan of the version, with row ids,
    filtered or ranked here (:func:`answer_from_rows`)."""
    # lazy: the reference reader needs pyarrow; the vocabulary's types do not
    from reference_impl.dataset import Dataset

    table = Dataset.open(uri, version).to_table(with_row_id=True)
    return answer_from_rows(query, table.column("_rowid").to_pylist(), table.column(query.column).to_pylist())


def nearest_gap(query: Nearest, row_ids: Sequence[int], values: Sequence[Any]) -> float:
    """The smallest difference between consecutive distances among the
    ``k + 1`` nearest rows: how far the ordered answer is from a tie (an
    implementation computing in float32 may order a near-tie otherwise)."""
    distances = sorted(query.distance(value) for value in values if value is not None)[: query.k + 1]
    return min((b - a for a, b in itertools.pairwise(distances)), default=math.inf)


#: How many differing row ids a problem names before it counts the rest.
SHOWN_ROW_IDS = 8


def answer_problems(query: Query, expected: Sequence[int], actual: Sequence[int]) -> list[str]:
    """What differs between the reference's answer and a driver's: as sets
    for the filter kinds, as ordered lists for nearest neighbours. Empty
    when they agree."""
    if is_ordered(query):
        if list(expected) == list(actual):
            return []
        return [f"nearest rows differ: expected {_shown(expected)}, got {_shown(actual)}"]
    problems = []
    if len(set(actual)) != len(actual):
        problems.append(f"{len(actual) - len(set(actual))} row ids answered more than once")
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    if missing:
        problems.append(f"{len(missing)} of {len(set(expected))} expected rows missing: {_shown(missing)}")
    if extra:
        problems.append(f"{len(extra)} rows the reference does not select: {_shown(extra)}")
    return problems


def _shown(row_ids: Sequence[int]) -> str:
    shown = ", ".join(str(row_id) for row_id in row_ids[:SHOWN_ROW_IDS])
    more = len(row_ids) - SHOWN_ROW_IDS
    return f"[{shown}{f', ... {more} more' if more > 0 else ''}]"


__all__ = [
    "SHOWN_ROW_IDS",
    "Equals",
    "FilterQuery",
    "FullTextMatch",
    "In",
    "IndexKind",
    "IsNull",
    "LabelContains",
    "Nearest",
    "Query",
    "QueryAnswer",
    "QueryCase",
    "QueryError",
    "Range",
    "answer_from_rows",
    "answer_problems",
    "is_ordered",
    "QUERY_TYPES",
    "nearest_gap",
    "query_from_json",
    "query_text",
    "query_to_json",
    "reference_answer",
    "words",
]
