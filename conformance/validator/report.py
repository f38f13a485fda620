"""Renderings of a validation report: text, JSON, JUnit XML and SARIF 2.1.0.

JSON is the reference form (its JSON Schema is
``conformance/schemas/validation-report.schema.json``); JUnit lets CI systems
show one test case per rule, and SARIF lets code-scanning tools show findings
next to the files they concern.
"""

from __future__ import annotations

import json
from collections import Counter
from xml.etree import ElementTree

from .baseline import BaselineEntry, BaselineOutcome
from .engine import REPORT_FORMAT, Report
from .registry import Finding, Severity
from .ruleset import rules_by_id


def to_text(report: Report) -> str:
    lines = [
        f"{report.dataset}: versions {_span(report.versions)}, {len(report.rules)} rules, "
        f"format revision {report.spec_revision.name}{', data pages decoded (--deep)' if report.deep else ''}"
    ]
    for finding in report.findings:
        where = f" at {finding.location}" if finding.location else ""
        version = f"v{finding.version} " if finding.version is not None else ""
        lines.append(
            f"  {finding.severity.value.upper():7} {version}{finding.rule}{where}: {finding.message}"
            f" [{', '.join(finding.requirements)}]"
        )
    summary = report.summary()
    totals = f"{summary['errors']} errors, {summary['warnings']} warnings, {summary['infos']} infos"
    if report.baseline is not None:
        lines.extend(_baseline_lines(report.baseline))
        totals += f", {summary['suppressed']} suppressed by the baseline"
    lines.append(totals)
    return "\n".join(lines)


def _baseline_lines(outcome: BaselineOutcome) -> list[str]:
    lines = []
    if outcome.suppressed:
        by_rule = Counter(s.finding.rule for s in outcome.suppressed)
        shown = ", ".join(f"{rule} ({n})" for rule, n in sorted(by_rule.items()))
        lines.append(f"  baseline {outcome.baseline.path} suppressed {len(outcome.suppressed)} findings: {shown}")
    for entry in outcome.stale:
        lines.append(f"  STALE   {_entry(entry)}: the baseline lists it, no finding matches it")
    return lines


def _entry(entry: BaselineEntry) -> str:
    version = f" v{entry.version}" if entry.version is not None else ""
    return f"baseline entry {entry.rule} at '{entry.location}'{version}"


def _span(versions: list[int]) -> str:
    if not versions:
        return "none"
    if len(versions) == 1:
        return str(versions[0])
    return f"{versions[0]}..{versions[-1]}"


def to_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2)


def to_junit(report: Report) -> str:
    """One test suite, one test case per rule run; a rule with error findings
    fails, warnings, infos and findings a baseline suppressed are attached as
    system-out (the suite's properties count the suppressed ones)."""
    by_rule: dict[str, list] = {rule_id: [] for rule_id in report.rules}
    for finding in report.findings:
        by_rule.setdefault(finding.rule, []).append(finding)
    failures = sum(1 for found in by_rule.values() if any(f.severity is Severity.ERROR for f in found))
    suite = ElementTree.Element(
        "testsuite",
        name=f"lance-conformance validate {report.dataset}",
        tests=str(len(by_rule)),
        failures=str(failures),
        errors="0",
    )
    properties = ElementTree.SubElement(suite, "properties")
    ElementTree.SubElement(properties, "property", name="report_format", value=str(REPORT_FORMAT))
    ElementTree.SubElement(properties, "property", name="spec_revision", value=report.spec_revision.name)
    ElementTree.SubElement(properties, "property", name="deep", value=str(report.deep).lower())
    suppressed: dict[str, list[str]] = {}
    if report.baseline is not None:
        ElementTree.SubElement(properties, "property", name="baseline", value=str(report.baseline.baseline.path))
        ElementTree.SubElement(properties, "property", name="suppressed", value=str(len(report.baseline.suppressed)))
        for item in report.baseline.suppressed:
            by_rule.setdefault(item.finding.rule, [])
            suppressed.setdefault(item.finding.rule, []).append(
                f"suppressed by the baseline ({item.entry.reason}): {_line(item.finding)}"
            )
    for rule_id, found in sorted(by_rule.items()):
        case = ElementTree.SubElement(suite, "testcase", classname="lance-conformance", name=rule_id)
        errors = [f for f in found if f.severity is Severity.ERROR]
        if errors:
            failure = ElementTree.SubElement(case, "failure", message=f"{len(errors)} violations")
            failure.text = "\n".join(_line(f) for f in errors)
        others = [_line(f) for f in found if f.severity is not Severity.ERROR] + suppressed.get(rule_id, [])
        if others:
            ElementTree.SubElement(case, "system-out").text = "\n".join(others)
    suite.set("tests", str(len(by_rule)))
    if report.baseline is not None and report.baseline.stale:
        ElementTree.SubElement(suite, "system-out").text = "\n".join(
            f"stale {_entry(entry)}: no finding matches it" for entry in report.baseline.stale
        )
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True)


def _line(finding: Finding) -> str:
    version = f"v{finding.version} " if finding.version is not None else ""
    where = f" at {finding.location}" if finding.location else ""
    return f"{version}{finding.message}{where} [{', '.join(finding.requirements)}]"


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def to_sarif(report: Report) -> str:
    known = rules_by_id()
    rule_ids = sorted(
        {f.rule for f in report.findings}
        | set(report.rules)
        | {item.finding.rule for item in (report.baseline.suppressed if report.baseline else ())}
    )
    rules = []
    for rule_id in rule_ids:
        rule = known.get(rule_id)
        rules.append(
            {
                "id": rule_id,
                "shortDescription": {"text": rule.summary if rule else "internal validator error"},
                "properties": {"requirements": list(rule.requirements) if rule else []},
            }
        )
    results = []
    # Suppressed findings stay results, marked as accepted (SARIF's own
    # suppression object), so code-scanning tools show them as dismissed.
    accepted = report.baseline.suppressed if report.baseline is not None else ()
    suppressions = {id(item.finding): item.entry for item in accepted}
    for finding in [*report.findings, *(item.finding for item in accepted)]:
        result: dict[str, object] = {
            "ruleId": finding.rule,
            "level": _SARIF_LEVEL[finding.severity],
            "message": {"text": finding.message},
            "properties": {"requirements": list(finding.requirements), "version": finding.version},
        }
        if finding.location:
            uri, _, detail = finding.location.partition("#")
            artifact = {"uri": uri, "uriBaseId": "DATASET"}
            location: dict[str, object] = {"physicalLocation": {"artifactLocation": artifact}}
            if detail:
                location["logicalLocations"] = [{"fullyQualifiedName": detail}]
            result["locations"] = [location]
        entry = suppressions.get(id(finding))
        if entry is not None:
            result["suppressions"] = [{"kind": "external", "status": "accepted", "justification": entry.reason}]
        results.append(result)
    run: dict[str, object] = {
        "tool": {"driver": {"name": "lance-conformance", "rules": rules}},
        "originalUriBaseIds": {"DATASET": {"uri": f"file://{report.dataset}/"}},
        "results": results,
        "properties": {"reportFormat": REPORT_FORMAT, "specRevision": report.spec_revision.name, "deep": report.deep},
    }
    if report.baseline is not None and report.baseline.stale:
        run["invocations"] = [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": f"stale {_entry(entry)}: no finding matches it"}}
                    for entry in report.baseline.stale
                ],
            }
        ]
    document = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2)


FORMATS = {"text": to_text, "json": to_json, "junit": to_junit, "sarif": to_sarif}
