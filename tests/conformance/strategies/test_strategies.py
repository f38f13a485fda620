"""Properties of the public Hypothesis strategies (conformance.strategies):
what they generate is valid by construction, survives every codec round trip
of the reference implementation, and each mutation breaks the requirement it
names, as the validator sees it."""

from __future__ import annotations

import ast
import copy
import inspect
import re
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import conformance
from conformance import strategies
from conformance.drivers import reference, writes
from conformance.mutations import manifest_mutators
from conformance.requirements import load_requirements
from conformance.strategies._schedules import BASE_KINDS
from conformance.validator import Severity, all_rules, validate
from reference_impl import feature_flags as ff
from reference_impl.commit import WRITER_LIBRARY
from reference_impl.deletions import (
    decode_arrow_deletions,
    decode_bitmap_deletions,
    encode_arrow_deletions,
    encode_bitmap_deletions,
)
from reference_impl.file_format import LanceFileReader, write_file
from reference_impl.logical_types import is_valid_logical_type, schema_from_arrow, schema_to_arrow
from reference_impl.manifest import WriterVersion
from reference_impl.manifest_file import decode_manifest_file, encode_manifest_file
from reference_impl.naming import NamingScheme, manifest_path
from reference_impl.row_ids import decode_row_id_sequence, encode_row_id_sequence
from reference_impl.storage import LocalStorage
from reference_impl.transactions import (
    OPERATIONS,
    Append,
    read_transaction_file,
    write_transaction_file,
)
from reference_impl.wire import transaction_pb2
from tests.hypothesis_budget import examples

_TOLERANT = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: Half the profile's examples for properties that stay in memory, a sixth
#: for those that write files or validate (ci: 25 and 8).
FAST = settings(max_examples=examples(1 / 2), **_TOLERANT)
SLOW = settings(max_examples=examples(1 / 6), **_TOLERANT)

#: Requirement id -> the manifest mutator breaking it (conformance.mutations).
MANIFEST_MUTATORS = manifest_mutators()
#: Every rule citing a requirement some manifest mutator breaks: the
#: manifest-level rules a valid generated manifest must pass.
MUTATED_REQUIREMENTS = set(MANIFEST_MUTATORS)
MANIFEST_RULES = sorted({r.id for r in all_rules() if MUTATED_REQUIREMENTS & set(r.requirements)})


def _write_version(manifest, indices) -> Path:
    """A dataset directory holding one manifest (and its index section) under
    ``_versions/``; data files are absent."""
    root = Path(tempfile.mkdtemp(prefix="strategies-"))
    path = root / manifest_path(manifest.version, NamingScheme.V2)
    path.parent.mkdir(parents=True)
    path.write_bytes(encode_manifest_file(copy.deepcopy(manifest), indices or None))
    return root


def _problems(report, rules: list[str]):
    """Error and warning findings of the selected rules (an internal error of
    a rule is reported under another rule id and is never counted as a hit)."""
    return [f for f in report.findings if f.rule in rules and f.severity is not Severity.INFO]


# -- valid by construction ------------------------------------------------------------


@FAST
@given(strategies.logical_types())
def test_logical_types_parse(logical_type):
    """Every generated logical type string is accepted by the parser."""
    assert is_valid_logical_type(logical_type)


@FAST
@given(strategies.schemas())
def test_schemas_are_well_formed(schema):
    """Generated schemas have unique ids, parents that precede their
    children, and known logical types."""
    ids = schema.field_ids()
    assert len(ids) == len(set(ids))
    seen = set()
    for f in schema.fields:
        assert f.parent_id == -1 or f.parent_id in seen
        assert is_valid_logical_type(f.logical_type)
        seen.add(f.id)


@SLOW
@given(strategies.indexed_manifests())
def test_manifests_pass_the_manifest_rules(case):
    """A generated manifest with its indices, written as a dataset version,
    draws no error or warning from any rule citing a requirement the
    mutators break (fragment ids, max id, schema ids/parents/types, data file
    field ids, feature flags, row ids, deletion metadata, indices)."""
    manifest, indices = case
    report = validate(_write_version(manifest, indices), rules=MANIFEST_RULES)
    assert _problems(report, MANIFEST_RULES) == []


