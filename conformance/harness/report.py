"""What a run says: a text summary and a JSON document (with its
``anomalies`` list) following ``conformance/schemas/harness-report.schema.json``."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .history import WriteOutcome

if TYPE_CHECKING:
    from .runner import RunResult

REPORT_SCHEMA_NAME = "harness-report.schema.json"


#: The version of the harness report's shape (bump it when a field changes meaning
#: or goes away; CHANGELOG.md).
REPORT_FORMAT = 1


def counts(result: RunResult) -> dict[str, int]:
    attempts = [a for a in result.history if a.writer >= 0]
    by_outcome = Counter(a.outcome for a in attempts)
    return {
        "operations": len(attempts),
        "acknowledged": by_outcome[WriteOutcome.ACKNOWLEDGED],
        "conflicts": by_outcome[WriteOutcome.CONFLICT],
        "errors": by_outcome[WriteOutcome.ERROR],
        "indeterminate": by_outcome[WriteOutcome.UNKNOWN],
    }


def report_document(result: RunResult) -> dict:
    numbers = counts(result)
    throughput = numbers["acknowledged"] / result.seconds if result.seconds > 0 else None
    return {
        "report_format": REPORT_FORMAT,
        "writer": result.spec.writer,
        "writers": result.spec.writers,
        **numbers,
        "versions": result.report.versions,
        "skipped_workloads": result.skipped,
        "acknowledged_per_second": throughput,
        "anomalies": [a.to_json() for a in result.report.anomalies],
        "known_departures": [a.to_json() for a in result.report.known_departures],
        "clean": result.report.clean,
    }


def summary_text(result: RunResult) -> str:
    numbers = counts(result)
    lines = [
        f"writer {result.spec.writer}: {result.spec.writers} writers, {numbers['operations']} operations, "
        f"{numbers['acknowledged']} acknowledged, {numbers['conflicts']} conflicts, {numbers['errors']} errors, "
        f"{numbers['indeterminate']} indeterminate; {result.report.versions} versions",
    ]
    if result.seconds > 0:
        lines.append(f"throughput: {numbers['acknowledged'] / result.seconds:.1f} acknowledged commits per second")
    if result.skipped:
        lines.append(f"skipped workloads (the writer cannot do them): {', '.join(result.skipped)}")
    if result.report.known_departures:
        lines.append(
            f"known departures of pylance from the spec (not anomalies): {len(result.report.known_departures)}"
        )
    anomalies = result.report.anomalies
    lines.append(f"anomalies: {len(anomalies)}" if anomalies else "anomalies: none")
    for anomaly in anomalies:
        w = anomaly.witness
        lines.append(
            f"  {anomaly.name}: ops {', '.join(w.op_ids) or '-'}; versions {w.versions}; rows {w.rows}"
            + (f"; {w.detail}" if w.detail else "")
        )
    return "\n".join(lines)
