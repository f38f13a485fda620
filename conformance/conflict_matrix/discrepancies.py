"""Cells where the reference and pylance 14 are known to differ.

Each entry names its section in ``docs/spec-discrepancies.md`` ("Conflict
matrix") and which side follows the newest upstream transaction page. The
matrix command copies them into the stored data; the tests accept a
reference/pylance difference only in a cell listed here.
"""

from __future__ import annotations

from .model import Discrepancy

#: The heading of the section in docs/spec-discrepancies.md.
SECTION = "Conflict matrix"

KNOWN: dict[str, Discrepancy] = {
    "overwrite/update_config:any": Discrepancy("UpdateConfig after Overwrite", follows_page="reference"),
    "overwrite/update_config:different-config-key": Discrepancy(
        "UpdateConfig after Overwrite", follows_page="reference"
    ),
    "create_index/create_index:same-index-name": Discrepancy(
        "Two CreateIndex of the same name", follows_page="reference"
    ),
    "create_index/rewrite:stable-row-ids": Discrepancy(
        "Rewrite and CreateIndex under stable row ids", follows_page="reference"
    ),
    "rewrite/create_index:stable-row-ids": Discrepancy(
        "Rewrite and CreateIndex under stable row ids", follows_page="reference"
    ),
    "rewrite/create_index:fragment-reuse-index": Discrepancy(
        "CreateIndex after a Rewrite carrying a fragment reuse index", follows_page="pylance"
    ),
    "update_mem_wal_state/overwrite:any": Discrepancy("Overwrite after UpdateMemWalState", follows_page="reference"),
}
#: pylance 14 does not know operation field 116 and refuses, as incompatible,
#: every operation it commits after the reference's ReserveRowIds but an
#: UpdateBases (measured; the cells' reference/pylance mode).
_AFTER_RESERVE_ROW_IDS = Discrepancy(
    "An operation after a ReserveRowIds, committed by pylance 14", follows_page="reference"
)
KNOWN.update(
    {
        f"reserve_row_ids/{second}:any": _AFTER_RESERVE_ROW_IDS
        for second in (
            "append",
            "delete",
            "overwrite",
            "create_index",
            "rewrite",
            "merge",
            "restore",
            "update",
            "project",
            "update_config",
            "data_replacement",
        )
    }
)
