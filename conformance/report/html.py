"""The ecosystem matrix as one self-contained HTML page.

Everything is inline (CSS, a small script, the data), nothing is fetched:
the page opens from a CI artifact or an e-mail as it is, and reads without
the script too (every cell's details are in the page, hidden until asked).

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

Element ids and classes the browser tests rely on: ``.cell`` with
``data-status`` and ``data-details``, ``#details-panel``, ``.outcome``,
``.problem``, ``a.requirement``, ``#feature-filter``, ``#drivers``,
``#versions``, ``#expectations``.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from ..ecosystem.model import SEVERITY, Cell, EcosystemMatrix, Grid, Outcome, RequirementLink, Status

#: How the page names each status (legend and details).
LABELS = {
    Status.PASS: "pass",
    Status.FAIL: "fail",
    Status.EXPECTED_FAILURE: "expected failure",
    Status.NOT_APPLICABLE: "not applicable",
    Status.FIXED: "fixed (stale expectation)",
}

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.45em; } h2 { font-size: 1.15em; margin-top: 1.6em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #d0d0d5; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f5; font-weight: 600; }
.layout { display: flex; gap: 1.5em; align-items: flex-start; }
.grids { flex: 1 1 auto; min-width: 0; overflow-x: auto; }
#details-panel { flex: 0 0 38%; position: sticky; top: 1em; max-height: 92vh; overflow-y: auto;
  border: 1px solid #d0d0d5; padding: 0 1em 1em; background: #fcfcfd; }
td.cell { cursor: pointer; text-align: center; min-width: 6.5em; font-variant-numeric: tabular-nums; }
td.cell:focus, td.cell.selected { outline: 3px solid #1d1d1f; outline-offset: -3px; }
td.cell.filtered { visibility: hidden; }
td.empty { color: #adb5bd; text-align: center; }
.status-pass { background: #d3f9d8; } .status-fail { background: #ffc9c9; }
.status-expected-failure { background: #ffec99; } .status-not-applicable { background: #e9ecef; color: #495057; }
.status-fixed { background: #d0bfff; }
.legend span.swatch { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px;
  border: 1px solid #adb5bd; vertical-align: middle; }
.verdict-pass { color: #17692b; font-weight: bold; } .verdict-fail { color: #a4161a; font-weight: bold; }
ul.outcomes { list-style: none; padding: 0; }
li.outcome { margin: .4em 0; padding: .3em .5em; border-left: 4px solid #adb5bd; }
li.outcome.status-fail { border-left-color: #c92a2a; } li.outcome.status-fixed { border-left-color: #7048e8; }
li.outcome.status-expected-failure { border-left-color: #f08c00; }
li.outcome.status-pass { border-left-color: #2f9e44; }
li.outcome.hidden-by-filter { display: none; }
.problem { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; color: #a4161a; }
.note { font-size: 12px; color: #495057; }
.requirement-line { font-size: 12px; }
.case-name { font-weight: 600; }
code { font-size: 12px; }
"""

#: Recounts and hides cells for the selected feature; opens a cell's details.
_SCRIPT = """
(function () {
  var order = %(order)s;
  var panel = document.getElementById('details-panel');
  var select = document.getElementById('feature-filter');
  function matches(outcome, feature) {
    return !feature || (' ' + outcome.getAttribute('data-features') + ' ').indexOf(' ' + feature + ' ') >= 0;
  }
  function worst(statuses) {
    for (var i = 0; i < order.length; i++) { if (statuses.indexOf(order[i]) >= 0) return order[i]; }
    return 'not-applicable';
  }
  function label(statuses) {
    if (statuses.length && statuses.every(function (s) { return s === 'not-applicable'; })) return 'n/a';
    var passed = statuses.filter(function (s) { return s === 'pass'; }).length;
    var text = passed + '/' + statuses.length;
    ['fail', 'fixed', 'expected-failure'].forEach(function (s) {
      var n = statuses.filter(function (x) { return x === s; }).length;
      if (n) text += ' \\u00b7 ' + n + ' ' + (s === 'expected-failure' ? 'xfail' : s);
    });
    return text;
  }
  function show(cell) {
    document.querySelectorAll('td.cell.selected').forEach(function (c) { c.classList.remove('selected'); });
    cell.classList.add('selected');
    var details = document.getElementById(cell.getAttribute('data-details'));
    panel.querySelectorAll('.details').forEach(function (d) { d.hidden = true; });
    document.getElementById('details-empty').hidden = true;
    details.hidden = false;
    panel.scrollTop = 0;
  }
  function applyFilter() {
    var feature = select.value;
    document.querySelectorAll('td.cell').forEach(function (cell) {
      var details = document.getElementById(cell.getAttribute('data-details'));
      var statuses = [];
      details.querySelectorAll('li.outcome').forEach(function (outcome) {
        var keep = matches(outcome, feature);
        outcome.classList.toggle('hidden-by-filter', !keep);
        if (keep) statuses.push(outcome.getAttribute('data-status'));
      });
      cell.classList.toggle('filtered', statuses.length === 0);
      var status = worst(statuses);
      cell.className = cell.className.replace(/status-[a-z-]+/, 'status-' + status);
      cell.setAttribute('data-status', status);
      cell.querySelector('.count').textContent = label(statuses);
    });
  }
  document.querySelectorAll('td.cell').forEach(function (cell) {
    cell.addEventListener('click', function () { show(cell); });
    cell.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); show(cell); }
    });
  });
  select.addEventListener('change', applyFilter);
})();
"""


