"""Seeded plans: the same seed gives the same plans, ids are unique across
writers, and kinds a writer cannot do are left out and listed."""

from __future__ import annotations

import pytest

from conformance.harness.spec import RunSpec
from conformance.harness.workloads import KINDS, WorkloadError, parse_workloads, plan_all, skipped_kinds


def _spec(seed=1, workload="mixed") -> RunSpec:
    return RunSpec("t", {}, "reference", 4, 50, parse_workloads(workload), seed, True, "v2")


def test_plans_are_reproducible_and_ids_are_unique():
    plans = plan_all(_spec(), frozenset(KINDS))
    assert plans == plan_all(_spec(), frozenset(KINDS))
    assert plans != plan_all(_spec(seed=2), frozenset(KINDS))
    added = [i for plan in plans for op in plan if op.kind in ("append", "overwrite") for i in op.args["ids"]]
    added += [i for plan in plans for op in plan if op.kind == "upsert" for i in op.args["new_ids"]]
    assert len(added) == len(set(added))
    values = [op.args["value"] for plan in plans for op in plan if "value" in op.args and op.kind != "config"]
    assert len(values) == len(set(values))
    assert len({op.op_id for plan in plans for op in plan}) == 4 * 50


def test_kinds_the_writer_cannot_do_are_skipped():
    supported = frozenset(KINDS) - {"upsert"}
    assert skipped_kinds(parse_workloads("mixed"), supported) == ["upsert"]
    assert not any(op.kind == "upsert" for plan in plan_all(_spec(), supported) for op in plan)


@pytest.mark.parametrize("text", ["teleport", "append:-1", "append:x", ""])
def test_bad_workloads_are_refused(text):
    with pytest.raises(WorkloadError):
        parse_workloads(text)


def test_weights_combine():
    assert parse_workloads("append:3,delete") == {"append": 3.0, "delete": 1.0}


def test_racing_upserts_share_their_new_keys_across_writers():
    """Every writer's racing upsert at a step names the same new keys (no
    earlier operation wrote them), each with a value of its own."""
    plans = plan_all(_spec(workload="upsert_race"), frozenset(KINDS))
    for step in range(50):
        ops = [plan[step] for plan in plans]
        assert {op.kind for op in ops} == {"upsert_race"}
        assert len({tuple(op.args["new_ids"]) for op in ops}) == 1
        assert len({op.args["value"] for op in ops}) == len(ops)
    keys = [tuple(plan[step].args["ids"]) for plan in plans[:1] for step in range(50)]
    assert len(set(keys)) == 50
