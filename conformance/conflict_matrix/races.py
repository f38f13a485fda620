"""The matrix's cells raced by one writing driver, through the write vocabulary.

A cell of the matrix races two writers from one read version: the first
commits, then the second tries. Here both writers are one driver (any name
``load_driver`` takes): on the matrix's small base table (columns ``id``,
``extra``, ``value``; twelve rows in fragments of four; id 3 deleted; data
storage version 2.2), written by the reference, the driver performs the
first operation with ``read_version`` set to the base version ``v``, then the
second from that same ``v``
(:class:`~conformance.drivers.protocol.Capability.WRITE_AT_VERSION`). The
second write ends in a commit or a
:class:`~conformance.drivers.protocol.WriteConflict` (retryable, incompatible,
or of a kind the driver does not say); either way the table left behind must
validate without errors and read with the reference.

The oracle is the stored matrix (``conformance/data/conflict_matrix.json``),
mode ``reference/reference``: the reference is the executable specification,
and in every cell where it and pylance 14 differ the reference follows the
upstream transaction page (each is a known discrepancy,
``docs/spec-discrepancies.md``, "Conflict matrix"). The ``pylance/pylance``
outcome is shown beside it, so that a driver answering as pylance does in one
of those cells reads as such; an implementation that follows pylance there
records it in its expectations (pylance's shipped ones do). A conflict whose
kind the driver does not say agrees with either kind of conflict.

Only cells whose two actions the write vocabulary expresses are raced
(:func:`translate`): an append, delete, update (rows), overwrite, index,
compaction, column addition or drop, restore or config change. Cells needing
what it cannot say (a DataReplacement, a MemWAL, a fragment reuse index,
column rewrites in place, config set by an overwrite) are left out. A Merge
adding ``doubled = id * 2`` is expressed as a column ``id + 1``: the race is
about the operation types, not the values. An operation the driver does not
declare, or refuses with ``WriteNotSupported``, makes the cell *unsupported*:
nothing is emulated.
"""

from __future__ import annotations

import enum
import fnmatch
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference_impl.dataset import Dataset

from ..drivers import is_implementation_failure, writes
from ..drivers import reference as reference_driver
from ..drivers.protocol import Capability, DriverInfo
from ..drivers.write_predicates import IsIn
from ..expectations import Expectation
from ..validator import Severity, validate
from .actions import FRAGMENT_ROWS, base_table
from .cells import Template, all_cells
from .model import Cell, Mode, Outcome, stored_matrix
from .signals import conflict_outcome

#: The stored mode a driver's race is judged against (see the module docstring).
ORACLE = Mode.REFERENCE_REFERENCE
#: The stored mode shown beside the oracle.
BESIDE = Mode.PYLANCE_PYLANCE
CONFLICTS = frozenset({Outcome.RETRYABLE, Outcome.INCOMPATIBLE})
#: The stored outcomes a race can be judged against.
JUDGEABLE = CONFLICTS | {Outcome.COMMITTED}

Translation = Callable[[int], writes.WriteOp]


class Observed(str, enum.Enum):
    """How the second write ended (the values of :class:`Outcome` where they meet)."""

    COMMITTED = Outcome.COMMITTED.value
    RETRYABLE = Outcome.RETRYABLE.value
    INCOMPATIBLE = Outcome.INCOMPATIBLE.value
    #: A ``WriteConflict`` that does not say whether it is retryable.
    CONFLICT = "conflict"

    def agrees_with(self, stored: Outcome) -> bool:
        if self is Observed.CONFLICT:
            return stored in CONFLICTS
        return self.value == stored.value


class RaceStatus(str, enum.Enum):
    #: The second write ended as the oracle says, and the table left behind is sound.
    AGREES = "agrees"
    DIFFERS = "differs"
    #: The driver lacks a capability the race needs (``write``, ``write-at-version``).
    NOT_APPLICABLE = "not-applicable"
    #: The driver does not perform one of the two operations.
    UNSUPPORTED = "unsupported"
    #: It differs, as the implementation's expectations say (suite ``conflicts``, case the cell id).
    EXPECTED_DIFFERENCE = "expected-difference"
    #: The expectations say it differs, and it agrees: the entry is stale.
    FIXED = "fixed"


#: The statuses that fail a run.
FAILING = frozenset({RaceStatus.DIFFERS, RaceStatus.FIXED})


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def translate(summary: str) -> Translation | None:
    """The write operation an action of the matrix stands for (its summary,
    :mod:`.actions`), as a function of the read version; None when the
    vocabulary cannot express it."""
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
        """The oracle's outcome (:data:`ORACLE`)."""
        return self.cell.outcomes[ORACLE]

    @property
    def beside(self) -> Outcome:
        return self.cell.outcomes[BESIDE]

    def stored_text(self) -> str:
        """What the stored matrix says, for a person."""
        text = f"{ORACLE.value} {self.expected.value}, {BESIDE.value} {self.beside.value}"
        if self.cell.discrepancy is not None:
            text += f" (known discrepancy: {self.cell.discrepancy.entry})"
        return text


