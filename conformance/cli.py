"""The ``lance-conformance`` command: one cohesive concept, the argument
parser of every subcommand with a small handler each (the work is done by the
modules they import, lazily, so that a command loads only what it needs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING

from reference_impl.errors import InvalidOperationError, LanceFormatError, NotADatasetError, VersionNotFoundError

from .collector import collector_paused
from .exit_codes import ExitCode
from .harness.command import add_harness_parser

if TYPE_CHECKING:
    from .validator import Report

# The exit statuses are defined once, in conformance/exit_codes.py; these names are the handlers' (and tests').
EXIT_OK = ExitCode.OK
EXIT_FINDINGS = ExitCode.FINDINGS
EXIT_NOT_A_DATASET = ExitCode.NOT_A_DATASET
#: A malformed baseline, an unknown tag, branch or version: the command line asked for something that is not there.
EXIT_USAGE = ExitCode.USAGE
#: A driver that exists but cannot load or describe itself here.
EXIT_DRIVER_UNAVAILABLE = ExitCode.DRIVER_CANNOT_LOAD


def _selected(args: argparse.Namespace) -> tuple[str, int | None]:
    """The directory (or object store prefix) and version that --tag, or
    --branch and --version, select (a branch keeps its versions under
    tree/{name}/)."""
    if args.tag is None and args.branch is None:
        return args.path, args.version
    from reference_impl.refs import resolve_ref
    from reference_impl.storage import open_storage, parse_dataset_uri

    root = open_storage(parse_dataset_uri(args.path), args.storage_options, writable=False)
    if not root.root_is_dir():
        raise NotADatasetError(root.location, "not a directory")
    target = resolve_ref(root, tag=args.tag, branch=args.branch, version=args.version)
    return (root if target.root is None else root.subtree(target.root)).location, target.version


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return number


def _storage_option(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key, value


def _add_storage_option(parser: argparse.ArgumentParser) -> None:
    """--storage-option KEY=VALUE (repeatable): pylance's storage option keys,
    for s3:// datasets (aws_endpoint, aws_region, allow_http, credentials)."""
    parser.add_argument(
        "--storage-option",
        dest="storage_options",
        type=_storage_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a storage option, as pylance names it (repeatable), e.g. aws_endpoint=http://127.0.0.1:5000",
    )


def _describe(args: argparse.Namespace) -> int:
    from .describe import to_json, to_text
    from .drivers import reference

    path, version = _selected(args)
    document = reference.describe(
        path, version, storage_options=dict(args.storage_options), manifest_store=args.manifest_store
    )
    print(to_json(document) if args.format == "json" else to_text(document))
    return EXIT_OK


def _add_spec_revision_option(parser: argparse.ArgumentParser) -> None:
    from .spec_revisions import NEWEST, REVISIONS, argparse_type

    parser.add_argument(
        "--spec-revision",
        type=argparse_type,
        default=NEWEST,
        metavar="REVISION",
        help=f"format revision to check conformance to, one of: {', '.join(r.name for r in REVISIONS)} "
        f"(oldest first; default: the newest, {NEWEST.name})",
    )


def _manifest_store(text: str):
    """``--manifest-store sqlite:PATH``: the SQLite external manifest store a
    dataset is committed through, opened read only."""
    kind, _, where = text.partition(":")
    if kind != "sqlite" or not where:
        raise argparse.ArgumentTypeError(f"expected sqlite:PATH, not {text!r}")
    from reference_impl.commit.external_store import SqliteManifestStore

    return SqliteManifestStore(where, read_only=True)


def _add_manifest_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest-store",
        type=_manifest_store,
        default=None,
        metavar="sqlite:PATH",
        help="the external manifest store the dataset is committed through (read, never written)",
    )