@FAST
@given(strategies.manifests())
def test_manifest_invariants(manifest):
    """The guarantees manifests() states, checked directly; the writer is
    this project at its own version."""
    assert manifest.writer_version == WriterVersion(WRITER_LIBRARY, conformance.__version__)
    ids = [f.id for f in manifest.fragments]
    assert len(ids) == len(set(ids))
    assert all(i <= manifest.max_fragment_id for i in ids)
    schema_ids = set(manifest.schema.field_ids())
    has_deletions = any(f.deletion_file for f in manifest.fragments)
    assert bool(manifest.reader_feature_flags & 1) == has_deletions
    for f in manifest.fragments:
        assert all(i in schema_ids for d in f.files for i in d.fields)
        if f.deletion_file:
            assert 0 < f.deletion_file.num_deleted_rows < f.physical_rows
            assert f.deletion_file.read_version < manifest.version
    if manifest.reader_feature_flags & ff.STABLE_ROW_IDS:
        row_ids = [i for f in manifest.fragments for i in decode_row_id_sequence(f.row_id_sequence)]
        assert len(row_ids) == len(set(row_ids))
        assert all(i < manifest.next_row_id for i in row_ids)


def _serious(root) -> list[str]:
    return [
        f"v{f.version} {f.rule}: {f.message}"
        for f in validate(root, all_versions=True).findings
        if f.severity is not Severity.INFO
    ]


@SLOW
@given(strategies.dataset_recipes())
def test_generated_datasets_draw_no_error_or_warning(recipe):
    """Validator soundness through every rule, on real files: a dataset the
    reference writer builds from a drawn recipe (nested types and nulls,
    stable row ids or not, both naming schemes, every kind of step) draws no
    error and no warning in any version, and has one version per commit."""
    with tempfile.TemporaryDirectory(prefix="recipe-") as directory:
        root = Path(directory) / "ds"
        latest = recipe.build(root)
        assert reference.versions(root) == list(range(1, latest + 1))
        assert _serious(root) == []


_STEP_TABLE = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", None, "c"]})
#: One small step of each kind a recipe draws.
_ONE_STEP_OF_EACH_KIND: dict[writes.WriteKind, writes.WriteOp] = {
    writes.WriteKind.APPEND: writes.Append(_STEP_TABLE, max_rows_per_file=1),
    writes.WriteKind.OVERWRITE: writes.Overwrite(_STEP_TABLE, max_rows_per_file=1),
    writes.WriteKind.DELETE: writes.Delete(writes.IsIn("id", (1, 3))),
    writes.WriteKind.ADD_COLUMNS: writes.AddColumns((writes.NewColumn("added_0", "id"),)),
    writes.WriteKind.DROP_COLUMNS: writes.DropColumns(("name",)),
    writes.WriteKind.COMPACT: writes.Compact(target_rows_per_fragment=3, materialize_deletions=True),
    writes.WriteKind.RESTORE: writes.Restore(1),
    writes.WriteKind.TAG: writes.Tag("tag-0", version=1),
    writes.WriteKind.CONFIG: writes.Config((("key.1", "2"),)),
}


@pytest.mark.parametrize("kind", strategies.STEP_KINDS, ids=lambda kind: kind.value)
def test_every_step_kind_applies(kind, tmp_path):
    """Each kind of step commits on a small dataset (a compaction of three
    one-row fragments included) and leaves it valid."""
    step = _ONE_STEP_OF_EACH_KIND[kind]
    recipe = strategies.DatasetRecipe(_STEP_TABLE, stable_row_ids=True, naming="v2", max_rows_per_file=1, steps=[step])
    latest = recipe.build(tmp_path / "ds")
    if kind is writes.WriteKind.TAG:
        assert [(t["name"], t["version"]) for t in reference.describe(tmp_path / "ds")["tags"]] == [("tag-0", 1)]
    else:
        assert latest >= 2, f"the {kind.value} step committed nothing"
    assert _serious(tmp_path / "ds") == []


