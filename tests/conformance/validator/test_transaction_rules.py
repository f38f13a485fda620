"""The transaction rules' warnings and infos, and their robustness.

Every rule is covered by conformance/mutations/topics/transactions.py; these
tests check what the mutation test cannot (what the messages name, the
latest version alone) and that no operation, however empty, makes a rule
fail.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.mutations.edit import copy_dataset, edit_manifest, edit_transaction
from conformance.mutations.edit import versions_of as _versions_of
from conformance.mutations.topics.transactions import (
    record_no_operation_for_the_config_update,
    rewrite_a_fragment_that_never_existed,
)
from conformance.validator import Severity, validate
from conformance.validator.engine import INTERNAL_ERROR_RULE
from reference_impl.transactions import OPERATION_CLASSES

lance = pytest.importorskip("lance")


def _transaction_findings(root, **options) -> dict[str, list]:
    report = validate(root, rules=["transaction"], **options)
    found: dict[str, list] = {}
    for finding in report.findings:
        found.setdefault(finding.rule, []).append(finding)
    return found


def test_an_unknown_operation_says_there_is_none(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["plain"], tmp_path / "ds")
    record_no_operation_for_the_config_update(root)
    found = _transaction_findings(root, all_versions=True)
    assert set(found) == {"transaction/unknown-operation"}, found
    (finding,) = found["transaction/unknown-operation"]
    assert finding.severity is Severity.WARNING and "no operation" in finding.message


def test_a_rewrite_of_a_fragment_that_never_existed_names_it(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["evolution"], tmp_path / "ds")
    rewrite_a_fragment_that_never_existed(root)
    found = _transaction_findings(root, all_versions=True)
    assert set(found) == {"transaction/rewrite-old-fragments-exist"}, found
    assert "99" in found["transaction/rewrite-old-fragments-exist"][0].message


def test_an_upsert_changing_the_row_count_is_an_info(tmp_path):
    """pylance's merge_insert commits inserted and deleted rows as Updates."""
    path = tmp_path / "upsert"
    rows = pa.table({"id": pa.array(range(30), pa.int64()), "value": pa.array([float(i) for i in range(30)])})
    lance.write_dataset(rows, path, max_rows_per_file=10)
    incoming = pa.table({"id": pa.array(range(25, 35), pa.int64()), "value": pa.array([-1.0] * 10)})
    lance.dataset(path).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(incoming)
    found = _transaction_findings(path, all_versions=True)
    assert set(found) == {"transaction/update-row-count"}, found
    (finding,) = found["transaction/update-row-count"]
    assert finding.severity is Severity.INFO and "from 30" in finding.message and "to 35" in finding.message


def test_the_latest_version_alone_is_compared_with_the_one_before(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["evolution"], tmp_path / "ds")
    assert not _transaction_findings(root)

    def edit(transaction):
        transaction.operation.new_fragments[0].physical_rows += 1

    edit_transaction(root, max(_versions_of(root, object)), edit)
    found = _transaction_findings(root)
    assert set(found) == {"transaction/update"}, found


@pytest.mark.parametrize("operation", OPERATION_CLASSES, ids=[c.NAME for c in OPERATION_CLASSES])
def test_an_empty_operation_never_breaks_a_rule(base_datasets, tmp_path, operation):
    """Every operation with default (mostly empty) content, in place of the
    latest transaction of every base dataset: findings, never a crash."""
    for name, base in base_datasets.items():
        root = copy_dataset(base, tmp_path / name)
        latest = max(_versions_of(root, object))

        def edit(transaction):
            transaction.operation = operation()

        edit_transaction(root, latest, edit)
        report = validate(root, all_versions=True, rules=["transaction"])
        crashed = [f.message for f in report.findings if f.rule == INTERNAL_ERROR_RULE]
        assert not crashed, (name, crashed)


# -- What pylance 14 writes on top of other writers' versions (conflict matrix
# cells overwrite/update_config, merge/update_config and the REWRITE_COLUMNS
# ones): the committed table is right, the rules accept it, and each rule
# still fires on the change it is there to catch.


def _plain_table(tmp_path) -> tuple[str, int]:
    from conformance.conflict_matrix.cells import Template, build_template

    uri = tmp_path / "table"
    return str(uri), build_template(Template.PLAIN, uri)


def _run(action, implementation: str, uri: str, tmp_path) -> None:
    """Do a conflict matrix action on the latest version, alone (no race)."""
    from conformance.conflict_matrix.actions import Context
    from conformance.conflict_matrix.model import Implementation
    from reference_impl.dataset import Dataset

    which = Implementation(implementation)
    version = Dataset.open(uri).version
    handle = lance.dataset(uri) if which is Implementation.PYLANCE else Dataset.open(uri)
    runner = action.runner(which)
    assert runner is not None
    runner(handle, Context(uri, version, tmp_path, implementation))


def _errors(uri) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in validate(uri, all_versions=True).findings:
        if finding.severity is Severity.ERROR:
            found.setdefault(finding.rule, []).append(finding.message)
    return found


