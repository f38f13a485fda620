"""The stored conflict matrix: its schema, its coverage of the operation
types and sub-cases, and the generated page."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from conformance.conflict_matrix.cells import all_cells
from conformance.conflict_matrix.discrepancies import KNOWN, SECTION
from conformance.conflict_matrix.model import Mode, Operation, Outcome, Subcase, check_document, stored_matrix
from conformance.conflict_matrix.render import to_markdown

ROOT = Path(__file__).resolve().parents[3]


def _stored_document() -> dict:
    text = resources.files("conformance").joinpath("data").joinpath("conflict_matrix.json").read_text(encoding="utf-8")
    return json.loads(text)


def test_the_stored_matrix_fits_its_schema_and_a_broken_one_does_not():
    document = _stored_document()
    check_document(document)
    document["cells"][0]["outcomes"]["pylance/pylance"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        check_document(document)


def test_the_operation_types_are_those_of_the_proto():
    """The matrix's operation types are exactly the ``operation`` oneof of
    protos/transaction.proto."""
    proto = (ROOT / "protos" / "transaction.proto").read_text()
    oneof = proto[proto.index("oneof operation {") :]
    oneof = oneof[: oneof.index("}")]
    names = re.findall(r"^\s*\w+\s+(\w+)\s*=\s*\d+;", oneof, flags=re.M)
    assert names == [op.value for op in Operation]


def test_every_ordered_pair_has_a_cell_and_every_subcase_is_used():
    cells = stored_matrix().cells
    pairs = {(c.first, c.second) for c in cells}
    assert pairs == {(a, b) for a in Operation for b in Operation}
    assert {c.subcase for c in cells} == {s.value for s in Subcase}
    assert [c.id for c in cells] == [spec.id for spec in all_cells()]


def test_the_operations_no_side_can_race_are_listed_as_not_covered():
    names = {n.name for n in stored_matrix().not_covered}
    assert {"data_overlay", "reserve_row_ids", "append_fri_transitions", "composite_operation"} <= names


def test_data_overlay_cells_follow_the_page_and_none_is_raced():
    """Neither side commits a DataOverlay here (flag 64): every cell with it
    keeps the page's verdict and is not_reachable (or not_applicable) in
    every mode, with the reason."""
    cells = [c for c in stored_matrix().cells if Operation.DATA_OVERLAY in (c.first, c.second)]
    assert len(cells) >= 2 * len(Operation)
    for cell in cells:
        assert set(cell.outcomes.values()) <= {Outcome.NOT_REACHABLE, Outcome.NOT_APPLICABLE}, cell.id
        assert cell.page.value != "unspecified" or Operation.UPDATE_MEM_WAL_STATE is cell.second, cell.id
    verdicts = {c.id: c.page.value for c in cells}
    assert verdicts["rewrite/data_overlay:overlapping-fragments"] == "retryable"
    assert verdicts["rewrite/data_overlay:disjoint-fragments"] == "compatible"
    assert verdicts["update/data_overlay:update-rewrite-columns"] == "compatible"
    assert verdicts["restore/data_overlay:any"] == "incompatible"


def test_reserve_row_ids_conflicts_only_with_overwrite_and_restore():
    """ReserveRowIds Compatibility: the reference, committing the
    reservation second, is refused only after an Overwrite or a Restore."""
    for cell in stored_matrix().cells:
        if cell.second is not Operation.RESERVE_ROW_IDS or cell.first in (Operation.CLONE, Operation.DATA_OVERLAY):
            continue
        expected = Outcome.INCOMPATIBLE if cell.first in (Operation.OVERWRITE, Operation.RESTORE) else Outcome.COMMITTED
        assert cell.outcomes[Mode.REFERENCE_REFERENCE] is expected, cell.id


def test_the_stored_matrix_was_measured_with_the_installed_pylance():
    import lance  # pylance, lazily: only this test asks which release is installed

    assert stored_matrix().pylance == lance.__version__


def test_pylance_was_measured_in_every_cell_it_can_run():
    for cell in stored_matrix().cells:
        assert cell.outcomes[Mode.PYLANCE_PYLANCE] is not Outcome.PENDING, cell.id


def test_docs_conflicts_md_is_current():
    """docs/conflicts.md is generated: python -m conformance.conflict_matrix render > docs/conflicts.md"""
    assert (ROOT / "docs" / "conflicts.md").read_text(encoding="utf-8") == to_markdown(stored_matrix())


def test_every_known_discrepancy_has_an_entry_in_the_discrepancy_document():
    document = (ROOT / "docs" / "spec-discrepancies.md").read_text(encoding="utf-8")
    assert f"## {SECTION}" in document
    section = document[document.index(f"## {SECTION}") :]
    for cell_id, discrepancy in KNOWN.items():
        assert discrepancy.entry in section, cell_id
        assert stored_matrix().cell(cell_id).discrepancy == discrepancy


def test_every_cell_where_pylance_departs_from_the_page_is_recorded():
    """Each cell whose pylance/pylance outcome is not the page's is named in
    the "Conflict matrix" section of docs/spec-discrepancies.md."""
    from conformance.conflict_matrix.render import page_differs

    document = (ROOT / "docs" / "spec-discrepancies.md").read_text(encoding="utf-8")
    section = document[document.index(f"## {SECTION}") :]
    departing = [cell.id for cell in stored_matrix().cells if page_differs(cell)]
    assert departing, "pylance 14 departs from the page in some cells"
    assert [cell_id for cell_id in departing if f"`{cell_id}`" not in section] == []


def test_no_cell_fails_its_checks_after_the_race():
    """After every race, in every mode, both readers saw the same rows and the
    validator reported no error on the table (a finding a known writer defect
    explains is a warning, not a failed check); test_live re-runs the races
    and compares their problems with these."""
    failing = [
        f"{cell.id} {mode.value}: {text}" for cell in stored_matrix().cells for mode, text in cell.problems.items()
    ]
    assert failing == []