def _validate(args: argparse.Namespace) -> int:
    from .validator import Severity, validate
    from .validator.baseline import gates, load_baseline, settle
    from .validator.report import FORMATS

    if args.master is not None and not args.spark:
        args.parser.error("--master names the Spark master of --spark; add --spark")
    fail_on = Severity(args.fail_on)
    baseline = load_baseline(args.baseline) if args.baseline else None  # a bad file fails before the run
    path, version = _selected(args)
    run: Callable[..., Report] = validate
    if args.spark:
        # Deliberately lazy: only --spark needs the Spark job (and pyspark under it).
        from functools import partial

        from .spark_session import DEFAULT_MASTER
        from .validator.spark import validate as validate_on_spark

        # Spark that cannot start raises SparkError: a usage error (main), nothing was validated.
        run = partial(validate_on_spark, master=args.master or DEFAULT_MASTER)
    report = run(
        path,
        version=version,
        all_versions=args.all_versions,
        rules=args.rules,
        spec_revision=args.spec_revision,
        storage_options=dict(args.storage_options),
        manifest_store=args.manifest_store,
        io_threads=args.io_threads,
    )
    if baseline is not None or args.write_baseline:
        settle(report, baseline, write_to=args.write_baseline, fail_on=fail_on)
    print(FORMATS[args.format](report))
    return EXIT_FINDINGS if any(gates(f, fail_on) for f in report.findings) else EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    from .validator.catalog import uncovered_requirements
    from .validator.ruleset import all_rules

    if args.uncovered:
        for requirement in uncovered_requirements():
            why = requirement.uncheckable or "checkable at rest; no rule yet"
            print(f"{requirement.id} [{requirement.level}] {why}")
        return EXIT_OK
    for rule in all_rules():
        print(f"{rule.id} [{rule.severity.value}] {rule.summary} ({', '.join(rule.requirements)})")
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    _quiet_peers()
    return run_demo(args.out)


def _corpus(args: argparse.Namespace):
    from pathlib import Path

    from .fixtures import default_corpus

    return Path(args.corpus) if args.corpus else default_corpus()


def _quiet_peers() -> None:
    """pylance logs a warning per unknown index type and per thread pool;
    the verdicts say what matters."""
    import os

    os.environ.setdefault("LANCE_LOG", "error")


def _fixtures_generate(args: argparse.Namespace) -> int:
    from .fixtures.generate import generate
    from .peers.old_pylance import PeerUnavailableError, PeerWriterError

    corpus = _corpus(args)
    try:
        report = generate(
            corpus,
            rewrite_peers=args.rewrite_peers,
            only=set(args.case) if args.case else None,
            progress=lambda message: print(message, file=sys.stderr),
        )
    except (PeerUnavailableError, PeerWriterError, ImportError) as exc:
        # Writing peer cases needs pylance (and the old release's venv).
        print(f"lance-conformance: cannot write the peer cases: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    print(
        f"{corpus}: {len(report.rebuilt)} cases rebuilt, {len(report.peers_written)} peer cases written, "
        f"{len(report.peers_kept)} kept, expected files of {len(report.expected_computed)} cases computed"
    )
    for name in report.unknown_dirs:
        print(f"warning: {name} has no builder and is not tagged promoted; it was kept", file=sys.stderr)
    return EXIT_OK


def _print_result(result) -> None:
    """One case's verdict and its problems and notes (a crash report's lines indented under its own)."""
    extra = f" [{result.expectation.requirement}]" if result.expectation else ""
    print(f"{result.status.upper():16} {result.case}{extra}")
    for text in result.problems + result.notes:
        first, *rest = text.splitlines() or [""]
        print(f"    {first}")
        for line in rest:
            print(f"        {line}")


def _print_summary(results, output_format: str, info=None, corpus=None) -> None:
    """The JSON report, or (the cases printed as they finished) the count of each status."""
    import json

    from .fixtures import corpus_version
    from .fixtures.verify import report_json

    if output_format == "json":
        print(json.dumps(report_json(results, info, corpus_version(corpus) if corpus else None), indent=2))
        return
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    print(", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no cases")


def _verify_output(output_format: str):
    """``fixtures verify``'s (progress, on_result): on a terminal outside CI a
    progress line on stderr names the case being read (rewritten in place,
    erased when the case is done); each text result is printed, and flushed,
    as its case finishes, so a run that is stopped keeps what it did."""
    show = _show_progress()

    def progress(done: int, total: int, name: str) -> None:
        print(f"\r\033[K[{done + 1}/{total}] {name}", end="", file=sys.stderr, flush=True)

    def on_result(result) -> None:
        if show:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        if output_format == "text":
            _print_result(result)
            sys.stdout.flush()

    return (progress if show else None), on_result


