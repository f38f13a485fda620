"""The adapter of ``lance-conformance compat`` documents (the cross-release
compatibility matrix, ``conformance/compat/``), kept apart: it is written
against the small interface below, not against the command's schema
(``compat-matrix.schema.json``), which was being written at the same time.
Fitting it to that schema is this module's job alone: the marker in
:func:`recognises`, the schema in :data:`INTERFACE`, the statuses in
:data:`STATUSES`, the field names in :func:`results`.

The interface: a document with

* ``format``: an integer, and ``cells``: a list (together, the marker);
* ``generated``: when the run ended (ISO 8601), and optionally ``run_date``
  (``YYYY-MM-DD``, the day it is filed under; else the day of ``generated``);
* ``implementation``: whose releases are crossed (``pylance`` when absent);
* ``releases``: the releases taking part;
* ``cells``: one per (writer release, reader release, feature), each with a
  ``status``: ``pass``, ``refused`` (the reader refused cleanly, as the
  specification asks of an unknown feature: a pass), ``fail`` (an error,
  a panic or wrong rows) or ``not-applicable``.

Each reader release gets one result (suite ``compat``) over the cells it
read: forward and backward compatibility are the reader's to honour.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .adapters import SUITE_DISTRIBUTION, Adapter
from .model import Result, RunOf, result, tally

#: A compat cell's status -> the status it counts as (conformance.dashboard.model).
STATUSES = {"pass": "pass", "refused": "pass", "fail": "fail", "not-applicable": "not-applicable"}

INTERFACE: Mapping[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["format", "generated", "releases", "cells"],
    "properties": {
        "format": {"type": "integer"},
        "generated": {"type": "string"},
        "run_date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "implementation": {"type": "string"},
        "versions": {"type": "object", "additionalProperties": {"type": "string"}},
        "releases": {"type": "array", "items": {"type": "string"}},
        "cells": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["writer", "reader", "feature", "status"],
                "properties": {
                    "writer": {"type": "string"},
                    "reader": {"type": "string"},
                    "feature": {"type": "string"},
                    "status": {"enum": sorted(STATUSES)},
                },
            },
        },
    },
}


def recognises(document: Mapping[str, Any]) -> bool:
    return "format" in document and "cells" in document and "releases" in document


def results(document: Mapping[str, Any], path: Path, source: str) -> list[Result]:
    run = RunOf(
        document.get("run_date") or document["generated"][:10],
        document["generated"],
        document.get("versions", {}).get(SUITE_DISTRIBUTION, "unknown"),
    )
    implementation = document.get("implementation", "pylance")
    by_reader: dict[str, list[str]] = {}
    for cell in document["cells"]:
        by_reader.setdefault(cell["reader"], []).append(STATUSES[cell["status"]])
    return [
        result("compat", implementation, reader, tally(statuses), run=run, source=source, kind="compat")
        for reader, statuses in sorted(by_reader.items())
    ]


COMPAT = Adapter(kind="compat", recognises=recognises, schema=INTERFACE, results=results)
