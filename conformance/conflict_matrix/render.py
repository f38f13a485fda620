"""The matrix as a text table (``lance-conformance conflicts``) and as
Markdown (``docs/conflicts.md``, generated: ``python -m
conformance.conflict_matrix render > docs/conflicts.md``)."""

from __future__ import annotations

from .model import Cell, ConflictMatrix, Mode, Outcome

_MODE_HEADINGS = {
    Mode.PYLANCE_PYLANCE: "pylance/pylance",
    Mode.REFERENCE_REFERENCE: "ref/ref",
    Mode.PYLANCE_REFERENCE: "pylance/ref",
    Mode.REFERENCE_PYLANCE: "ref/pylance",
}


def page_differs(cell: Cell) -> bool:
    """Whether pylance/pylance measured an outcome other than the page's."""
    expected = cell.page.expects()
    observed = cell.outcomes[Mode.PYLANCE_PYLANCE]
    measured = observed in (Outcome.COMMITTED, Outcome.RETRYABLE, Outcome.INCOMPATIBLE)
    return expected is not None and measured and observed is not expected


def _mark(cell: Cell, mode: Mode) -> str:
    text = cell.outcomes[mode].value
    if mode in cell.problems:
        text += " (checks failed)"
    return text


def to_text(matrix: ConflictMatrix) -> str:
    headings = ["first -> second : sub-case", "page", *(_MODE_HEADINGS[m] for m in Mode), "known discrepancy"]
    rows = [
        [
            cell.id.replace("/", " -> ", 1),
            cell.page.value + (" (!)" if page_differs(cell) else ""),
            *(_mark(cell, mode) for mode in Mode),
            cell.discrepancy.entry if cell.discrepancy else "",
        ]
        for cell in matrix.cells
    ]
    widths = [max(len(r[i]) for r in [headings, *rows]) for i in range(len(headings))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headings, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.append("")
    lines.append(
        f"pylance {matrix.pylance}; page: {matrix.spec.repository} {matrix.spec.path} @ {matrix.spec.commit[:12]}"
    )
    lines.append("(!) pylance/pylance measured an outcome other than the page's")
    lines.append('known discrepancy: the entry of docs/spec-discrepancies.md ("Conflict matrix") for the cell')
    return "\n".join(lines)


#: How an implementation races the matrix itself (``lance-conformance conflicts --driver``).
RACING_YOUR_IMPLEMENTATION = (
    "## Racing your implementation",
    "",
    "```sh",
    "lance-conformance conflicts --driver DRIVER [--cells PATTERNS] [--expectations FILE] \\",
    "    [--format text|json] [--out FILE]",
    "```",
    "",
    "races every cell whose two operations the write vocabulary (`conformance/drivers/writes.py`)",
    "expresses (appends, deletes, row updates, overwrites, scalar indices, compactions, column",
    "additions and drops, restores, config changes) with one writing driver as both writers:",
    "any name a driver option takes (`reference`, `pylance`, `lancedb`, your module, `worker:NAME`,",
    "`cmd:COMMAND LINE` for a worker in any language; `docs/drivers.md`). On the base table above,",
    "written by the reference, the driver commits the first operation with `read_version` set to the",
    "base version, then the second from that same version. The second write's outcome (a commit, or",
    "`WriteConflict`: retryable, incompatible, or a conflict whose kind the driver does not say, as",
    "a worker's conflict today, which agrees with either kind) is",
    "compared with the stored `ref/ref` outcome, `pylance/pylance` shown beside it: the reference",
    "follows the page in every cell where the two differ. Whatever the outcome, the table left behind",
    "must validate without errors and read with the reference.",
    "",
    "- A driver needs the `write` and `write-at-version` capabilities; without them every cell is",
    "  *not-applicable* (LanceDB writes only on the latest version: no cell is raced). A cell whose",
    "  operation the driver does not declare, or refuses with `WriteNotSupported`, is *unsupported*:",
    "  nothing is emulated.",
    "- Each driver reads its implementation's conflict signal in one function, `conflict_from(error)`",
    "  (`conformance.drivers.pylance_driver`, `.reference`, `.lancedb_driver`), returning a",
    "  `WriteConflict` whose `retryable` says the kind, or None; a driver of your own raises",
    "  `WriteConflict(message, retryable=...)` from its `write`.",
    "- `--cells` takes comma-separated cell ids or shell patterns (`delete/*`, `*:same-rows`).",
    "- `--expectations FILE` lists the cells your implementation is known to answer otherwise (the",
    "  project's expectations file, `conformance/schemas/expectations.schema.json`: suite",
    "  `conflicts`, case the cell id); without it the file shipped for the implementation applies",
    "  (pylance's records its four known discrepancies). A listed cell that differs is an",
    "  *expected-difference*; a listed cell that agrees is *fixed* and fails the run.",
    "- Exit codes: 0 every cell as the matrix (or the expectations) says, 1 a cell differs or an",
    "  expectation is stale, 2 a usage error (unknown driver or cell, a bad option), 3 a driver that",
    "  cannot load. `--format json` (and `--out FILE`) give the report as JSON",
    "  (`conformance/schemas/conflict-races-report.schema.json`).",
    "- The same races run in the pytest plugin: `pytest --pyargs conformance.suite --lance-driver",
    "  DRIVER --lance-suite conflicts`.",
)


def to_markdown(matrix: ConflictMatrix) -> str:
    out = [
        "# The conflict matrix",
        "",
        "<!-- Generated by `python -m conformance.conflict_matrix render`; do not edit. -->",
        "",
        "Two writers read the same version of a small table (three fragments of four rows, columns `id`,",
        "`extra`, `value`, row 3 deleted, written by pylance with its default data storage version 2.2);",
        "the first commits, then the second tries. Each row is one ordered pair of operation types of",
        "`protos/transaction.proto` in one sub-case of the upstream transaction page",
        f"(`{matrix.spec.repository}` `{matrix.spec.path}` at `{matrix.spec.commit[:12]}`, each",
        "operation's \"Compatibility\" section, read from the second operation's side). *page* is that",
        "page's verdict (*compatible* and *rebase* both end in a commit); the other columns are what",
        f"happened to the second writer, measured with pylance {matrix.pylance} and the reference",
        "implementation: `pylance/ref` means pylance committed first and the reference second.",
        "",
        "- **committed**: the second commit succeeded. After the race, committed or refused, the",
        "  reference reader and pylance saw the same rows and the validator reported no error on the",
        "  latest version, unless the cell says *checks failed* (the finding is listed below the table);",
        "  a finding that a known defect of the writer explains (`conformance/data/writer_defects.json`)",
        "  is a warning, not an error.",
        "- **retryable** / **incompatible**: the second writer got a conflict of that kind. pylance 14",
        "  raises `lance.commit.CommitConflictError` (an `OSError`; `retryable` says which) from",
        '  `LanceDataset.commit`, a plain `OSError` "Incompatible transaction: ..." for incompatible',
        '  conflicts of high-level calls, and "Too many concurrent writers. Attempted 0 retries." from',
        "  `delete`/`update` called with `conflict_retries=0` (the matrix disables their re-runs). The",
        "  reference raises `RetryableConflictError` / `IncompatibleConflictError`.",
        "- **not_applicable**: a Clone only starts a dataset; **not_reachable**: one side cannot produce",
        "  the operation (the note says why); **pending**: not measured yet; **error**: the second writer",
        "  failed with something other than a conflict.",
        "- **(!)** marks cells where pylance/pylance differs from the page; *known discrepancy* names the",
        '  entry of `docs/spec-discrepancies.md` ("Conflict matrix") of a cell where the reference differs',
        "  from pylance, and which side follows the page.",
        "",
        "Regenerate the data with `python -m conformance.conflict_matrix measure --output",
        "conformance/data/conflict_matrix.json`; `tests/conformance/conflict_matrix/` re-runs it.",
        "",
        *RACING_YOUR_IMPLEMENTATION,
        "",
        "## Not covered",
        "",
    ]
    out += [f"- **{n.name}**: {n.reason}." for n in matrix.not_covered]
    out += [
        "",
        "## Cells",
        "",
        "| first | second | sub-case | page | "
        + " | ".join(_MODE_HEADINGS[m] for m in Mode)
        + " | known discrepancy |",
        "| --- | --- | --- | --- | " + " | ".join("---" for _ in Mode) + " | --- |",
    ]
    for cell in matrix.cells:
        page = cell.page.value + (" (!)" if page_differs(cell) else "")
        marks = " | ".join(_mark(cell, mode) for mode in Mode)
        known = (
            ""
            if cell.discrepancy is None
            else f"{cell.discrepancy.entry} (follows the page: {cell.discrepancy.follows_page})"
        )
        out.append(f"| {cell.first.value} | {cell.second.value} | {cell.subcase} | {page} | {marks} | {known} |")
    out += ["", "## What each cell does", ""]
    for cell in matrix.cells:
        if cell.outcomes[Mode.PYLANCE_PYLANCE] is Outcome.NOT_APPLICABLE:
            continue
        out.append(f"- `{cell.id}`: first {cell.first_action}; then {cell.second_action}. Page: {cell.page_reason}.")
        for mode in Mode:
            if mode in cell.notes:
                out.append(f"  - {mode.value}: {cell.notes[mode]}")
            if mode in cell.problems:
                out.append(f"  - {mode.value}, checks failed: {cell.problems[mode]}")
    return "\n".join(out) + "\n"