def _add_in_process_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run a driver module inside this process instead of in a worker process (a crash of native code "
        "in it then ends the run)",
    )


def _fixtures_verify(args: argparse.Namespace) -> int:
    from .drivers import close_driver, driver_info, greet_driver, isolated_driver_name, load_driver

    name = isolated_driver_name(args.driver, in_process=args.in_process)
    # A worker's child is started first: its start-up (a process importing an
    # implementation) overlaps with this process's imports below.
    driver = load_driver(name, greet=False)
    try:
        from .expectations import ExpectationsError, load_expectations
        from .fixtures.verify import ACCEPTED, verify_corpus

        _quiet_peers()
        try:
            expectations = load_expectations(args.expectations) if args.expectations else None
        except ExpectationsError as exc:
            print(f"lance-conformance: {exc}", file=sys.stderr)
            return EXIT_USAGE
        greet_driver(driver, name)
        info = driver_info(driver, name)
        progress, on_result = _verify_output(args.format)
        results = verify_corpus(
            _corpus(args),
            name,
            only=set(args.case) if args.case else None,
            expectations=expectations,
            progress=progress,
            driver=driver,
            on_result=on_result,
        )
    finally:
        close_driver(driver)
    _print_summary(results, args.format, info, _corpus(args))
    return EXIT_OK if results and all(r.status in ACCEPTED for r in results) else EXIT_FINDINGS


