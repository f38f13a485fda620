"""A whole harness run: prepare the dataset, run the writer tasks on an
executor, save ``DIR/history.jsonl``, ``DIR/run.json`` and ``DIR/report.json``,
and check the history against every version."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from conformance.drivers import writes
from conformance.drivers.writes import WriteKind, WriteOutcome
from reference_impl.dataset import Dataset
from reference_impl.fragment_writer import DEFAULT_DATA_STORAGE_VERSION

from .checker import CheckReport, check
from .executors import Executor
from .history import SETUP_WRITER, Attempt, load_history, save_history
from .html import write_html
from .report import report_document
from .spec import RunSpec, TaskSpec
from .workloads import initial_schema, rows_table, skipped_kinds, writer_workload
from .writers import FAULTY_PREFIX, LoadedWriter, engine_session, load_writer

HISTORY_FILE = "history.jsonl"
RUN_FILE = "run.json"
REPORT_FILE = "report.json"
#: What the run learnt from its writer (its driver, the kinds it skipped): ``harness check`` reads it.
WRITER_FILE = "writer.json"


class RunSpecError(ValueError):
    """A run that cannot be prepared as asked (the message says why)."""


@dataclass
class RunResult:
    spec: RunSpec
    history: list[Attempt]
    report: CheckReport
    out_dir: Path
    #: Workload kinds asked for that the writer cannot perform (left out);
    #: None when not known (a saved run from before ``writer.json``).
    skipped: list[str] | None = field(default_factory=list)
    #: Seconds the writers ran, start-up included (the reports' throughput is
    #: taken over the commit window instead: :func:`.report.throughput`).
    seconds: float = 0.0
    #: The writer's driver declaration (``DriverInfo.to_json()``), when known.
    driver: dict | None = None


class SavedRunError(ValueError):
    """A run directory whose files cannot be read back (the file and the problem named)."""


def save_writer_file(out_dir: Path, skipped: list[str], driver: dict | None = None) -> None:
    """``DIR/writer.json``: what the run learnt from its writer, so that
    ``harness check DIR`` never needs to load it again."""
    document = {"driver": driver, "skipped": list(skipped)}
    (Path(out_dir) / WRITER_FILE).write_text(json.dumps(document, indent=2) + "\n")


def load_writer_file(out_dir: Path) -> tuple[list[str] | None, dict | None]:
    """The skipped kinds and the driver saved in ``DIR/writer.json``; (None,
    None) for a run saved before the file existed. :class:`SavedRunError`
    when it is there but unreadable."""
    path = Path(out_dir) / WRITER_FILE
    if not path.is_file():
        return None, None
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SavedRunError(f"{path}: cannot be read ({exc})") from None
    skipped = document.get("skipped") if isinstance(document, dict) else None
    driver = document.get("driver") if isinstance(document, dict) else None
    if not isinstance(skipped, list) or not all(isinstance(kind, str) for kind in skipped):
        raise SavedRunError(f"{path}: 'skipped' is not a list of workload kinds")
    if driver is not None and not isinstance(driver, dict):
        raise SavedRunError(f"{path}: 'driver' is not an object")
    return skipped, driver


def _setup_attempt(spec: RunSpec, start: float) -> Attempt:
    ids = list(range(spec.initial_rows))
    return Attempt(
        "setup",
        SETUP_WRITER,
        WriteKind.CREATE,
        {"ids": ids},
        None,
        WriteOutcome.ACKNOWLEDGED,
        1,
        None,
        start,
        time.time(),
    )


def prepare(spec: RunSpec, writer: LoadedWriter | None = None) -> Attempt:
    """Create the dataset (version 1, ``initial_rows`` rows) as the writer's
    implementation would: pylance for pylance, the reference for the
    reference and its faulty variants, the writer's own ``create`` for any
    other writer that performs one, else the reference."""
    if spec.naming not in ("v1", "v2"):
        raise RunSpecError(f"naming must be v1 or v2, not {spec.naming!r}")
    start = time.time()
    table = rows_table(list(range(spec.initial_rows)), 0, initial_schema(spec.primary_key))
    max_rows = max(1, spec.initial_rows // 4)
    if spec.writer == "pylance":
        import lance  # lazy: only pylance runs need it

        lance.write_dataset(
            table,
            spec.uri,
            mode="create",
            data_storage_version=spec.data_storage_version,  # type: ignore[arg-type]  # None: pylance's default
            enable_stable_row_ids=spec.stable_row_ids,
            enable_v2_manifest_paths=spec.naming == "v2",
            storage_options=spec.storage_options or None,
            max_rows_per_file=max_rows,
        )
    elif writer is not None and _creates_itself(spec, writer):
        create = writes.Create(
            table,
            data_storage_version=spec.data_storage_version,
            max_rows_per_file=max_rows,
            stable_row_ids=spec.stable_row_ids,
        )
        writer.driver.write(spec.uri, create, storage_options=spec.storage_options or None)
    else:
        Dataset.create(
            spec.uri,
            table,
            manifest_naming=spec.naming,
            data_storage_version=spec.data_storage_version or DEFAULT_DATA_STORAGE_VERSION,
            stable_row_ids=spec.stable_row_ids,
            storage_options=spec.storage_options or None,
            max_rows_per_file=max_rows,
        )
    return _setup_attempt(spec, start)


def _creates_itself(spec: RunSpec, writer: LoadedWriter) -> bool:
    reference_based = spec.writer == "reference" or spec.writer.startswith(FAULTY_PREFIX)
    return not reference_based and WriteKind.CREATE in writer.performed


def run(spec: RunSpec, executor: Executor, out_dir: Path, *, validate: bool = True) -> RunResult:
    """Prepare the dataset, run every writer's task on ``executor`` (inside
    the writer's engine session, when its driver has one), save the history,
    the spec and the writer's declaration under ``out_dir``, and check the
    history."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as sessions:
        for name in spec.distinct_writers():
            session = engine_session(name)
            if session is not None:
                sessions.enter_context(session)
        writers = {name: load_writer(name, 0, spec) for name in spec.distinct_writers()}
        # Closed inside the sessions: a client of an engine (a Ray driver)
        # must leave before the engine it joined stops.
        try:
            skipped = sorted(
                {
                    kind.value
                    for index in range(spec.writers)
                    for kind in skipped_kinds([writer_workload(spec, index)], writers[spec.writer_of(index)].performed)
                }
            )
            driver = writers[spec.writer].info.to_json()
            save_writer_file(out_dir, skipped, driver)
            setup = prepare(spec, writers[spec.writer])
            started = time.monotonic()
            attempts = executor.run_tasks([TaskSpec(spec, index) for index in range(spec.writers)])
            seconds = time.monotonic() - started
        finally:
            for writer in writers.values():
                writer.close()
    history = [setup, *sorted(attempts, key=lambda a: (a.start, a.op_id))]
    save_history(out_dir / HISTORY_FILE, history)
    spec.save(out_dir / RUN_FILE)
    report = check(history, spec, validate=validate)
    result = RunResult(spec, history, report, out_dir, skipped, seconds, driver=driver)
    save_report(result)
    return result


