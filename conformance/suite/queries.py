"""The index-query suite: the driver answers each query through its index
and without one, and each answer must equal the reference's scan.

The datasets and queries are :mod:`.query_datasets` (written by pylance 14
once per session, each scenario twice: with its indices and without). Each
check is one query on one scenario, one way:

* ``SCENARIO-QUERY-index``: on the indexed dataset, ``use_index=True``.
  For a kind the driver declares it answers through an index
  (``DriverInfo.indexed_query_kinds``) the plan must show the index too,
  when an index segment on the column covers a fragment the version still
  has (as the reference reads the manifest: :class:`.query_datasets.Coverage`);
  otherwise an observation says why the plan was not judged;
* ``SCENARIO-QUERY-scan``: on the dataset without indices, ``use_index=False``
  (``DriverInfo.query_kinds``): no index exists to plan through.

A driver without the ``query`` capability, or one not declaring the kind
for that way, gets not applicable, naming what it lacks; a query the driver
refuses (:class:`~conformance.drivers.protocol.QueryNotSupported`) likewise.
The answers are compared as sets of row ids, nearest neighbours as ordered
lists (:func:`~conformance.drivers.queries.answer_problems`). Expectations
apply as everywhere (suite ``queries``, case the check's name).
"""

from __future__ import annotations

from functools import partial

from ..drivers import is_implementation_failure
from ..drivers.protocol import Capability, QueryNotSupported
from ..drivers.queries import QueryCase, answer_problems, query_text
from .checks import Check, Status, Suite, Verdict
from .query_datasets import CASES, DatasetsUnavailable, QueryDatasets, Scenario, build_datasets
from .run import SuiteRun

_DATASETS = "queries:datasets"
#: The last part of a check's name: through the index, or by a scan.
THROUGH_INDEX = "index"
BY_SCAN = "scan"


def datasets(run: SuiteRun) -> QueryDatasets | Exception:
    """The session's datasets, built on first use, or why they cannot be
    (:class:`DatasetsUnavailable`, or pylance's own failure)."""
    if _DATASETS not in run.shared:
        try:
            run.shared[_DATASETS] = build_datasets()
        except Exception as exc:  # said by every check, never as a traceback
            run.shared[_DATASETS] = exc
    found = run.shared[_DATASETS]
    assert isinstance(found, (QueryDatasets, Exception))
    return found


def query_verdict(run: SuiteRun, scenario: Scenario, case: QueryCase, through_index: bool) -> Verdict:
    if not run.has(Capability.QUERY):
        return Verdict.not_applicable(Capability.QUERY.value)
    kind = case.query.kind.value
    declared = run.info.indexed_query_kinds if through_index else run.info.query_kinds
    if kind not in declared:
        way = "through an index" if through_index else "by a scan"
        return Verdict(Status.NOT_APPLICABLE, (f"not applicable: the driver does not declare {kind} queries {way}",))
    found = datasets(run)
    if isinstance(found, DatasetsUnavailable):
        return Verdict(Status.NOT_APPLICABLE, (f"not applicable: {found}",))
    if isinstance(found, Exception):
        return Verdict.failed([f"pylance could not write the index-query datasets: {type(found).__name__}: {found}"])
    pair = found.scenarios[scenario]
    try:
        expected = pair.reference(case.query)
    except Exception as exc:  # the reference's own failure, said as one
        return Verdict.failed([f"the reference could not scan {pair.indexed.name}: {type(exc).__name__}: {exc}"])
    uri = pair.indexed if through_index else pair.plain
    try:
        answer = run.driver.query(str(uri), case.query, use_index=through_index)  # type: ignore[attr-defined]
    except QueryNotSupported as exc:
        return Verdict(Status.NOT_APPLICABLE, (f"not applicable: the driver refuses the query: {exc}",))
    except BaseException as exc:
        if not is_implementation_failure(exc):
            raise
        return Verdict.failed([f"the driver failed on {query_text(case.query)}: {type(exc).__name__}: {exc}"])
    problems = answer_problems(case.query, expected, answer.row_ids)
    observations: tuple[str, ...] = ()
    if through_index and answer.used_index is False:
        coverage = pair.coverage(case.query.column)
        if coverage.covers_live_rows:
            problems.append(
                f"the driver declares {kind} queries through an index, but its plan reads none "
                f"({coverage.describe()}): {answer.plan}"
            )
        else:
            # Nothing to plan through: the writer left no segment over the rows there are.
            observations = (f"no index segment covers a live fragment ({coverage.describe()}): the plan is not judged",)
    if not through_index and answer.used_index:
        problems.append(f"asked to scan a dataset without indices, its plan reads an index: {answer.plan}")
    if problems:
        return Verdict(Status.FAIL, tuple(problems), observations)
    return Verdict(Status.PASS, (), observations)


def check_name(scenario: Scenario, case: QueryCase, through_index: bool) -> str:
    return f"{scenario.value}-{case.name}-{THROUGH_INDEX if through_index else BY_SCAN}"


def checks() -> list[Check]:
    return [
        Check(
            Suite.QUERIES,
            check_name(scenario, case, through_index),
            partial(query_verdict, scenario=scenario, case=case, through_index=through_index),
            f"{query_text(case.query)} ({case.index.value}, {scenario.value}) "
            + ("through the index" if through_index else "without an index"),
        )
        for scenario in Scenario
        for case in CASES
        for through_index in (True, False)
    ]