def _fixtures_matrix(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from .fixtures.matrix import render_matrix, run_matrix

    _quiet_peers()
    corpus = _corpus(args)
    matrix = run_matrix(corpus, args.drivers)
    print(render_matrix(matrix))
    out = Path(args.json) if args.json else corpus / "matrix.json"
    out.write_text(json.dumps(matrix, indent=2) + "\n", encoding="utf-8")
    print(f"saved {out}")
    return EXIT_OK if all(cell["pass"] for cell in matrix["cells"]) else EXIT_FINDINGS


def _fixtures_promote(args: argparse.Namespace) -> int:
    from .fixtures.promote import promote

    case = promote(
        args.path,
        _corpus(args),
        name=args.name,
        description=args.description,
        requirements=args.requirement or [],
        features=args.feature or [],
        tags=args.tag or [],
    )
    print(f"promoted {args.path} as case {case.name} ({len(case.features)} features: {', '.join(case.features)})")
    return EXIT_OK


def _conflicts(args: argparse.Namespace) -> int:
    """The stored conflict matrix (conformance/data/conflict_matrix.json);
    with --driver, the matrix raced by that driver (conformance.conflict_matrix.driver_run)."""
    import json

    from .conflict_matrix.model import stored_matrix
    from .conflict_matrix.render import to_markdown, to_text

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
    from pathlib import Path

    from .conflict_matrix import driver_run
    from .conflict_matrix.races import UnknownCellsError
    from .expectations import ExpectationsError

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


def _show_progress() -> bool:
    """Progress lines go to a terminal, never into a CI log (``CI`` set) or a pipe."""
    import os

    return sys.stderr.isatty() and not os.environ.get("CI")


def _matrix_expectations(given: list[str], drivers: list[str]):
    """``--expectations [DRIVER=]FILE`` as each driver's file, by driver name:
    ``DRIVER=`` names one of ``--drivers``; a bare FILE is the sole driver's.
    Raises ``ExpectationsError`` (a usage error) naming what is wrong."""
    from .expectations import ExpectationsError, load_expectations

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
    from .drivers import isolated_driver_name
    from .ecosystem.model import Status, dumps
    from .ecosystem.run import default_drivers, run_ecosystem
    from .expectations import ExpectationsError
    from .report.html import write_html
    from .report.text import render_grid

    _quiet_peers()
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
        if _show_progress():
            print(message, file=sys.stderr, flush=True)

    matrix = run_ecosystem(drivers, _corpus(args), progress=progress, expectations=expectations)
    page = write_html(args.html, matrix)
    print(f"saved {page}")
    if args.json:
        from pathlib import Path

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


def _add_matrix(commands) -> None:
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
    _add_in_process_option(matrix)
    matrix.set_defaults(run=_matrix)


def _add_conflicts(commands) -> None:
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


def _add_writer_check(commands) -> None:
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
    _add_in_process_option(writer_check)
    writer_check.set_defaults(run=_writer_check)


def _writer_check(args: argparse.Namespace) -> int:
    """Writer conformance of one driver (conformance.writer_conformance)."""
    from .drivers import isolated_driver_name
    from .expectations import ExpectationsError, load_expectations, shipped_expectations
    from .writer_conformance import WriterCheckError, run_writer_conformance
    from .writer_conformance.report import to_json_text, to_text

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
    print(to_json_text(report) if args.format == "json" else to_text(report))
    return EXIT_OK if report.passed else EXIT_FINDINGS


def _add_fixtures(commands) -> None:
    fixtures = commands.add_parser("fixtures", help="golden fixtures: generate, verify, matrix, promote")
    group = fixtures.add_subparsers(dest="fixtures_command", required=True)

    def with_corpus(parser):
        parser.add_argument(
            "--corpus",
            default=None,
            help="corpus directory (default: $LANCE_CONFORMANCE_FIXTURES or the repository's fixtures/)",
        )
        return parser

    generate = with_corpus(group.add_parser("generate", help="rebuild the corpus deterministically"))
    generate.add_argument(
        "--rewrite-peers",
        action="store_true",
        help="also rewrite the pylance-written datasets (their bytes change: new uuids)",
    )
    generate.add_argument("--case", nargs="+", default=None, metavar="NAME", help="only rebuild these cases")
    generate.set_defaults(run=_fixtures_generate)

    verify = with_corpus(group.add_parser("verify", help="read every case with a driver and compare"))
    verify.add_argument(
        "--driver",
        required=True,
        help="reference, pylance, pylance@VERSION (a pinned release in its own venv), worker:MODULE, "
        "cmd:COMMAND LINE, or a driver module name (run as worker:MODULE unless --in-process)",
    )
    verify.add_argument("--case", nargs="+", default=None, metavar="NAME", help="only these cases")
    verify.add_argument(
        "--expectations",
        default=None,
        metavar="FILE",
        help="the implementation's known failures (default: the file shipped for the driver's implementation, if any)",
    )
    verify.add_argument("--format", choices=("text", "json"), default="text")
    _add_in_process_option(verify)
    verify.set_defaults(run=_fixtures_verify)

    matrix = with_corpus(group.add_parser("matrix", help="every writer by every reader, as a table and JSON"))
    matrix.add_argument("--drivers", nargs="+", default=["reference", "pylance"], metavar="DRIVER")
    matrix.add_argument("--json", default=None, help="where to save the JSON (default: CORPUS/matrix.json)")
    matrix.set_defaults(run=_fixtures_matrix)

    promote = with_corpus(group.add_parser("promote", help="turn a dataset into a new case"))
    promote.add_argument("path", help="dataset root directory")
    promote.add_argument("--name", default=None, help="case name (default: promoted-<directory name>)")
    promote.add_argument("--description", default=None)
    promote.add_argument("--requirement", nargs="+", default=None, metavar="ID", help="requirement ids it concerns")
    promote.add_argument("--feature", nargs="+", default=None, metavar="FEATURE", help="features beyond those inferred")
    promote.add_argument("--tag", nargs="+", default=None, metavar="TAG")
    promote.set_defaults(run=_fixtures_promote)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lance-conformance",
        description="Reference implementation, spec validator and conformance suite for the Lance table format.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    describe = commands.add_parser("describe", help="print one version of a dataset as the canonical document")
    describe.add_argument("path", help="dataset root directory, or s3://bucket/path")
    which = describe.add_mutually_exclusive_group()
    which.add_argument("--version", type=int, default=None, help="version to describe (default: latest)")
    which.add_argument("--tag", default=None, metavar="NAME", help="the version tag NAME points at")
    describe.add_argument(
        "--branch", default=None, metavar="NAME", help="a version of branch NAME (its latest, or --version)"
    )
    describe.add_argument("--format", choices=("json", "text"), default="json")
    _add_storage_option(describe)
    _add_manifest_store_option(describe)
    describe.set_defaults(run=_describe)

    validate = commands.add_parser("validate", help="check a dataset against the specification")
    validate.add_argument("path", help="dataset root directory, or s3://bucket/path")
    which = validate.add_mutually_exclusive_group()
    which.add_argument("--version", type=int, default=None, help="version to validate (default: latest)")
    which.add_argument("--all-versions", action="store_true", help="validate every version")
    which.add_argument("--tag", default=None, metavar="NAME", help="validate the version tag NAME points at")
    validate.add_argument(
        "--branch",
        default=None,
        metavar="NAME",
        help="validate branch NAME (its latest version, --version N of it, or --all-versions)",
    )
    validate.add_argument("--format", choices=("text", "json", "junit", "sarif"), default="text")
    validate.add_argument(
        "--fail-on",
        choices=("error", "warning", "info"),
        default="error",
        help="exit 1 when a finding this serious or worse remains (default: error)",
    )
    validate.add_argument(
        "--baseline",
        default=None,
        metavar="FILE",
        help="accepted findings (JSON): they are reported apart and never fail the run",
    )
    validate.add_argument(
        "--write-baseline",
        default=None,
        metavar="FILE",
        help="write a baseline accepting every finding that fails the run, then apply it",
    )
    validate.add_argument(
        "--rules", nargs="+", default=None, metavar="RULE", help="only these rules (ids, or topics such as 'naming')"
    )
    validate.add_argument(
        "--io-threads",
        type=_positive,
        default=None,
        metavar="N",
        help="data file footers and deletion files read at once (default: 1 on a local disk, 32 on an object store); "
        "the report is the same",
    )
    validate.add_argument(
        "--spark",
        action="store_true",
        help="run as a Spark job: per-file reads and (for several versions) per-version checks on executors; "
        "the report is the same (exit 2 when Spark cannot start)",
    )
    validate.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="the Spark master for --spark (default: local[*]; spark://HOST:PORT for a cluster)",
    )
    _add_spec_revision_option(validate)
    _add_storage_option(validate)
    _add_manifest_store_option(validate)
    validate.set_defaults(run=_validate, parser=validate)

    rules = commands.add_parser("rules", help="list the validator's rules")
    rules.add_argument(
        "--uncovered", action="store_true", help="list the requirements no rule or test checks, with the reason"
    )
    rules.set_defaults(run=_rules)

    _add_conflicts(commands)

    demo = commands.add_parser("demo", help="write datasets with pylance and check them with the suite")
    demo.add_argument("--out", default=None, help="directory for the demo datasets (default: a temporary one)")
    demo.set_defaults(run=_demo)
    _add_fixtures(commands)
    _add_matrix(commands)
    add_harness_parser(commands)
    _add_writer_check(commands)
    return parser


