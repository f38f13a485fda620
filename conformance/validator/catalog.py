"""The rule catalog, generated from the registry (``docs/rules.md``).

``python -m conformance.validator.catalog > docs/rules.md`` regenerates it; a
test fails when the committed file differs, so the catalog is never
maintained by hand.
"""

from __future__ import annotations

import sys

from ..requirements import load_requirements
from ..spec_revisions import REVISIONS
from ..test_coverage import tested_requirements
from .engine import applies_under
from .ruleset import all_rules
from .writer_defects import known_defects


def covered_requirements() -> set[str]:
    """Requirement ids cited by at least one rule."""
    return {req for r in all_rules() for req in r.requirements}


def uncovered_requirements() -> list:
    """Requirements no rule and no test checks, each with the catalog's reason
    when it is marked uncheckable (None when it could be checked but is not yet)."""
    covered = covered_requirements() | set(tested_requirements())
    return [req for req_id, req in sorted(load_requirements().items()) if req_id not in covered]


def _revisions_note(rule) -> str:
    """Empty for a rule every revision runs; otherwise the ones that do."""
    under = [item for item in REVISIONS if applies_under(rule, item)]
    if len(under) == len(REVISIONS):
        return ""
    if under and under[-1] is REVISIONS[-1] and under == list(REVISIONS[REVISIONS.index(under[0]) :]):
        return f" (from revision `{under[0].name}` on)"
    return f" (revisions {', '.join(f'`{item.name}`' for item in under)} only)"


def render_markdown() -> str:
    requirements = load_requirements()
    rules = all_rules()
    lines = [
        "_Generated from the rule registry by `python -m conformance.validator.catalog > docs/rules.md`;"
        " do not edit by hand._",
        "",
        "# Validator rules",
        "",
        f"{len(rules)} rules. Each cites the requirements (docs/requirements.md) it checks, and runs under "
        "the format revisions in which one of them is in force (`validate --spec-revision`).",
        "",
    ]
    topic = None
    for r in rules:
        current = r.id.split("/", 1)[0]
        if current != topic:
            topic = current
            lines += [f"## {topic}", "", "| rule | severity | checks | requirements |", "| --- | --- | --- | --- |"]
        cited = ", ".join(f"`{req}`" + ("" if req in requirements else " (unknown!)") for req in r.requirements)
        lines.append(f"| `{r.id}` | {r.severity.value} | {r.summary}{_revisions_note(r)} | {cited} |")
        if rules[-1] is r or rules[rules.index(r) + 1].id.split("/", 1)[0] != topic:
            lines.append("")
    lines += _known_defects()
    tested = {k: v for k, v in tested_requirements().items() if k not in covered_requirements()}
    lines += [
        "## Requirements checked by tests",
        "",
        "Behaviour a stored dataset cannot show is checked by the test suite instead "
        "(tests marked `@pytest.mark.requirements(...)`).",
        "",
        "| requirement | tests |",
        "| --- | --- |",
    ]
    for requirement, tests in sorted(tested.items()):
        lines.append(f"| `{requirement}` | {'<br>'.join(f'`{t}`' for t in tests)} |")
    lines.append("")
    uncovered = uncovered_requirements()
    lines += [
        "## Requirements no rule or test checks",
        "",
        f"{len(uncovered)} of {len(requirements)} requirements.",
        "",
        "| requirement | why |",
        "| --- | --- |",
    ]
    for req in uncovered:
        why = req.uncheckable or "checkable at rest; no rule yet"
        lines.append(f"| `{req.id}` | {why} |")
    return "\n".join(lines) + "\n"


def _known_defects() -> list[str]:
    """The table of known writer defects (conformance/data/writer_defects.json)."""
    lines = [
        "## Known writer defects",
        "",
        "A finding one of these explains, in a version its writer (`writer_version`) lies in the range, is a "
        "warning naming the defect (`conformance/data/writer_defects.json`; docs/spec-discrepancies.md).",
        "",
        "| defect | releases | findings | requirement |",
        "| --- | --- | --- | --- |",
    ]
    for defect in known_defects():
        findings = "<br>".join(f"`{s.rule}` ({s.symptom})" for s in defect.symptoms)
        lines.append(f"| `{defect.id}` | {defect.releases} | {findings} | `{defect.requirement}` |")
    return lines + [""]


if __name__ == "__main__":
    sys.stdout.write(render_markdown())
