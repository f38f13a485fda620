"""Run every driver through the suites and gather one :class:`EcosystemMatrix`."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ..conflict_matrix.model import stored_matrix
from ..drivers import DriverError, close_driver, load_driver
from ..fixtures.case import Case, CaseError, case_dirs, load_case
from ..fixtures.features import FEATURES
from ..fixtures.verify import CaseResult, verify_corpus
from ..requirements import load_requirements
from ..spec_sources import load_documents
from .conflicts import conflicts_grid
from .model import DriverEntry, EcosystemMatrix, ExpectationEntry, Grid, RequirementLink
from .readers import readers_grid
from .versions import driver_report, environment_versions

#: Reports progress (one line per step); the CLI prints it on a terminal only.
Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def default_drivers() -> list[str]:
    """Every shipped driver whose implementation is installed here."""
    try:
        from ..drivers import installed_drivers  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # until the driver protocol lands: the two drivers every install has
        return ["reference", "pylance"]
    return list(installed_drivers())


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


def describe_drivers(names: Iterable[str]) -> list[DriverEntry]:
    entries = []
    for name in names:
        try:
            driver = load_driver(name)
        except DriverError as exc:
            entries.append(DriverEntry(name, None, str(exc)))
            continue
        try:
            entries.append(DriverEntry(name, driver_report(driver, name)))
        finally:
            close_driver(driver)
    return entries


def corpus_expectations(cases: dict[str, Case], drivers: Iterable[str]) -> list[ExpectationEntry]:
    """The known deviations the corpus records for ``drivers``."""
    entries = []
    for driver in drivers:
        for case in sorted(cases.values(), key=lambda c: c.name):
            deviation = case.deviation_for(driver)
            if deviation is not None:
                entries.append(
                    ExpectationEntry(driver, "readers", case.name, deviation.requirement, deviation.explanation)
                )
    return entries


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


def run_ecosystem(
    drivers: Sequence[str],
    corpus: Path,
    *,
    conflicts: bool = True,
    progress: Progress = _quiet,
) -> EcosystemMatrix:
    """Read the golden ``corpus`` with every driver, add the conflict matrix,
    and gather the versions and expectations of the run."""
    cases = load_cases(corpus) if (corpus / "cases").is_dir() else {}
    entries = describe_drivers(drivers)
    usable = [entry.name for entry in entries if entry.error is None]
    grids: list[Grid] = []
    if cases:
        results: list[CaseResult] = []
        for name in usable:
            progress(f"golden cases: reading {len(cases)} cases with {name}")
            results += verify_corpus(corpus, name)
        grids.append(readers_grid(results, cases))
    else:
        progress(f"no golden corpus at {corpus}: the readers grid is left out")
    if conflicts:
        progress("conflict matrix: the stored measurements")
        grids.append(conflicts_grid(stored_matrix(), load_requirements()))
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
        expectations=tuple(corpus_expectations(cases, usable)),
        grids=tuple(grids),
        requirements=requirement_links(grids),
        features=features,
    )
