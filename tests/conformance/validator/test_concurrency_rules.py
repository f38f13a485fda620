"""The rules on concurrent commits in history (history/lost-update,
history/rebased-over-unrecorded), beyond their mutations: what pylance 14
commits when writers race is clean, a planted lost update is reported naming
both versions and operations, and a version that records no transaction is a
warning, never an error."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.mutations.edit import copy_dataset, transactions
from conformance.mutations.topics.concurrency import (
    delete_over_a_restore_it_did_not_see,
    forget_the_reservation_a_compaction_was_committed_over,
)
from conformance.validator import Severity, validate

lance = pytest.importorskip("lance")

RULES = ("history/lost-update", "history/rebased-over-unrecorded")


def _concurrency_findings(root):
    return [f for f in validate(root, all_versions=True).findings if f.rule in RULES]


def _rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def test_writers_pylance_rebases_leave_a_clean_history(tmp_path):
    """Stale pylance writers that may commit (an append, deletes of different
    fragments, a config key nobody else set) all read version 2 and are
    committed on top of each other: nothing to report."""
    path = tmp_path / "ds"
    lance.write_dataset(_rows(0, 40), path, max_rows_per_file=10)
    lance.write_dataset(_rows(40, 10), path, mode="append")
    stale = lance.dataset(path, version=2)
    fragments = lance.fragment.write_fragments(_rows(100, 5), path)
    lance.LanceDataset.commit(path, lance.LanceOperation.Append(fragments), read_version=2)
    for fragment_id, predicate in ((0, "id < 5"), (3, "id >= 30 AND id < 35")):
        updated = stale.get_fragment(fragment_id).delete(predicate)
        operation = lance.LanceOperation.Delete([updated], [], predicate)
        lance.LanceDataset.commit(path, operation, read_version=2)
    lance.dataset(path, version=2).update_config({"owner": "races"})
    latest = lance.dataset(path)
    assert latest.version == 6
    assert latest.count_rows() == 55 - 10
    recorded = transactions(path)
    # The Append and the UpdateConfig keep read version 2; pylance 14 records
    # each Delete it rebased as read at the version it rebased onto (3, 4).
    assert [recorded[v].read_version for v in (3, 4, 5, 6)] == [2, 3, 4, 2]
    assert _concurrency_findings(path) == []


def test_a_lost_update_names_both_versions_and_operations(base_datasets, tmp_path):
    root = copy_dataset(base_datasets["evolution"], tmp_path / "ds")
    delete_over_a_restore_it_did_not_see(root)
    (finding,) = _concurrency_findings(root)
    assert finding.rule == "history/lost-update" and finding.severity is Severity.ERROR
    assert finding.version == 10
    for words in ("version 10 (delete)", "read version 8", "version 9 (restore)", "incompatible"):
        assert words in finding.message, finding.message
    assert "conflict.delete-after-restore-incompatible" in finding.message


def test_a_version_without_transaction_in_between_is_a_warning_only(base_datasets, tmp_path):
    """The evolution base's Rewrite read the version before its
    ReserveFragments, which now records no transaction: a warning (older
    writers did not always record one), and no lost update."""
    root = copy_dataset(base_datasets["evolution"], tmp_path / "ds")
    forget_the_reservation_a_compaction_was_committed_over(root)
    (finding,) = _concurrency_findings(root)
    assert finding.rule == "history/rebased-over-unrecorded"
    assert finding.severity is Severity.WARNING
    assert "version(s) 7" in finding.message


def test_pylance_configuring_over_an_overwrite_is_a_recorded_departure(tmp_path):
    """pylance 14 commits an UpdateConfig of another key over a concurrent
    Overwrite, which the page refuses: in a version pylance wrote, an info
    naming the entry in docs/spec-discrepancies.md, not an error."""
    path = tmp_path / "ds"
    lance.write_dataset(_rows(0, 4), path)
    stale = lance.dataset(path, version=1)
    lance.write_dataset(_rows(10, 4), path, mode="overwrite")
    stale.update_config({"owner": "races"})
    assert transactions(path)[3].read_version == 1, "the config change did not race the overwrite"
    (finding,) = _concurrency_findings(path)
    assert (finding.rule, finding.severity, finding.version) == ("history/lost-update", Severity.INFO, 3)
    assert "UpdateConfig after Overwrite" in finding.message
