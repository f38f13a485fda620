"""Run every driver through the suites and gather one :class:`EcosystemMatrix`."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..conflict_matrix.model import Implementation, stored_matrix
from ..drivers import WRITE_ONLY, DriverError, close_driver, installed_drivers, load_driver
from ..drivers.protocol import Capability
from ..drivers.release import RELEASE_SEPARATOR
from ..expectations import Expectations, implementation_and_release, shipped_expectations
from ..fixtures.case import Case, CaseError, case_dirs, load_case
from ..fixtures.features import FEATURES
from ..fixtures.verify import CaseResult, verify_corpus
from ..requirements import load_requirements
from ..spec_sources import load_documents
from ..writer_conformance import WriterCheckError, run_writer_conformance
from .conflicts import conflicts_grid, judged_modes
from .model import DriverEntry, EcosystemMatrix, ExpectationEntry, Grid, RequirementLink
from .readers import readers_grid
from .versions import driver_report, environment_versions
from .writers import writers_grid

#: Reports progress (one line per step); the CLI prints it on a terminal only.
Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def default_drivers() -> list[str]:
    """Every shipped driver whose implementation is installed here."""
    return list(installed_drivers())


#: The older pylance release the demo adds when its environment is built (the corpus's oldest writer).
DEMO_RELEASE = "pylance@0.20.0"


def demo_drivers() -> list[str]:
    """The installed drivers but the older pylance releases, with 0.20.0 when
    it is ready: the demo's view, quick enough to run every time."""
    installed = default_drivers()
    chosen = [name for name in installed if RELEASE_SEPARATOR not in name]
    return chosen + [DEMO_RELEASE] if DEMO_RELEASE in installed else chosen


def load_cases(corpus: Path) -> dict[str, Case]:
    """The corpus's cases by name (a malformed one is left out: verify reports it)."""
    cases = {}
    for case_dir in case_dirs(corpus):
        try:
            case = load_case(case_dir)
        except CaseError:
            continue
        cases[case.name] = case
    return cases


@dataclass
class DriverRun:
    """What each driver reported about itself, which of them write, and every
    case each read (when a corpus was given)."""

    entries: list[DriverEntry] = field(default_factory=list)
    writers: list[str] = field(default_factory=list)
    results: list[CaseResult] = field(default_factory=list)
    #: Each loaded driver's expectations (its own file or the shipped one), for the release it reported.
    expectations: dict[str, Expectations] = field(default_factory=dict)


def read_with_drivers(
    names: Iterable[str],
    corpus: Path | None,
    progress: Progress = _quiet,
    given: Mapping[str, Expectations] | None = None,
) -> DriverRun:
    """Load each driver once (a release driver is a child process): ask what
    it is, and read every case of ``corpus`` with it, its implementation's
    expectations applied: the file ``given`` for it (by driver name), else
    the shipped one; either narrowed to the release the driver reports."""
    run = DriverRun()
    for name in names:
        try:
            driver = load_driver(name)
        except DriverError as exc:
            run.entries.append(DriverEntry(name, None, str(exc)))
            continue
        try:
            info = driver_report(driver, name)
            run.entries.append(DriverEntry(name, info))
            version = info.get("version") if info.get("version") != "unknown" else None
            mine = (given or {}).get(name)
            run.expectations[name] = (
                mine.for_release(version) if mine is not None else shipped_expectations(name, version)
            )
            # A writer is one that declares it writes (docs/drivers.md): a
            # worker's client has a write() whatever its implementation does.
            if Capability.WRITE.value in info.get("capabilities", ()):
                run.writers.append(name)
            if corpus is not None:
                progress(f"golden cases: reading the corpus with {name}")
                run.results += verify_corpus(corpus, name, expectations=run.expectations[name], driver=driver)
        finally:
            close_driver(driver)
    return run


def expectation_entries(expectations: Mapping[str, Expectations]) -> list[ExpectationEntry]:
    return [
        ExpectationEntry(name, e.suite, e.case, e.requirement, e.reason, e.issue, e.reproducer)
        for name, shipped in expectations.items()
        for e in shipped.entries
    ]