def status_label(outcomes: list[Status]) -> str:
    """The text of a cell: passed/total, then the failing kinds; ``n/a`` when
    nothing applied (the script computes the same)."""
    if outcomes and all(status is Status.NOT_APPLICABLE for status in outcomes):
        return "n/a"
    text = f"{outcomes.count(Status.PASS)}/{len(outcomes)}"
    for status, short in ((Status.FAIL, "fail"), (Status.FIXED, "fixed"), (Status.EXPECTED_FAILURE, "xfail")):
        if outcomes.count(status):
            text += f" \u00b7 {outcomes.count(status)} {short}"
    return text


def _requirement(requirement_id: str, link: RequirementLink | None) -> str:
    if link is None or link.url is None:
        anchor = f'<code class="requirement">{escape(requirement_id)}</code>'
    else:
        anchor = (
            f'<a class="requirement" href="{escape(link.url)}" target="_blank" rel="noopener" '
            f'title="{escape(link.section)}">{escape(requirement_id)}</a>'
        )
    if link is None:
        return f'<div class="requirement-line">{anchor}</div>'
    level = f" ({escape(link.level)})" if link.level else ""
    return f'<div class="requirement-line">{anchor}{level}: {escape(link.statement)}</div>'


def _outcome(outcome: Outcome, matrix: EcosystemMatrix) -> str:
    parts = [
        f'<span class="case-name">{escape(outcome.case)}</span> '
        f'<span class="status-word">{escape(LABELS[outcome.status])}</span>'
    ]
    parts += [f'<div class="problem">{escape(problem)}</div>' for problem in outcome.problems]
    if outcome.expectation:
        parts.append(f'<div class="note expectation">expected: {escape(outcome.expectation)}</div>')
    parts += [f'<div class="note">{escape(note)}</div>' for note in outcome.notes]
    if outcome.status is not Status.PASS:
        parts += [_requirement(r, matrix.requirements.get(r)) for r in outcome.requirements]
    if outcome.features:
        parts.append(f'<div class="note">features: {escape(", ".join(outcome.features))}</div>')
    return (
        f'<li class="outcome status-{outcome.status.value}" data-status="{outcome.status.value}" '
        f'data-features="{escape(" ".join(outcome.features))}">{"".join(parts)}</li>'
    )


def _details(grid: Grid, cell: Cell, details_id: str, matrix: EcosystemMatrix) -> str:
    rank = {status: index for index, status in enumerate(SEVERITY)}
    outcomes = sorted(cell.outcomes, key=lambda o: (rank[o.status], o.case))
    heading = (
        f"{escape(grid.row_label)} {escape(cell.row)} \u00d7 {escape(grid.column_label)} {escape(cell.column)}: "
        f"{escape(LABELS[cell.status])}"
    )
    items = "".join(_outcome(outcome, matrix) for outcome in outcomes)
    return (
        f'<div class="details" id="{details_id}" hidden><h3>{heading}</h3>'
        f'<p class="note">{escape(grid.title)}</p><ul class="outcomes">{items}</ul></div>'
    )


