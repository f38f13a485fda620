"""What the race tests need to judge a rejection as ``decide`` would: the
rows two deleting transactions both delete (tests/conformance/strategies/
test_commit_schedules.py, tests/reference_impl/test_model_based.py)."""

from __future__ import annotations

from reference_impl.commit.conflicts import RowChanges
from reference_impl.dataset import Dataset
from reference_impl.deletions import read_deletion_file
from reference_impl.fragments import Fragment
from reference_impl.transactions import Delete, Operation, Update, read_transaction_file


def deleted_offsets(dataset: Dataset, fragment: Fragment) -> frozenset[int]:
    if fragment.deletion_file is None:
        return frozenset()
    return frozenset(
        read_deletion_file(
            dataset.storage,
            fragment.id,
            fragment.deletion_file,
            base_paths=dataset.manifest.base_paths,
            physical_rows=fragment.physical_rows,
        )
    )


def rows_both_delete(read: Dataset, mine: Operation, theirs: Dataset) -> RowChanges | None:
    """For a Delete or Update against a committed Delete or Update: the rows
    mine deletes that were visible in the version it read, and the rows the
    committed version's deletion files mark, on the fragments both changed
    (the same-rows sub-case: the deletion files on disk tell)."""
    other = read_transaction_file(theirs.storage, theirs.manifest.transaction_file).operation
    if not isinstance(mine, (Delete, Update)) or not isinstance(other, (Delete, Update)):
        return None
    before = {f.id: f for f in read.fragments}
    mine_rows = {
        f.id: deleted_offsets(read, f) - (deleted_offsets(read, before[f.id]) if f.id in before else frozenset())
        for f in mine.updated_fragments
    }
    theirs_rows = {f.id: deleted_offsets(theirs, f) for f in other.updated_fragments if f.id in mine_rows}
    return RowChanges(mine=mine_rows, theirs=theirs_rows)
