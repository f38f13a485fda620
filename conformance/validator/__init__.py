"""The spec validator: registered rules, each citing requirement ids, run over
a dataset by :func:`validate`.

Layers, top down (enforced by the ``validator-layers`` contract in
pyproject.toml): ``report``, ``catalog`` and ``spark`` (the validator as
a Spark job); ``engine``; ``ruleset`` (every
rule); ``rules/``, one module per spec topic; ``facts/``, what the rules know
about a dataset, shared through public names; ``baseline``,
``writer_defects`` and ``context``; ``registry``. The HTML report will be
a format of :mod:`.report`."""

from .engine import Report, validate
from .registry import Finding, Rule, Scope, Severity, rule
from .ruleset import all_rules

__all__ = ["Finding", "Report", "Rule", "Scope", "Severity", "all_rules", "rule", "validate"]
