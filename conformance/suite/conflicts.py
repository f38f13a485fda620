"""The conflicts suite: the cells of the conflict matrix the driver can perform.

A cell of :mod:`conformance.conflict_matrix` races two writers from one read
version: the first commits, then the second tries. Here both writers are the
driver under test: on a small base table (the matrix's: columns ``id``,
``extra``, ``value``; twelve rows in fragments of four; id 3 deleted),
written by the reference, the driver performs the first operation with
``read_version`` set to the base version, then the second from that same
version. Its second write must commit when the stored matrix
(``conformance/data/conflict_matrix.json``) records that the reference
committed it, and raise :class:`~conformance.drivers.writes.WriteConflict`
when it records a retryable or an incompatible conflict (the vocabulary does
not tell the two apart). Either way the table it leaves must validate
without errors and read with the reference.

Only cells whose two actions the write vocabulary expresses are checks: an
append, delete, update (rows), overwrite, index, compaction, column addition
or drop, restore or config change. Cells needing what it cannot say (a
DataReplacement, a MemWAL, a fragment reuse index, column rewrites in place,
config set by an overwrite) are left out. A Merge adding ``doubled = id * 2``
is expressed as a column ``id + 1``: the race is about the operation types,
not the values. The driver needs the ``write`` and ``write-at-version``
capabilities and both operations; without them a cell is not applicable.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..conflict_matrix.actions import FRAGMENT_ROWS, base_table
from ..conflict_matrix.cells import Template, all_cells
from ..conflict_matrix.model import Cell, Mode, Outcome, stored_matrix
from ..drivers import is_implementation_failure, writes
from ..drivers import reference as reference_driver
from ..drivers.protocol import Capability
from ..drivers.write_predicates import IsIn
from ..validator import Severity, validate
from .checks import Check, Suite, Verdict
from .run import SuiteRun

#: The mode whose stored outcome the driver must match: the reference racing itself.
EXPECTED_MODE = Mode.REFERENCE_REFERENCE
CONFLICTS = frozenset({Outcome.RETRYABLE, Outcome.INCOMPATIBLE})

Translation = Callable[[int], writes.WriteOp]


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def _translate(summary: str) -> Translation | None:
    """The write operation an action of the matrix stands for (its summary,
    ``conflict_matrix.actions``), as a function of the read version; None
    when the vocabulary cannot express it."""
    if summary == "append 4 rows (ids 12-15) as a new fragment":
        return lambda v: writes.Append(base_table(12, 4), read_version=v)
    if summary == "overwrite the table with 4 new rows (ids 100-103)":
        return lambda v: writes.Overwrite(base_table(100, 4), read_version=v)
    if match := re.fullmatch(r"delete rows with id IN \(([\d, ]+)\)", summary):
        ids = _ids(match[1])
        return lambda v: writes.Delete(IsIn("id", ids), read_version=v)
    if match := re.fullmatch(r"set value = -1 where id IN \(([\d, ]+)\) \(REWRITE_ROWS.*", summary):
        ids = _ids(match[1])
        return lambda v: writes.Update((("value", -1),), IsIn("id", ids), read_version=v)
    if match := re.fullmatch(r"create BTREE index '(\w+)' on (\w+)", summary):
        name, column = match[1], match[2]
        return lambda v: writes.CreateIndex(column, "BTREE", name, read_version=v)
    if summary.startswith("compact: fragment 0 (with a deleted row) rewritten"):
        # Fragments 1 and 2 are full: only fragment 0 is a candidate.
        return lambda v: writes.Compact(FRAGMENT_ROWS, True, read_version=v)
    if match := re.fullmatch(r"add column (\w+) = id \* 2 \(a Merge\)", summary):
        name = match[1]
        return lambda v: writes.AddColumns((writes.NewColumn(name, "id", 1),), read_version=v)
    if summary == "drop column extra (a Project)":
        return lambda v: writes.DropColumns(("extra",), read_version=v)
    if summary == "restore version 1":
        return lambda v: writes.Restore(1, read_version=v)
    if match := re.fullmatch(r"set config key '(\w+)'", summary):
        key = match[1]
        return lambda v: writes.Config(((key, "v"),), read_version=v)
    return None


@dataclass(frozen=True)
class Race:
    cell: Cell
    template: Template
    first: Translation
    second: Translation

    @property
    def expected(self) -> Outcome:
        return self.cell.outcomes[EXPECTED_MODE]


def races() -> list[Race]:
    """The cells the vocabulary expresses, whose reference outcome is a measured commit or conflict."""
    templates = {spec.id: spec.template for spec in all_cells()}
    found = []
    for cell in stored_matrix().cells:
        template = templates.get(cell.id)
        if template not in (Template.PLAIN, Template.STABLE_ROW_IDS):
            continue
        if cell.outcomes.get(EXPECTED_MODE) not in CONFLICTS | {Outcome.COMMITTED}:
            continue
        first, second = _translate(cell.first_action), _translate(cell.second_action)
        if first is not None and second is not None:
            found.append(Race(cell, template, first, second))
    return found


def _base(uri: str, template: Template) -> int:
    """The matrix's base table, written by the reference; its latest version.
    2.0 as in the stored matrix, whose cells the reference also writes into."""
    reference_driver.write(
        uri,
        writes.Create(
            base_table(),
            data_storage_version="2.0",
            max_rows_per_file=FRAGMENT_ROWS,
            stable_row_ids=template is Template.STABLE_ROW_IDS,
        ),
    )
    committed = reference_driver.write(uri, writes.Delete(IsIn("id", (3,))))
    assert committed.version is not None, "the reference says what it committed"
    return committed.version


def _failure(exc: BaseException) -> str:
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message[:300]}"


def _left_behind(uri: str) -> list[str]:
    problems = []
    errors = sorted({f.rule for f in validate(uri).findings if f.severity is Severity.ERROR})
    if errors:
        problems.append(f"after the race the validator reports errors: {', '.join(errors)}")
    try:
        reference_driver.read_table(uri)
    except Exception as exc:  # the reference refusing what the driver committed is the finding
        problems.append(f"after the race the reference cannot read the table: {_failure(exc)}")
    return problems


def _missing(run: SuiteRun, race: Race) -> str | None:
    for capability in (Capability.WRITE, Capability.WRITE_AT_VERSION):
        if not run.has(capability):
            return capability.value
    for op in (race.first(0), race.second(0)):
        if op.kind.value not in run.info.write_operations:
            return f"{Capability.WRITE.value}: {op.kind.value}"
    return None


def run_race(run: SuiteRun, race: Race) -> Verdict:
    missing = _missing(run, race)
    if missing is not None:
        return Verdict.not_applicable(missing)
    driver = run.driver
    with tempfile.TemporaryDirectory(prefix="lance-suite-conflicts-") as scratch:
        uri = str(Path(scratch) / "table.lance")
        read_version = _base(uri, race.template)
        try:
            driver.write(uri, race.first(read_version))  # type: ignore[attr-defined]
        except BaseException as exc:
            if not is_implementation_failure(exc):
                raise
            return Verdict.failed([f"the first writer ({race.cell.first_action}) failed: {_failure(exc)}"])
        expected = "a commit" if race.expected is Outcome.COMMITTED else "a conflict"
        try:
            driver.write(uri, race.second(read_version))  # type: ignore[attr-defined]
            outcome = "a commit"
        except writes.WriteConflict:
            outcome = "a conflict"
        except BaseException as exc:
            if not is_implementation_failure(exc):
                raise
            return Verdict.failed(
                [f"the second writer ({race.cell.second_action}) failed with no conflict: {_failure(exc)}"]
            )
        problems = []
        if outcome != expected:
            problems.append(
                f"the second write ended in {outcome}, where the matrix records {race.expected.value} "
                f"for the reference (the page says {race.cell.page.value}: {race.cell.page_reason})"
            )
        problems += _left_behind(uri)
    return Verdict.failed(problems) if problems else Verdict.passed()


def checks() -> list[Check]:
    return [
        Check(
            Suite.CONFLICTS,
            race.cell.id,
            partial(run_race, race=race),
            f"{race.cell.first_action}, then {race.cell.second_action}",
        )
        for race in races()
    ]