def test_a_recipe_refuses_a_step_that_is_not_a_write_operation(tmp_path):
    """Steps are write-vocabulary operations; a stray value (a kind's name
    included) is a TypeError naming it, not a silent no-op, and nothing is
    written."""
    table = pa.table({"id": pa.array([1], pa.int64())})
    recipe = strategies.DatasetRecipe(table, stable_row_ids=False, naming="v2", max_rows_per_file=1, steps=["append"])
    with pytest.raises(TypeError, match="'append'"):
        recipe.build(tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


@settings(max_examples=examples(1 / 10), **_TOLERANT)
@given(strategies.dataset_recipes(max_steps=4))
def test_pylance_reads_generated_datasets_as_the_reference_does(recipe):
    """pylance 14 sees every version of a generated dataset as the reference
    reader does: same canonical description, same rows and row ids."""
    pytest.importorskip("lance")
    from tests.writer_checks import assert_pylance_agrees

    with tempfile.TemporaryDirectory(prefix="recipe-") as directory:
        recipe.build(Path(directory) / "ds")
        assert_pylance_agrees(str(Path(directory) / "ds"))


@FAST
@given(strategies.commit_schedules())
def test_commit_schedules_read_one_of_the_last_base_versions(schedule):
    """Each writer read one of the base's last three versions (the base has
    ``1 + len(base_steps)``), base steps are of the base kinds, and the order
    is a permutation of the writers."""
    latest = 1 + len(schedule.base_steps)
    assert sorted(schedule.order) == list(range(len(schedule.writers)))
    assert len(schedule.writers) >= 2
    assert all(step.kind in BASE_KINDS for step in schedule.base_steps)
    for writer in schedule.writers:
        assert max(1, latest - 2) <= writer.read_version <= latest
        assert writer.operation.read_version == writer.read_version
        assert writer.operation.kind in strategies.SCHEDULED_KINDS


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_transactions_cover_every_operation(operation):
    """transactions() can produce every operation of transaction.proto: the
    operations it knows are the proto's, and restricted to one, it yields
    that one (a check by construction, not by sampling enough draws)."""
    oneof = transaction_pb2.Transaction.DESCRIPTOR.oneofs_by_name["operation"]
    assert set(OPERATIONS) == {f.name for f in oneof.fields}

    @settings(max_examples=5, deadline=None, database=None)
    @given(strategies.transactions([operation]))
    def check(txn):
        assert type(txn.operation).NAME == operation

    check()


def test_transactions_refuse_an_unknown_operation():
    """A caller's mistake, so Hypothesis's own error type (it was ValueError
    before issue 11)."""
    with pytest.raises(InvalidArgument, match="no_such_operation"):
        strategies.transactions(["no_such_operation"])


# -- round trips ---------------------------------------------------------------------


@SLOW
@given(strategies.indexed_manifests())
def test_manifest_file_round_trip(case):
    """encode_manifest_file then decode_manifest_file gives the manifest and
    its indices back."""
    manifest, indices = case
    manifest = copy.deepcopy(manifest)
    decoded = decode_manifest_file(encode_manifest_file(manifest, indices), "m")
    assert decoded.manifest == manifest
    assert decoded.indices == indices


@FAST
@given(strategies.transactions())
def test_transaction_file_round_trip(tmp_path_factory, txn):
    """A generated transaction written as its file reads back equal."""
    storage = LocalStorage(tmp_path_factory.mktemp("txn"))
    name = write_transaction_file(storage, txn)
    assert read_transaction_file(storage, name) == txn


@FAST
@given(strategies.row_id_sequences())
def test_row_id_sequence_round_trip(values):
    """decode(encode(ids)) == ids."""
    assert decode_row_id_sequence(encode_row_id_sequence(values)) == values


@FAST
@given(st.integers(1, 500).flatmap(strategies.deletion_vectors))
def test_deletion_vectors_round_trip_both_kinds(offsets):
    """Both deletion file kinds give the offsets back."""
    assert decode_arrow_deletions(encode_arrow_deletions(offsets), "a") == offsets
    assert decode_bitmap_deletions(encode_bitmap_deletions(offsets), "b") == offsets


@FAST
@given(strategies.arrow_schemas())
def test_schema_arrow_round_trip(arrow_schema):
    """Arrow -> Lance -> Arrow is the identity."""
    assert schema_to_arrow(schema_from_arrow(arrow_schema)).equals(arrow_schema, check_metadata=True)


@SLOW
@given(strategies.arrow_tables())
def test_v2_file_round_trip(tmp_path_factory, table):
    """A generated table written as a v2.0 file reads back equal (nulls and
    nesting included)."""
    storage = LocalStorage(tmp_path_factory.mktemp("v2"))
    write_file(storage, "t.lance", table, schema_from_arrow(table.schema).fields)
    back = LanceFileReader(storage, "t.lance").read(arrow_schema=table.schema)
    assert back.combine_chunks().equals(table.combine_chunks())


@SLOW
@given(st.data())
def test_arrow_tables_follow_a_given_schema(data):
    """arrow_tables(schema) yields tables of exactly that schema."""
    schema = pa.schema([pa.field("a", pa.int32()), pa.field("b", pa.list_(pa.string()), nullable=False)])
    table = data.draw(strategies.arrow_tables(schema))
    assert table.schema == schema
    assert table.column("b").null_count == 0


# -- mutations ------------------------------------------------------------------------


def test_manifest_mutators_name_catalog_requirements_with_rules():
    """Every manifest mutator breaks a catalog requirement that some rule cites."""
    catalog = load_requirements()
    cited = {req for r in all_rules() for req in r.requirements}
    assert set(MANIFEST_MUTATORS) <= set(catalog)
    assert set(MANIFEST_MUTATORS) <= cited


@pytest.mark.parametrize("requirement_id", sorted(MANIFEST_MUTATORS))
def test_manifest_mutation_breaks_its_requirement(requirement_id):
    """For each mutator: the valid manifest draws no error or warning from
    the rules citing the requirement; the mutated one draws at least one that
    cites it."""
    rules = [r.id for r in all_rules() if requirement_id in r.requirements]

    @settings(max_examples=4, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategies.manifest_mutations([requirement_id]))
    def check(mutation):
        assert mutation.requirement_id == requirement_id
        valid = validate(_write_version(mutation.valid, mutation.valid_indices), rules=rules)
        assert _problems(valid, rules) == []
        broken = validate(_write_version(mutation.mutated, mutation.mutated_indices), rules=rules)
        assert any(requirement_id in f.requirements for f in _problems(broken, rules)), broken.findings

    check()


def _mutator_applies(needs, manifest, indices) -> bool:
    """Whether a generated dataset's latest manifest has what a manifest
    mutator needs (its :class:`~conformance.mutations.ManifestNeeds`)."""
    stable = bool(manifest.reader_feature_flags & ff.STABLE_ROW_IDS)
    return (
        len(manifest.fragments) >= needs.min_fragments
        and len(manifest.schema.fields) >= needs.min_fields
        and len(indices) >= needs.min_indices
        and needs.stable_row_ids in (None, stable)
        and (not needs.deletions or any(f.deletion_file for f in manifest.fragments))
    )


@pytest.mark.parametrize(
    "requirement", sorted(r for r, mutator in MANIFEST_MUTATORS.items() if mutator.needs.deletions)
)
def test_deletion_manifest_mutators_are_reported_on_real_files(tmp_path, requirement):
    """The deletion mutators, on a dataset on disk whose deletion file marks a
    row: the break is reported under the mutator's own requirement (the
    generated-dataset property below reaches this case only by chance)."""
    import pyarrow.compute as pc

    from conformance.mutations.edit import edit_manifest
    from reference_impl.dataset import Dataset

    root = tmp_path / "ds"
    Dataset.create(root, pa.table({"id": [1, 2, 3]})).delete(pc.field("id") == 2)
    mutator = MANIFEST_MUTATORS[requirement]
    edit_manifest(root, lambda manifest_file: mutator.apply(manifest_file.manifest, manifest_file.indices))
    findings = validate(root).findings
    reported = [f for f in findings if requirement in f.requirements and f.severity is not Severity.INFO]
    assert reported, [f"{f.rule}: {f.message}" for f in findings]


@SLOW
@given(recipe=strategies.dataset_recipes(), data=st.data())
def test_manifest_mutations_of_generated_datasets_are_reported(recipe, data):
    """Completeness on real files: break one requirement in the latest
    manifest of a generated dataset with a manifest mutator that applies to
    it, and the validator (every rule) reports an error or warning citing
    that requirement."""
    from hypothesis import assume

    from conformance.mutations.edit import edit_manifest
    from reference_impl.dataset import Dataset

    with tempfile.TemporaryDirectory(prefix="recipe-") as directory:
        root = Path(directory) / "ds"
        recipe.build(root)
        latest = Dataset.open(root)
        applicable = sorted(
            requirement
            for requirement, mutator in MANIFEST_MUTATORS.items()
            if _mutator_applies(mutator.needs, latest.manifest, latest.indices)
        )
        assume(applicable)
        requirement = data.draw(st.sampled_from(applicable), label="requirement")
        mutator = MANIFEST_MUTATORS[requirement]
        edit_manifest(root, lambda manifest_file: mutator.apply(manifest_file.manifest, manifest_file.indices))
        findings = validate(root).findings
    reported = [f for f in findings if requirement in f.requirements and f.severity is not Severity.INFO]
    assert reported, [f"{f.rule}: {f.message}" for f in findings]


# -- the public surface (issue 11) ----------------------------------------------------

#: The public callables that return a strategy (the rest are types, constants
#: and :func:`strategies.mutated_requirements`).
_STRATEGY_FUNCTIONS = sorted(
    name
    for name in strategies.__all__
    if inspect.isfunction(getattr(strategies, name)) and name != "mutated_requirements"
)


def test_all_lists_exactly_the_public_names():
    """``__all__`` is the package's public namespace: every public name it
    binds is listed once, and every listed name exists."""
    # Names starting with "@" are the helpers pytest's assertion rewriting binds
    # when the package is installed as a plugin's distribution; they are not ours.
    public = {name for name in vars(strategies) if not name.startswith(("_", "@"))}
    assert len(strategies.__all__) == len(set(strategies.__all__))
    assert set(strategies.__all__) == public


@pytest.mark.parametrize("name", sorted(strategies.__all__))
def test_every_public_name_is_documented(name):
    """Each exported name is named in the package docstring; each function
    and class has its own docstring; each strategy's says what it shrinks
    towards."""
    assert re.search(rf"`{re.escape(name)}`", strategies.__doc__), f"{name} is not in the package docstring"
    obj = getattr(strategies, name)
    if inspect.isfunction(obj) or inspect.isclass(obj):
        assert obj.__doc__ and obj.__doc__.strip(), f"{name} has no docstring"
    if name in _STRATEGY_FUNCTIONS:
        assert "Shrinks towards" in obj.__doc__ or "Shrinks as" in obj.__doc__, f"{name} does not say how it shrinks"


def test_size_arguments_are_keyword_only_with_one_default_each():
    """Every ``min_*`` / ``max_*`` / ``max_leaves`` argument of a public
    strategy is keyword-only, and an argument name has the same default
    wherever it appears."""
    defaults: dict[str, set] = {}
    for name in _STRATEGY_FUNCTIONS:
        for parameter in inspect.signature(getattr(strategies, name)).parameters.values():
            if parameter.name.startswith(("min_", "max_")):
                assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, f"{name}({parameter.name}) is positional"
                defaults.setdefault(parameter.name, set()).add(parameter.default)
    assert {"min_rows", "max_rows", "min_fragments", "min_fields", "max_fields", "min_writers", "max_steps"} <= set(
        defaults
    )
    assert {name: values for name, values in defaults.items() if len(values) > 1} == {}


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: strategies.arrow_tables(max_rows=-1), "max_rows=-1"),
        (lambda: strategies.manifests(min_fragments=-2), "min_fragments=-2"),
        (lambda: strategies.deletion_vectors(-1), "physical_rows=-1"),
        (lambda: strategies.commit_schedules(min_writers=0), "min_writers=0"),
        (lambda: strategies.arrow_fields(max_leaves=0), "max_leaves=0"),
        (lambda: strategies.schemas(min_fields=0), "min_fields=0"),
    ],
    ids=["rows", "fragments", "physical-rows", "writers", "leaves", "fields"],
)
def test_a_size_below_its_floor_is_an_invalid_argument(build, message):
    """Negative sizes (and empty schemas, schedules, leaf sets) are refused
    when the strategy is built."""
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        build()