def _grid(grid: Grid, matrix: EcosystemMatrix) -> tuple[str, list[str]]:
    """The grid's table, and the details of its cells (shown in the panel)."""
    head = f"<th>{escape(grid.row_label)} \u2193 / {escape(grid.column_label)} \u2192</th>" + "".join(
        f'<th scope="col">{escape(column)}</th>' for column in grid.columns
    )
    rows: list[str] = []
    details: list[str] = []
    for row in grid.rows:
        cells = [f'<th scope="row">{escape(row)}</th>']
        for column in grid.columns:
            cell = grid.cell(row, column)
            if cell is None:
                cells.append('<td class="empty" title="not run">\u2014</td>')
                continue
            details_id = f"details-{grid.id}-{len(details)}"
            details.append(_details(grid, cell, details_id, matrix))
            status = cell.status.value
            cells.append(
                f'<td class="cell status-{status}" data-status="{status}" data-details="{details_id}" '
                f'data-row="{escape(row)}" data-column="{escape(column)}" tabindex="0" role="button" '
                f'title="{escape(grid.row_label)} {escape(row)}, {escape(grid.column_label)} {escape(column)}">'
                f'<span class="count">{status_label([o.status for o in cell.outcomes])}</span></td>'
            )
        rows.append(f"<tr>{''.join(cells)}</tr>")
    verdict = LABELS[grid.status]
    table = (
        f'<section class="grid" id="grid-{grid.id}"><h2>{escape(grid.title)} '
        f'<span class="grid-status status-{grid.status.value}">{escape(verdict)}</span></h2>'
        f"<p>{escape(grid.description)}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )
    return table, details


def _drivers(matrix: EcosystemMatrix) -> str:
    headings = ("driver", "implementation", "version", "embedded Lance", "capabilities", "writes", "protocol")
    rows = []
    for driver in matrix.drivers:
        info = dict(driver.info or {})
        if driver.error is not None:
            cells = [escape(driver.name), f'<span class="problem">{escape(driver.error)}</span>', "", "", "", "", ""]
        else:
            writes = ", ".join(info.get("write_operations", []))
            storage = ", ".join(info.get("data_storage_versions", []))
            cells = [
                escape(driver.name),
                escape(str(info.get("implementation", ""))),
                escape(str(info.get("version", ""))),
                escape(str(info.get("lance_version") or "")),
                escape(", ".join(info.get("capabilities", []))),
                escape(writes + (f" (data storage {storage})" if storage else "")),
                escape(str(info.get("protocol_version", ""))),
            ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in headings)
    return f'<table id="drivers"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _versions(matrix: EcosystemMatrix) -> str:
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in matrix.versions.items())
    rows += f"<tr><th>generated</th><td>{escape(matrix.generated)}</td></tr>"
    return f'<table id="versions">{rows}</table>'


def _expectations(matrix: EcosystemMatrix) -> str:
    if not matrix.expectations:
        return '<p id="expectations">No expectation applied: every failure counts.</p>'
    rows = []
    for entry in matrix.expectations:
        issue = (
            f'<a href="{escape(entry.issue)}" target="_blank" rel="noopener">{escape(entry.issue)}</a>'
            if entry.issue
            else ""
        )
        cells = (
            escape(entry.driver),
            escape(entry.suite),
            escape(entry.case),
            _requirement(entry.requirement, matrix.requirements.get(entry.requirement))
            if entry.requirement in matrix.requirements
            else f"<code>{escape(entry.requirement)}</code>",
            escape(entry.reason),
            issue + (f'<div class="note">{escape(entry.reproducer)}</div>' if entry.reproducer else ""),
        )
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("driver", "suite", "case", "requirement", "reason", "issue"))
    return f'<table id="expectations"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _filter(matrix: EcosystemMatrix) -> str:
    options = ['<option value="">every feature</option>'] + [
        f'<option value="{escape(feature)}">{escape(feature)} \u2014 {escape(summary)}</option>'
        for feature, summary in sorted(matrix.features.items())
    ]
    return (
        '<p><label for="feature-filter">Feature: </label>'
        f'<select id="feature-filter">{"".join(options)}</select> '
        '<span class="note">cells with no case exercising it hide; the others count only those that do</span></p>'
    )


def _legend() -> str:
    return (
        '<p class="legend">'
        + "".join(f'<span class="swatch status-{s.value}"></span>{escape(LABELS[s])}' for s in SEVERITY)
        + "</p>"
    )


def render_html(matrix: EcosystemMatrix, *, title: str = "Lance ecosystem conformance matrix") -> str:
    """The page for ``matrix``."""
    sections: list[str] = []
    details: list[str] = []
    for grid in matrix.grids:
        table, grid_details = _grid(grid, matrix)
        sections.append(table)
        details += grid_details
    verdict = (
        '<p class="verdict-pass" id="verdict">every cell passes, expected failures aside</p>'
        if matrix.passed
        else '<p class="verdict-fail" id="verdict">some cells fail (or hold a stale expectation)</p>'
    )
    script = _SCRIPT % {"order": json.dumps([status.value for status in SEVERITY])}
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1>{verdict}{_legend()}{_filter(matrix)}"
        f'<div class="layout"><div class="grids">{"".join(sections)}</div>'
        '<aside id="details-panel"><h2>Details</h2>'
        '<p id="details-empty">Click a cell to see its cases: the failing ones first, with their messages '
        "and the requirements they concern.</p>"
        f"{''.join(details)}</aside></div>"
        f"<h2>Drivers</h2>{_drivers(matrix)}"
        f"<h2>Versions</h2>{_versions(matrix)}"
        f"<h2>Expectations used</h2>{_expectations(matrix)}"
        f"<script>{script}</script></body></html>\n"
    )


def write_html(path: str | Path, matrix: EcosystemMatrix) -> Path:
    """Write the page to ``path``; its path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(matrix), encoding="utf-8")
    return out
