"""The adapter of ``lance-conformance compat`` documents (the cross-release
compatibility matrix, :mod:`conformance.compat`), validated against the
command's own schema, ``compat-matrix.schema.json``, and recognised by its
marker ``report: compat-matrix``.

Each reader release gets one result (suite ``compat``) over the cells it
read: forward and backward compatibility are the reader's to honour. A cell
``refused`` (the reader refused cleanly, as the specification asks of an
unknown feature) counts as a pass, ``fail`` (an error, a panic or wrong
rows) as a failure, ``not-applicable`` in the total only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .adapters import SUITE_DISTRIBUTION, Adapter
from .model import Result, RunOf, result, tally

#: A compat cell's status -> the status it counts as (conformance.dashboard.model).
STATUSES = {"pass": "pass", "refused": "pass", "fail": "fail", "not-applicable": "not-applicable"}


def recognises(document: Mapping[str, Any]) -> bool:
    return document.get("report") == "compat-matrix"


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


COMPAT = Adapter(kind="compat", recognises=recognises, schema="compat-matrix.schema.json", results=results)
