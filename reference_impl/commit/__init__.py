"""Committing a version (table format: committing datasets, conflict
resolution; transaction specification).

The package follows the commit steps the specification gives:

* :mod:`.build`: the next manifest as a pure function of (manifest read,
  indices read, transaction, settings), one handler per operation type;
* :mod:`.conflicts`: conflict resolution, the outcome of committing one
  transaction after another (:func:`decide`) and the pure rebase steps;
* :mod:`.loop`: the commit loop: the transaction file, the versions
  committed meanwhile and their transactions, conflicts and rebase, the
  manifest with put-if-not-exists, bounded randomized retries.

Every public name is re-exported here, so ``from reference_impl.commit import
build_manifest`` keeps working whichever module defines it.
"""

from __future__ import annotations

from .build import (
    MEM_WAL_DETAILS_TYPE,
    MEM_WAL_INDEX_NAME,
    WRITER_LIBRARY,
    CommitSettings,
    apply_update_map,
    build_manifest,
    content_feature_flags,
)
from .conflicts import Decision, Outcome, RowChanges, decide
from .loop import (
    STEP_BEFORE_MANIFEST,
    STEP_FILES_WRITTEN,
    STEP_TRANSACTION_WRITTEN,
    commit,
    new_transaction,
)

__all__ = [
    "MEM_WAL_DETAILS_TYPE",
    "MEM_WAL_INDEX_NAME",
    "STEP_BEFORE_MANIFEST",
    "STEP_FILES_WRITTEN",
    "STEP_TRANSACTION_WRITTEN",
    "WRITER_LIBRARY",
    "CommitSettings",
    "Decision",
    "Outcome",
    "RowChanges",
    "apply_update_map",
    "build_manifest",
    "commit",
    "content_feature_flags",
    "decide",
    "new_transaction",
]
