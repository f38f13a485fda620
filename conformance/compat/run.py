"""Run the matrix: every release writes its feature datasets, then every
release reads every release's datasets (its own included: the diagonal).

Each read goes through the pylance driver served from the reader's own
environment by a worker (:class:`conformance.drivers.release.ReleaseDriver`),
one worker per reader, so a panic that aborts the process or a read that
hangs past the worker's timeout (a wide guard, ``--timeout``) fails that
cell only and the next read starts a fresh worker.

What a reader must return is what the writer itself reads back from its
dataset: its canonical description (:mod:`conformance.describe`) and its
rows. A reader's description is compared with
:func:`conformance.describe.differences`, skipping what either side
declares it cannot report, and its rows with
:func:`conformance.comparison.compare_tables` (value differences fail,
representation differences are notes), as ``fixtures verify`` compares a
driver with a golden case. Only the newest version of each dataset is read:
each dataset is built so that its newest version shows its feature.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..comparison import compare_tables
from ..describe import differences
from ..drivers import driver_info, is_implementation_failure, read_rows
from ..drivers.protocol import DriverInfo
from ..drivers.release import ReleaseDriver
from ..drivers.worker.client import WorkerError, WorkerProcessError, WorkerReplyError, WorkerTimeoutError
from ..expectations import version_key
from .feature_writer import FEATURES
from .outcomes import FailureKind, Outcome, classify_error, tolerated
from .releases import Release, WriteReport, write_features

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

#: The features of a run when none are named: one per family, cheap to write.
DEFAULT_FEATURES: tuple[str, ...] = ("file-2.0", "deletion-files", "index-btree", "txn-data-overlay")
#: How many differences a cell keeps.
MAX_DIFFERENCES = 8

Progress = Callable[[str], None]


@dataclass
class Read:
    """What one reader saw of one dataset: its description and rows, or the
    failure that stopped it (``error``: type and message, with its outcome)."""

    description: dict | None = None
    table: pa.Table | None = None
    error_type: str | None = None
    message: str | None = None
    outcome: Outcome = Outcome.PASS
    failure_kind: FailureKind | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Cell:
    writer: str
    reader: str
    feature: str
    outcome: Outcome
    failure_kind: FailureKind | None = None
    error_type: str | None = None
    message: str | None = None
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "writer": self.writer,
            "reader": self.reader,
            "feature": self.feature,
            "status": self.outcome.value,
            "failure_kind": self.failure_kind.value if self.failure_kind else None,
            "error_type": self.error_type,
            "message": self.message,
            "differences": self.differences,
            "notes": self.notes,
        }


@dataclass
class CompatRun:
    """Everything one run found; :mod:`.document` turns it into JSON."""

    releases: list[Release]
    features: list[str]
    writes: list[WriteReport]
    cells: list[Cell]
    #: ``{release: why it could not read}`` for a reader whose worker never started.
    reader_failures: dict[str, str]
    started: datetime
    ended: datetime
    timeout: float


def _failure_read(exc: BaseException, where: str) -> Read:
    """A failed call as a :class:`Read`: the worker's crash or hang, a panic
    the binding caught, or the release's error (a refusal or not)."""
    kind: FailureKind | None
    if isinstance(exc, WorkerProcessError):
        if isinstance(exc, WorkerTimeoutError):
            kind = FailureKind.HANG
        elif "panicked" in exc.stderr:
            kind = FailureKind.PANIC
        else:
            kind = FailureKind.CRASH
        return Read(None, None, type(exc).__name__, f"{where}: {exc}", Outcome.FAIL, kind)
    if isinstance(exc, WorkerReplyError):
        error_type, message = exc.error_type or exc.kind.value, exc.detail
        outcome, kind = classify_error(f"{exc.kind.value} {error_type}", message)
    else:
        error_type, message = type(exc).__name__, str(exc)
        outcome, kind = classify_error(error_type, message)
    return Read(None, None, error_type, f"{where}: {message}", outcome, kind)


def read_dataset(driver: ReleaseDriver, path: Path) -> Read:
    """Describe the newest version of ``path`` and read its rows."""
    try:
        description = dict(driver.describe(str(path)))
    except BaseException as exc:  # the release's own failure (a Rust panic too) is the finding
        if not is_implementation_failure(exc):
            raise
        failed = _failure_read(exc, "describe")
        if failed.failure_kind not in (FailureKind.HANG, FailureKind.CRASH):
            # Say whether the rows alone read: the description also lists indices, tags, ...
            try:
                failed.notes.append(f"the rows alone read: {read_rows(driver, str(path)).num_rows} rows")
            except BaseException as rows_exc:
                if not is_implementation_failure(rows_exc):
                    raise
                failed.notes.append(f"the rows alone fail too: {_failure_read(rows_exc, 'read').message}")
        return failed
    try:
        table = read_rows(driver, str(path))
    except BaseException as exc:
        if not is_implementation_failure(exc):
            raise
        return _failure_read(exc, "read")
    return Read(description, table)