@pytest.mark.parametrize(
    "build",
    [
        lambda: strategies.arrow_tables(min_rows=3, max_rows=2),
        lambda: strategies.arrow_schemas(min_fields=3, max_fields=2),
        lambda: strategies.indexed_manifests(min_indices=2, max_indices=1),
        lambda: strategies.manifests(min_fragments=5, max_fragments=4),
        lambda: strategies.commit_schedules(min_writers=3, max_writers=2),
        lambda: strategies.dataset_recipes(min_steps=2, max_steps=1),
        lambda: strategies.deletion_vectors(min_size=3, max_size=2),
    ],
    ids=["rows", "fields", "indices", "fragments", "writers", "steps", "deletions"],
)
def test_a_minimum_above_its_maximum_is_an_invalid_argument(build):
    with pytest.raises(InvalidArgument, match="is above"):
        build()


@settings(max_examples=5, deadline=None, database=None)
@given(strategies.manifests(min_fragments=6))
def test_only_a_raised_minimum_is_valid(manifest):
    """``max_*=None`` follows a minimum above the default maximum."""
    assert len(manifest.fragments) >= 6


@pytest.mark.parametrize(
    "build",
    [
        lambda: strategies.arrow_tables(max_rows=2.5),
        lambda: strategies.arrow_tables(max_rows=True),
        lambda: strategies.arrow_tables("c0: int32"),
        lambda: strategies.arrow_values("int32"),
        lambda: strategies.manifests(stable_row_ids="yes"),
        lambda: strategies.indices(None, [0], 2),
    ],
    ids=["float-size", "bool-size", "schema-as-text", "type-as-text", "flag-as-text", "no-schema"],
)
def test_an_argument_of_the_wrong_type_is_an_invalid_argument(build):
    with pytest.raises(InvalidArgument, match="must be"):
        build()