def races() -> list[Race]:
    """Every cell the vocabulary expresses whose stored outcomes (both modes
    of :data:`ORACLE` and :data:`BESIDE`) are a commit or a conflict."""
    templates = {spec.id: spec.template for spec in all_cells()}
    found = []
    for cell in stored_matrix().cells:
        template = templates.get(cell.id)
        if template not in (Template.PLAIN, Template.STABLE_ROW_IDS):
            continue
        if cell.outcomes.get(ORACLE) not in JUDGEABLE or cell.outcomes.get(BESIDE) not in JUDGEABLE:
            continue
        first, second = translate(cell.first_action), translate(cell.second_action)
        if first is not None and second is not None:
            found.append(Race(cell, template, first, second))
    return found


class UnknownCellsError(ValueError):
    """A cell pattern that selects no race; the message names it and how to list them."""


def select(all_races: list[Race], patterns: Iterable[str] | None) -> list[Race]:
    """The races whose cell id matches one of ``patterns`` (shell-style:
    ``delete/*``, ``*:same-rows``, an exact id), in the matrix's order; every
    race when there are none."""
    wanted = [pattern.strip() for pattern in patterns or () if pattern.strip()]
    if not wanted:
        return list(all_races)
    unmatched = [p for p in wanted if not any(fnmatch.fnmatchcase(race.cell.id, p) for race in all_races)]
    if unmatched:
        raise UnknownCellsError(
            f"no raced cell matches {', '.join(map(repr, unmatched))} "
            "(cell ids look like 'delete/delete:same-rows'; `lance-conformance conflicts` lists them)"
        )
    return [race for race in all_races if any(fnmatch.fnmatchcase(race.cell.id, p) for p in wanted)]


@dataclass(frozen=True)
class RaceResult:
    race: Race
    status: RaceStatus
    #: How the second write ended (None when it did not run).
    observed: Observed | None = None
    #: Why it differs, or why it was not run.
    messages: tuple[str, ...] = ()
    #: The implementation's expectation for the cell, when it has one.
    expectation: Expectation | None = None


def _base(uri: str, template: Template) -> int:
    """The matrix's base table, written by the reference; its latest version.
    2.2, pylance 14's default, as in the stored matrix's base tables."""
    reference_driver.write(
        uri,
        writes.Create(
            base_table(),
            data_storage_version="2.2",
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


def not_run(race: Race, info: DriverInfo) -> RaceResult | None:
    """The result of a race the driver cannot run (a capability or an
    operation it does not declare); None when it can."""
    for capability in (Capability.WRITE, Capability.WRITE_AT_VERSION):
        if not info.has(capability):
            return RaceResult(
                race,
                RaceStatus.NOT_APPLICABLE,
                messages=(f"not applicable: the driver lacks the {capability.value!r} capability",),
            )
    for op in (race.first(0), race.second(0)):
        if op.kind.value not in info.write_operations:
            return RaceResult(
                race, RaceStatus.UNSUPPORTED, messages=(f"unsupported: the driver does not declare {op.kind.value}",)
            )
    return None


def _latest(uri: str) -> int:
    return Dataset.open(uri).version


def run_race(driver: Any, info: DriverInfo, race: Race) -> RaceResult:
    """Race ``race``'s two operations with ``driver`` (both writers) and judge
    the second's outcome and the table left behind."""
    skipped = not_run(race, info)
    if skipped is not None:
        return skipped
    cell = race.cell
    with tempfile.TemporaryDirectory(prefix="lance-conflicts-") as scratch:
        uri = str(Path(scratch) / "table.lance")
        read_version = _base(uri, race.template)
        try:
            driver.write(uri, race.first(read_version))
        except writes.WriteNotSupported as exc:
            return RaceResult(race, RaceStatus.UNSUPPORTED, messages=(f"unsupported: {_failure(exc)}",))
        except BaseException as exc:
            if not is_implementation_failure(exc):
                raise
            return RaceResult(
                race, RaceStatus.DIFFERS, messages=(f"the first writer ({cell.first_action}) failed: {_failure(exc)}",)
            )
        after_first = _latest(uri)
        try:
            driver.write(uri, race.second(read_version))
            observed = Observed.COMMITTED
        except writes.WriteNotSupported as exc:
            return RaceResult(race, RaceStatus.UNSUPPORTED, messages=(f"unsupported: {_failure(exc)}",))
        except writes.WriteConflict as conflict:
            kind = conflict_outcome(conflict)
            observed = Observed.CONFLICT if kind is None else Observed(kind.value)
        except BaseException as exc:
            if not is_implementation_failure(exc):
                raise
            return RaceResult(
                race,
                RaceStatus.DIFFERS,
                messages=(f"the second writer ({cell.second_action}) failed with no conflict: {_failure(exc)}",),
            )
        problems = []
        if not observed.agrees_with(race.expected):
            problems.append(
                f"the second write ended in {observed.value}, where the stored matrix records {race.stored_text()}; "
                f"the page says {cell.page.value}: {cell.page_reason}"
            )
        if observed is Observed.COMMITTED and _latest(uri) == after_first:
            problems.append("the second write returned as committed, but no version followed the first's")
        problems += _left_behind(uri)
    return RaceResult(race, RaceStatus.DIFFERS if problems else RaceStatus.AGREES, observed, tuple(problems))
