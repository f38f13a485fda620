"""The matrix as a JSON document (``conformance/schemas/compat-matrix.schema.json``),
and the notes it carries.

The document describes itself, for whoever reads it without this package (the
dashboard reads these files): ``report`` names the kind of document
(``compat-matrix``) and ``format`` its version, as the project's other
results do; ``generated`` is when the run ended (ISO 8601, UTC), ``run_date``
the day it is filed under (``YYYY-MM-DD``: :mod:`conformance.run_stamp`), ``started``
when it began, ``implementation`` whose releases are crossed (``pylance``),
``versions`` the suite's; then the releases (names, oldest first, and the
environment of each), the features, what each release wrote, every cell
(``status``: ``pass``, ``refused``, ``fail``, ``not-applicable``) and a summary.

One note is always there: whether the run reproduced lance-format/lance#9454
(readers before 12.0 cannot open a version whose inline transaction holds an
operation they do not know). The ``txn-data-overlay`` feature commits a
DataOverlay (a transaction operation since 9.0) that changes nothing else, so
no reader feature flag is set; a reader that fails it with "did not contain
an operation" is the break. When no cell shows it, the note says which part of
the recipe the run's releases lack.
"""

from __future__ import annotations

import json
from typing import Any

from ..describe import schema_validator
from ..expectations import version_key
from ..run_stamp import stamp
from .feature_writer import FEATURES
from .outcomes import PANIC_PATTERNS, REFUSAL_PATTERNS, Outcome
from .run import CompatRun

#: The marker of the document's kind.
REPORT = "compat-matrix"
FORMAT = 1
IMPLEMENTATION = "pylance"
SCHEMA = "compat-matrix.schema.json"

ISSUE_9454 = "lance-format/lance#9454"
#: The feature whose dataset reproduces #9454, and what a reader says when it breaks.
OVERLAY_FEATURE = "txn-data-overlay"
BREAK_MESSAGE = "did not contain an operation"
#: Readers that decode the inline transaction (since 1.0) and do not know
#: DataOverlay (before 9.0): the ones #9454 says fail.
BREAKABLE_READERS = ((1,), (9,))
#: Writers that record the inline transaction where readers before 12 look
#: for it (Manifest field 21) and can commit a DataOverlay: 9.0 up to 14.0,
#: which records its position in field 23 instead (reference_impl/manifest.py,
#: PYLANCE_TRANSACTION_SECTION_FIELD), out of those readers' sight.
BREAKING_WRITERS = ((9,), (14,))


def _within(release: str, bounds: tuple[tuple[int, ...], tuple[int, ...]]) -> bool:
    return bounds[0] <= version_key(release) < bounds[1]


def issue_9454_note(run: CompatRun) -> dict[str, Any]:
    """Whether the run reproduced #9454, with the cells that show it, or why not."""
    broken = [
        cell
        for cell in run.cells
        if cell.feature == OVERLAY_FEATURE and cell.outcome is Outcome.FAIL and BREAK_MESSAGE in (cell.message or "")
    ]
    note: dict[str, Any] = {"id": ISSUE_9454, "title": "an older reader on a newer writer's inline transaction"}
    if broken:
        note["status"] = "reproduced"
        note["cells"] = [{"writer": c.writer, "reader": c.reader, "feature": c.feature} for c in broken]
        by = ", ".join(sorted({c.writer for c in broken}, key=version_key))
        failing = ", ".join(sorted({c.reader for c in broken}, key=version_key))
        note["text"] = (
            f"Reproduced in {len(broken)} cells: a version committing only a DataOverlay, written by {by}, "
            f"cannot be opened by {failing}: they decode the inline transaction when opening the version and "
            "fail on the operation they do not know. 12.0 stopped failing on an undecodable inline "
            "transaction (lance-format/lance#7740)."
        )
        return note
    names = [release.name for release in run.releases]
    written = {r.release for r in run.writes if OVERLAY_FEATURE in r.datasets}
    writers = [name for name in written if _within(name, BREAKING_WRITERS)]
    readers = [name for name in names if _within(name, BREAKABLE_READERS)]
    reasons = []
    if OVERLAY_FEATURE not in run.features:
        reasons.append(f"the run did not write the {OVERLAY_FEATURE} feature")
    if not writers:
        reasons.append(
            "no release of the run writes a DataOverlay where older readers look for the inline transaction "
            "(9.0 to 13.x do; 14.x records the transaction section in Manifest field 23, which readers before "
            "12 do not read, and releases before 9.0 have no DataOverlay)"
        )
    if not readers:
        reasons.append("no reader of the run is between 1.0 and 8.x (older ones ignore the inline transaction)")
    if not reasons:
        reasons.append("the releases that should break read the dataset: see the txn-data-overlay cells")
    note["status"] = "not-reproduced"
    note["cells"] = []
    note["text"] = "Not reproduced by this run: " + "; ".join(reasons) + "."
    return note


def _writes(run: CompatRun) -> list[dict[str, Any]]:
    entries = []
    for report in run.writes:
        for feature in run.features:
            if report.failure is not None:
                status, detail = "writer-failed", report.failure
            elif feature in report.datasets:
                status, detail = "written", None
            elif feature in report.not_offered:
                status, detail = "not-offered", report.not_offered[feature]
            else:
                status, detail = "write-error", report.write_errors.get(feature, "the writer did not report it")
            entries.append({"release": report.release, "feature": feature, "status": status, "detail": detail})
    return entries


def to_document(run: CompatRun, run_date: str | None = None) -> dict[str, Any]:
    """The JSON document of a run (valid against :data:`SCHEMA`), filed under
    ``run_date`` when given (``--run-date``), else under the day it ended."""
    run_stamp = stamp(run_date, generated=run.ended.isoformat(timespec="seconds"))
    counts = {outcome.value: sum(cell.outcome is outcome for cell in run.cells) for outcome in Outcome}
    return {
        "report": REPORT,
        "format": FORMAT,
        "implementation": IMPLEMENTATION,
        "generated": run_stamp.generated,
        "run_date": run_stamp.run_date,
        "started": run.started.isoformat(timespec="seconds"),
        "versions": {"lance-conformance": run_stamp.suite_version},
        "timeout_seconds": run.timeout,
        "releases": [release.name for release in run.releases],
        "release_environments": {release.name: release.environment for release in run.releases},
        "features": [{"name": name, "summary": FEATURES[name]} for name in run.features],
        "writes": _writes(run),
        "reader_failures": [{"release": name, "message": why} for name, why in run.reader_failures.items()],
        "cells": [cell.to_json() for cell in run.cells],
        "summary": {"cells": len(run.cells), **counts},
        "passed": all(cell.outcome.accepted for cell in run.cells) and not run.reader_failures,
        "classification": {"refusal_patterns": list(REFUSAL_PATTERNS), "panic_patterns": list(PANIC_PATTERNS)},
        "notes": [issue_9454_note(run)],
    }


def validate_document(document: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``document`` fits the schema."""
    schema_validator(SCHEMA).validate(document)


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"
