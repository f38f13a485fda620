"""Every validator rule. The rule modules (:mod:`.rules`, one per spec topic)
register theirs with :mod:`.registry` when imported; this module imports
them, from above, so that the registry never imports its own plugins: all of
them for the catalog and a full run, only the selected topics' for a run
limited with ``--rules`` (start-up, issue 17). The engine, the catalog, the
reports and the command line take the rules from here."""

from __future__ import annotations

from collections.abc import Iterator

from . import rules
from .registry import Rule, registered_rules, set_loader

# A rule that reports under another topic's rule id finds it registered even
# when only its own topic was loaded.
set_loader(rules.load_all)


def all_rules() -> list[Rule]:
    """Every rule, by id."""
    rules.load_all()
    return registered_rules()


def rules_by_id() -> dict[str, Rule]:
    """Rule id -> rule, for every rule."""
    return {r.id: r for r in all_rules()}


def iter_rules(selected: list[str] | None = None) -> Iterator[Rule]:
    """Rules whose id equals a selection entry, or lies under it (``manifest`` selects ``manifest/...``)."""
    if selected:
        rules.load_for(selected)
    else:
        rules.load_all()
    for candidate in registered_rules():
        if not selected or any(candidate.id == s or candidate.id.startswith(s.rstrip("/") + "/") for s in selected):
            yield candidate
