"""Commit benchmarks (issue: concurrent commits, conflict resolution and rebase).

* **throughput**: 1, 4 and 16 writer processes append to one local dataset
  at once, each committing :data:`COMMITS_PER_WRITER` small appends, every
  one opening the latest version first (the reference: ``Dataset.open(path)
  .append(table)``; pylance: ``lance.write_dataset(table, path,
  mode="append")``). The time is from the moment every writer has started,
  imported its library and is waiting at a barrier, to the last writer's
  last commit; process start-up is not timed. Afterwards the dataset must
  hold every row of every acknowledged commit exactly once (checked with
  the reference reader; a run that loses rows stops with an error).
* **rebase latency**: a writer opened version 1, then 1, 10, 100 or 400 appends
  were committed by others; the time of its one Append commit (reference:
  ``Dataset.open(path, version=1).commit(Append(...))``; pylance:
  ``LanceDataset.commit(path, Append(...), read_version=1)``). Its data file
  is written beforehand, untimed; each repeat starts from a fresh copy of
  the dataset (each newer version adds a fragment). Also over 400, and the
  detail column gives the time per newer version: conflict checking must
  be linear in their number, so that figure must stay flat.

Each side commits to a dataset it created itself (format 2.0 data files).
A side whose commits fail (a writer that loses the race and gives up)
reports the time of the commits it got acknowledged and says how many
failed: the benchmark measures, it does not hide a failure.
"""

from __future__ import annotations

import multiprocessing
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from .common import DATA_DIR, Measurement

#: Appends each writer process commits in the throughput benchmark.
COMMITS_PER_WRITER = 20
#: Rows in each appended table.
ROWS_PER_COMMIT = 10
#: How long a throughput run may take before its writers are stopped.
RUN_TIMEOUT_SECONDS = 600

REFERENCE = "reference"
PYLANCE = "pylance"


def _rows(first_id: int, count: int = ROWS_PER_COMMIT) -> pa.Table:
    ids = pa.array(range(first_id, first_id + count), pa.int64())
    return pa.table({"id": ids, "name": pa.array([f"row {i}" for i in range(first_id, first_id + count)])})


def _create(side: str, path: Path) -> None:
    """A fresh dataset at ``path`` holding one row (id -1), written by ``side``."""
    shutil.rmtree(path, ignore_errors=True)
    first = _rows(-1, 1)
    if side == REFERENCE:
        from reference_impl.dataset import Dataset

        Dataset.create(path, first)
    else:
        import lance

        lance.write_dataset(first, path, data_storage_version="2.0")


def _append(side: str, path: Path, table: pa.Table) -> None:
    if side == REFERENCE:
        from reference_impl.dataset import Dataset

        Dataset.open(path).append(table)
    else:
        import lance

        lance.write_dataset(table, path, mode="append")


# -- throughput ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WriterResult:
    """What one writer process reports: the commits acknowledged, the ones
    that failed (with the first failure's message), and when it finished
    (``time.monotonic()``, shared by every process on one machine)."""

    acknowledged: int
    failed: int
    first_failure: str
    finished: float


def _writer(side: str, path: str, writer: int, commits: int, ready, go, results) -> None:
    """One writer process: import, wait for the start, then ``commits`` appends."""
    if side == PYLANCE:
        import lance  # noqa: F401  (imported before the start, not timed)
    else:
        import reference_impl.dataset  # noqa: F401
    tables = [_rows(writer * 1_000_000 + n * ROWS_PER_COMMIT) for n in range(commits)]
    ready.put(writer)
    go.wait()
    acknowledged = failed = 0
    first_failure = ""
    for table in tables:
        try:
            _append(side, Path(path), table)
            acknowledged += 1
        except Exception as exc:  # measured and reported, never hidden: see the module docstring
            failed += 1
            first_failure = first_failure or f"{type(exc).__name__}: {exc}"[:200]
    results.put((writer, WriterResult(acknowledged, failed, first_failure, time.monotonic())))


@dataclass(frozen=True)
class ThroughputRun:
    seconds: float
    acknowledged: int
    failed: int
    first_failure: str

    @property
    def commits_per_second(self) -> float:
        return self.acknowledged / self.seconds if self.seconds else 0.0


def _throughput_run(side: str, path: Path, writers: int, commits: int) -> ThroughputRun:
    """Race ``writers`` processes of ``side`` appending to a fresh dataset;
    every process is joined (or, past the timeout, terminated and joined)."""
    _create(side, path)
    context = multiprocessing.get_context("spawn")  # pylance's runtime threads do not survive fork
    ready, results, go = context.Queue(), context.Queue(), context.Event()
    processes = [
        context.Process(target=_writer, args=(side, str(path), w, commits, ready, go, results)) for w in range(writers)
    ]
    for process in processes:
        process.start()
    try:
        for _ in processes:
            ready.get(timeout=RUN_TIMEOUT_SECONDS)
        start = time.monotonic()
        go.set()
        reported = dict(results.get(timeout=RUN_TIMEOUT_SECONDS) for _ in processes)
    finally:
        for process in processes:
            process.join(timeout=RUN_TIMEOUT_SECONDS)
            if process.is_alive():
                process.terminate()
                process.join()
    finished = max(r.finished for r in reported.values())
    acknowledged = sum(r.acknowledged for r in reported.values())
    failed = sum(r.failed for r in reported.values())
    first_failure = next((r.first_failure for r in reported.values() if r.first_failure), "")
    _check_rows(path, acknowledged)
    return ThroughputRun(finished - start, acknowledged, failed, first_failure)


