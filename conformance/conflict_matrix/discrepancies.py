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
    "update_mem_wal_state/overwrite:any": Discrepancy("Overwrite after UpdateMemWalState", follows_page="reference"),
}
