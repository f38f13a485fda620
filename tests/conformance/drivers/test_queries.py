"""The index-query vocabulary (conformance/drivers/queries.py): each kind's
Lance filter and its meaning in Python, the reference's answer, the
comparison of answers, the plan reader, and how drivers declare the kinds."""

from __future__ import annotations

import json

import lance
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.drivers import close_driver, load_driver
from conformance.drivers.lance_core_plans import plan_uses_index
from conformance.drivers.protocol import Capability, DriverInfo, DriverInfoError, QueryKind, QueryNotSupported
from conformance.drivers.queries import (
    Equals,
    FullTextMatch,
    In,
    IsNull,
    LabelContains,
    Nearest,
    QueryAnswer,
    QueryError,
    Range,
    answer_from_rows,
    answer_problems,
    is_ordered,
    nearest_gap,
    query_from_json,
    query_text,
    query_to_json,
    reference_answer,
    words,
)
from conformance.drivers.write_predicates import SqlDialect
from conformance.suite.query_datasets import CASES


def test_each_filter_kind_renders_as_a_lance_filter():
    assert Equals("score", 7).to_sql() == "score = 7"
    assert Range("score", 10, 20).to_sql() == "score >= 10 AND score < 20"
    assert Range("score", lower=40).to_sql() == "score >= 40"
    assert Range("score", upper="m").to_sql() == "score < 'm'"
    assert In("category", ("red", "it's")).to_sql() == "category IN ('red', 'it''s')"
    assert IsNull("my col").to_sql() == "`my col` IS NULL"
    assert IsNull("my col").to_sql(SqlDialect.STANDARD) == '"my col" IS NULL'
    assert LabelContains("labels", "apple").to_sql() == "array_has_any(labels, ['apple'])"
    assert FullTextMatch("text", "Banana").to_sql() == "contains_tokens(text, 'Banana')"
    assert query_text(Nearest("vec", (1.0, 2.0), 3)) == "nearest(vec, k=3)"


def test_each_kind_names_its_kind_and_only_nearest_is_ordered():
    queries = [
        Equals("a", 1),
        Range("a", 1, 2),
        In("a", (1,)),
        IsNull("a"),
        LabelContains("a", "x"),
        FullTextMatch("a", "x"),
        Nearest("a", (0.0,), 1),
    ]
    assert [query.kind for query in queries] == list(QueryKind)
    assert [is_ordered(query) for query in queries] == [False] * 6 + [True]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Equals("a", None), "a null selects nothing"),
        (lambda: Range("a"), "needs a lower or an upper bound"),
        (lambda: Range("a", float("nan")), "has no SQL literal"),
        (lambda: In("a", ()), "needs at least one value"),
        (lambda: In("a", (1, None)), "no null"),
        (lambda: LabelContains("a", None), "must not be null"),
        (lambda: FullTextMatch("a", "two words"), "is not one word"),
        (lambda: Nearest("a", (), 1), "non-empty and finite"),
        (lambda: Nearest("a", (float("inf"),), 1), "non-empty and finite"),
        (lambda: Nearest("a", (1.0,), 0), "k must be a positive integer"),
        (lambda: Equals("", 1), "non-empty string"),
        (lambda: IsNull(""), "non-empty string"),
        (lambda: Nearest("", (1.0,), 1), "non-empty string"),
    ],
)
def test_a_query_that_is_not_well_formed_is_refused_naming_why(make, message):
    with pytest.raises(QueryError, match=message):
        make()


def test_null_values_are_selected_only_by_is_null():
    for query in (Equals("a", 1), Range("a", lower=0), In("a", (1,)), LabelContains("a", "x"), FullTextMatch("a", "x")):
        assert not query.selects(None), query
    assert IsNull("a").selects(None) and not IsNull("a").selects(0)


def test_full_text_matches_whole_words_ignoring_case():
    query = FullTextMatch("text", "Banana")
    assert query.selects("apple, BANANA pie")
    assert not query.selects("bananas and apples")
    assert words("Apple-pie, 2 apples!") == {"apple", "pie", "2", "apples"}