def test_more_deletions_than_rows_is_an_invalid_argument():
    with pytest.raises(InvalidArgument, match="physical_rows=3"):
        strategies.deletion_vectors(3, min_size=5)


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: strategies.transactions(["append", "no_such_operation"]), "no_such_operation"),
        (lambda: strategies.mutations(["no-such.requirement"]), "no-such.requirement"),
        (lambda: strategies.manifest_mutations(["no-such.requirement"]), "no-such.requirement"),
    ],
    ids=["operation", "mutated-requirement", "manifest-mutated-requirement"],
)
def test_an_unknown_name_is_an_invalid_argument(build, name):
    with pytest.raises(InvalidArgument, match=re.escape(name)):
        build()


@pytest.mark.parametrize(
    "build",
    [lambda: strategies.transactions([]), lambda: strategies.mutations([]), lambda: strategies.manifest_mutations([])],
    ids=["operations", "mutations", "manifest-mutations"],
)
def test_an_empty_selection_is_an_invalid_argument(build):
    with pytest.raises(InvalidArgument, match="empty selection"):
        build()


def test_one_name_instead_of_a_selection_is_an_invalid_argument():
    """``transactions("append")`` would otherwise be read as the letters
    a, p, p, e, n, d."""
    with pytest.raises(InvalidArgument, match="not one string"):
        strategies.transactions("append")