def _compare(
    writer: str, own: Read, read: Read, writer_info: DriverInfo, reader_info: DriverInfo
) -> tuple[list[str], list[str]]:
    """Where the reader's description and rows differ from the writer's own,
    and the notes of the differences :data:`~.outcomes.TOLERATED_DIFFERENCES` excuse."""
    assert own.description is not None and read.description is not None and own.table is not None
    assert read.table is not None  # both reads succeeded
    ignore = sorted(writer_info.unreported | reader_info.unreported)
    found, notes = [], []
    for difference in differences(own.description, read.description, ignore=ignore):
        excused = tolerated(difference, version_key(writer))
        if excused is None:
            found.append(f"describe {difference}")
        else:
            notes.append(f"not a failure: describe {difference} ({excused.reason})")
    comparison = compare_tables(own.table, read.table, reader_info.types)
    found += [f"rows: {d}" for d in comparison.differences]
    notes += [f"representation, not a failure: {o}" for o in comparison.observations]
    return found, notes


def judge(writer: str, reader: str, feature: str, own: Read | None, read: Read, infos: dict[str, DriverInfo]) -> Cell:
    """The cell of ``reader`` reading ``writer``'s ``feature`` dataset, given
    what the writer itself read back (``own``)."""
    if read.error_type is not None:
        return Cell(
            writer, reader, feature, read.outcome, read.failure_kind, read.error_type, read.message, notes=read.notes
        )
    if own is None or own.error_type is not None:
        why = own.message if own is not None else "not read"
        return Cell(
            writer, reader, feature, Outcome.NOT_APPLICABLE, notes=[f"the writer could not read its own dataset: {why}"]
        )
    found, notes = _compare(writer, own, read, infos[writer], infos[reader])
    if not found:
        return Cell(writer, reader, feature, Outcome.PASS, notes=notes)
    kind = FailureKind.WRONG_ROWS if any(d.startswith("rows:") for d in found) else FailureKind.WRONG_DESCRIPTION
    if len(found) > MAX_DIFFERENCES:
        found = found[:MAX_DIFFERENCES] + [f"... {len(found) - MAX_DIFFERENCES} more"]
    first = next(d for d in found if d.startswith("rows:")) if kind is FailureKind.WRONG_ROWS else found[0]
    return Cell(writer, reader, feature, Outcome.FAIL, kind, None, first, found, notes)


def open_reader(release: Release, timeout: float | None = None) -> tuple[ReleaseDriver, DriverInfo]:
    """The pylance driver in ``release``'s environment, in a worker, and its declaration."""
    driver = ReleaseDriver(f"pylance@{release.name}", "pylance", release.python, release.name, timeout=timeout)
    try:
        return driver, driver_info(driver, driver.name)
    except BaseException:
        driver.close()
        raise


def run_compat(
    releases: list[Release],
    features: list[str],
    *,
    workdir: Path | None = None,
    timeout: float | None = None,
    progress: Progress | None = None,
) -> CompatRun:
    """Write with every release, then read with every release. ``workdir``
    keeps the datasets (a temporary directory, removed, when not given);
    ``timeout`` is the worker's per-call guard (its default when None)."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="lance-compat-") as scratch:
            return run_compat(releases, features, workdir=Path(scratch), timeout=timeout, progress=progress)
    say = progress or (lambda message: None)
    started = datetime.now(timezone.utc)
    releases = sorted(releases, key=lambda release: version_key(release.name))
    writes = []
    for release in releases:
        say(f"pylance {release.name} writes {len(features)} features")
        writes.append(write_features(release, features, workdir / release.name))
    datasets = [(report.release, feature, path) for report in writes for feature, path in report.datasets.items()]
    infos: dict[str, DriverInfo] = {}
    reader_failures: dict[str, str] = {}
    own: dict[tuple[str, str], Read] = {}
    cells: list[Cell] = []
    # Two passes: the writers' own reads first, since every other read is
    # compared with them; then each reader reads the others' datasets, and
    # each read is judged (and its rows let go) at once.
    for second_pass in (False, True):
        for release in releases:
            if release.name in reader_failures:
                continue
            mine = [(w, f, p) for w, f, p in datasets if (w == release.name) != second_pass]
            say(f"pylance {release.name} reads {len(mine)} datasets {'of the others' if second_pass else 'of its own'}")
            try:
                driver, infos[release.name] = open_reader(release, timeout)
            except (WorkerError, OSError) as exc:
                reader_failures[release.name] = f"{type(exc).__name__}: {exc}"
                continue
            try:
                for writer, feature, path in mine:
                    read = read_dataset(driver, path)
                    if not second_pass:
                        own[writer, feature] = read
                    cells.append(judge(writer, release.name, feature, own.get((writer, feature)), read, infos))
            finally:
                driver.close()
    return CompatRun(
        releases, features, writes, cells, reader_failures, started, datetime.now(timezone.utc), timeout or 0.0
    )


def known_features() -> list[str]:
    return list(FEATURES)
