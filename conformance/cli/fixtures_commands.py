"""``lance-conformance fixtures``: the golden corpus generated, read by a
driver (``verify``), crossed writer by reader (``matrix``), grown by a
promoted dataset (``promote``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..fixtures import corpus_version
from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, add_in_process_option, corpus_of, quiet_peers, show_progress


def _fixtures_generate(args: argparse.Namespace) -> int:
    # lazy: the case builders import pyarrow and the peers; only this command writes cases
    from ..fixtures.generate import generate
    from ..peers.old_pylance import PeerUnavailableError, PeerWriterError

    corpus = corpus_of(args)
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
    # lazy: the verifier (the comparison, pyarrow) loads only when a corpus is verified
    from ..fixtures.verify import report_json

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
    show = show_progress()

    def progress(done: int, total: int, name: str) -> None:
        print(f"\r\033[K[{done + 1}/{total}] {name}", end="", file=sys.stderr, flush=True)

    def on_result(result) -> None:
        if show:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        if output_format == "text":
            _print_result(result)
            sys.stdout.flush()

    return (progress if show else None), on_result


def _fixtures_verify(args: argparse.Namespace) -> int:
    # lazy: the drivers load only for the commands that run one
    from ..drivers import close_driver, driver_info, greet_driver, isolated_driver_name, load_driver

    name = isolated_driver_name(args.driver, in_process=args.in_process)
    # A worker's child is started first: its start-up (a process importing an
    # implementation) overlaps with this process's imports below.
    driver = load_driver(name, greet=False)
    try:
        # lazy, and after the worker started: its start-up overlaps these imports (jsonschema, the comparison)
        from ..expectations import ExpectationsError, load_expectations
        from ..fixtures.verify import ACCEPTED, verify_corpus

        quiet_peers()
        try:
            expectations = load_expectations(args.expectations) if args.expectations else None
        except ExpectationsError as exc:
            print(f"lance-conformance: {exc}", file=sys.stderr)
            return EXIT_USAGE
        greet_driver(driver, name)
        info = driver_info(driver, name)
        progress, on_result = _verify_output(args.format)
        results = verify_corpus(
            corpus_of(args),
            name,
            only=set(args.case) if args.case else None,
            expectations=expectations,
            progress=progress,
            driver=driver,
            on_result=on_result,
        )
    finally:
        close_driver(driver)
    _print_summary(results, args.format, info, corpus_of(args))
    return EXIT_OK if results and all(r.status in ACCEPTED for r in results) else EXIT_FINDINGS


def _fixtures_matrix(args: argparse.Namespace) -> int:
    # lazy: the writer-by-reader matrix loads the drivers it crosses
    from ..fixtures.matrix import render_matrix, run_matrix

    quiet_peers()
    corpus = corpus_of(args)
    matrix = run_matrix(corpus, args.drivers)
    print(render_matrix(matrix))
    out = Path(args.json) if args.json else corpus / "matrix.json"
    out.write_text(json.dumps(matrix, indent=2) + "\n", encoding="utf-8")
    print(f"saved {out}")
    return EXIT_OK if all(cell["pass"] for cell in matrix["cells"]) else EXIT_FINDINGS


def _fixtures_promote(args: argparse.Namespace) -> int:
    # lazy: promoting reads the dataset with the reference reader; only this command does
    from ..fixtures.promote import promote

    case = promote(
        args.path,
        corpus_of(args),
        name=args.name,
        description=args.description,
        requirements=args.requirement or [],
        features=args.feature or [],
        tags=args.tag or [],
    )
    print(f"promoted {args.path} as case {case.name} ({len(case.features)} features: {', '.join(case.features)})")
    return EXIT_OK


def add_fixtures(commands) -> None:
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
    add_in_process_option(verify)
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
