"""Properties of the public Hypothesis strategies (conformance.strategies):
what they generate is valid by construction, survives every codec round trip
of the reference implementation, and each mutation breaks the requirement it
names, as the validator sees it."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conformance import strategies
from conformance.requirements import load_requirements
from conformance.validator import Severity, all_rules, validate
from reference_impl import feature_flags as ff
from reference_impl.deletions import (
    decode_arrow_deletions,
    decode_bitmap_deletions,
    encode_arrow_deletions,
    encode_bitmap_deletions,
)
from reference_impl.file_format import LanceFileReader, write_file
from reference_impl.logical_types import is_valid_logical_type, schema_from_arrow, schema_to_arrow
from reference_impl.manifest_file import decode_manifest_file, encode_manifest_file
from reference_impl.naming import NamingScheme, manifest_path
from reference_impl.row_ids import decode_row_id_sequence, encode_row_id_sequence
from reference_impl.storage import Storage
from reference_impl.transactions import OPERATIONS, read_transaction_file, write_transaction_file
from reference_impl.wire import transaction_pb2
from tests.hypothesis_budget import examples

_TOLERANT = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: Half the profile's examples for properties that stay in memory, a sixth
#: for those that write files or validate (ci: 25 and 8).
FAST = settings(max_examples=examples(1 / 2), **_TOLERANT)
SLOW = settings(max_examples=examples(1 / 6), **_TOLERANT)

#: Every rule citing a requirement some manifest mutator breaks: the
#: manifest-level rules a valid generated manifest must pass.
MUTATED_REQUIREMENTS = set(strategies.MANIFEST_MUTATORS)
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
    """The guarantees manifests() states, checked directly."""
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
    return [f"v{f.version} {f.rule}: {f.message}" for f in validate(root, all_versions=True).findings
            if f.severity is not Severity.INFO]


@SLOW
@given(strategies.dataset_recipes())
def test_generated_datasets_draw_no_error_or_warning(recipe):
    """Validator soundness through every rule, on real files: a dataset the
    reference writer builds from a drawn recipe (nested types and nulls,
    stable row ids or not, both naming schemes, every kind of step) draws no
    error and no warning in any version, and has one version per commit."""
    with tempfile.TemporaryDirectory(prefix="recipe-") as directory:
        dataset = recipe.build(Path(directory) / "ds")
        assert dataset.versions() == list(range(1, dataset.version + 1))
        assert _serious(dataset.uri) == []


@pytest.mark.parametrize("kind", strategies.STEP_KINDS)
def test_every_step_kind_applies(kind, tmp_path):
    """Each kind of step commits on a small dataset (a compaction of three
    one-row fragments included) and leaves it valid."""
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", None, "c"]})
    step = strategies.DatasetStep(kind, table=table if kind in ("append", "overwrite") else None,
                                  picks={"delete": (0, 1, 2, 0), "compact": (3, 1), "config": (1, 2)}.get(kind, (1,)))
    recipe = strategies.DatasetRecipe(table, stable_row_ids=True, naming="v2", max_rows_per_file=1, steps=[step])
    dataset = recipe.build(tmp_path / "ds")
    if kind == "tag":
        assert set(dataset.tags()) == {"tag-0"}
    else:
        assert dataset.version >= 2, f"the {kind} step committed nothing"
    assert _serious(tmp_path / "ds") == []


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
def test_commit_schedules_name_existing_fragments(schedule):
    """Each writer read a version no later than the base; fragments an
    operation names exist in the base; the order is a permutation."""
    ids = {f.id for f in schedule.base.fragments}
    assert sorted(schedule.order) == list(range(len(schedule.writers)))
    assert len(schedule.writers) >= 2
    for read_version, op in schedule.writers:
        assert 1 <= read_version <= schedule.base.version
        named = set(getattr(op, "deleted_fragment_ids", []))
        for group in getattr(op, "groups", []):
            named |= {f.id for f in group.old_fragments}
        assert named <= ids


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
    with pytest.raises(ValueError, match="no_such_operation"):
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
    storage = Storage(tmp_path_factory.mktemp("txn"))
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
    storage = Storage(tmp_path_factory.mktemp("v2"))
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
    """Every MANIFEST_MUTATORS key is a catalog requirement that some rule cites."""
    catalog = load_requirements()
    cited = {req for r in all_rules() for req in r.requirements}
    assert set(strategies.MANIFEST_MUTATORS) <= set(catalog)
    assert set(strategies.MANIFEST_MUTATORS) <= cited


@pytest.mark.parametrize("requirement_id", sorted(strategies.MANIFEST_MUTATORS))
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


def _mutator_applies(needs: dict, manifest, indices) -> bool:
    """Whether a generated dataset's latest manifest has what a manifest
    mutator needs (the :func:`strategies.indexed_manifests` arguments it
    names)."""
    stable = bool(manifest.reader_feature_flags & ff.STABLE_ROW_IDS)
    return (
        len(manifest.fragments) >= needs.get("min_fragments", 0)
        and len(manifest.schema.fields) >= needs.get("min_fields", 0)
        and len(indices) >= needs.get("min_indices", 0)
        and needs.get("stable_row_ids", stable) == stable
        and (not needs.get("deletions") or any(f.deletion_file for f in manifest.fragments))
    )


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
            requirement for requirement, mutator in strategies.MANIFEST_MUTATORS.items()
            if _mutator_applies(mutator.needs, latest.manifest, latest.indices)
        )
        assume(applicable)
        requirement = data.draw(st.sampled_from(applicable), label="requirement")
        mutator = strategies.MANIFEST_MUTATORS[requirement]
        edit_manifest(root, lambda manifest_file: mutator.apply(manifest_file.manifest, manifest_file.indices))
        findings = validate(root).findings
    reported = [f for f in findings if requirement in f.requirements and f.severity is not Severity.INFO]
    assert reported, [f"{f.rule}: {f.message}" for f in findings]
