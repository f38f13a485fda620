"""The compatibility matrix (``lance-conformance compat``) as one
self-contained HTML page, from the template
``conformance/templates/compat-matrix.html``.

The page is built from the JSON document alone
(:func:`conformance.compat.document.to_document`), so a stored document can be
rendered again. Like the ecosystem matrix's page, everything is inline and
nothing is fetched:

* one grid per feature, writer releases down, reader releases across; a
  cell is coloured by its status (pass, refused cleanly, fail, not applicable)
  and says it in a word (``fail: panic``); a writer that did not write the
  feature gets one row-wide cell saying why (not offered, write error);
* hovering a cell shows its error (the ``title``); clicking it (or Enter on
  it) opens its details beside the grids: the error type and message, the
  differences, the notes;
* filters: a feature (the other grids hide) and an outcome (cells of other
  outcomes dim);
* the notes (lance-format/lance#9454 reproduced or why not) and the releases
  with what each wrote.

Element ids and classes the browser tests rely on: ``section.feature-grid``
with ``data-feature``, ``td.cell`` with ``data-status``, ``data-writer``,
``data-reader``, ``data-feature`` and ``data-details``, ``td.not-written``,
``#details-panel``, ``.details``, ``.problem``, ``#feature-filter``,
``#outcome-filter``, ``#notes``, ``#releases``, ``#summary``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..templates import render

TEMPLATE = "compat-matrix.html"
#: The outcomes in the legend, with how the page names them.
LEGEND = (
    ("pass", "pass"),
    ("refused", "refused cleanly (a pass)"),
    ("fail", "fail"),
    ("not-applicable", "not applicable (the writer cannot read it back)"),
    ("not-written", "not written by that release"),
)
#: How long a tooltip's error may be.
TOOLTIP_CHARS = 400


@dataclass(frozen=True)
class CellView:
    cell: dict[str, Any]
    details_id: str
    label: str
    tooltip: str


@dataclass(frozen=True)
class RowView:
    writer: str
    #: The writer's entry of ``writes`` when it did not write the feature (the row is one cell then).
    write: dict[str, Any] | None
    #: The cells in reader order (None: not read, e.g. a reader that did not start).
    cells: list[CellView | None]


@dataclass(frozen=True)
class GridView:
    feature: str
    summary: str
    rows: list[RowView]


def cell_label(cell: dict[str, Any]) -> str:
    """``pass``, ``refused``, ``not-applicable`` or ``fail: KIND``."""
    if cell["status"] == "fail" and cell["failure_kind"]:
        return f"fail: {cell['failure_kind']}"
    return str(cell["status"])


def _tooltip(cell: dict[str, Any]) -> str:
    text = f"{cell['writer']} read by {cell['reader']}: {cell_label(cell)}"
    if cell["message"]:
        message = cell["message"]
        text += "\n" + (message if len(message) <= TOOLTIP_CHARS else message[:TOOLTIP_CHARS] + "…")
    return text


def grid_views(document: dict[str, Any]) -> list[GridView]:
    readers = document["releases"]
    cells = {(c["writer"], c["reader"], c["feature"]): c for c in document["cells"]}
    writes = {(w["release"], w["feature"]): w for w in document["writes"]}
    grids = []
    count = 0
    for feature in document["features"]:
        name = feature["name"]
        rows = []
        for writer in readers:
            write = writes.get((writer, name))
            if write is not None and write["status"] != "written":
                rows.append(RowView(writer, write, []))
                continue
            views: list[CellView | None] = []
            for reader in readers:
                cell = cells.get((writer, reader, name))
                if cell is None:
                    views.append(None)
                    continue
                views.append(CellView(cell, f"details-{count}", cell_label(cell), _tooltip(cell)))
                count += 1
            rows.append(RowView(writer, None, views))
        grids.append(GridView(name, feature["summary"], rows))
    return grids


def release_rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for release in document["releases"]:
        mine = [w for w in document["writes"] if w["release"] == release]
        errors = [f"{w['feature']}: {w['detail']}" for w in mine if w["status"] in ("write-error", "writer-failed")]
        errors += [f"reader: {f['message']}" for f in document["reader_failures"] if f["release"] == release]
        rows.append(
            {
                "name": release,
                "environment": document["release_environments"][release],
                "written": sum(w["status"] == "written" for w in mine),
                "not_offered": sum(w["status"] == "not-offered" for w in mine),
                "errors": errors,
            }
        )
    return rows


def render_compat_html(document: dict[str, Any], *, title: str = "Lance cross-release compatibility matrix") -> str:
    """The page of a compat document."""
    return render(
        TEMPLATE,
        title=title,
        document=document,
        readers=document["releases"],
        grids=grid_views(document),
        releases=release_rows(document),
        legend=LEGEND,
    )


def write_compat_html(path: str | Path, document: dict[str, Any]) -> Path:
    """Write the page to ``path``; its path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_compat_html(document), encoding="utf-8")
    return out
