"""Run a cell in a mode: build the race for real and observe the second
writer's fate.

For each cell: copy the cell's base table (built once per run), open one
handle per writer at the base version ``v`` (pylance: ``lance.dataset(uri,
version=v)``; reference: ``Dataset.open(uri, version=v)``), let the first
writer commit, then the second. Then the result is checked, whether the
second committed or was refused: the reference reader and pylance see the
same rows, and the validator reports no error on the latest version; a
failed check is kept beside the outcome (:attr:`Observation.problems`).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference_impl.dataset import Dataset

from ..validator import Severity, validate
from .actions import Context
from .cells import CellSpec, Template, build_template
from .model import Implementation, Mode, Outcome
from .signals import outcome_of


@dataclass(frozen=True)
class Observation:
    outcome: Outcome
    #: Why a cell was not run, or what went wrong (informational: tests
    #: compare outcomes only).
    note: str = ""
    #: After the second writer committed or was refused: what the checks
    #: found wrong ('' when nothing).
    problems: str = ""


class Workspace:
    """A scratch directory holding the base tables, built on first use."""

    def __init__(self, root: Path):
        self.root = root
        self._templates: dict[Template, tuple[Path, int]] = {}
        self._cells = 0

    def template(self, template: Template) -> tuple[Path, int]:
        if template not in self._templates:
            path = self.root / "templates" / template.value
            self._templates[template] = (path, build_template(template, path))
        return self._templates[template]

    def fresh_cell_dir(self) -> Path:
        self._cells += 1
        path = self.root / f"cell-{self._cells}"
        path.mkdir(parents=True)
        return path


@contextmanager
def workspace() -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory(prefix="conflict-matrix-") as root:
        yield Workspace(Path(root))


def _open(implementation: Implementation, uri: str, version: int) -> Any:
    if implementation is Implementation.PYLANCE:
        import lance  # pylance, imported lazily as the drivers do

        return lance.dataset(uri, version=version)
    return Dataset.open(uri, version=version)


def _latest_version(uri: str) -> int:
    return Dataset.open(uri).version


def _summary(error: BaseException) -> str:
    message = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {message[:200]}"


def _rows(table) -> list[tuple]:
    names = sorted(table.column_names)
    columns = [table.column(n).to_pylist() for n in names]
    return sorted(zip(*columns, strict=True), key=repr)


def check_committed(uri: str) -> str:
    """Problems with a dataset after the race ('' when none): the two
    readers disagree, or the validator reports an error."""
    import lance  # pylance, imported lazily as the drivers do

    problems = []
    try:
        ours = Dataset.open(uri).to_table()
        theirs = lance.dataset(uri).to_table()
        if sorted(ours.column_names) != sorted(theirs.column_names) or _rows(ours) != _rows(theirs):
            problems.append("the reference reader and pylance see different rows")
    except Exception as error:  # a reader failing is the finding itself
        problems.append(f"reading failed: {_summary(error)}")
    report = validate(uri)
    errors = sorted({f.rule for f in report.findings if f.severity is Severity.ERROR})
    if errors:
        problems.append(f"validator errors: {', '.join(errors)}")
    return "; ".join(problems)


def run_cell(cell: CellSpec, mode: Mode, space: Workspace) -> Observation:
    """Race ``cell``'s two writers in ``mode`` and observe the second."""
    observation = _run_cell(cell, mode, space)
    return Observation(observation.outcome, _portable(observation.note, space), _portable(observation.problems, space))


def _portable(text: str, space: Workspace) -> str:
    """``text`` without the scratch directory's name (the stored data must
    not depend on where a run happened)."""
    return re.sub(r"cell-\d+", "cell", text.replace(str(space.root), "<scratch>"))


def static_observation(cell: CellSpec, mode: Mode) -> Observation | None:
    """The outcome of a cell that cannot be raced in ``mode`` (a Clone, or an
    operation one side cannot produce), known without running it; None when
    it has to be run."""
    if not cell.applicable:
        return Observation(Outcome.NOT_APPLICABLE, "a Clone only starts a new dataset; nothing races it")
    for action, implementation in ((cell.first, mode.first), (cell.second, mode.second)):
        if action.runner(implementation) is None:
            return Observation(
                Outcome.NOT_REACHABLE, f"{implementation.value}: {action.unreachable_reason(implementation)}"
            )
    return None


def _run_cell(cell: CellSpec, mode: Mode, space: Workspace) -> Observation:
    static = static_observation(cell, mode)
    if static is not None:
        return static
    template, read_version = space.template(cell.template)
    cell_dir = space.fresh_cell_dir()
    try:
        uri = str(cell_dir / "table")
        shutil.copytree(template, uri)
        first_handle = _open(mode.first, uri, read_version)
        second_handle = _open(mode.second, uri, read_version)
        first_run, second_run = cell.first.runner(mode.first), cell.second.runner(mode.second)
        assert first_run is not None and second_run is not None
        try:
            first_run(first_handle, Context(uri, read_version, cell_dir, "first"))
        except Exception as error:
            return Observation(Outcome.ERROR, f"the first writer failed: {_summary(error)}")
        after_first = _latest_version(uri)
        if after_first == read_version:
            return Observation(Outcome.ERROR, "the first writer committed nothing")
        try:
            second_run(second_handle, Context(uri, read_version, cell_dir, "second"))
        except Exception as error:
            outcome = outcome_of(mode.second, error)
            if outcome is None:
                return Observation(Outcome.ERROR, f"the second writer failed: {_summary(error)}")
            # The refused writer must leave the table as the first left it
            # (a compaction's own ReserveFragments may stay committed).
            return Observation(outcome, problems=check_committed(uri))
        if _latest_version(uri) == after_first:
            return Observation(Outcome.ERROR, "the second writer committed nothing")
        return Observation(Outcome.COMMITTED, problems=check_committed(uri))
    finally:
        shutil.rmtree(cell_dir, ignore_errors=True)


def run_cells(
    cells: Iterable[CellSpec], modes: Iterable[Mode], space: Workspace
) -> Iterator[tuple[CellSpec, dict[Mode, Observation]]]:
    modes = list(modes)
    for cell in cells:
        yield cell, {mode: run_cell(cell, mode, space) for mode in modes}
