"""The rule registry.

A rule is a small function registered with :func:`rule`: it has a stable id, a
severity, the requirement ids (``conformance/data/requirements.json``) it
checks, a one-line summary, and a scope saying what it looks at. The
documentation's rule catalog is generated from this registry, never written by
hand.

The registry is filled by importing the rule modules
(:mod:`conformance.validator.rules`), which register their rules here; it
never imports them itself. :mod:`conformance.validator.ruleset` imports them,
from above, and is where the engine, the catalog and the command line take
the full rule list from.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Scope(str, enum.Enum):
    #: Called once with the whole dataset (naming, history, refs).
    DATASET = "dataset"
    #: Called once per version whose manifest decodes.
    VERSION = "version"


@dataclass(frozen=True)
class Finding:
    """One thing a rule found."""

    rule: str
    severity: Severity
    requirements: tuple[str, ...]
    message: str
    version: int | None = None
    #: A path relative to the dataset root, optionally with a detail after
    #: '#' (e.g. ``_versions/1.manifest#fragments[2].files[0]``).
    location: str | None = None
    #: Which of its rule's declared symptoms (:attr:`Rule.symptoms`) the
    #: finding shows, when it shows one: what known writer defects match.
    symptom: str | None = None
    #: The id of the known writer defect that explains the finding
    #: (``conformance/data/writer_defects.json``), when one does.
    known_defect: str | None = None

    def to_json(self) -> dict:
        document = {
            "rule": self.rule,
            "severity": self.severity.value,
            "version": self.version,
            "requirements": list(self.requirements),
            "message": self.message,
            "location": self.location,
        }
        if self.known_defect is not None:
            document["known_defect"] = self.known_defect
        return document


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    requirements: tuple[str, ...]
    summary: str
    scope: Scope
    check: Callable
    #: ``{name: meaning}``: particular shapes of the violation the rule tells
    #: apart in its findings, so that a known writer defect can name the one
    #: it explains (``conformance/data/writer_defects.json``).
    symptoms: Mapping[str, str] = dc_field(default_factory=dict, hash=False, compare=False)
    #: Whether the rule decodes data pages: it runs only in a deep validation
    #: (``validate --deep``), which the engine selects it for.
    deep: bool = False

    def finding(
        self,
        message: str,
        *,
        version: int | None = None,
        location: str | None = None,
        severity: Severity | None = None,
        symptom: str | None = None,
    ) -> Finding:
        if symptom is not None and symptom not in self.symptoms:
            raise ValueError(f"rule {self.id} has no symptom {symptom!r}")
        return Finding(self.id, severity or self.severity, self.requirements, message, version, location, symptom)


_RULES: dict[str, Rule] = {}


def _qualified(check: Callable) -> tuple[str, str]:
    return check.__module__, check.__qualname__


def rule(
    id: str,
    *,
    severity: Severity | str,
    requirements: tuple[str, ...] | list[str],
    summary: str,
    scope: Scope | str = Scope.VERSION,
    symptoms: Mapping[str, str] | None = None,
    deep: bool = False,
):
    """Register the decorated function as a rule.

    A version-scoped rule is called as ``check(version_view)`` and a
    dataset-scoped one as ``check(dataset_view)``; either yields
    ``(message, location)`` pairs (location may be None),
    ``(message, location, symptom)`` triples naming one of its declared
    ``symptoms`` (or None), or full :class:`Finding` objects when it needs
    another severity. A ``deep`` rule runs only when data pages are decoded
    (``validate --deep``).
    """

    def register(check: Callable) -> Callable:
        earlier = _RULES.get(id)
        # The same function imported again (a module dropped from sys.modules
        # and re-imported, as pytest's pytester does) replaces its rule; two
        # functions claiming one id are a mistake.
        if earlier is not None and _qualified(earlier.check) != _qualified(check):
            raise ValueError(f"rule {id} is registered twice")
        if not requirements:
            raise ValueError(f"rule {id} cites no requirement")
        _RULES[id] = Rule(
            id, Severity(severity), tuple(requirements), summary, Scope(scope), check, dict(symptoms or {}), deep
        )
        return check

    return register


def registered_rules() -> list[Rule]:
    """The rules registered so far, by id (:func:`.ruleset.all_rules` loads
    every rule module first)."""
    return [_RULES[key] for key in sorted(_RULES)]


#: Loads every rule module (set by :mod:`.ruleset`, the layer above, which
#: may have loaded only the selected topics).
_load_all: Callable[[], None] | None = None


def set_loader(load_all: Callable[[], None]) -> None:
    """How :func:`registered_rule` loads the rule modules not loaded yet."""
    global _load_all
    _load_all = load_all


def registered_rule(rule_id: str) -> Rule:
    """The registered rule ``rule_id``, for a rule that reports a finding
    under another rule's id while a validation runs (its module is loaded on
    first use when the run loaded only the selected topics); KeyError when
    there is none."""
    if rule_id not in _RULES and _load_all is not None:
        _load_all()
    return _RULES[rule_id]
