"""Recording MemWAL merge progress (upstream mem_wal.md, "MemTable Merger";
transaction.proto ``UpdateMemWalState``).

A merger that has merged a region's flushed MemTables into the base table
records the last generation it merged, per region, in the MemWAL index. The
commit does the recording (:func:`reference_impl.commit.build_manifest`); this
module only builds the operation. The writer merges no MemTable data itself:
the caller says which generations are merged.

pylance 14 reads the same message under other names: the index's merge
progress is its ``compacted_sstables`` (a shard id and a generation, the same
fields on the wire), and ``MergeInsertBuilder.mark_sstables_as_compacted``
records it together with a merge-insert.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..transactions import MergedGeneration, UpdateMemWalState

if TYPE_CHECKING:
    from ..dataset import Dataset


def update_mem_wal_state(dataset: Dataset, merged: Mapping[str, int]) -> Dataset:
    """Commit an ``UpdateMemWalState`` saying that each region (a UUID string)
    has been merged up to the given generation. Regions are recorded in the
    order given."""
    return dataset.commit(
        UpdateMemWalState(
            [MergedGeneration(region_id=region, generation=generation) for region, generation in merged.items()]
        )
    )
