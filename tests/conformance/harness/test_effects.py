"""The judge of schema, config, index and tag effects (conformance.harness.effects).

Unit tests on hand-built observations, one per anomaly kind and one per
legitimate change; a property over random serial histories (a model applied
op by op is clean, and one effect taken out of one version gives exactly one
anomaly naming the right operations); and real datasets written by pylance
14 and by the reference, read back with ``observe_effects``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.drivers import pylance_driver, reference
from conformance.drivers import writes as w
from conformance.drivers.writes import WriteKind
from conformance.drivers.writes import WriteOutcome as AttemptOutcome
from conformance.harness.anomalies import Anomaly, AnomalyKind, Role
from conformance.harness.effects import (
    EffectObservations,
    FieldState,
    IndexState,
    VersionEffects,
    effect_anomalies,
    observe_effects,
)
from conformance.harness.history import Attempt
from reference_impl.dataset import Dataset
from reference_impl.naming import NamingScheme

ACK, CONFLICT, ERROR, UNSURE = (
    AttemptOutcome.ACKNOWLEDGED,
    AttemptOutcome.CONFLICT,
    AttemptOutcome.ERROR,
    AttemptOutcome.UNKNOWN,
)
BASE = {"id": 0, "value": 1}


def op(op_id: str, kind: WriteKind, committed: int | None, outcome=ACK, **args) -> Attempt:
    """An attempt of ``kind`` with ``args``, committing version ``committed``."""
    return Attempt(op_id, 0, kind, dict(args), None, outcome, committed, None, 0.0, 0.0)


def seg(name: str, uuid: str, fields=(0,), fragments=(0,), built_on: int = 1) -> IndexState:
    return IndexState(name, uuid, tuple(fields), None if fragments is None else tuple(fragments), built_on)


def at(v: int, columns: Mapping[str, int] = BASE, *, config=None, indices=(), fragments=(0,)) -> VersionEffects:
    fields = tuple(FieldState(i, path, "int64", True) for path, i in columns.items())
    return VersionEffects(v, fields, dict(config or {}), tuple(indices), frozenset(fragments))


def judge(states: Sequence[VersionEffects], *attempts: Attempt, tags=None, claims=None) -> list[Anomaly]:
    """The anomalies of ``attempts`` over ``states``, each acknowledged or
    unsure attempt claiming its ``version`` unless ``claims`` says otherwise."""
    if claims is None:
        claims = {}
        for a in attempts:
            if a.version is not None and a.kind is not WriteKind.TAG and a.outcome in (ACK, UNSURE):
                claims.setdefault(a.version, []).append(a)
    return effect_anomalies(list(attempts), EffectObservations(list(states), dict(tags or {})), claims)


def roles(anomaly: Anomaly) -> dict[str, Role]:
    return dict(anomaly.witness.roles)


CREATE = op("setup", WriteKind.CREATE, 1, ids=[0, 1])


# -- each anomaly ---------------------------------------------------------------------


def test_a_column_lost_by_a_later_commit_is_one_anomaly_naming_adder_and_committer():
    add1 = op("w0-1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    add2 = op("w1-1", WriteKind.ADD_COLUMNS, 3, columns=["b"])
    later = op("w0-2", WriteKind.APPEND, 4, ids=[5])
    states = [at(1), at(2, {**BASE, "a": 2}), at(3, {**BASE, "b": 2}), at(4, {**BASE, "b": 2})]
    [anomaly] = judge(states, CREATE, add1, add2, later)
    assert anomaly.kind is AnomalyKind.LOST_COLUMN
    assert roles(anomaly) == {"w0-1": Role.LOST, "w1-1": Role.COMMITTED}
    assert anomaly.witness.versions == (3,)
    assert "column a" in anomaly.witness.detail


def test_a_column_missing_from_the_version_its_add_committed_is_lost_there():
    add = op("w0-1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    [anomaly] = judge([at(1), at(2)], CREATE, add)
    assert (anomaly.kind, roles(anomaly), anomaly.witness.versions) == (
        AnomalyKind.LOST_COLUMN,
        {"w0-1": Role.LOST},
        (2,),
    )


def test_a_version_no_operation_claims_changes_nothing_legitimately():
    add = op("w0-1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    [anomaly] = judge([at(1), at(2, {**BASE, "a": 2}), at(3)], CREATE, add)
    assert anomaly.kind is AnomalyKind.LOST_COLUMN
    assert roles(anomaly) == {"w0-1": Role.LOST}
    assert "no operation claims version 3" in anomaly.witness.detail


def test_a_dropped_column_coming_back_is_resurrected():
    add = op("w0-1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    drop = op("w1-1", WriteKind.DROP_COLUMNS, 3, columns=["a"])
    config = op("w2-1", WriteKind.CONFIG, 4, values=[["k", "v"]])
    states = [at(1), at(2, {**BASE, "a": 2}), at(3), at(4, {**BASE, "a": 2}, config={"k": "v"})]
    [anomaly] = judge(states, CREATE, add, drop, config)
    assert anomaly.kind is AnomalyKind.RESURRECTED_COLUMN
    assert roles(anomaly) == {"w1-1": Role.DELETED, "w2-1": Role.COMMITTED}
    assert anomaly.witness.versions == (4,)


def test_a_rename_undone_is_a_lost_alteration():
    rename = op("w0-1", WriteKind.ALTER_COLUMNS, 2, renames=[["value", "v2"]])
    append = op("w1-1", WriteKind.APPEND, 3, ids=[7])
    [anomaly] = judge([at(1), at(2, {"id": 0, "v2": 1}), at(3)], CREATE, rename, append)
    assert anomaly.kind is AnomalyKind.LOST_ALTERATION
    assert roles(anomaly) == {"w0-1": Role.LOST, "w1-1": Role.COMMITTED}
    assert "undone" in anomaly.witness.detail


def test_a_renamed_added_column_that_vanishes_names_adder_and_renamer():
    add = op("w0-1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    rename = op("w1-1", WriteKind.ALTER_COLUMNS, 3, renames=[["a", "b"]])
    append = op("w2-1", WriteKind.APPEND, 4, ids=[7])
    states = [at(1), at(2, {**BASE, "a": 2}), at(3, {**BASE, "b": 2}), at(4)]
    [anomaly] = judge(states, CREATE, add, rename, append)
    assert anomaly.kind is AnomalyKind.LOST_COLUMN
    assert roles(anomaly) == {"w0-1": Role.LOST, "w1-1": Role.LOST, "w2-1": Role.COMMITTED}


@pytest.mark.parametrize(
    ("written", "later"),
    [([["k", "a"]], {}), ([["k", "a"]], {"k": "b"}), ([["k", None]], {"k": "old"})],
    ids=["set-then-missing", "set-then-other-value", "removed-then-back"],
)
def test_a_config_value_lost(written, later):
    before = {"k": "old"}
    config = op("w0-1", WriteKind.CONFIG, 2, values=written)
    append = op("w1-1", WriteKind.APPEND, 3, ids=[7])
    after = {key: value for key, value in written if value is not None}
    states = [at(1, config=before), at(2, config=after), at(3, config=later)]
    [anomaly] = judge(states, CREATE, config, append)
    assert anomaly.kind is AnomalyKind.LOST_CONFIG
    assert roles(anomaly) == {"w0-1": Role.LOST, "w1-1": Role.COMMITTED}


def test_a_lost_index():
    index = op("w0-1", WriteKind.CREATE_INDEX, 2, name="id_idx", column="id")
    add = op("w1-1", WriteKind.ADD_COLUMNS, 3, columns=["a"])
    states = [at(1), at(2, indices=[seg("id_idx", "u1")]), at(3, {**BASE, "a": 2})]
    [anomaly] = judge(states, CREATE, index, add)
    assert anomaly.kind is AnomalyKind.LOST_INDEX
    assert roles(anomaly) == {"w0-1": Role.LOST, "w1-1": Role.COMMITTED}


def test_an_index_naming_fragments_its_version_did_not_have():
    append = op("w1-1", WriteKind.APPEND, 2, ids=[7])
    index = op("w0-1", WriteKind.CREATE_INDEX, 3, name="id_idx", column="id")
    # Built on version 1 (fragment 0 only), yet it claims the fragment appended at 2.
    states = [at(1), at(2, fragments=(0, 1)), at(3, fragments=(0, 1), indices=[seg("id_idx", "u1", fragments=(0, 1))])]
    [anomaly] = judge(states, CREATE, append, index)
    assert anomaly.kind is AnomalyKind.INDEX_BEYOND_FRAGMENTS
    assert roles(anomaly) == {"w0-1": Role.COMMITTED}
    assert "[1]" in anomaly.witness.detail


def test_an_index_segment_gaining_fragments_unrebuilt():
    index = op("w0-1", WriteKind.CREATE_INDEX, 2, name="id_idx", column="id")
    append = op("w1-1", WriteKind.APPEND, 3, ids=[7])
    states = [
        at(1),
        at(2, indices=[seg("id_idx", "u1")]),
        at(3, fragments=(0, 1), indices=[seg("id_idx", "u1", fragments=(0, 1))]),
        at(4, fragments=(0, 1), indices=[seg("id_idx", "u1", fragments=(0, 1))]),
    ]
    [anomaly] = judge(states, CREATE, index, append)
    assert (anomaly.kind, roles(anomaly), anomaly.witness.versions) == (
        AnomalyKind.INDEX_BEYOND_FRAGMENTS,
        {"w1-1": Role.COMMITTED},
        (3,),
    )


def test_a_lost_tag():
    tag = op("w0-1", WriteKind.TAG, 1, name="t", version=None)
    moved = op("w1-1", WriteKind.TAG, 2, name="u", version=1)
    lost = judge([at(1), at(2)], CREATE, tag, moved, tags={"u": 2})
    assert [(a.kind, roles(a), a.witness.versions) for a in lost] == [
        (AnomalyKind.LOST_TAG, {"w0-1": Role.LOST}, (1,)),
        (AnomalyKind.LOST_TAG, {"w1-1": Role.LOST}, (1,)),
    ]


def test_the_effects_of_failed_operations_must_not_show():
    add = op("w0-1", WriteKind.ADD_COLUMNS, None, CONFLICT, columns=["a"])
    config = op("w1-1", WriteKind.CONFIG, None, ERROR, values=[["k", "x"]])
    index = op("w2-1", WriteKind.CREATE_INDEX, None, CONFLICT, name="i", column="id")
    tag = op("w3-1", WriteKind.TAG, None, ERROR, name="t", version=2)
    append = op("w4-1", WriteKind.APPEND, 2, ids=[7])
    states = [at(1), at(2, {**BASE, "a": 2}, config={"k": "x"}, indices=[seg("i", "u")])]
    found = judge(states, CREATE, add, config, index, tag, append, tags={"t": 2})
    assert {a.kind for a in found} == {AnomalyKind.PHANTOM}
    assert sorted(next(iter(a.witness.roles)) for a in found) == ["w0-1", "w1-1", "w2-1", "w3-1"]
    assert all(a.witness.roles[next(iter(a.witness.roles))] is Role.FAILED for a in found)
    assert all(a.witness.roles.get("w4-1", Role.COMMITTED) is Role.COMMITTED for a in found)


def test_a_failed_drop_that_shows_and_a_failed_claimer_are_phantoms():
    add = op("w0-1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    drop = op("w1-1", WriteKind.DROP_COLUMNS, 3, CONFLICT, columns=["a"])
    states = [at(1), at(2, {**BASE, "a": 2}), at(3)]
    # The failed drop's transaction claims version 3: it explains nothing.
    found = judge(states, CREATE, add, drop, claims={1: [CREATE], 2: [add], 3: [drop]})
    assert {(a.kind, tuple(roles(a).items())) for a in found} == {
        (AnomalyKind.LOST_COLUMN, (("w0-1", Role.LOST), ("w1-1", Role.FAILED))),
        (AnomalyKind.PHANTOM, (("w1-1", Role.FAILED),)),
    }


# -- each legitimate change ----------------------------------------------------------


def test_schema_evolution_in_order_is_clean():
    add = op("a1", WriteKind.ADD_COLUMNS, 2, columns=["a", "b"])
    rename = op("a2", WriteKind.ALTER_COLUMNS, 3, renames=[["a", "a2"]])
    drop = op("a3", WriteKind.DROP_COLUMNS, 4, columns=["a2"])
    readd = op("a4", WriteKind.ADD_COLUMNS, 5, columns=["a2"])
    rename_to_dropped = op("a5", WriteKind.DROP_COLUMNS, 6, columns=["b"])
    back = op("a6", WriteKind.ALTER_COLUMNS, 7, renames=[["a2", "b"]])
    states = [
        at(1),
        at(2, {**BASE, "a": 2, "b": 3}),
        at(3, {**BASE, "a2": 2, "b": 3}),
        at(4, {**BASE, "b": 3}),
        at(5, {**BASE, "b": 3, "a2": 4}),
        at(6, {**BASE, "a2": 4}),
        at(7, {**BASE, "b": 4}),
        at(8, {**BASE, "b": 4}),
    ]
    assert judge(states, CREATE, add, rename, drop, readd, rename_to_dropped, back) == []


def test_a_dropped_id_may_be_reused_by_a_new_column():
    # schema.md "Schema Evolution": a dropped field's id "may be reused".
    add = op("a1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    drop = op("a2", WriteKind.DROP_COLUMNS, 3, columns=["a"])
    add_b = op("a3", WriteKind.ADD_COLUMNS, 4, columns=["b"])
    states = [at(1), at(2, {**BASE, "a": 2}), at(3), at(4, {**BASE, "b": 2})]
    assert judge(states, CREATE, add, drop, add_b) == []


def test_an_overwrite_replaces_schema_and_indices_but_keeps_config():
    add = op("a1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    drop = op("a2", WriteKind.DROP_COLUMNS, 3, columns=["value"])
    index = op("a3", WriteKind.CREATE_INDEX, 4, name="i", column="id")
    config = op("a4", WriteKind.CONFIG, 5, values=[["k", "v"]])
    overwrite = op("a5", WriteKind.OVERWRITE, 6, ids=[9])
    idx = [seg("i", "u", built_on=3)]
    states = [
        at(1),
        at(2, {**BASE, "a": 2}),
        at(3, {"id": 0, "a": 2}),
        at(4, {"id": 0, "a": 2}, indices=idx),
        at(5, {"id": 0, "a": 2}, indices=idx, config={"k": "v"}),
        at(6, config={"k": "v"}, fragments=(1,)),
    ]
    attempts = (CREATE, add, drop, index, config, overwrite)
    assert judge(states, *attempts) == []
    # transaction.overwrite-replaces-table: the config stays.
    cleared = [*states[:-1], at(6, fragments=(1,))]
    assert [a.kind for a in judge(cleared, *attempts)] == [AnomalyKind.LOST_CONFIG]


def test_a_restore_brings_back_the_effects_of_its_version():
    add = op("a1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    config = op("a2", WriteKind.CONFIG, 3, values=[["k", "v"]])
    drop = op("a3", WriteKind.DROP_COLUMNS, 4, columns=["a"])
    config2 = op("a4", WriteKind.CONFIG, 5, values=[["k", None]])
    restore = op("a5", WriteKind.RESTORE, 6, back=3, version=3)
    append = op("a6", WriteKind.APPEND, 7, ids=[9])
    three = {**BASE, "a": 2}
    states = [
        at(1),
        at(2, three),
        at(3, three, config={"k": "v"}),
        at(4, config={"k": "v"}),
        at(5),
        at(6, three, config={"k": "v"}),
        at(7, three, config={"k": "v"}),
    ]
    attempts = (CREATE, add, config, drop, config2, restore, append)
    assert judge(states, *attempts) == []
    # After the restore, version 3's effects are in force again.
    broken = [*states[:-1], at(7, config={"k": "v"})]
    [anomaly] = judge(broken, *attempts)
    assert (anomaly.kind, roles(anomaly)) == (AnomalyKind.LOST_COLUMN, {"a1": Role.LOST, "a6": Role.COMMITTED})


def test_a_restore_to_before_an_effect_undoes_it():
    add = op("a1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    index = op("a2", WriteKind.CREATE_INDEX, 3, name="i", column="a")
    restore = op("a3", WriteKind.RESTORE, 4, back=3, version=1)
    states = [at(1), at(2, {**BASE, "a": 2}), at(3, {**BASE, "a": 2}, indices=[seg("i", "u", (2,), built_on=2)]), at(4)]
    assert judge(states, CREATE, add, index, restore) == []


def test_dropping_an_indexed_column_drops_its_index():
    index = op("a1", WriteKind.CREATE_INDEX, 2, name="i", column="value")
    drop = op("a2", WriteKind.DROP_COLUMNS, 3, columns=["value"])
    states = [at(1), at(2, indices=[seg("i", "u", (1,))]), at(3, {"id": 0})]
    assert judge(states, CREATE, index, drop) == []


def test_whole_fragment_deletes_and_compaction_leave_bitmaps_the_spec_allows():
    # index.md "Handling deleted and invalidated rows": a bitmap may name a
    # fragment deleted whole; a compaction remaps onto the fragments it wrote
    # (pylance keeps dataset_version: docs/spec-discrepancies.md).
    index = op("a1", WriteKind.CREATE_INDEX, 2, name="i", column="id")
    delete = op("a2", WriteKind.DELETE, 3, ids=[0])
    compact = op("a3", WriteKind.COMPACT, 5)
    claims = {1: [CREATE], 2: [index], 3: [delete], 4: [compact], 5: [compact]}
    states = [
        at(1, fragments=(0, 1, 2)),
        at(2, fragments=(0, 1, 2), indices=[seg("i", "u1", fragments=(0, 1, 2))]),
        at(3, fragments=(1, 2), indices=[seg("i", "u1", fragments=(0, 1, 2))]),
        at(4, fragments=(1, 2), indices=[seg("i", "u1", fragments=(0, 1, 2))]),
        at(5, fragments=(3,), indices=[seg("i", "u2", fragments=(0, 3))]),
        at(6, fragments=(3,), indices=[seg("i", "u2", fragments=(0, 3))]),
    ]
    assert judge(states, CREATE, index, delete, compact, claims=claims) == []


def test_a_config_key_rewritten_by_another_operation():
    first = op("a1", WriteKind.CONFIG, 2, values=[["k", "1"]])
    second = op("a2", WriteKind.CONFIG, 3, values=[["k", "2"], ["j", None]])
    states = [at(1), at(2, config={"k": "1"}), at(3, config={"k": "2"})]
    assert judge(states, CREATE, first, second) == []


def test_an_unsure_operation_that_committed_explains_its_effects_and_may_lose_them():
    add = op("a1", WriteKind.ADD_COLUMNS, 2, UNSURE, columns=["a"])
    append = op("a2", WriteKind.APPEND, 3, ids=[9])
    # Its commit is claimed (found in the transaction files), but it was never acknowledged.
    assert judge([at(1), at(2, {**BASE, "a": 2}), at(3)], CREATE, add, append) == []


def test_failed_operations_whose_effects_do_not_show_are_clean():
    add = op("a1", WriteKind.ADD_COLUMNS, None, CONFLICT, columns=["a"])
    tag = op("a2", WriteKind.TAG, None, ERROR, name="t", version=1)
    also = op("a3", WriteKind.TAG, 1, name="t", version=1)
    assert judge([at(1), at(2)], CREATE, add, tag, also, tags={"t": 1}) == []


def test_kinds_given_as_their_vocabulary_strings():
    add = replace(op("a1", WriteKind.ADD_COLUMNS, 2, columns=["a"]), kind="add-columns")
    mine = replace(op("a2", WriteKind.APPEND, 3), kind="my-engine-kind")
    [anomaly] = judge([at(1), at(2, {**BASE, "a": 2}), at(3)], CREATE, add, mine)
    assert roles(anomaly) == {"a1": Role.LOST, "a2": Role.COMMITTED}


def test_unreadable_versions_are_skipped_but_claims_on_them_still_count():
    add = op("a1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    drop = op("a2", WriteKind.DROP_COLUMNS, 3, columns=["a"])
    observations = EffectObservations([at(1), at(2, {**BASE, "a": 2}), at(4)], unreadable=[(3, "torn")])
    claims = {1: [CREATE], 2: [add], 3: [drop]}
    assert effect_anomalies([CREATE, add, drop], observations, claims) == []


# -- a property over random serial histories ----------------------------------------


@dataclass
class _Model:
    """The non-row state of a dataset a serial history builds, with who made each effect."""

    #: path -> (field id, adders, renamers, former paths)
    columns: dict[str, tuple[int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]
    #: path -> dropper
    dropped: dict[str, str] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    #: key -> (value or None, writer)
    config_by: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    #: name -> (segment, creator)
    indices: dict[str, tuple[IndexState, str]] = field(default_factory=dict)
    fragments: frozenset[int] = frozenset({0})

    def copy(self) -> _Model:
        return _Model(
            dict(self.columns),
            dict(self.dropped),
            dict(self.config),
            dict(self.config_by),
            dict(self.indices),
            self.fragments,
        )

    def effects(self, v: int) -> VersionEffects:
        fields = tuple(FieldState(i, path, "int64", True) for path, (i, *_) in self.columns.items())
        segments = tuple(segment for segment, _ in self.indices.values())
        return VersionEffects(v, fields, dict(self.config), segments, self.fragments)


STEP_KINDS = (
    "append",
    "delete",
    "add",
    "drop",
    "rename",
    "config",
    "index",
    "compact",
    "overwrite",
    "restore",
    "tag",
    "failed-add",
)


@dataclass
class _Run:
    models: dict[int, _Model]
    history: list[Attempt]
    claims: dict[int, list[Attempt]]
    tags: dict[str, int]


def _serial_run(steps: Sequence[tuple[str, int]]) -> _Run:
    """Apply ``steps`` (a kind and a number choosing among its options) to
    the model, each committing operation claiming the version it makes."""
    model = _Model({"id": (0, (), (), ()), "value": (1, (), (), ())})
    models = {1: model.copy()}
    history, claims, tags = [CREATE], {1: [CREATE]}, {}
    counter = 100

    def pick(options, n):
        return sorted(options)[n % len(options)] if options else None

    for number, (kind, n) in enumerate(steps):
        counter += 1
        v, op_id = len(models) + 1, f"w{number % 3}-{number}"
        model = model.copy()
        if kind == "append":
            attempt = op(op_id, WriteKind.APPEND, v, ids=[counter])
            model.fragments = model.fragments | {counter}
        elif kind == "delete" and model.fragments:
            attempt = op(op_id, WriteKind.DELETE, v, ids=[])
            model.fragments = model.fragments - {pick(model.fragments, n)}
        elif kind == "add":
            name = f"c{counter}"
            attempt = op(op_id, WriteKind.ADD_COLUMNS, v, columns=[name])
            model.columns[name] = (counter, (op_id,), (), ())
        elif kind == "drop" and len(model.columns) > 1:
            path = pick(model.columns, n)
            attempt = op(op_id, WriteKind.DROP_COLUMNS, v, columns=[path])
            field_id = model.columns.pop(path)[0]
            model.dropped[path] = op_id
            model.indices = {k: x for k, x in model.indices.items() if field_id not in x[0].field_ids}
        elif kind == "rename":
            path, new = pick(model.columns, n), f"r{counter}"
            attempt = op(op_id, WriteKind.ALTER_COLUMNS, v, renames=[[path, new]])
            field_id, adders, renamers, former = model.columns.pop(path)
            model.columns[new] = (field_id, adders, (*renamers, op_id), (*former, path))
        elif kind == "config":
            key, value = f"k{n % 3}", None if n % 4 == 0 else f"v{counter}"
            attempt = op(op_id, WriteKind.CONFIG, v, values=[[key, value]])
            model.config.pop(key, None)
            if value is not None:
                model.config[key] = value
            model.config_by[key] = (value, op_id)
        elif kind == "index":
            path, name = pick(model.columns, n), f"i{counter}"
            attempt = op(op_id, WriteKind.CREATE_INDEX, v, name=name, column=path)
            segment = IndexState(name, f"u{counter}", (model.columns[path][0],), tuple(sorted(model.fragments)), v - 1)
            model.indices[name] = (segment, op_id)
        elif kind == "compact" and model.fragments:
            attempt = op(op_id, WriteKind.COMPACT, v)
            remapped = {}
            for name, (segment, creator) in model.indices.items():
                covered = (counter,) if set(segment.fragment_ids or ()) & model.fragments else ()
                remapped[name] = (replace(segment, uuid=f"u{counter}-{name}", fragment_ids=covered), creator)
            model.indices, model.fragments = remapped, frozenset({counter})
        elif kind == "overwrite":
            attempt = op(op_id, WriteKind.OVERWRITE, v, ids=[counter])
            model.columns = {"id": (0, (), (), ()), "value": (1, (), (), ())}
            model.dropped, model.indices, model.fragments = {}, {}, frozenset({counter})
        elif kind == "restore" and v > 2:
            target = 1 + n % (v - 1)
            attempt = op(op_id, WriteKind.RESTORE, v, back=v - 1 - target, version=target)
            model = models[target].copy()
        elif kind == "tag":
            name = f"t{counter}"
            history.append(op(op_id, WriteKind.TAG, v - 1, name=name, version=None))
            tags[name] = v - 1
            continue
        elif kind == "failed-add":
            history.append(op(op_id, WriteKind.ADD_COLUMNS, None, CONFLICT, columns=[f"x{counter}"]))
            continue
        else:
            continue
        history.append(attempt)
        claims[v] = [attempt]
        models[v] = model
    return _Run(models, history, claims, tags)


@dataclass(frozen=True)
class _Mutation:
    """One effect taken out of (or a failed one put into) one version, and
    the anomaly that must say so."""

    version: int
    kind: AnomalyKind
    roles: tuple[tuple[str, Role], ...]
    #: The version's effects as mutated (None: a tag is removed instead).
    effects: VersionEffects | None
    tag: str | None = None


def _mutations(run: _Run) -> list[_Mutation]:
    found = []
    failed_adds = [a for a in run.history if a.outcome is CONFLICT]
    for v, model in sorted(run.models.items()):
        if v == 1:
            continue
        claimer = run.claims[v][0]
        committed = ((claimer.op_id, Role.COMMITTED),)
        effects = model.effects(v)
        fields = effects.fields
        for path, (_, adders, renamers, former) in model.columns.items():
            if adders or renamers:
                kept = tuple(f for f in fields if f.path != path)
                lost = tuple((o, Role.LOST) for o in (*adders, *renamers))
                found.append(_Mutation(v, AnomalyKind.LOST_COLUMN, lost + committed, replace(effects, fields=kept)))
            if renamers and former[-1] not in model.columns:
                undone = tuple(replace(f, path=former[-1]) if f.path == path else f for f in fields)
                lost = tuple((o, Role.LOST) for o in renamers)
                found.append(
                    _Mutation(v, AnomalyKind.LOST_ALTERATION, lost + committed, replace(effects, fields=undone))
                )
        for path, dropper in model.dropped.items():
            back = (*fields, FieldState(10_000, path, "int64", True))
            roles_ = ((dropper, Role.DELETED), *committed)
            found.append(_Mutation(v, AnomalyKind.RESURRECTED_COLUMN, roles_, replace(effects, fields=back)))
        for key, (value, writer) in model.config_by.items():
            config = {k: x for k, x in model.config.items() if k != key}
            if value is None:
                config[key] = "MUTATED"
            roles_ = ((writer, Role.LOST), *committed)
            found.append(_Mutation(v, AnomalyKind.LOST_CONFIG, roles_, replace(effects, config=config)))
        for name, (segment, creator) in model.indices.items():
            others = tuple(s for s in effects.indices if s.name != name)
            roles_ = ((creator, Role.LOST), *committed)
            # Not the segment a compaction remaps, at its first version: where it comes back,
            # it is new and names fragments its dataset_version lacks, a second finding.
            if claimer.kind is not WriteKind.COMPACT:
                found.append(_Mutation(v, AnomalyKind.LOST_INDEX, roles_, replace(effects, indices=others)))
            if claimer.kind not in (WriteKind.COMPACT, WriteKind.RESTORE):
                wide = replace(segment, fragment_ids=(*(segment.fragment_ids or ()), 10_000))
                indices = tuple(wide if s.name == name else s for s in effects.indices)
                found.append(
                    _Mutation(v, AnomalyKind.INDEX_BEYOND_FRAGMENTS, committed, replace(effects, indices=indices))
                )
        for failed in failed_adds:
            shown = (*fields, FieldState(10_001, failed.args["columns"][0], "int64", True))
            roles_ = ((failed.op_id, Role.FAILED), *committed)
            found.append(_Mutation(v, AnomalyKind.PHANTOM, roles_, replace(effects, fields=shown)))
    for attempt in run.history:
        if attempt.kind is WriteKind.TAG:
            roles_ = ((attempt.op_id, Role.LOST),)
            found.append(_Mutation(attempt.version or 0, AnomalyKind.LOST_TAG, roles_, None, attempt.args["name"]))
    return found


serial_steps = st.lists(st.tuples(st.sampled_from(STEP_KINDS), st.integers(0, 50)), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(steps=serial_steps, choice=st.integers(0, 10**6))
def test_serial_histories_are_clean_and_one_lost_effect_is_one_anomaly(steps, choice):
    """Property: a serial history whose every version holds what its
    operations did has no anomaly; taking one effect out of one version (or
    showing one failed operation's effect there) gives exactly one anomaly,
    of the kind that effect calls for, naming each operation in its role."""
    run = _serial_run(steps)
    states = [model.effects(v) for v, model in sorted(run.models.items())]
    clean = EffectObservations(states, dict(run.tags))
    assert effect_anomalies(run.history, clean, run.claims) == []

    mutations = _mutations(run)
    if not mutations:
        return
    mutation = mutations[choice % len(mutations)]
    if mutation.effects is not None:
        mutated = [mutation.effects if s.version == mutation.version else s for s in states]
        observations = EffectObservations(mutated, dict(run.tags))
    else:
        observations = EffectObservations(states, {k: x for k, x in run.tags.items() if k != mutation.tag})
    [anomaly] = effect_anomalies(run.history, observations, run.claims)
    assert anomaly.kind is mutation.kind
    assert anomaly.witness.versions == (mutation.version,)
    expected: dict[str, Role] = {}
    for op_id, role in mutation.roles:
        expected.setdefault(op_id, role)
    assert roles(anomaly) == expected


# -- real datasets -------------------------------------------------------------------


def _rows(ids: Sequence[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "value": pa.array([0] * len(ids), pa.int64())})


def _steps() -> list[tuple[w.WriteOp, dict]]:
    """Every kind of effect, in one serial history (the args each kind carries in the harness)."""
    return [
        (w.Create(_rows(range(10)), max_rows_per_file=5), {"ids": list(range(10))}),
        (w.Append(_rows(range(10, 15))), {"ids": list(range(10, 15))}),
        (w.Config((("k1", "a"), ("k2", "b"))), {"values": [["k1", "a"], ["k2", "b"]]}),
        (w.CreateIndex("id", "BTREE", name="id_idx"), {"name": "id_idx", "column": "id"}),
        (w.AddColumns((w.NewColumn("c1", "id", 1),)), {"columns": ["c1"]}),
        (w.AddColumns((w.NewColumn("c2", "id", 2),)), {"columns": ["c2"]}),
        (w.AlterColumns((w.Alteration("c1", rename="c1r"),)), {"renames": [["c1", "c1r"]]}),
        (w.DropColumns(("c2",)), {"columns": ["c2"]}),
        # Fragment 0 (ids 0 to 4) deleted whole: the index's bitmap may go on naming it.
        (w.Delete(w.Compare("id", "<", 5)), {"ids": list(range(5))}),
        (w.Update((("value", 7),), w.Compare("id", "=", 11)), {"ids": [11], "value": 7}),
        (w.Config((("k1", None),)), {"values": [["k1", None]]}),
        (w.Compact(), {}),
        (w.Tag("t1"), {"name": "t1", "version": None}),
        (w.Overwrite(_rows([100, 101])), {"ids": [100, 101]}),
        # Version 6: c1 and c2, both config keys, the index.
        (w.Restore(6), {"back": 9, "version": 6}),
        (w.DropColumns(("id",)), {"columns": ["id"]}),
        (w.Config((("k3", "c"),)), {"values": [["k3", "c"]]}),
    ]


def _run_serially(driver, uri: str, steps) -> tuple[list[Attempt], dict[int, list[Attempt]]]:
    """Each step through ``driver``; it claims every version committed since the one before."""
    history: list[Attempt] = []
    claims: dict[int, list[Attempt]] = {}
    latest = 0
    for number, (operation, args) in enumerate(steps):
        result = w.write_result(driver.write(uri, operation))
        attempt = Attempt(f"w0-{number}", 0, operation.kind, args, latest, ACK, result.version, None, 0.0, 0.0)
        history.append(attempt)
        if operation.kind is WriteKind.TAG:
            continue
        now = Dataset.open(uri).version
        for v in range(latest + 1, now + 1):
            claims[v] = [attempt]
        latest = now
    return history, claims


@pytest.mark.parametrize("driver", [pylance_driver, reference], ids=["pylance", "reference"])
def test_a_real_serial_history_with_every_effect_is_clean(tmp_path, driver):
    uri = str(tmp_path / "dataset")
    history, claims = _run_serially(driver, uri, _steps())
    observations = observe_effects(uri)
    assert observations.unreadable == []
    assert set(observations.tags) == {"t1"}
    by_version = {state.version: state for state in observations.versions}
    restored = by_version[max(claims)].paths()
    assert {"c1", "c2", "value"} <= restored and "id" not in restored
    assert any(state.indices for state in observations.versions)
    assert effect_anomalies(history, observations, claims) == []


class _CommitsOnLatest(Dataset):
    """The reference dataset with the stale-manifest bug: it commits the
    operation it computed on the version it read as if it had read the
    latest, so no conflict is checked and the manifest is its stale one."""

    def commit(self, operation, **options):
        latest = Dataset.open(self.storage)
        naming = self.naming_scheme or NamingScheme.V1
        return self._commit_to(self.storage, latest.manifest_file, naming, operation)


def test_a_commit_built_on_a_stale_schema_loses_a_column(tmp_path):
    uri = str(tmp_path / "dataset")
    Dataset.create(uri, _rows(range(6)))
    stale = _CommitsOnLatest.open(uri, 1)
    Dataset.open(uri, 1).add_columns({"a": pc.field("id")})
    stale.add_columns({"b": pc.field("id")})
    create = op("setup", WriteKind.CREATE, 1, ids=list(range(6)))
    first = op("w0-1", WriteKind.ADD_COLUMNS, 2, columns=["a"])
    second = op("w1-1", WriteKind.ADD_COLUMNS, 3, columns=["b"])
    observations = observe_effects(uri)
    assert [state.version for state in observations.versions] == [1, 2, 3]
    claims = {1: [create], 2: [first], 3: [second]}
    [anomaly] = effect_anomalies([create, first, second], observations, claims)
    assert anomaly.kind is AnomalyKind.LOST_COLUMN
    assert roles(anomaly) == {"w0-1": Role.LOST, "w1-1": Role.COMMITTED}
    assert anomaly.witness.versions == (3,)


def test_observing_a_torn_version_skips_it_and_says_so(tmp_path):
    uri = str(tmp_path / "dataset")
    dataset = Dataset.create(uri, _rows(range(3)))
    dataset.add_columns({"a": pc.field("id")})
    manifest = tmp_path / "dataset" / Dataset.open(uri, 2).manifest_file.path
    manifest.write_bytes(b"not a manifest")
    observations = observe_effects(uri)
    assert [state.version for state in observations.versions] == [1]
    assert [version for version, _ in observations.unreadable] == [2]


def test_observing_no_dataset_says_so_without_a_traceback(tmp_path):
    observations = observe_effects(str(tmp_path / "nothing"))
    assert observations.versions == []
    assert observations.unreadable and observations.unreadable[0][0] == 0


def test_an_index_follows_its_column_through_a_rename_to_the_drop():
    index = op("a1", WriteKind.CREATE_INDEX, 2, name="i", column="value")
    rename = op("a2", WriteKind.ALTER_COLUMNS, 3, renames=[["value", "v2"]])
    append = op("a3", WriteKind.APPEND, 4, ids=[9])
    drop = op("a4", WriteKind.DROP_COLUMNS, 5, columns=["v2"])
    idx = [seg("i", "u", (1,))]
    renamed = {"id": 0, "v2": 1}
    # The renamed column is missing at 4 (one lost column); its drop at 5 still takes the index along.
    states = [at(1), at(2, indices=idx), at(3, renamed, indices=idx), at(4, {"id": 0}, indices=idx), at(5, {"id": 0})]
    [anomaly] = judge(states, CREATE, index, rename, append, drop)
    assert (anomaly.kind, anomaly.witness.versions) == (AnomalyKind.LOST_COLUMN, (4,))
