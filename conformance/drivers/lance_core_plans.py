"""Whether a query plan of the Lance core went through an index: the one
place its plan text is read, for every driver embedding Lance (pylance's
``explain_plan()``, LanceDB's ``explain_plan(True)``).

Measured with pylance 14 and LanceDB 0.40 (embedded Lance 13): a filter
answered through a scalar index shows ``ScalarIndexQuery`` (or
``MaterializeIndex`` where the index alone answers), a nearest-neighbour
search through a vector index shows ``ANNSubIndex`` / ``ANNIvfPartition``,
and a full-text query through an INVERTED index ``MatchQuery``. A scan
shows none of them: ``LanceRead`` with its ``full_filter``, a flat
``KNNVectorDistance``, or ``FlatMatchQuery`` over unindexed fragments
(a name that merely contains ``MatchQuery`` does not count).
"""

from __future__ import annotations

import re

#: The plan nodes that read an index, as whole words of the plan text.
INDEX_NODES: tuple[str, ...] = ("ScalarIndexQuery", "MaterializeIndex", "ANNSubIndex", "ANNIvfPartition", "MatchQuery")
_INDEX_NODE = re.compile(r"\b(?:" + "|".join(INDEX_NODES) + r")\b")


def plan_uses_index(plan: str) -> bool:
    """Whether the plan text names a node that reads an index."""
    return _INDEX_NODE.search(plan) is not None


__all__ = ["INDEX_NODES", "plan_uses_index"]
