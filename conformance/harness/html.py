"""The HTML page of a harness run (``DIR/report.html``).

One self-contained page (inline CSS, no script, nothing fetched from
elsewhere: it opens from a CI artifact or an e-mail as it is):

* the run: implementation, writers, operations, workloads, seed, dataset,
  and the totals (acknowledged, conflicts, errors, indeterminate, anomalies,
  acknowledged commits per second);
* the timeline of versions: one row per acknowledged attempt in version
  order, naming the writer that committed it, its operation and read
  version, with a bar placing the attempt in the run's time;
* per writer: how many attempts were acknowledged, rejected by a conflict,
  failed or left indeterminate;
* each anomaly the checker named, with its witness (the operations,
  versions and rows involved).

The page is built from the history and the check report alone, so
``harness check DIR`` can rebuild it from a saved run.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

#: The outcomes, in the order the per-writer table shows them (the values of WriteOutcome).
OUTCOMES = ("acknowledged", "conflict", "error", "indeterminate")

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #d0d0d5; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict-clean { color: #17692b; font-weight: bold; } .verdict-anomalies { color: #a4161a; font-weight: bold; }
.lane { position: relative; width: 320px; height: 10px; background: #f2f2f5; }
.bar { position: absolute; top: 0; height: 10px; min-width: 2px; background: #3f6fd8; }
.stack { display: flex; width: 240px; height: 12px; background: #f2f2f5; }
.acknowledged { background: #2f9e44; } .conflict { background: #f08c00; }
.error { background: #c92a2a; } .indeterminate { background: #868e96; }
.legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
pre { background: #f8f8fa; border: 1px solid #e0e0e5; padding: 6px; max-width: 100ch; overflow-x: auto; }
"""


def _value(thing: Any) -> Any:
    """A JSON-able rendering of a witness or an argument (dataclasses,
    enums, sets and tuples included)."""
    if callable(getattr(thing, "to_json", None)) and not isinstance(thing, type):
        return _value(thing.to_json())
    if dataclasses.is_dataclass(thing) and not isinstance(thing, type):
        return {field.name: _value(getattr(thing, field.name)) for field in dataclasses.fields(thing)}
    if isinstance(thing, enum.Enum):
        return thing.value
    if isinstance(thing, dict):
        return {str(key): _value(value) for key, value in thing.items()}
    if isinstance(thing, (list, tuple)):
        return [_value(item) for item in thing]
    if isinstance(thing, (set, frozenset)):
        return sorted((_value(item) for item in thing), key=repr)
    return thing


def writer_label(writer: int) -> str:
    """How the page names a writer (the run's own setup, version 1, has a negative index)."""
    return f"writer {writer}" if writer >= 0 else "setup"


def _outcome(attempt: Any) -> str:
    outcome = attempt.outcome
    return str(outcome.value if isinstance(outcome, enum.Enum) else outcome)


def _cell(text: Any, css: str = "") -> str:
    attribute = f' class="{css}"' if css else ""
    return f"<td{attribute}>{escape(str(text))}</td>"


def _table(table_id: str, headings: Sequence[str], rows: Iterable[str]) -> str:
    head = "".join(f"<th>{escape(heading)}</th>" for heading in headings)
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def throughput(history: Sequence[Any]) -> float:
    """Acknowledged commits per second over the run's span (first start to last end)."""
    if not history:
        return 0.0
    span = max(attempt.end for attempt in history) - min(attempt.start for attempt in history)
    acknowledged = sum(_outcome(attempt) == "acknowledged" for attempt in history)
    return acknowledged / span if span > 0 else 0.0


def _summary(history: Sequence[Any], spec: Any, anomalies: Sequence[Any]) -> str:
    counts = {outcome: sum(_outcome(a) == outcome for a in history) for outcome in OUTCOMES}
    rows = []
    if spec is not None:
        workloads = getattr(spec, "workloads", {}) or {}
        for label, value in (
            ("implementation", getattr(spec, "writer", "")),
            ("writers", getattr(spec, "writers", "")),
            ("operations per writer", getattr(spec, "operations", "")),
            ("workloads", ", ".join(f"{name}×{weight:g}" for name, weight in workloads.items())),
            ("seed", getattr(spec, "seed", "")),
            ("dataset", getattr(spec, "uri", "")),
        ):
            rows.append(f"<tr><th>{escape(label)}</th>{_cell(value)}</tr>")
    rows.append(f"<tr><th>attempts</th>{_cell(len(history), 'num')}</tr>")
    for outcome in OUTCOMES:
        rows.append(f'<tr><th>{outcome}</th><td class="num" id="total-{outcome}">{counts[outcome]}</td></tr>')
    rows.append(f'<tr><th>anomalies</th><td class="num" id="total-anomalies">{len(anomalies)}</td></tr>')
    rows.append(f"<tr><th>acknowledged commits per second</th>{_cell(f'{throughput(history):.2f}', 'num')}</tr>")
    return f'<table id="summary">{"".join(rows)}</table>'


