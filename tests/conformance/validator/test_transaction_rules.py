"""The transaction rules' warnings and infos, and their robustness.

Every rule is covered by conformance/mutations/topics/transactions.py; these
tests check what the mutation test cannot (what the messages name, the
latest version alone) and that no operation, however empty, makes a rule
fail.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.mutations.edit import copy_dataset, edit_transaction
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
