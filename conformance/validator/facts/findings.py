"""Findings a rule reports under another rule's id."""

from __future__ import annotations

from ..context import VersionView
from ..registry import Finding, Severity, registered_rule


def tolerated(rule_id: str, view: VersionView, message: str, location: str) -> Finding:
    """An info finding of the stricter rule ``rule_id``: a departure from the
    specification that the project tolerates (docs/spec-discrepancies.md)."""
    found = registered_rule(rule_id)
    return found.finding(message, version=view.version, location=location, severity=Severity.INFO)
