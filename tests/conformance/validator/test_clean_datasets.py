"""Soundness on real data: every version of every dataset pylance writes (two
releases) and every dataset the reference writer produces validates without
errors or warnings. Infos are allowed: they report tolerated departures
recorded in docs/spec-discrepancies.md; so are the warnings that name a known
defect of the release that wrote the version (conformance/data/writer_defects.json),
and the old release's corpus must show each of its defects it exercises."""

from __future__ import annotations

import json

import pytest

from conformance.describe import schema_validator
from conformance.validator import Severity, validate


def _problems(path, known_defects: set[str] | None = None) -> list[str]:
    """Errors and warnings, except warnings naming a defect in ``known_defects``
    (which are collected there when the set is given)."""
    report = validate(path, all_versions=True)
    schema_validator("validation-report.schema.json").validate(report.to_json())
    problems = []
    for f in report.findings:
        if f.severity is Severity.WARNING and f.known_defect is not None and known_defects is not None:
            known_defects.add(f.known_defect)
        elif f.severity in (Severity.ERROR, Severity.WARNING):
            problems.append(f"v{f.version} {f.rule}: {f.message} ({f.location})")
    return problems


def test_pylance_scenarios_are_clean(pylance_datasets):
    failures = {name: _problems(path) for name, path in sorted(pylance_datasets.items())}
    failures = {name: found for name, found in failures.items() if found}
    assert not failures, json.dumps(failures, indent=2)


@pytest.mark.old_pylance
def test_old_pylance_datasets_are_clean(old_pylance_datasets):
    """pylance 0.20's delta segment repeats its predecessor's fragments, and
    its Update rebased over a Project puts the dropped column's data file
    back: the two warnings its datasets may have, and they must have them."""
    seen: set[str] = set()
    failures = {name: _problems(path, seen) for name, path in sorted(old_pylance_datasets.items())}
    failures = {name: found for name, found in failures.items() if found}
    assert not failures, json.dumps(failures, indent=2)
    assert seen == {"lance-delta-index-segment-repeats-fragments", "lance-rebased-update-restores-dropped-column-files"}


def test_base_datasets_are_clean(base_datasets):
    for name, path in base_datasets.items():
        assert not _problems(path), name
