"""The rule catalog is generated from the code and cites real requirements."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance.requirements import load_requirements
from conformance.validator import Severity, all_rules
from conformance.validator.catalog import render_markdown, uncovered_requirements

ROOT = Path(__file__).resolve().parents[3]


def test_every_rule_cites_known_requirements():
    known = load_requirements()
    unknown = {r.id: [q for q in r.requirements if q not in known] for r in all_rules()}
    assert not {k: v for k, v in unknown.items() if v}


def test_rule_ids_are_topic_slash_check():
    for r in all_rules():
        topic, _, check = r.id.partition("/")
        assert topic and check and check == check.lower(), r.id


def test_docs_rules_md_is_the_generated_catalog():
    committed = (ROOT / "docs" / "rules.md").read_text()
    assert committed == render_markdown(), "regenerate: python -m conformance.validator.catalog > docs/rules.md"


def test_uncovered_lists_reasons_and_the_cli_prints_them():
    uncovered = uncovered_requirements()
    result = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "rules", "--uncovered"], capture_output=True, text=True, check=True
    )
    lines = result.stdout.splitlines()
    assert len(lines) == len(uncovered)
    for requirement, line in zip(uncovered, lines, strict=True):
        assert line.startswith(requirement.id)
        assert requirement.uncheckable is None or requirement.uncheckable in line


def test_error_rules_exist_for_every_checkable_topic():
    topics = {r.id.split("/")[0] for r in all_rules() if r.severity is Severity.ERROR}
    assert {"manifest", "naming", "transaction", "feature-flags"} <= topics


def test_no_rule_cites_a_requirement_the_catalog_calls_uncheckable():
    """A rule cites what it checks; a requirement about behaviour that leaves
    no trace at rest cannot be what it checks (partly checkable ones can)."""
    requirements = load_requirements()
    contradictions = [
        (r.id, q)
        for r in all_rules()
        for q in r.requirements
        if requirements[q].uncheckable and not requirements[q].uncheckable.startswith("Partly checkable")
    ]
    assert not contradictions


def test_the_tested_requirements_map_is_a_fresh_scan_of_the_tests():
    from conformance.test_coverage import render, scan_tests, tested_requirements

    fresh = scan_tests(ROOT / "tests")
    committed = (ROOT / "conformance" / "data" / "tested_requirements.json").read_text()
    assert committed == render(fresh), (
        "regenerate: python -m conformance.test_coverage > conformance/data/tested_requirements.json"
    )
    known = load_requirements()
    assert not [r for r in tested_requirements() if r not in known], "a test marks an unknown requirement"
