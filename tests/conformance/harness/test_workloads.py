"""Seeded plans: the same seed gives the same plans, ids are unique across
writers, kinds a writer cannot do are left out and listed, each writer may
have a workload of its own, and every planned operation becomes the write
vocabulary's operation for the kind it names."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.drivers import writes
from conformance.drivers.writes import WriteKind
from conformance.harness.spec import RunSpec
from conformance.harness.workloads import (
    INITIAL_SCHEMA,
    UNPLANNED,
    Pattern,
    WorkloadError,
    parse_workload,
    plan_all,
    skipped_kinds,
    to_write_op,
    workload_from_json,
    workload_to_json,
    writer_workload,
)

EVERY_KIND = frozenset(WriteKind) - UNPLANNED


def _spec(seed=1, workload="mixed", writer_workloads=()) -> RunSpec:
    return RunSpec(
        "t",
        {},
        "reference",
        4,
        50,
        workload_to_json(parse_workload(workload)),
        seed,
        True,
        "v2",
        writer_workloads=tuple(workload_to_json(parse_workload(w)) for w in writer_workloads),
    )


def test_plans_are_reproducible_and_ids_are_unique():
    plans = plan_all(_spec(), EVERY_KIND)
    assert plans == plan_all(_spec(), EVERY_KIND)
    assert plans != plan_all(_spec(seed=2), EVERY_KIND)
    adding = (WriteKind.APPEND, WriteKind.OVERWRITE)
    added = [i for plan in plans for op in plan if op.kind in adding for i in op.args["ids"]]
    added += [i for plan in plans for op in plan if op.kind is WriteKind.UPSERT for i in op.args["new_ids"]]
    assert len(added) == len(set(added))
    values = [op.args["value"] for plan in plans for op in plan if "value" in op.args]
    assert len(values) == len(set(values))
    assert len({op.op_id for plan in plans for op in plan}) == 4 * 50
    assert all(isinstance(op.kind, WriteKind) for plan in plans for op in plan)


def test_kinds_the_writer_cannot_do_are_skipped():
    performed = EVERY_KIND - {WriteKind.UPSERT}
    assert skipped_kinds([parse_workload("mixed")], performed) == [WriteKind.UPSERT]
    assert not any(op.kind is WriteKind.UPSERT for plan in plan_all(_spec(), performed) for op in plan)


@pytest.mark.parametrize(
    "text", ["teleport", "append:-1", "append:x", "", "create", "append/shared-keys", "add_column"]
)
def test_bad_workloads_are_refused(text):
    with pytest.raises(WorkloadError):
        parse_workload(text)


def test_weights_combine_and_survive_json():
    workload = parse_workload("append:3,delete,upsert/shared-keys:2")
    assert workload == {
        (WriteKind.APPEND, Pattern.OWN): 3.0,
        (WriteKind.DELETE, Pattern.OWN): 1.0,
        (WriteKind.UPSERT, Pattern.SHARED_KEYS): 2.0,
    }
    assert workload_from_json(workload_to_json(workload)) == workload


def test_format_1_names_are_read_as_their_vocabulary_terms():
    assert workload_from_json({"add_column": 1, "upsert_race": 2, "create_index": 1}) == {
        (WriteKind.ADD_COLUMNS, Pattern.OWN): 1,
        (WriteKind.UPSERT, Pattern.SHARED_KEYS): 2,
        (WriteKind.CREATE_INDEX, Pattern.OWN): 1,
    }


def test_shared_key_upserts_share_their_new_keys_across_writers():
    """Every writer's shared-key upsert at a step names the same new keys (no
    earlier operation wrote them), each with a value of its own."""
    plans = plan_all(_spec(workload="upsert/shared-keys"), EVERY_KIND)
    for step in range(50):
        ops = [plan[step] for plan in plans]
        assert {op.kind for op in ops} == {WriteKind.UPSERT}
        assert all(op.args["shared"] for op in ops)
        assert len({tuple(op.args["new_ids"]) for op in ops}) == 1
        assert len({op.args["value"] for op in ops}) == len(ops)
    keys = [tuple(plan[step].args["ids"]) for plan in plans[:1] for step in range(50)]
    assert len(set(keys)) == 50


def test_each_writer_follows_its_own_workload_in_turn():
    spec = _spec(writer_workloads=("add-columns", "delete"))
    assert writer_workload(spec, 2) == parse_workload("add-columns")
    plans = plan_all(spec, EVERY_KIND)
    assert {op.kind for op in plans[0]} == {WriteKind.ADD_COLUMNS}
    assert {op.kind for op in plans[1]} == {WriteKind.DELETE}
    assert {op.kind for op in plans[2]} == {WriteKind.ADD_COLUMNS}


def test_drops_and_renames_name_columns_their_writer_added():
    plans = plan_all(_spec(workload="schema"), EVERY_KIND)
    for plan in plans:
        added: list[str] = []
        for op in plan:
            if op.kind is WriteKind.ADD_COLUMNS:
                added += op.args["columns"]
            elif op.kind is WriteKind.DROP_COLUMNS:
                assert set(op.args["columns"]) <= set(added)
                added = [c for c in added if c not in op.args["columns"]]
            elif op.kind is WriteKind.ALTER_COLUMNS:
                for old, new in op.args["renames"]:
                    assert old in added
                    added = [new if c == old else c for c in added]


@pytest.mark.parametrize("kind", sorted(EVERY_KIND, key=lambda k: k.value))
def test_every_planned_kind_becomes_the_vocabulary_operation_of_that_kind(kind):
    plans = plan_all(_spec(workload=kind.value), EVERY_KIND)
    schema = INITIAL_SCHEMA.append(pa.field("c_w0_0", pa.int64()))
    for planned in plans[0][:5]:
        op = to_write_op(planned, schema, 7, read_version=7, token=planned.op_id)
        if op is None:  # a drop or a rename with no column of the writer's own left
            assert kind in (WriteKind.DROP_COLUMNS, WriteKind.ALTER_COLUMNS)
            continue
        assert op.kind is kind
        assert (op.read_version, op.token) == (7, planned.op_id)
        assert writes.op_from_json(op.to_json()) == op


def test_a_restore_goes_back_from_the_version_read_and_records_its_target():
    plans = plan_all(_spec(workload="restore"), EVERY_KIND)
    planned = plans[0][0]
    op = to_write_op(planned, INITIAL_SCHEMA, 9, read_version=None, token=None)
    assert isinstance(op, writes.Restore)
    assert op.version == planned.args["version"] == max(1, 9 - planned.args["back"])
