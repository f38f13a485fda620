"""``python -m conformance.conflict_matrix measure --cells``: race some cells, keep the rest."""

from __future__ import annotations

import json

import pytest

from conformance.conflict_matrix.__main__ import main
from conformance.conflict_matrix.model import stored_matrix


def test_measuring_one_cell_keeps_every_other_cell_as_stored(tmp_path):
    """Only the cell asked for is raced (a Clone cell: nothing to race, so
    quick); the output still has every cell, the others as stored."""
    out = tmp_path / "matrix.json"
    clone = next(cell for cell in stored_matrix().cells if "clone" in cell.id)
    assert main(["measure", "--cells", clone.id, "--modes", "reference/reference", "--output", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written == stored_matrix().to_json()


def test_an_unknown_cell_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["measure", "--cells", "append/append:no-such-subcase", "--output", "-"])
    assert exit_info.value.code == 2
    assert "unknown cells: append/append:no-such-subcase" in capsys.readouterr().err
