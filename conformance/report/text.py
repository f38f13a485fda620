"""The ecosystem matrix's grids as text tables, for a terminal and CI logs.

A cell reads ``passed/cases`` and then its failing kinds (``2 fail``,
``1 fixed``, ``3 xfail``), as on the HTML page; a cell with nothing
applicable reads ``n/a``, or ``skipped: needs step X`` when its cases were
skipped for that; ``-`` marks a pair that was not run. The failing
cells follow the table, each with its failing cases.
"""

from __future__ import annotations

from ..ecosystem.model import Cell, Grid, Status

_SHORT = ((Status.FAIL, "fail"), (Status.FIXED, "fixed"), (Status.EXPECTED_FAILURE, "xfail"))


def cell_text(cell: Cell) -> str:
    if all(o.status is Status.NOT_APPLICABLE for o in cell.outcomes):
        return cell.empty_label
    text = f"{cell.count(Status.PASS)}/{len(cell.outcomes)}"
    return text + "".join(f" {cell.count(s)} {short}" for s, short in _SHORT if cell.count(s))


def render_grid(grid: Grid) -> str:
    header = [f"{grid.row_label} \\ {grid.column_label}", *grid.columns]
    rows = []
    for row in grid.rows:
        cells = [grid.cell(row, column) for column in grid.columns]
        rows.append([row, *("-" if cell is None else cell_text(cell) for cell in cells)])
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = [grid.title]
    for line in [header, *rows]:
        lines.append("  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip())
    lines.insert(2, "  ".join("-" * width for width in widths))
    for cell in grid.cells:
        if cell.status.fails_run:
            failing = [o.case for o in cell.outcomes if o.status.fails_run]
            lines.append(f"{cell.status.value}: {cell.row} x {cell.column}: {', '.join(failing)}")
    return "\n".join(lines)
