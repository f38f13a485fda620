"""``docs/spec-inconsistencies.md``, rendered from the claims catalog."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..spec_sources import SourceDocument
from .claims import Thread
from .model import Claim, Inconsistency, MeaningChange

GENERATED_NOTICE = (
    "_Generated from `conformance/spec_inconsistencies/` by "
    "`python -m conformance.spec_inconsistencies --markdown > docs/spec-inconsistencies.md`; do not edit by hand._"
)


def render_markdown(
    found: Iterable[Inconsistency],
    changes: Iterable[MeaningChange],
    threads: Iterable[Thread],
    documents: Mapping[str, SourceDocument],
) -> str:
    found = list(found)
    lines = [
        GENERATED_NOTICE,
        "",
        "# Where the specification's pages disagree",
        "",
        "Each entry is a subject (a feature flag bit, a field number of a message, or a name) that two or more "
        "upstream pages, in the states named below (repository, path and commit: docs/spec-sources.md), give "
        "different meanings. The pages are not reconciled here: each entry says what the suite does meanwhile. "
        "The meanings are restated in the project's words; the claims are data "
        "(`conformance/spec_inconsistencies/claims.py`) and the check that groups them by subject is "
        "`conformance/spec_inconsistencies/model.py`. A dataset that sets a contested flag bit draws the info "
        "finding `feature-flags/contested-bit` (requirement `feature-flags.one-meaning-per-bit`).",
        "",
        f"{len(found)} disagreements: " + ", ".join(str(item.subject) for item in found) + ".",
        "",
    ]
    for item in found:
        lines += [f"## {_title(item)}", ""]
        lines += ["| meaning | page | commit | section |", "| --- | --- | --- | --- |"]
        for meaning, claims in item.meanings:
            for claim in claims:
                lines.append(f"| {meaning.text} | {_page(claim, documents)} | {claim.section} |")
        lines += ["", f"What the suite does meanwhile: {item.meanwhile or 'nothing decided yet.'}", ""]
    lines += [
        "## Meanings a page changed between its states",
        "",
        "Not disagreements between pages: an earlier state of one page said something its later state replaced. "
        "Only the later state takes part in the check above.",
        "",
        "| subject | page | earlier state | said | later state | says |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for change in changes:
        earlier = documents[change.earlier.document]
        later_document = documents[change.later[0].document] if change.later else None
        says = "; ".join(claim.meaning.text for claim in change.later) or "nothing"
        lines.append(
            f"| {change.subject} | `{earlier.path}` | [{earlier.commit[:10]}]({earlier.url}) | "
            f"{change.earlier.meaning.text} | "
            + (f"[{later_document.commit[:10]}]({later_document.url})" if later_document else "-")
            + f" | {says} |"
        )
    lines += ["", "## Upstream threads", ""]
    for thread in threads:
        lines += [f"- [{thread.title}]({thread.url}): {thread.summary}"]
    return "\n".join(lines) + "\n"


def _title(item: Inconsistency) -> str:
    kind = item.subject.kind.value
    return f"{kind[:1].upper()}{kind[1:]} `{item.subject.key}`"


def _page(claim: Claim, documents: Mapping[str, SourceDocument]) -> str:
    document = documents[claim.document]
    return f"`{document.path}` (`{document.id}`) | [{document.commit[:10]}]({document.url})"
