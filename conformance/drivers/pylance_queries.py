"""The pylance driver's index queries (:mod:`.queries`): answered through
the dataset's index, or by a scan that plans through none.

* filter kinds: ``scanner(filter=..., with_row_id=True, use_scalar_index=...)``
  (``use_scalar_index=False`` plans the filter as a scan even where an index
  covers the column);
* full-text: through the INVERTED index, ``full_text_query`` naming the
  column; by a scan, the ``contains_tokens`` filter (pylance answers a
  full-text query only through an index);
* nearest: ``nearest`` with ``nprobes`` equal to the number of rows (at
  least every IVF partition, so the IVF_FLAT search is exhaustive: no
  ``refine_factor`` is needed, a FLAT sub-index stores the vectors
  themselves), or ``use_index=False`` for a flat search.

Whether the plan went through an index is read from ``explain_plan()``
(:func:`.lance_core_plans.plan_uses_index`). ``lance`` and the vocabulary
(which needs pyarrow) are imported inside the functions: the driver module
imports only the standard library (it runs inside old releases' own
environments too).
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING

from .lance_core_plans import plan_uses_index
from .protocol import QueryKind

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .queries import Query, QueryAnswer

#: The kinds pylance answers by a scan, and through an index.
SCAN_KINDS: frozenset[str] = frozenset(kind.value for kind in QueryKind)
INDEXED_KINDS: frozenset[str] = frozenset(kind.value for kind in QueryKind)


#: The scanner's parameters the queries use (older releases lack some).
SCANNER_PARAMETERS = ("use_scalar_index", "full_text_query", "disable_scoring_autoprojection")


def queries_supported() -> bool:
    """Whether the installed pylance's scanner takes every parameter the
    queries use (:data:`SCANNER_PARAMETERS`)."""
    import lance  # lazy: pylance is optional; installed_drivers imports every driver module

    parameters = inspect.signature(lance.LanceDataset.scanner).parameters
    return all(name in parameters for name in SCANNER_PARAMETERS)


def query(uri: str | os.PathLike[str], query: Query, *, use_index: bool) -> QueryAnswer:
    """The row ids pylance answers ``query`` with on the latest version."""
    import lance  # lazy: pylance is optional; installed_drivers imports every driver module

    from .queries import QueryAnswer  # lazy: the vocabulary needs pyarrow

    dataset = lance.dataset(os.fspath(uri))
    options: dict = {"columns": [], "with_row_id": True}
    if query.kind is QueryKind.NEAREST:
        nearest = {"column": query.column, "q": list(query.vector), "k": query.k, "metric": "l2"}  # type: ignore[union-attr]
        if use_index:
            # At least as many probes as partitions: every partition is searched.
            nearest["nprobes"] = max(1, dataset.count_rows())
        else:
            nearest["use_index"] = False
        options["nearest"] = nearest
    elif query.kind is QueryKind.FULL_TEXT and use_index:
        options["full_text_query"] = {"query": query.word, "columns": [query.column]}  # type: ignore[union-attr]
        # Only the row ids: the relevance score is not part of the answer.
        options["disable_scoring_autoprojection"] = True
    else:
        options["filter"] = query.to_sql()  # type: ignore[union-attr]
        options["use_scalar_index"] = use_index
    scanner = dataset.scanner(**options)
    plan = scanner.explain_plan()
    row_ids = scanner.to_table().column("_rowid").to_pylist()
    return QueryAnswer(tuple(int(row_id) for row_id in row_ids), plan_uses_index(plan), plan)


__all__ = ["INDEXED_KINDS", "SCANNER_PARAMETERS", "SCAN_KINDS", "queries_supported", "query"]