def _case_or_driver_errors() -> tuple[type[Exception], ...]:
    """The errors of a fixture case or a driver. An ``except`` clause evaluates
    this only when an exception reaches it, so a command that loads neither
    (``validate``, ``rules``) never imports the drivers (issue 17, start-up)."""
    from .drivers import DriverError
    from .fixtures.case import CaseError

    return (CaseError, DriverError)


#: The commands that build many objects forming no cycles and keep them to
#: their end: their run pauses the collector (conformance.collector). A
#: long-running command (the harness, a fixture run) keeps it.
_COLLECTOR_PAUSED = frozenset({"validate", "describe"})


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "tag", None) is not None and getattr(args, "branch", None) is not None:
        parser.error("--tag and --branch are mutually exclusive: a tag names its branch")
    from reference_impl.refs import InvalidRefNameError, RefNotFoundError

    from .spark_session import SparkError
    from .validator.baseline import BaselineError

    try:
        with collector_paused() if args.command in _COLLECTOR_PAUSED else nullcontext():
            return args.run(args)
    except BrokenPipeError:  # output piped into a command that stopped reading
        sys.stderr.close()
        return EXIT_OK
    except (BaselineError, RefNotFoundError, InvalidRefNameError, SparkError, VersionNotFoundError) as exc:
        # A version, tag or branch that is not there: the command line named it.
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except InvalidOperationError as exc:  # a malformed URI or storage option
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except _case_or_driver_errors() as exc:
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    except NotADatasetError as exc:
        print(f"lance-conformance: not a Lance dataset: {exc}", file=sys.stderr)
        return EXIT_NOT_A_DATASET
    except LanceFormatError as exc:
        print(f"lance-conformance: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS


if __name__ == "__main__":
    sys.exit(main())
