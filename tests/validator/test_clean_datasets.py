"""Soundness on real data: every version of every dataset pylance writes (two
releases) and every dataset the reference writer produces validates without
errors or warnings. Infos are allowed: they report tolerated departures
recorded in docs/spec-discrepancies.md."""

from __future__ import annotations

import json

import pytest

from conformance.describe import schema_validator
from conformance.validator import Severity, validate


def _problems(path) -> list[str]:
    report = validate(path, all_versions=True)
    schema_validator("validation-report.schema.json").validate(report.to_json())
    return [
        f"v{f.version} {f.rule}: {f.message} ({f.location})"
        for f in report.findings
        if f.severity in (Severity.ERROR, Severity.WARNING)
    ]


def test_pylance_scenarios_are_clean(pylance_datasets):
    failures = {name: _problems(path) for name, path in sorted(pylance_datasets.items())}
    failures = {name: found for name, found in failures.items() if found}
    assert not failures, json.dumps(failures, indent=2)


@pytest.mark.old_pylance
def test_old_pylance_datasets_are_clean(old_pylance_datasets):
    failures = {name: _problems(path) for name, path in sorted(old_pylance_datasets.items())}
    failures = {name: found for name, found in failures.items() if found}
    assert not failures, json.dumps(failures, indent=2)


def test_base_datasets_are_clean(base_datasets):
    for name, path in base_datasets.items():
        assert not _problems(path), name
