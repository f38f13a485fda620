"""The HTML page of a harness run (``DIR/report.html``), from the template
``conformance/templates/harness-run.html``.

One self-contained page (inline CSS, no script, nothing fetched from
elsewhere: it opens from a CI artifact or an e-mail as it is):

* the verdict: clean, or how many anomalies (and consequences);
* the run: implementation, writers, operations, workloads, seed, dataset,
  the workload kinds skipped (the writer cannot do them), and the numbers of
  :mod:`.report` (the same as the command line's: attempts by outcome, the
  overlap, acknowledged commits per second over the commit window);
* the timeline: one row per writer, a bar per attempt coloured by its
  outcome, drawn from the first attempt (not the run's start, which may
  include an engine's start-up) to the last attempt's end;
* each anomaly as a sentence, with each operation's role (and what that
  operation was), the versions where it shows, and its consequences nested
  under it;
* the attempts that failed (conflict, error, unknown) with their errors;
* the versions, each with the attempt that committed it.

The page is built from the history, the spec and the check report alone, so
``harness check DIR`` can build it again from a saved run. Element ids the
tests rely on: ``#verdict``, ``#total-OUTCOME``, ``#total-anomalies``,
``#overlapping``, ``#skipped``, ``#anomalies`` (``li.anomaly`` with a
``.sentence``), ``#timeline`` (``.lane`` rows holding ``.bar``s), ``#failed``
(``.error``), ``#versions``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..templates import render
from .report import (
    ACKNOWLEDGED,
    OUTCOMES,
    anomalies_phrase,
    anomaly_document,
    commit_window,
    failed_attempts,
    kind_of,
    outcome_counts,
    outcome_of,
    overlapping,
    skipped_phrase,
    throughput,
    writer_attempts,
)

if TYPE_CHECKING:
    from .history import Attempt

PAGE_FILE = "report.html"
TEMPLATE = "harness-run.html"


def writer_label(writer: int) -> str:
    """How the page names a writer (the run's own setup, version 1, has a negative index)."""
    return f"writer {writer}" if writer >= 0 else "setup"


@dataclass(frozen=True)
class Bar:
    """One attempt on the timeline: where it starts and how wide it is, in
    percent of the timeline's span."""

    attempt: Any
    outcome: str
    left: float
    width: float

    @property
    def title(self) -> str:
        version = f" at version {self.attempt.version}" if self.attempt.version is not None else ""
        return f"{self.attempt.op_id} {kind_of(self.attempt)}: {self.outcome}{version}"


@dataclass(frozen=True)
class Lane:
    writer: int
    label: str
    bars: list[Bar]
    counts: dict[str, int]


def timeline(history: Sequence[Attempt]) -> tuple[list[Lane], float]:
    """One lane per writer with a bar per attempt, and the span in seconds,
    from the first attempt's start to the last attempt's end."""
    attempts = writer_attempts(history)
    if not attempts:
        return [], 0.0
    origin = min(attempt.start for attempt in attempts)
    span = max(attempt.end for attempt in attempts) - origin
    scale = 100 / span if span > 0 else 0.0
    lanes = []
    for writer in sorted({attempt.writer for attempt in attempts}):
        own = sorted((a for a in attempts if a.writer == writer), key=lambda a: (a.start, a.op_id))
        bars = [Bar(a, outcome_of(a), (a.start - origin) * scale, max(a.end - a.start, 0.0) * scale) for a in own]
        lanes.append(Lane(writer, writer_label(writer), bars, outcome_counts(own)))
    return lanes, span


def render_html(
    history: Sequence[Attempt],
    spec: Any = None,
    anomalies: Sequence[Any] = (),
    *,
    skipped: Sequence[str] | None = (),
    known_departures: Sequence[Any] = (),
    versions: int | None = None,
    driver: dict | None = None,
    title: str = "",
) -> str:
    """The page for a run: its ``history`` (Attempts), its RunSpec, the
    anomalies the checker reported, the workload kinds ``skipped`` (None:
    not known), the number of ``versions`` read back and the writer's
    ``driver`` declaration (``DriverInfo.to_json()``) when known."""
    writer = getattr(spec, "writer", "") if spec is not None else ""
    documents = [anomaly_document(a) for a in anomalies]
    lanes, span = timeline(history)
    window = commit_window(history)
    committed = sorted(
        (a for a in history if outcome_of(a) == ACKNOWLEDGED and a.version is not None), key=lambda a: a.version or 0
    )
    workloads = getattr(spec, "workloads", {}) or {}
    return render(
        TEMPLATE,
        title=title or (f"Harness run: {writer}" if writer else "Harness run"),
        spec=spec,
        driver=driver,
        workloads=", ".join(f"{name}×{weight:g}" for name, weight in workloads.items()),
        outcomes=OUTCOMES,
        totals=outcome_counts(history),
        attempts=len(writer_attempts(history)),
        overlapping=overlapping(history),
        per_second=throughput(history),
        window=None if window is None else window[1] - window[0],
        versions=versions,
        skipped=skipped,
        skipped_text=skipped_phrase(skipped),
        verdict=anomalies_phrase(documents),
        anomalies=documents,
        known_departures=[anomaly_document(a) for a in known_departures],
        by_op_id={a.op_id: a for a in history},
        lanes=lanes,
        span=span,
        failed=failed_attempts(history),
        committed=committed,
        writer_label=writer_label,
        kind_of=kind_of,
        outcome_of=outcome_of,
    )


def write_html(out_dir: str | Path, history: Sequence[Attempt], spec: Any = None, anomalies=(), **options) -> Path:
    """Write the run's page to ``out_dir/report.html`` (:func:`render_html`'s
    arguments); its path."""
    path = Path(out_dir) / PAGE_FILE
    path.write_text(render_html(history, spec, anomalies, **options), encoding="utf-8")
    return path