def test_pylance_leaving_out_its_own_tombstoned_file_is_no_update_error(tmp_path):
    """pylance 14 records the old file of a REWRITE_COLUMNS Update with its
    field tombstoned (-2) and leaves it out of the manifest: a file that is
    all tombstone holds nothing a reader reads, so nothing is lost."""
    from conformance.conflict_matrix.actions import update_columns

    uri, _ = _plain_table(tmp_path)
    _run(update_columns(0, "value"), "pylance", uri, tmp_path)
    assert not _errors(uri)
    assert lance.dataset(uri).to_table().column("value").to_pylist()[:3] == [-1, -2, -3]


def test_pylance_leaving_out_another_writers_tombstoned_file_touches_nothing(tmp_path):
    """After the reference's REWRITE_COLUMNS Update (which keeps the
    tombstoned file), pylance 14 leaves the file out of every manifest it
    writes, for operations that touch no fragment too: no rule takes that for
    a change of the fragment."""
    from conformance.conflict_matrix.actions import reserve_fragments, rewrite, update_columns, update_config

    uri, _ = _plain_table(tmp_path)
    _run(update_columns(0, "value"), "reference", uri, tmp_path)
    _run(update_config("k1"), "pylance", uri, tmp_path)
    _run(rewrite(), "pylance", uri, tmp_path)  # commits ReserveFragments, then the Rewrite
    _run(reserve_fragments(), "reference", uri, tmp_path)
    assert not _errors(uri)


def test_a_recorded_file_with_a_live_field_missing_from_the_version_is_still_an_error(tmp_path):
    from conformance.conflict_matrix.actions import update_columns
    from reference_impl.transactions import Update

    uri, _ = _plain_table(tmp_path)
    _run(update_columns(0, "value"), "pylance", uri, tmp_path)

    def revive_the_tombstoned_file(transaction):
        (fragment,) = transaction.operation.updated_fragments
        tombstoned = next(f for f in fragment.files if f.fields == [-2])
        tombstoned.fields = [1]

    edit_transaction(tmp_path / "table", _versions_of(tmp_path / "table", Update)[-1], revive_the_tombstoned_file)
    assert set(_errors(uri)) == {"transaction/update"}


def test_a_live_data_file_dropped_by_an_operation_that_touches_no_fragment_is_still_an_error(tmp_path):
    from conformance.conflict_matrix.actions import update_columns, update_config

    uri, _ = _plain_table(tmp_path)
    _run(update_columns(0, "value"), "reference", uri, tmp_path)
    _run(update_config("k1"), "pylance", uri, tmp_path)

    def drop_a_live_file(manifest_file):
        fragment = manifest_file.manifest.fragments[1]
        fragment.files = [f for f in fragment.files if f.fields != [1]]

    edit_manifest(tmp_path / "table", drop_a_live_file)
    found = _errors(uri)
    assert "transaction/update-config" in found and "changed" in found["transaction/update-config"][0]


@pytest.mark.parametrize("first", ["overwrite", "merge"])
def test_pylance_marking_every_field_parent_after_the_reference_is_no_update_config_error(tmp_path, first):
    """The reference records the schema format page's roles (LEAF); pylance
    14 writes every field as PARENT, also in an UpdateConfig on top of a
    reference version. The role follows from the logical type: nothing
    changed."""
    from conformance.conflict_matrix import actions

    uri, _ = _plain_table(tmp_path)
    _run(actions.overwrite() if first == "overwrite" else actions.merge("doubled"), "reference", uri, tmp_path)
    _run(actions.update_config("k1"), "pylance", uri, tmp_path)
    assert not _errors(uri)


def test_a_primary_key_declared_by_field_metadata_is_no_update_config_error(tmp_path):
    """pylance (and LanceDB's set_unenforced_primary_key) declare a key with an
    UpdateConfig of field metadata; the proto's key flags follow the metadata
    (found by the feature zoo, conformance/zoo)."""
    path = tmp_path / "keyed"
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("value", pa.float64())])
    table = pa.table({"id": pa.array(range(5), pa.int64()), "value": pa.array([0.5] * 5)}).cast(schema)
    lance.write_dataset(table, path).update_field_metadata(
        {"id": {"lance-schema:unenforced-primary-key:position": "1"}}
    )
    assert lance.dataset(path).schema.field("id").metadata, "pylance recorded no key metadata"
    assert not _errors(str(path))


def test_an_update_config_that_changes_a_logical_type_is_still_an_error(tmp_path):
    from conformance.conflict_matrix.actions import overwrite, update_config

    uri, _ = _plain_table(tmp_path)
    _run(overwrite(), "reference", uri, tmp_path)
    _run(update_config("k1"), "pylance", uri, tmp_path)

    def narrow_a_type(manifest_file):
        manifest_file.manifest.schema.fields[2].logical_type = "int32"

    edit_manifest(tmp_path / "table", narrow_a_type)
    found = _errors(uri)
    assert "beyond their metadata" in " ".join(found.get("transaction/update-config", [])), found