def _check_rows(path: Path, acknowledged: int) -> None:
    """Every acknowledged append's rows are visible exactly once (the
    reference reader, on either side's dataset)."""
    from reference_impl.dataset import Dataset

    ids = Dataset.open(path).to_table().column("id").to_pylist()
    expected = 1 + acknowledged * ROWS_PER_COMMIT
    if len(ids) != expected or len(set(ids)) != len(ids):
        raise AssertionError(
            f"{path}: {len(ids)} rows ({len(set(ids))} distinct) after {acknowledged} acknowledged appends; "
            f"expected {expected}, each once"
        )


def bench_commit_throughput(writers: int, repeats: int = 3) -> Measurement:
    """``writers`` processes, :data:`COMMITS_PER_WRITER` appends each."""
    runs = {}
    for side in (REFERENCE, PYLANCE):
        path = DATA_DIR / f"commits-{side}-{writers}-writers"
        attempts = [_throughput_run(side, path, writers, COMMITS_PER_WRITER) for _ in range(repeats)]
        runs[side] = sorted(attempts, key=lambda run: run.seconds)[len(attempts) // 2]
        shutil.rmtree(path, ignore_errors=True)
    reference, pylance = runs[REFERENCE], runs[PYLANCE]
    total = writers * COMMITS_PER_WRITER
    detail = (
        f"{total} appends; commits/s reference {reference.commits_per_second:.1f}, "
        f"pylance {pylance.commits_per_second:.1f}"
    )
    for side, run in runs.items():
        if run.failed:
            detail += (
                f"; {side}: {run.failed} of {total} FAILED, so the ratio compares unequal work ({run.first_failure})"
            )
    return Measurement(f"commit throughput, {writers} writer process(es)", reference.seconds, pylance.seconds, detail)


def bench_commit_throughput_1() -> Measurement:
    return bench_commit_throughput(1)


def bench_commit_throughput_4() -> Measurement:
    return bench_commit_throughput(4)


def bench_commit_throughput_16() -> Measurement:
    return bench_commit_throughput(16)


# -- rebase latency ------------------------------------------------------------------------


def _history(side: str, newer: int) -> Path:
    """A dataset of ``side`` with version 1 and ``newer`` one-row appends after it (kept between runs)."""
    path = DATA_DIR / f"rebase-{side}-{newer}"
    if not (path / "_versions").exists() or len(list((path / "_versions").iterdir())) < newer + 1:
        _create(side, path)
        for n in range(newer):
            _append(side, path, _rows(n, 1))
    return path


def _stale_commit_seconds(side: str, source: Path, repeats: int) -> float:
    """Median time of one Append committed with read version 1 on a fresh copy of ``source``."""
    times = []
    for repeat in range(repeats):
        path = source.parent / f"{source.name}-copy"
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(source, path)
        table = _rows(10_000_000 + repeat)
        if side == REFERENCE:
            from reference_impl.dataset import Dataset
            from reference_impl.fragment_writer import write_fragments
            from reference_impl.transactions import Append

            stale = Dataset.open(path, version=1)
            fragments = write_fragments(stale.storage, table, stale.schema)
            start = time.perf_counter()
            Dataset.open(path, version=1).commit(Append(fragments=fragments))
        else:
            import lance

            fragments = lance.fragment.write_fragments(table, path, data_storage_version="2.0")
            start = time.perf_counter()
            lance.LanceDataset.commit(path, lance.LanceOperation.Append(fragments), read_version=1)
        times.append(time.perf_counter() - start)
        shutil.rmtree(path, ignore_errors=True)
    return statistics.median(times)


def _rebase_latencies(side: str, repeats: int) -> dict[int, float | str]:
    """Seconds per stale commit, by number of newer versions; a failure's message instead of a time."""
    found: dict[int, float | str] = {}
    for newer in REBASE_OVER:
        try:
            found[newer] = _stale_commit_seconds(side, _history(side, newer), repeats)
        except Exception as exc:  # reported in the table, see the module docstring
            found[newer] = f"{type(exc).__name__}: {exc}"[:160]
    return found


#: Newer versions a stale commit rebases over; the last one probes whether
#: the cost per newer version stays flat (linear conflict checking).
REBASE_OVER = (1, 10, 100, 400)


def bench_rebase_latency(repeats: int = 5) -> list[Measurement]:
    sides = {side: _rebase_latencies(side, repeats) for side in (REFERENCE, PYLANCE)}
    rows = []
    for newer in REBASE_OVER:
        times = [sides[side][newer] for side in (REFERENCE, PYLANCE)]
        notes = [
            f"{side} FAILED ({t})" for side, t in zip((REFERENCE, PYLANCE), times, strict=True) if isinstance(t, str)
        ]
        if newer > 1:
            # The commit's time over the number of newer versions: flat when
            # conflict checking is linear in it.
            notes.append(
                "per newer version: "
                + ", ".join(
                    f"{side} {t / newer * 1000:.2f} ms"
                    for side, t in zip((REFERENCE, PYLANCE), times, strict=True)
                    if isinstance(t, float)
                )
            )
        rows.append(
            Measurement(
                f"commit rebasing over {newer} newer version(s)",
                times[0] if isinstance(times[0], float) else float("nan"),
                times[1] if isinstance(times[1], float) else float("nan"),
                "; ".join(notes),
            )
        )
    return rows


BENCHMARKS = [bench_commit_throughput_1, bench_commit_throughput_4, bench_commit_throughput_16, bench_rebase_latency]
