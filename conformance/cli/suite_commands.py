"""``lance-conformance conflicts``, ``matrix``, ``writer-check`` and
``dashboard``: drivers under test raced on the conflict matrix, run through
the whole suite as one page, and checked as writers; and the results of many
such runs as one site over time."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from ..run_stamp import RUN_DATE_HELP, RUN_DATE_OPTION, run_date_argument, stamp
from .common import (
    EXIT_DRIVER_UNAVAILABLE,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    add_in_process_option,
    corpus_of,
    quiet_peers,
    show_progress,
)


def _conflicts(args: argparse.Namespace) -> int:
    """The stored conflict matrix (conformance/data/conflict_matrix.json);
    with --driver, the matrix raced by that driver (conformance.conflict_matrix.driver_run)."""
    # lazy: the stored matrix and its renderers load only for this command
    from ..conflict_matrix.model import stored_matrix
    from ..conflict_matrix.render import to_markdown, to_text

    if args.driver is not None:
        return _conflicts_of_driver(args)
    given = [
        option
        for option, value in (("--expectations", args.expectations), ("--cells", args.cells), ("--out", args.out))
        if value is not None
    ]
    if given:
        print(f"lance-conformance: conflicts: {', '.join(given)} needs --driver", file=sys.stderr)
        return EXIT_USAGE
    matrix = stored_matrix()
    if args.format == "json":
        print(json.dumps(matrix.to_json(), indent=2))
    elif args.format == "markdown":
        print(to_markdown(matrix), end="")
    else:
        print(to_text(matrix))
    return EXIT_OK


def _conflicts_of_driver(args: argparse.Namespace) -> int:
    # lazy: racing a driver loads the drivers and the race harness; only --driver does
    from ..conflict_matrix import driver_run
    from ..conflict_matrix.races import UnknownCellsError
    from ..expectations import ExpectationsError

    if args.format == "markdown":
        print("lance-conformance: conflicts --driver prints text or json, not markdown", file=sys.stderr)
        return EXIT_USAGE
    cells = None if args.cells is None else args.cells.split(",")
    try:
        report = driver_run.run_named(args.driver, cells=cells, expectations_path=args.expectations)
    except (driver_run.UnknownDriverError, UnknownCellsError, ExpectationsError) as exc:
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except driver_run.DriverUnavailableError as exc:
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_DRIVER_UNAVAILABLE
    print(driver_run.to_json_text(report) if args.format == "json" else driver_run.to_text(report), end="\n")
    if args.out is not None:
        Path(args.out).write_text(driver_run.to_json_text(report), encoding="utf-8")
    return EXIT_OK if report.passed else EXIT_FINDINGS


def _matrix_expectations(given: list[str], drivers: list[str]):
    """``--expectations [DRIVER=]FILE`` as each driver's file, by driver name:
    ``DRIVER=`` names one of ``--drivers``; a bare FILE is the sole driver's.
    Raises ``ExpectationsError`` (a usage error) naming what is wrong."""
    # lazy: expectations files are checked against a JSON schema (jsonschema), which --help never needs
    from ..expectations import ExpectationsError, load_expectations

    chosen = {}
    for text in given:
        owner = next((name for name in drivers if text.startswith(f"{name}=")), None)
        if owner is None:
            if len(drivers) != 1:
                raise ExpectationsError(
                    f"--expectations {text}: say whose it is (DRIVER=FILE, DRIVER one of --drivers), "
                    f"or name one driver with --drivers"
                )
            owner, path = drivers[0], text
        else:
            path = text[len(owner) + 1 :]
        if owner in chosen:
            raise ExpectationsError(f"--expectations: two files for driver {owner!r}")
        chosen[owner] = load_expectations(path)
    return chosen


def _matrix(args: argparse.Namespace) -> int:
    """``matrix``: the drivers asked for (every installed one by default)
    through the suite, as a page (and JSON); only those drivers are judged."""
    # lazy: the whole suite (drivers, ecosystem run, page templates) loads only for this command
    from ..drivers import isolated_driver_name
    from ..ecosystem.model import Status, dumps
    from ..ecosystem.run import default_drivers, run_ecosystem
    from ..expectations import ExpectationsError
    from ..report.html import write_html
    from ..report.text import render_grid

    quiet_peers()
    if args.drivers:
        drivers = [name.strip() for name in args.drivers.split(",") if name.strip()]
    else:
        drivers = default_drivers()
    try:
        expectations = _matrix_expectations(args.expectations, drivers)
    except ExpectationsError as exc:
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # A module driver runs as a worker unless --in-process; its expectations
    # follow it under the name it runs by.
    running = {name: isolated_driver_name(name, in_process=args.in_process) for name in drivers}
    drivers = list(running.values())
    expectations = {running[name]: chosen for name, chosen in expectations.items()}

    def progress(message: str) -> None:
        if show_progress():
            print(message, file=sys.stderr, flush=True)

    matrix = run_ecosystem(drivers, corpus_of(args), progress=progress, expectations=expectations)
    if args.run_date is not None:
        matrix = dataclasses.replace(matrix, run_date=args.run_date)
    page = write_html(args.html, matrix)
    print(f"saved {page}")
    if args.json:
        Path(args.json).write_text(dumps(matrix), encoding="utf-8")
        print(f"saved {args.json}")
    for grid in matrix.grids:
        print(render_grid(grid))
    for grid in matrix.grids:
        for cell in grid.cells:
            for outcome in cell.outcomes:
                if outcome.status is Status.FIXED:
                    print(
                        f"unexpected pass: {grid.id} {cell.row} x {cell.column}: {outcome.case} "
                        f"(remove the expectation: {outcome.expectation})"
                    )
    not_run = [driver for driver in matrix.drivers if driver.error]
    for driver in not_run:
        print(f"driver {driver.name} not run: {driver.error}")
    if not matrix.passed:
        return EXIT_FINDINGS
    return EXIT_DRIVER_UNAVAILABLE if not_run else EXIT_OK


def add_matrix(commands) -> None:
    matrix = commands.add_parser(
        "matrix",
        help="every installed driver through the suite (golden cases, conflict matrix), as one HTML page",
    )
    matrix.add_argument(
        "--html", required=True, metavar="OUT", help="where to write the page (one self-contained file)"
    )
    matrix.add_argument("--json", default=None, metavar="OUT", help="also write the results as JSON (versioned)")
    matrix.add_argument(
        "--drivers",
        default=None,
        metavar="A,B",
        help="comma-separated driver names (default: every installed driver); only these are judged",
    )
    matrix.add_argument(
        "--expectations",
        action="append",
        default=[],
        metavar="[DRIVER=]FILE",
        help="an implementation's expectations file (suites readers, writers, conflicts), in place of the shipped "
        "one; DRIVER= names its driver, needed when --drivers names more than one (repeatable). Exit 0 when the "
        "failures are exactly the listed ones, 1 on any other failure or an unexpected pass, 3 when a driver "
        "cannot load",
    )
    matrix.add_argument(
        "--corpus",
        default=None,
        help="golden corpus directory (default: $LANCE_CONFORMANCE_FIXTURES or the repository's fixtures/)",
    )
    matrix.add_argument(RUN_DATE_OPTION, type=run_date_argument, default=None, metavar="DAY", help=RUN_DATE_HELP)
    add_in_process_option(matrix)
    matrix.set_defaults(run=_matrix)


def add_conflicts(commands) -> None:
    conflicts = commands.add_parser(
        "conflicts",
        help="print the conflict matrix (two writers racing, measured with pylance and the reference); "
        "with --driver, race its cells with that driver",
    )
    conflicts.add_argument(
        "--format", choices=("text", "json", "markdown"), default="text", help="markdown: the stored matrix only"
    )
    conflicts.add_argument(
        "--driver",
        default=None,
        help="race every cell the write vocabulary expresses with this writing driver (a name, a module path, "
        "worker:NAME, cmd:COMMAND LINE); exit 1 when a cell differs from the stored matrix, 3 when it cannot load",
    )
    conflicts.add_argument(
        "--expectations", default=None, help="the implementation's expectations file (suite conflicts, case: cell id)"
    )
    conflicts.add_argument(
        "--cells",
        default=None,
        metavar="PATTERNS",
        help="comma-separated cell ids or shell patterns (delete/*, *:same-rows); default: every raced cell",
    )
    conflicts.add_argument("--out", default=None, metavar="FILE", help="also write the JSON report to FILE")
    conflicts.set_defaults(run=_conflicts)


def add_writer_check(commands) -> None:
    writer_check = commands.add_parser(
        "writer-check",
        help="run a writing driver through the writer conformance script and check every version it commits",
    )
    writer_check.add_argument("--driver", required=True, help="the writing driver (a name or a module path)")
    writer_check.add_argument("--format", choices=("text", "json"), default="text")
    writer_check.add_argument(
        "--expectations", default=None, help="the implementation's expectations file (suite writers, case: step id)"
    )
    writer_check.add_argument(
        "--reader",
        action="append",
        default=None,
        help="a reader driver to check every version with (repeatable; default: every installed reader)",
    )
    writer_check.add_argument(
        "--data-storage-version",
        default="2.0",
        help="the data storage version the table is created with (default 2.0, which every shipped reader reads; "
        "'default' leaves the writer's own)",
    )
    writer_check.add_argument(RUN_DATE_OPTION, type=run_date_argument, default=None, metavar="DAY", help=RUN_DATE_HELP)
    add_in_process_option(writer_check)
    writer_check.set_defaults(run=_writer_check)


def _writer_check(args: argparse.Namespace) -> int:
    """Writer conformance of one driver (conformance.writer_conformance)."""
    # lazy: the writer script, its drivers and readers load only for this command
    from ..drivers import isolated_driver_name
    from ..expectations import ExpectationsError, load_expectations, shipped_expectations
    from ..writer_conformance import WriterCheckError, run_writer_conformance
    from ..writer_conformance.report import to_json_text, to_text

    # The implementation's own file when given; else what ships for a shipped driver.
    try:
        if args.expectations is not None:
            expectations, label = load_expectations(args.expectations), args.expectations
        else:
            expectations, label = shipped_expectations(args.driver), None
            label = f"shipped expectations of {expectations.implementation}" if expectations.entries else None
    except ExpectationsError as exc:
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    version = None if args.data_storage_version == "default" else args.data_storage_version
    readers = args.reader and [isolated_driver_name(reader, in_process=args.in_process) for reader in args.reader]
    try:
        report = run_writer_conformance(
            isolated_driver_name(args.driver, in_process=args.in_process),
            readers=readers,
            expectations=expectations,
            expectations_label=label,
            data_storage_version=version,
        )
    except WriterCheckError as exc:
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    report = dataclasses.replace(report, run=stamp(args.run_date))
    print(to_json_text(report) if args.format == "json" else to_text(report))
    return EXIT_OK if report.passed else EXIT_FINDINGS


def add_dashboard(commands) -> None:
    dashboard = commands.add_parser(
        "dashboard",
        help="the JSON results of matrix, writer-check, harness, compat and the pytest plugin under a directory, "
        "from any implementations, releases and days, as one static site",
        description="Read every results document under RESULTS_DIR (at any depth) and write a static site into "
        "SITE: index.html (implementations by suites, the latest run of each), a page per implementation (its "
        "pass rate by release and over time) and results.json. A file that is not a known results document, or "
        "does not fit its schema, is named in a warning and left out. Exit 0 when every file was read, 1 when "
        "the site was written but some were not, 2 when RESULTS_DIR holds no readable result.",
    )
    dashboard.add_argument("results_dir", metavar="RESULTS_DIR", type=Path, help="where the results are")
    dashboard.add_argument(
        "--out", required=True, metavar="SITE", type=Path, help="the directory to write the site into"
    )
    dashboard.set_defaults(run=_dashboard)


def _dashboard(args: argparse.Namespace) -> int:
    """The site of every result under RESULTS_DIR (conformance.dashboard)."""
    # lazy: the dashboard's adapters and templates load only for this command
    from ..dashboard import NoResultsError, build_dashboard

    if args.out.exists() and not args.out.is_dir():
        print(f"lance-conformance: dashboard: --out {args.out} is a file, not a directory", file=sys.stderr)
        return EXIT_USAGE
    try:
        built = build_dashboard(args.results_dir, args.out)
    except NoResultsError as exc:
        print(f"lance-conformance: dashboard: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for problem in built.inputs.problems:
        print(f"lance-conformance: dashboard: {problem.line()}", file=sys.stderr)
    inputs = built.inputs
    implementations = len({r.implementation for r in inputs.results})
    print(
        f"saved {built.index}: {len(inputs.results)} results from {len(inputs.sources)} files "
        f"({implementations} implementations, {len({r.run_date for r in inputs.results})} days); "
        f"{len(inputs.problems)} files not read"
    )
    return EXIT_FINDINGS if inputs.problems else EXIT_OK