def _timeline(history: Sequence[Any]) -> str:
    committed = sorted(
        (a for a in history if _outcome(a) == "acknowledged" and a.version is not None), key=lambda a: a.version
    )
    if not history:
        return "<p>No attempts.</p>"
    origin = min(a.start for a in history)
    span = max(max(a.end for a in history) - origin, 1e-9)
    rows = []
    for attempt in committed:
        left = 100 * (attempt.start - origin) / span
        width = 100 * max(attempt.end - attempt.start, 0) / span
        bar = f'<td><div class="lane"><div class="bar" style="left:{left:.2f}%;width:{width:.2f}%"></div></div></td>'
        rows.append(
            f'<tr data-version="{attempt.version}" data-writer="{attempt.writer}">'
            + _cell(attempt.version, "num")
            + _cell(writer_label(attempt.writer))
            + _cell(attempt.op_id)
            + _cell(attempt.kind)
            + _cell("" if attempt.read_version is None else attempt.read_version, "num")
            + _cell(f"{attempt.start - origin:.3f}–{attempt.end - origin:.3f} s")
            + bar
            + "</tr>"
        )
    return _table(
        "timeline", ("version", "committed by", "operation", "kind", "read version", "time", "in the run"), rows
    )


def _writers(history: Sequence[Any]) -> str:
    by_writer: dict[int, dict[str, int]] = {}
    for attempt in history:
        counts = by_writer.setdefault(attempt.writer, dict.fromkeys(OUTCOMES, 0))
        counts[_outcome(attempt)] = counts.get(_outcome(attempt), 0) + 1
    rows = []
    for writer in sorted(by_writer):
        counts = by_writer[writer]
        total = sum(counts.values()) or 1
        stack = "".join(
            f'<div class="{outcome}" style="width:{100 * counts[outcome] / total:.2f}%"></div>'
            for outcome in OUTCOMES
            if counts[outcome]
        )
        rows.append(
            f'<tr data-writer="{writer}">'
            + _cell(writer_label(writer))
            + "".join(_cell(counts[outcome], "num") for outcome in OUTCOMES)
            + f'<td><div class="stack">{stack}</div></td></tr>'
        )
    legend = '<p class="legend">' + "".join(f'<span class="{o}"></span>{o}' for o in OUTCOMES) + "</p>"
    return legend + _table("writers", ("writer", *OUTCOMES, "share"), rows)


def _anomalies(anomalies: Sequence[Any]) -> str:
    if not anomalies:
        return '<p id="no-anomalies">The checker found no anomaly.</p>'
    items = []
    for anomaly in anomalies:
        name = getattr(anomaly, "name", None) or str(anomaly)
        witness = _value(getattr(anomaly, "witness", None))
        text = json.dumps(witness, indent=2, sort_keys=True, default=str)
        items.append(f'<li class="anomaly"><strong>{escape(str(name))}</strong><pre>{escape(text)}</pre></li>')
    return f'<ol id="anomalies">{"".join(items)}</ol>'


def render_html(history: Sequence[Any], spec: Any = None, anomalies: Sequence[Any] = (), *, title: str = "") -> str:
    """The page for a run: its ``history`` (Attempts), its RunSpec and the
    anomalies the checker reported."""
    writer = getattr(spec, "writer", "") if spec is not None else ""
    heading = title or (f"Harness run: {writer}" if writer else "Harness run")
    verdict = (
        '<p class="verdict-clean" id="verdict">clean: no anomaly</p>'
        if not anomalies
        else f'<p class="verdict-anomalies" id="verdict">{len(anomalies)} anomalies</p>'
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{escape(heading)}</title>'
        f"<style>{_CSS}</style></head><body>"
        f"<h1>{escape(heading)}</h1>{verdict}"
        f"<h2>Run</h2>{_summary(history, spec, anomalies)}"
        f"<h2>Anomalies</h2>{_anomalies(anomalies)}"
        f"<h2>Versions</h2>{_timeline(history)}"
        f"<h2>Writers</h2>{_writers(history)}"
        "</body></html>\n"
    )


def write_html(
    out_dir: str | Path, history: Sequence[Any], spec: Any = None, anomalies: Sequence[Any] = (), *, title: str = ""
) -> Path:
    """Write the run's page to ``out_dir/report.html``; its path."""
    path = Path(out_dir) / "report.html"
    path.write_text(render_html(history, spec, anomalies, title=title), encoding="utf-8")
    return path