def _simplest(strategy):
    """What Hypothesis shrinks ``strategy`` to when every example passes."""
    return find(strategy, lambda _: True, settings=settings(database=None, derandomize=True))


_NESTED_LOGICAL_TYPES = {"struct", "list", "large_list", "list.struct", "large_list.struct", "map"}

#: (strategy, the claim its docstring makes about what it shrinks towards).
_SHRINK_CLAIMS = {
    "logical_types": (lambda: strategies.logical_types(), lambda t: t not in _NESTED_LOGICAL_TYPES),
    "arrow_fields": (
        lambda: strategies.arrow_fields(),
        lambda f: f.type in (pa.null(), pa.bool_()) and f.metadata is None,
    ),
    "arrow_data_types": (lambda: strategies.arrow_data_types(), lambda t: t == pa.bool_()),
    "arrow_values": (
        lambda: st.tuples(strategies.arrow_values(pa.int32()), strategies.arrow_values(pa.string(), nullable=False)),
        lambda values: values == (None, ""),
    ),
    "row_id_sequences": (lambda: strategies.row_id_sequences(), lambda ids: ids == []),
    "sorted_row_ids": (lambda: strategies.sorted_row_ids(), lambda ids: ids == []),
    "deletion_vectors": (lambda: strategies.deletion_vectors(10, min_size=2), lambda offsets: offsets == [0, 1]),
    "fragments": (
        lambda: strategies.fragments(fragment_id=7),
        lambda f: (f.id, f.deletion_file) == (7, None),
    ),
    "indices": (
        lambda: strategies.indices(
            schema_from_arrow(pa.schema([("a", pa.int8()), ("b", pa.utf8())])), [1, 2], 3, min_indices=2
        ),
        lambda found: (
            [(i.name, i.dataset_version, i.fragment_bitmap) for i in found] == [("idx0", 1, None), ("idx1", 1, None)]
        ),
    ),
    "transactions": (
        lambda: strategies.transactions(),
        lambda t: t.operation == Append([]) and t.read_version == 1,
    ),
    "mutations": (
        lambda: strategies.mutations(),
        lambda m: m.requirement_id == min(strategies.mutated_requirements()),
    ),
}
#: Claims on larger objects, with sizes pinned where the claim is not about
#: them (shrinking a whole recipe or schedule takes seconds).
_SHRINK_CLAIMS |= {
    "arrow_tables": (
        lambda: strategies.arrow_tables(min_rows=2, max_rows=2),
        lambda t: t.num_rows == 2 and t.schema == pa.schema([pa.field("c0", pa.bool_())]),
    ),
    "manifests": (
        lambda: strategies.manifests(min_fragments=2, max_fragments=2, max_fields=1),
        lambda m: [f.deletion_file for f in m.fragments] == [None, None] and m.reader_feature_flags == 0,
    ),
    "commit_schedules": (
        lambda: strategies.commit_schedules(max_writers=2),
        lambda s: (
            all(w.operation.kind is writes.WriteKind.APPEND and w.read_version == 1 for w in s.writers)
            and (s.base_steps, s.first_rows) == ([], 1)
        ),
    ),
    "dataset_recipes": (
        lambda: strategies.dataset_recipes(min_steps=1, max_steps=1, max_rows=1),
        lambda r: (
            [step.kind for step in r.steps] == [writes.WriteKind.APPEND]
            and r.first.num_rows == 0
            and (r.naming, r.stable_row_ids, r.max_rows_per_file) == ("v2", False, 1)
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(_SHRINK_CLAIMS))
def test_strategies_shrink_where_their_docstrings_say(name):
    """What a strategy shrinks to when nothing fails has the shape its
    docstring promises (the direction a counterexample will move in).
    Derandomized, and only structural claims are checked: where exactly the
    shrinker stops varies between runs and Hypothesis releases."""
    build, claim = _SHRINK_CLAIMS[name]
    simplest = _simplest(build())
    assert claim(simplest), simplest


def test_the_strategies_the_docs_name_exist():
    """docs/property-tests.md names public strategies that build with no
    arguments (or the ones it shows), as it promises."""
    section = (Path(__file__).resolve().parents[3] / "docs" / "property-tests.md").read_text(encoding="utf-8")
    calls = set(re.findall(r"`(?:strategies\.)?([a-z_]+)\(([^`)]*)\)`", section))
    named = {name for name, _ in calls if name in strategies.__all__}
    assert {"arrow_tables", "manifests", "mutations", "dataset_recipes", "manifest_mutations"} <= named
    for name, arguments in sorted(calls):
        if name in strategies.__all__:
            call = ast.parse(f"f({arguments})", mode="eval").body
            keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            built = getattr(strategies, name)(*[ast.literal_eval(a) for a in call.args], **keywords)
            assert isinstance(built, st.SearchStrategy), name
