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


def test_a_sampled_run_says_what_it_left_unchecked(tmp_path, monkeypatch):
    """With the sample bound below one fragment's rows, a default run reads
    only the first covered fragment of each segment: the rows of the others
    draw no error (no row is called missing or stray for being unread), and
    index-vector/sampled names the fragments left unchecked; --deep reads
    them all and says nothing."""
    from conformance.validator.facts import index_contents

    root = build(tmp_path / "ds", "IVF_PQ", "l2", {"num_sub_vectors": 4})
    monkeypatch.setattr(index_contents, "SAMPLE_ROWS", 100)
    findings = validate(root, all_versions=True).findings
    assert not [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)], findings
    sampled = [f for f in findings if f.rule == "index-vector/sampled"]
    assert sampled and all("fragments 1" in f.message for f in sampled), sampled
    deep = validate(root, all_versions=True, deep=True).findings
    assert not [f for f in deep if f.rule == "index-vector/sampled"]


@pytest.mark.old_pylance
def test_a_pre_v3_vector_index_is_recognized_not_misread(old_pylance_datasets):
    """pylance 0.20's IVF_PQ segments (index.idx a legacy 0.x Lance file)
    record no index_version: reported as skipped and read no further, no
    error."""
    findings = validate(old_pylance_datasets["vector_index_delta"], all_versions=True).findings
    assert not [f for f in findings if f.rule.startswith("index-vector/") and f.severity is not Severity.INFO]
    skipped = [f for f in findings if f.rule == "index-vector/skipped"]
    assert skipped and all("records no index_version" in f.message for f in skipped), skipped