def requirement_links(grids: Sequence[Grid]) -> dict[str, RequirementLink]:
    """The catalog's entry and the upstream document of every requirement the outcomes cite."""
    catalog = load_requirements()
    documents = load_documents()
    cited = {r for grid in grids for cell in grid.cells for o in cell.outcomes for r in o.requirements}
    links = {}
    for requirement_id in sorted(cited):
        entry = catalog.get(requirement_id)
        if entry is None:
            links[requirement_id] = RequirementLink(requirement_id, "", "not in the catalog", None, "")
            continue
        document = documents.get(entry.source_document)
        links[requirement_id] = RequirementLink(
            requirement_id,
            entry.level,
            entry.statement,
            document.url if document is not None else None,
            f"{entry.source_document}, {entry.source_section}",
        )
    return links


def writer_readers(drivers: Sequence[str]) -> list[str]:
    """The readers writer conformance reads back with: the run's drivers but
    older pylance releases (``pylance@VERSION``), which predate features the
    script uses (their view of the corpus is in the readers grid), and the
    drivers that write only."""
    return [name for name in drivers if RELEASE_SEPARATOR not in name and name not in WRITE_ONLY]


def conflict_expectations(drivers: Iterable[str], expectations: Mapping[str, Expectations]) -> dict[str, Expectations]:
    """The expectations of each implementation the stored conflict matrix
    measured (pylance, the reference) that a driver of the run runs, by
    implementation: those implementations' modes are judged, no other. A
    pinned release (``pylance@0.20.0``) is not the release measured."""
    measured = {implementation.value for implementation in Implementation}
    judged = {}
    for name in drivers:
        implementation, release = implementation_and_release(name)
        if implementation in measured and release is None:
            judged[implementation] = expectations.get(name, Expectations(implementation))
    return judged


def run_writers(
    writers: Sequence[str],
    readers: Sequence[str],
    expectations: Mapping[str, Expectations],
    progress: Progress,
) -> Grid:
    """Writer conformance of every writing driver, read back by every reader of the run."""
    reports = []
    for name in writers:
        progress(f"writer conformance: {name} through the script, read by {', '.join(readers)}")
        try:
            report = run_writer_conformance(name, readers=readers, expectations=expectations.get(name))
        except WriterCheckError as exc:
            progress(f"writer conformance: {name} could not run: {exc}")
            continue
        reports.append((name, report))
    return writers_grid(reports)


def run_ecosystem(
    drivers: Sequence[str],
    corpus: Path,
    *,
    writers: bool = True,
    conflicts: bool = True,
    progress: Progress = _quiet,
    expectations: Mapping[str, Expectations] | None = None,
) -> EcosystemMatrix:
    """Read the golden ``corpus`` with every driver, run every writing driver
    through writer conformance, add the conflict matrix where it measured a
    driver of the run, and gather the versions and expectations of the run.
    ``expectations``: an implementation's own file by driver name, in place
    of the shipped one. Only the drivers of the run are judged."""
    cases = load_cases(corpus) if (corpus / "cases").is_dir() else {}
    if not cases:
        progress(f"no golden corpus at {corpus}: the readers grid is left out")
    run = read_with_drivers(drivers, corpus if cases else None, progress, expectations)
    entries = run.entries
    usable = [entry.name for entry in entries if entry.error is None]
    applied = run.expectations
    grids: list[Grid] = []
    if cases:
        grids.append(readers_grid(run.results, cases))
    if writers and run.writers:
        grids.append(run_writers(run.writers, writer_readers(usable), applied, progress))
    judged = conflict_expectations(usable, applied)
    if conflicts and judged:
        progress(f"conflict matrix: the stored measurements of {', '.join(sorted(judged))}")
        modes = judged_modes(judged)
        grids.append(conflicts_grid(stored_matrix(), load_requirements(), judged, modes))
    elif conflicts:
        progress("conflict matrix: left out (it measured pylance and the reference, neither under test)")
    features = {
        f: FEATURES[f].summary
        for grid in grids
        for cell in grid.cells
        for o in cell.outcomes
        for f in o.features
        if f in FEATURES
    }
    return EcosystemMatrix(
        generated=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        versions=environment_versions(corpus if cases else None),
        drivers=tuple(entries),
        expectations=tuple(expectation_entries(applied)),
        grids=tuple(grids),
        requirements=requirement_links(grids),
        features=features,
    )