def test_nearest_ranks_by_distance_then_row_id_and_skips_null_vectors():
    query = Nearest("vec", (0.0, 0.0), 3)
    row_ids = [10, 11, 12, 13, 14]
    vectors = [[3.0, 0.0], None, [1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    # 14 at 0.5, then 12 and 13 tie at 1.0 (the lower row id first).
    assert answer_from_rows(query, row_ids, vectors) == (14, 12, 13)
    assert nearest_gap(query, row_ids, vectors) == 0.0
    with pytest.raises(QueryError, match="3 dimensions, not 2"):
        query.distance([1.0, 2.0, 3.0])


def test_answers_are_compared_as_sets_or_as_ordered_lists():
    equals = Equals("a", 1)
    assert answer_problems(equals, [1, 2, 3], [3, 2, 1]) == []
    problems = answer_problems(equals, [1, 2, 3], [2, 3, 4, 4])
    assert problems == [
        "1 row ids answered more than once",
        "1 of 3 expected rows missing: [1]",
        "1 rows the reference does not select: [4]",
    ]
    nearest = Nearest("v", (0.0,), 2)
    assert answer_problems(nearest, [5, 6], [5, 6]) == []
    assert answer_problems(nearest, [5, 6], [6, 5]) == ["nearest rows differ: expected [5, 6], got [6, 5]"]
    many = answer_problems(equals, list(range(20)), [])
    assert many == ["20 of 20 expected rows missing: [0, 1, 2, 3, 4, 5, 6, 7, ... 12 more]"]


#: Small integer columns with nulls, and the filters over them.
_VALUES = st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=1, max_size=40)
_FILTERS = st.one_of(
    st.builds(Equals, st.just("x"), st.integers(-5, 5)),
    st.builds(Range, st.just("x"), st.integers(-5, 5), st.integers(-5, 5)),
    st.builds(Range, st.just("x"), st.none(), st.integers(-5, 5)),
    st.builds(In, st.just("x"), st.lists(st.integers(-5, 5), min_size=1, max_size=4).map(tuple)),
    st.builds(IsNull, st.just("x")),
)


@settings(max_examples=40, deadline=None)
@given(values=_VALUES, query=_FILTERS)
def test_the_python_meaning_of_a_filter_is_pylances_scan_of_its_sql(tmp_path_factory, values, query):
    """Property: for any nullable integer column, the rows a filter selects
    by :meth:`selects` are those pylance's scan of :meth:`to_sql` returns
    (no index: the two meanings of the vocabulary agree)."""
    path = tmp_path_factory.mktemp("filter") / "t.lance"
    dataset = lance.write_dataset(pa.table({"x": pa.array(values, pa.int64())}), str(path))
    scanned = dataset.to_table(filter=query.to_sql(), with_row_id=True).column("_rowid").to_pylist()
    assert sorted(scanned) == list(answer_from_rows(query, list(range(len(values))), values))


def test_the_reference_answer_is_its_scan_filtered(tmp_path):
    path = tmp_path / "t.lance"
    table = pa.table({"x": pa.array([3, None, 5, 3], pa.int64()), "v": pa.array([[0.0], [2.0], [1.0], [3.0]])})
    lance.write_dataset(table, str(path), max_rows_per_file=2)
    # Row ids are row addresses: fragment 1 starts at 1 << 32.
    assert reference_answer(path, Equals("x", 3)) == (0, (1 << 32) + 1)
    assert reference_answer(path, IsNull("x")) == (1,)
    assert reference_answer(path, Nearest("v", (2.1,), 2)) == (1, (1 << 32) + 1)


@pytest.mark.parametrize(
    ("plan", "uses"),
    [
        ("LanceRead: ... full_filter=score = Int64(7)\n  ScalarIndexQuery: query=[score = 7]@score_idx(BTree)", True),
        ("ANNSubIndex: name=vec_idx, k=5\n  ANNIvfPartition: uuid=...", True),
        ("MatchQuery: column=text, query=[banana]", True),
        ("MaterializeIndex: query=[category = red]", True),
        ("FlatMatchQuery: column=text\n  LanceRead: ...", False),
        ("KNNVectorDistance: metric=l2\n  LanceRead: ... full_filter=--", False),
        ("LanceRead: ... full_filter=score IS NULL, refine_filter=score IS NULL", False),
    ],
)
def test_a_plan_reads_an_index_when_it_names_an_index_node(plan, uses):
    assert plan_uses_index(plan) is uses


def _info(**changes) -> DriverInfo:
    fields = dict(
        name="d",
        implementation="d",
        version="1",
        lance_version=None,
        capabilities=frozenset({Capability.QUERY}),
        query_kinds=frozenset({"equals", "nearest"}),
        indexed_query_kinds=frozenset({"nearest"}),
    )
    fields.update(changes)
    return DriverInfo(**fields)


def test_query_kinds_round_trip_through_json_and_unknown_kinds_are_refused():
    info = _info()
    document = json.loads(json.dumps(info.to_json()))
    assert document["query_kinds"] == ["equals", "nearest"] and document["indexed_query_kinds"] == ["nearest"]
    assert DriverInfo.from_json(document) == info
    with pytest.raises(DriverInfoError, match=r"unknown indexed_query_kinds \['teleport'\]"):
        DriverInfo.from_json({**document, "indexed_query_kinds": ["teleport"]})
    # A declaration from before the query kinds existed reads as answering none.
    older = {key: value for key, value in document.items() if "query" not in key}
    assert DriverInfo.from_json(older).query_kinds == frozenset()


def test_the_shipped_drivers_declare_their_query_kinds():
    every = {kind.value for kind in QueryKind}
    reference = load_driver("reference").info()  # type: ignore[attr-defined]
    assert reference.has(Capability.QUERY)
    assert reference.query_kinds == every and reference.indexed_query_kinds == frozenset()
    pylance = load_driver("pylance").info()  # type: ignore[attr-defined]
    assert pylance.query_kinds == every and pylance.indexed_query_kinds == every
    lancedb = load_driver("lancedb").info()  # type: ignore[attr-defined]
    assert lancedb.query_kinds == every and lancedb.indexed_query_kinds == every


def test_a_query_round_trips_through_json_and_a_bad_document_is_refused():
    """Property over every query of the suite: from_json(to_json(q)) == q
    after a JSON dump and load (what the worker protocol carries)."""
    for case in CASES:
        assert query_from_json(json.loads(json.dumps(query_to_json(case.query)))) == case.query
    for document, message in (
        ({"kind": "teleport", "column": "a"}, "unknown query kind 'teleport'"),
        ({"kind": "equals", "column": "a", "value": 1, "extra": 2}, r"unknown fields \['extra'\]"),
        ({"kind": "in", "column": "a", "values": "abc"}, "'values' must be a list"),
        ({"kind": "equals", "column": "a"}, "missing 1 required positional argument"),
        ({"kind": "nearest", "column": "a", "vector": [1.0], "k": 0}, "k must be a positive integer"),
        ([], "a query is an object"),
    ):
        with pytest.raises(QueryError, match=message):
            query_from_json(document)
    answer = QueryAnswer((3, 1), True, "ScalarIndexQuery")
    assert QueryAnswer.from_json(json.loads(json.dumps(answer.to_json()))) == answer
    with pytest.raises(QueryError, match="non-negative integers"):
        QueryAnswer.from_json({"row_ids": [-1]})


def test_a_worker_driver_relays_queries_and_refusals(tmp_path):
    """The worker protocol's ``query`` request: pylance in a worker answers as
    in process, and LanceDB's refusal comes back as QueryNotSupported."""
    path = tmp_path / "t.lance"
    dataset = lance.write_dataset(pa.table({"x": pa.array([1, 2, None, 2], pa.int64())}), str(path))
    dataset.create_scalar_index("x", "BTREE")
    query = Equals("x", 2)
    pylance = load_driver("worker:pylance")
    lancedb = load_driver("worker:lancedb")
    try:
        info = pylance.info()  # type: ignore[attr-defined]
        assert info.has(Capability.QUERY) and info.indexed_query_kinds == {kind.value for kind in QueryKind}
        answer = pylance.query(path, query, use_index=True)  # type: ignore[attr-defined]
        assert answer.row_ids == (1, 3) and answer.used_index is True and "ScalarIndexQuery" in answer.plan
        assert pylance.query(path, IsNull("x"), use_index=False).row_ids == (2,)  # type: ignore[attr-defined]
        with pytest.raises(QueryNotSupported, match="has no switch to scan"):
            lancedb.query(path, query, use_index=False)  # type: ignore[attr-defined]
    finally:
        close_driver(pylance)
        close_driver(lancedb)