def save_report(result: RunResult) -> None:
    """Write what the run says: ``DIR/report.json``, ``DIR/report.html``, and
    ``DIR/writer.json`` when the skipped kinds are known."""
    if result.skipped is not None:
        save_writer_file(result.out_dir, result.skipped, result.driver)
    (result.out_dir / REPORT_FILE).write_text(json.dumps(report_document(result), indent=2) + "\n")
    write_html(
        result.out_dir,
        result.history,
        result.spec,
        result.report.anomalies,
        skipped=result.skipped,
        known_departures=result.report.known_departures,
        versions=result.report.versions,
        driver=result.driver,
    )


def recheck(out_dir: Path, *, validate: bool = True) -> RunResult:
    """Check a saved run again (``harness check DIR``) from its files alone:
    the writer is never loaded (its module may be gone), what the run learnt
    from it is in ``DIR/writer.json``. :class:`SavedRunError` or
    :class:`~.history.HistoryError` name a file that cannot be read back."""
    out_dir = Path(out_dir)
    try:
        spec = RunSpec.load(out_dir / RUN_FILE)
    except (OSError, ValueError, TypeError) as exc:
        raise SavedRunError(f"{out_dir / RUN_FILE}: not a saved run spec ({exc})") from None
    history = load_history(out_dir / HISTORY_FILE)
    skipped, driver = load_writer_file(out_dir)
    report = check(history, spec, validate=validate)
    return RunResult(spec, history, report, out_dir, skipped, driver=driver)
