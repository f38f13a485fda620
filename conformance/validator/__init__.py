"""The spec validator: registered rules, each citing requirement ids, run over
a dataset by :func:`validate`."""

from .engine import Report, validate
from .registry import Finding, Rule, Scope, Severity, rule
from .ruleset import all_rules

__all__ = ["Finding", "Report", "Rule", "Scope", "Severity", "all_rules", "rule", "validate"]
