"""The vector index rules (conformance/validator/rules/index_vector.py) on
pylance-14 indices of every IVF kind it builds, through an append,
optimize_indices and a delete: no false finding, in a default and a deep
run. That each rule reports a broken index is test_mutations' part (the
"vectors" base and conformance/mutations/topics/index_vector.py)."""

from __future__ import annotations

import pytest

from conformance.validator import Severity, validate
from tests.vector_datasets import KINDS, build

pytest.importorskip("lance")


@pytest.mark.parametrize("kind", KINDS, ids=[kind[0] for kind in KINDS])
def test_pylance_vector_indices_draw_no_finding(kind, tmp_path):
    name, index_type, metric, extra = kind
    root = build(tmp_path / name, index_type, metric, extra)
    for deep in (False, True):
        findings = validate(root, all_versions=True, deep=deep).findings
        serious = [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
        assert not serious, serious
        vector = {f.rule for f in findings if f.rule.startswith("index-vector/")}
        # Only RabitQ's undecoded codes are worth a note on these small tables.
        assert vector <= ({"index-vector/skipped"} if index_type == "IVF_RQ" else set()), vector
