"""The ecosystem matrix as one self-contained HTML page, from the template
``conformance/templates/ecosystem-matrix.html``.

Everything is inline (the project's one stylesheet, a small script, the
data), nothing is fetched: the page opens from a CI artifact or an e-mail as
it is, and reads without the script too (every cell's details are in the
page, hidden until asked).

* one grid per suite, each cell coloured by its status (pass, fail,
  expected failure, not applicable, fixed) with the count of its outcomes;
* clicking a cell (or Enter on it) opens its outcomes beside the grids:
  the failing ones first, with their messages, the expectation that applied
  and each requirement they concern, linked to the upstream document that
  states it, with its statement;
* a feature filter (the features of ``case.json``, ``txn.*`` for the
  conflict pairs): cells without an outcome exercising the feature hide,
  and the others are recounted over the outcomes that do;
* the drivers with what each reported about itself (implementation,
  package and embedded Lance versions, capabilities), the versions of the
  suite, Python and pyarrow, and the expectations applied.

This module prepares what the template shows (each cell's label, its
outcomes in severity order, the id of its details block); the template
writes the markup and escapes every value it prints.

Element ids and classes the browser tests rely on: ``.cell`` with
``data-status`` and ``data-details``, ``#details-panel``, ``.outcome``,
``.problem``, ``a.requirement``, ``#feature-filter``, ``#drivers``,
``#versions``, ``#expectations``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..ecosystem.model import SEVERITY, Cell, DriverEntry, EcosystemMatrix, Grid, Outcome, Status
from ..templates import render

TEMPLATE = "ecosystem-matrix.html"

#: How the page names each status (legend and details).
LABELS = {
    Status.PASS: "pass",
    Status.FAIL: "fail",
    Status.EXPECTED_FAILURE: "expected failure",
    Status.NOT_APPLICABLE: "not applicable",
    Status.FIXED: "fixed (stale expectation)",
}


def status_label(outcomes: list[Status], empty: str = "n/a") -> str:
    """The text of a cell: passed/total, then the failing kinds; ``empty``
    (the cell's :attr:`~conformance.ecosystem.model.Cell.empty_label`) when
    nothing applied. The page's script computes the same."""
    if outcomes and all(status is Status.NOT_APPLICABLE for status in outcomes):
        return empty
    text = f"{outcomes.count(Status.PASS)}/{len(outcomes)}"
    for status, short in ((Status.FAIL, "fail"), (Status.FIXED, "fixed"), (Status.EXPECTED_FAILURE, "xfail")):
        if outcomes.count(status):
            text += f" \u00b7 {outcomes.count(status)} {short}"
    return text


@dataclass(frozen=True)
class CellView:
    """A cell as the page shows it: its label, its outcomes (the failing
    ones first) and the id of the details block the cell opens."""

    cell: Cell
    details_id: str
    label: str
    outcomes: list[Outcome]


@dataclass(frozen=True)
class GridView:
    grid: Grid
    #: Each row's name and its cells in the grid's column order (None: not run).
    rows: list[tuple[str, list[CellView | None]]]

    @property
    def cells(self) -> list[CellView]:
        return [view for _, views in self.rows for view in views if view is not None]


def grid_view(grid: Grid) -> GridView:
    rank = {status: index for index, status in enumerate(SEVERITY)}
    rows: list[tuple[str, list[CellView | None]]] = []
    count = 0
    for row in grid.rows:
        views: list[CellView | None] = []
        for column in grid.columns:
            cell = grid.cell(row, column)
            if cell is None:
                views.append(None)
                continue
            outcomes = sorted(cell.outcomes, key=lambda o: (rank[o.status], o.case))
            label = status_label([o.status for o in cell.outcomes], cell.empty_label)
            views.append(CellView(cell, f"details-{grid.id}-{count}", label, outcomes))
            count += 1
        rows.append((row, views))
    return GridView(grid, rows)


def driver_cells(driver: DriverEntry) -> list[str]:
    """What the drivers table shows of a loaded driver, after its name:
    implementation, version, embedded Lance, capabilities, writes, protocol."""
    info = dict(driver.info or {})
    writes = ", ".join(info.get("write_operations", []))
    storage = ", ".join(info.get("data_storage_versions", []))
    return [
        str(info.get("implementation", "")),
        str(info.get("version", "")),
        str(info.get("lance_version") or ""),
        ", ".join(info.get("capabilities", [])),
        writes + (f" (data storage {storage})" if storage else ""),
        str(info.get("protocol_version", "")),
    ]


def render_html(matrix: EcosystemMatrix, *, title: str = "Lance ecosystem conformance matrix") -> str:
    """The page for ``matrix``."""
    return render(
        TEMPLATE,
        title=title,
        matrix=matrix,
        grids=[grid_view(grid) for grid in matrix.grids],
        features=sorted(matrix.features.items()),
        labels=LABELS,
        severity=SEVERITY,
        order=[status.value for status in SEVERITY],
        passing=Status.PASS,
        driver_cells=driver_cells,
    )


def write_html(path: str | Path, matrix: EcosystemMatrix) -> Path:
    """Write the page to ``path``; its path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(matrix), encoding="utf-8")
    return out
