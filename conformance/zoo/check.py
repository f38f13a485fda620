"""Checking the zoo: every version of every dataset a feature wrote, through
the validator (shallow, and deep when asked and the engine offers it), the
reference against pylance row for row, and the canonical descriptions.

Each disagreement is explained by an entry of :mod:`.known` or unexplained;
the zoo passes when none is unexplained. The datasets a feature wrote are
found by :func:`datasets_of`."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..comparison import compare_tables
from ..describe import differences
from ..drivers import reference
from ..validator import Severity, validate
from .catalog import feature, read_record
from .disagreements import Aspect, Disagreement
from .known import KNOWN, KnownDisagreement, explanation

#: Where a dataset keeps its manifests; a directory holding it is a dataset.
VERSIONS_DIR = "_versions"


class NotBuiltError(LookupError):
    """A feature to check that the zoo's record does not list as built."""


@dataclass
class FeatureCheck:
    """What checking one feature found."""

    feature: str
    datasets: list[str] = field(default_factory=list)
    versions_checked: int = 0
    explained: list[tuple[Disagreement, KnownDisagreement]] = field(default_factory=list)
    unexplained: list[Disagreement] = field(default_factory=list)
    #: Info findings: the validator's own notes on documented deviations
    #: (each cites docs/spec-discrepancies.md or a known writer defect), not
    #: disagreements. By rule id, how many.
    notes: dict[str, int] = field(default_factory=dict)

    def add(self, disagreement: Disagreement, known: Iterable[KnownDisagreement]) -> None:
        entry = explanation(disagreement, known)
        if entry is None:
            self.unexplained.append(disagreement)
        else:
            self.explained.append((disagreement, entry))

    @property
    def disagreements(self) -> list[Disagreement]:
        return [d for d, _ in self.explained] + self.unexplained


def datasets_of(root: Path, name: str) -> list[Path]:
    """Every dataset feature ``name`` wrote under ``root``: each directory
    holding ``_versions`` under its own (the dataset, or for LanceDB the
    tables of the database it is; branches under ``tree/``, whose names may
    hold ``/``; the MemWAL's flushed generations under ``_mem_wal/``) and its
    ``<name>-*`` siblings."""
    own = root / name
    found = sorted(p.parent for p in own.rglob(VERSIONS_DIR) if p.is_dir()) if own.is_dir() else []
    found += sorted(p for p in root.glob(f"{name}-*") if (p / VERSIONS_DIR).is_dir())
    return found


def _error(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[0][:300]


def _pylance() -> Any:
    # lazy: pylance is optional (the test extra); checking the zoo needs it, importing this module does not
    from ..drivers import pylance_driver

    return pylance_driver


def check_feature(
    root: Path, name: str, *, deep: bool = False, known: Iterable[KnownDisagreement] = KNOWN
) -> FeatureCheck:
    """Check every dataset feature ``name`` wrote under ``root``."""
    known = tuple(known)
    result = FeatureCheck(name)
    for path in datasets_of(Path(root), name):
        relative = str(path.relative_to(root))
        result.datasets.append(relative)

        def found(version: int | None, aspect: Aspect, detail: str, relative: str = relative) -> None:
            result.add(Disagreement(name, relative, version, aspect, detail), known)

        result.versions_checked += _check_dataset(path, deep, found, result.notes)
    if not result.datasets:  # a built feature without a dataset: the zoo lost it
        result.add(Disagreement(name, name, None, Aspect.VALIDATION, "no dataset found"), known)
    return result


def _check_dataset(
    path: Path, deep: bool, found: Callable[[int | None, Aspect, str], None], notes: dict[str, int]
) -> int:
    """Check one dataset; return how many versions were compared."""
    pylance = _pylance()
    try:
        report = validate(path, all_versions=True, deep=deep)
    except Exception as exc:  # the validator's promise is a report; anything else is a disagreement
        found(None, Aspect.VALIDATION, _error(exc))
    else:
        for finding in report.findings:
            if finding.severity is Severity.INFO:
                notes[finding.rule] = notes.get(finding.rule, 0) + 1
                continue
            where = f" at {finding.location}" if finding.location else ""
            found(finding.version, Aspect.FINDING, f"{finding.severity.value} {finding.rule}{where}: {finding.message}")
    try:
        ours, theirs = reference.versions(path), pylance.versions(path)
    except Exception as exc:
        found(None, Aspect.VERSIONS, f"the versions cannot be listed: {_error(exc)}")
        return 0
    if ours != theirs:
        found(None, Aspect.VERSIONS, f"reference lists {ours}, pylance {theirs}")
    checked = 0
    for version in sorted(set(ours) & set(theirs)):
        checked += 1
        _compare_rows(path, version, pylance, found)
        _compare_descriptions(path, version, pylance, found)
    return checked


def _compare_rows(path: Path, version: int, pylance: Any, found: Callable[[int | None, Aspect, str], None]) -> None:
    expected = actual = None
    try:
        expected = pylance.read_table(path, version)
    except Exception as exc:
        found(version, Aspect.READ, f"pylance cannot read the rows: {_error(exc)}")
    try:
        actual = reference.read_table(path, version)
    except Exception as exc:
        found(version, Aspect.READ, f"the reference cannot read the rows: {_error(exc)}")
    if expected is None or actual is None:
        return
    for difference in compare_tables(expected, actual).differences:
        found(version, Aspect.ROWS, difference)


def _compare_descriptions(
    path: Path, version: int, pylance: Any, found: Callable[[int | None, Aspect, str], None]
) -> None:
    try:
        theirs = pylance.describe(path, version)
    except Exception as exc:
        found(version, Aspect.READ, f"pylance cannot describe the version: {_error(exc)}")
        return
    try:
        ours = reference.describe(path, version)
    except Exception as exc:
        found(version, Aspect.READ, f"the reference cannot describe the version: {_error(exc)}")
        return
    for difference in differences(ours, theirs, ignore=pylance.UNREPORTED):
        found(version, Aspect.DESCRIPTION, difference)


@dataclass
class ZooCheck:
    """What checking a whole zoo found; ``unavailable`` maps each feature the
    installed releases lack to the reason."""

    features: list[FeatureCheck]
    unavailable: dict[str, str]

    @property
    def unexplained(self) -> list[Disagreement]:
        return [d for check in self.features for d in check.unexplained]


def check_zoo(
    root: Path, *, names: Iterable[str] | None = None, deep: bool = False, known: Iterable[KnownDisagreement] = KNOWN
) -> ZooCheck:
    """Check every feature the record at ``root`` lists as built (or ``names``)."""
    record = read_record(Path(root))
    chosen = list(names) if names is not None else sorted(record)
    for name in chosen:
        feature(name)  # an unknown name raises UnknownFeatureError
        if name not in record:
            raise NotBuiltError(f"feature {name!r} was not built under {root}")
    unavailable = {n: str(record[n]["unavailable"]) for n in chosen if record.get(n, {}).get("unavailable")}
    checks = [check_feature(Path(root), n, deep=deep, known=known) for n in chosen if n not in unavailable]
    return ZooCheck(checks, unavailable)
