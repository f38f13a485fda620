"""``lance-conformance demo``: the suite's main job on the embedded defaults.

It writes datasets with pylance (when it is installed) and with the reference
implementation, then for every version of each:

* describes it with the reference reader and with pylance's own view, and
  checks that the two canonical descriptions agree;
* validates it against the specification (errors and warnings fail the demo;
  infos report tolerated departures).

Then it reads the golden fixtures (``fixtures/``, when the corpus is there)
with every installed driver, prints the cross-implementation matrix and
writes the ecosystem matrix page (``OUT/matrix.html``), and ends with
short runs of the concurrency harness on Spark (``local[*]``): 4 writers
each of pylance and of the reference, which must be clean, and one faulty
writer whose anomaly the checker must name.

It prints one line per version, the matrix and a summary, and exits non-zero
on any disagreement, violation or failed matrix cell. What the libraries it
drives print on their own (pylance's and LanceDB's Rust log lines, LanceDB's
fork warning, the JVM's and Spark's start-up notices) goes to
``OUT/third-party.log``, which the demo names at the end: the screen holds
the demo's own lines only.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.dataset import Dataset

from .describe import differences, validate_description
from .drivers import pylance_driver, reference
from .ecosystem.run import demo_drivers, run_ecosystem
from .fixtures import default_corpus
from .harness.anomalies import AnomalyKind
from .harness.faulty import FAULTY_WRITERS
from .harness.report import summary_text
from .harness.runner import run
from .harness.spark import HARNESS_MASTER, SparkError, SparkExecutor
from .harness.spec import RunSpec
from .harness.workloads import parse_workload, workload_to_json
from .report.html import write_html
from .report.text import render_grid
from .validator import Severity, validate
from .validator.facts.text import plural

#: The file, in the demo's directory, that receives what the libraries print.
THIRD_PARTY_LOG = "third-party.log"


@contextmanager
def stderr_to(log: Path) -> Iterator[None]:
    """Send this process's standard error (file descriptor 2) to ``log``
    for the duration, and so the standard error of every process started
    meanwhile (they inherit the descriptor: Spark's JVM, the workers).

    The descriptor, not ``sys.stderr``: Rust's loggers and the JVM write to
    it directly. Python's warnings are written there too. The demo prints its
    own lines to standard output, which is left alone; the terminal's
    standard error is restored on the way out, an exception's traceback
    included (it is printed after this returns)."""
    sys.stdout.flush()
    sys.stderr.flush()
    terminal = os.dup(2)
    try:
        with open(log, "ab") as file:
            os.dup2(file.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(terminal, 2)
    finally:
        os.close(terminal)


def _rows(start: int, count: int):

    ids = list(range(start, start + count))
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"row-{i}" for i in ids]})


def _write_with_pylance(root: Path) -> dict[str, Path]:
    import lance  # lazy: pylance is optional (the test extra); run_demo says so when it is missing

    datasets = {}
    path = root / "pylance_appends_and_deletes"
    lance.write_dataset(_rows(0, 300), path, max_rows_per_file=100)
    lance.write_dataset(_rows(300, 100), path, mode="append")
    lance.dataset(path).delete("id % 7 = 0")
    datasets[path.name] = path

    path = root / "pylance_stable_row_ids"
    lance.write_dataset(_rows(0, 200), path, enable_stable_row_ids=True, max_rows_per_file=50)
    lance.dataset(path).delete("id < 20")
    lance.dataset(path).optimize.compact_files()
    datasets[path.name] = path

    path = root / "pylance_schema_evolution_v1_names"
    lance.write_dataset(_rows(0, 50), path, enable_v2_manifest_paths=False)
    dataset = lance.dataset(path)
    dataset.add_columns({"twice": "id * 2"})
    # pylance annotates each alteration as an iterable of them; it is one dict.
    dataset.alter_columns({"path": "name", "name": "label"})  # type: ignore[dict-item]
    dataset.create_scalar_index("id", "BTREE")
    dataset.tags.create("first", 1)
    datasets[path.name] = path
    return datasets


def _write_with_reference(root: Path) -> dict[str, Path]:

    path = root / "reference_every_operation"
    dataset = Dataset.create(path, _rows(0, 120), stable_row_ids=True, max_rows_per_file=40)
    dataset = dataset.append(_rows(120, 30))
    dataset = dataset.delete(pc.field("id").isin(list(range(0, 150, 5))))
    dataset = dataset.update({"name": "updated"}, where=pc.field("id") < 10)
    dataset = dataset.add_columns({"half": pc.divide(pc.field("id"), 2)})
    dataset = dataset.compact(target_rows_per_fragment=100)
    dataset.create_tag("compacted")
    dataset.create_index(["id"])
    return {path.name: path}


def run_demo(out: str | None = None) -> int:
    try:
        import lance  # lazy: pylance is optional (the test extra)
    except ImportError:
        print("pylance is not installed: install the test extra (pip install -e '.[test]') to run the demo")
        return 1

    root = Path(out) if out else Path(tempfile.mkdtemp(prefix="lance-conformance-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"writing demo datasets with pylance {lance.__version__} and the reference writer under {root}")
    log = root / THIRD_PARTY_LOG
    with stderr_to(log):
        datasets = {**_write_with_pylance(root), **_write_with_reference(root)}
        failures = _check_datasets(datasets)
        failures += _golden_fixture_matrix(root)
        failures += _harness_runs(root / "harness")
    print(f"third-party logs (pylance, LanceDB, Spark, Java): {log}")
    print(
        f"demo finished: {len(datasets)} datasets, "
        + ("every description agrees and every version is valid" if not failures else f"{failures} problems")
    )
    return 0 if not failures else 1


def _check_datasets(datasets: dict[str, Path]) -> int:
    """Describe every version of each dataset with the reference and with
    pylance, validate it, print a line per version; the number of problems."""

    failures = 0
    for name, path in datasets.items():
        report = validate(path, all_versions=True)
        findings: dict[int | None, list] = {}
        for finding in report.findings:
            findings.setdefault(finding.version, []).append(finding)
        for version in reference.versions(path):
            ours = reference.describe(path, version)
            validate_description(ours)
            diffs = differences(ours, pylance_driver.describe(path, version), ignore=pylance_driver.UNREPORTED)
            problems = [f for f in findings.get(version, []) if f.severity is not Severity.INFO]
            infos = len(findings.get(version, [])) - len(problems)
            failures += bool(diffs) + len(problems)
            verdict = "descriptions agree" if not diffs else f"descriptions DIFFER: {'; '.join(diffs[:2])}"
            checks = "valid" if not problems else f"INVALID: {problems[0].rule}: {problems[0].message}"
            print(
                f"  {name} v{version}: {ours['num_rows']} rows in {len(ours['fragments'])} fragments, "
                f"{ours['naming_scheme']} names; {verdict}; {checks}"
                + (f" ({plural(infos, 'tolerated departure')})" if infos else "")
            )
        for finding in findings.get(None, []):
            if finding.severity is not Severity.INFO:
                failures += 1
                print(f"  {name}: INVALID: {finding.rule}: {finding.message}")
    return failures


def _golden_fixture_matrix(root: Path) -> int:
    """Run the installed drivers (older pylance releases aside, but 0.20.0)
    through the golden fixtures, writer conformance and the conflict matrix,
    print the readers grid and write the ecosystem matrix page
    (``ROOT/matrix.html``); the number of failed golden-case cells (the
    conflict grid is shown, not counted: its departures from the upstream page
    are measured facts, listed in docs/spec-discrepancies.md)."""

    corpus = default_corpus()
    if not (corpus / "cases").is_dir():
        print(f"no golden fixtures at {corpus}: matrix skipped (set LANCE_CONFORMANCE_FIXTURES to a corpus)")
        return 0
    matrix = run_ecosystem(demo_drivers(), corpus)
    readers = matrix.grid("readers")
    cases = len({o.case for cell in readers.cells for o in cell.outcomes})
    print(f"golden fixtures: {cases} cases under {corpus}, every writer by every reader")
    print(render_grid(readers))
    page = write_html(root / "matrix.html", matrix)
    print(f"ecosystem matrix (golden cases, conflict matrix, versions, expectations): {page}")
    return sum(cell.status.fails_run for cell in readers.cells)


#: The demo's faulty writer: it commits a delete built on a stale read
#: version, as a distributed job that pins its version too early does, so a
#: row another writer deleted meanwhile comes back ("resurrected delete").
DEMO_FAULTY_WRITER = "stale-read"
#: How many anomalies of a run the demo prints with their witnesses.
SHOWN_ANOMALIES = 3


def _harness_runs(root: Path) -> int:
    """Short harness runs on local Spark; the number of failures (a correct
    writer with anomalies, or a faulty one without its anomaly)."""

    def spec(writer: str, workload: str, writers: int, operations: int) -> RunSpec:
        name = writer.replace(":", "-")
        return RunSpec(
            uri=str(root / f"{name}.lance"),
            storage_options={},
            writer=writer,
            writers=writers,
            operations=operations,
            workloads=workload_to_json(parse_workload(workload)),
            seed=14,
            stable_row_ids=True,
            naming="v2",
        )

    faulty = FAULTY_WRITERS[DEMO_FAULTY_WRITER]
    print(f"concurrency harness on Spark {HARNESS_MASTER} (HTML pages under each run's directory):")
    failures = 0
    try:
        with SparkExecutor(HARNESS_MASTER, app_name="lance-conformance demo") as executor:
            # The faulty writers race from one barrier: as many as there are slots.
            racers = max(2, min(4, executor.default_parallelism))
            runs: list[tuple[RunSpec, AnomalyKind | None]] = [
                (spec("pylance", "mixed", 4, 4), None),
                (spec("reference", "mixed", 4, 4), None),
                (spec(f"faulty:{faulty.name}", faulty.workload, racers, 8), faulty.anomaly),
            ]
            for run_spec, expected in runs:
                out = root / f"{Path(run_spec.uri).stem}-run"
                result = run(run_spec, executor, out, validate=False)
                names = result.report.names()
                if expected is None:
                    failures += len(result.report.anomalies)
                    verdict = "clean, as it must be" if not names else "ANOMALIES in a correct writer"
                else:
                    caught = expected.value in names
                    failures += not caught
                    verdict = f"caught: {expected.value}" if caught else f"NOT CAUGHT: expected {expected.value}"
                print(f"  {run_spec.writer}: {verdict}; {out / 'report.html'}")
                lines = summary_text(result).splitlines()
                shown = next(i for i, line in enumerate(lines) if line.startswith("anomalies")) + 1 + SHOWN_ANOMALIES
                if len(lines) > shown:
                    lines[shown:] = [f"  ... and {len(lines) - shown} more (all in report.html)"]
                print("    " + "\n    ".join(lines))
    except SparkError as error:
        print(f"  harness runs skipped: {error}")
        return 1
    return failures
