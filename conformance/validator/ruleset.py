"""Every validator rule. The rule modules (:mod:`.rules`, one per spec topic)
register theirs with :mod:`.registry` when imported; this module imports
them, from above, so that the registry never imports its own plugins. The
engine, the catalog, the reports and the command line take the rules from
here."""

from __future__ import annotations

from collections.abc import Iterator

from . import rules  # noqa: F401  (importing the package registers every rule)
from .registry import Rule, registered_rules


def all_rules() -> list[Rule]:
    """Every rule, by id."""
    return registered_rules()


def rules_by_id() -> dict[str, Rule]:
    """Rule id -> rule, for every rule."""
    return {r.id: r for r in all_rules()}


def iter_rules(selected: list[str] | None = None) -> Iterator[Rule]:
    """Rules whose id equals a selection entry, or lies under it (``manifest`` selects ``manifest/...``)."""
    for candidate in all_rules():
        if not selected or any(candidate.id == s or candidate.id.startswith(s.rstrip("/") + "/") for s in selected):
            yield candidate
