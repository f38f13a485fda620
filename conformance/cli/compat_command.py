"""``lance-conformance compat``: the cross-release compatibility matrix
(:mod:`conformance.compat`) as JSON and one HTML page.

Exit statuses (conformance/exit_codes.py): 0 when every cell passes or
refuses cleanly, 1 when a cell fails (or is not applicable, or a reader did not
start), 2 for an unknown release or feature, 3 when a release cannot be
installed here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..run_stamp import RUN_DATE_HELP, RUN_DATE_OPTION, run_date_argument
from .common import EXIT_DRIVER_UNAVAILABLE, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, quiet_peers, show_progress


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _compat(args: argparse.Namespace) -> int:
    # lazy: the releases, their workers and the page templates load only for this command
    from ..compat.document import dumps, to_document, validate_document
    from ..compat.releases import (
        DEFAULT_RELEASES,
        ReleaseUnavailableError,
        UnknownReleaseError,
        expand,
        resolve,
    )
    from ..compat.run import DEFAULT_FEATURES, known_features, run_compat
    from ..report.compat_html import write_compat_html

    quiet_peers()
    try:
        names = expand(_names(args.releases) if args.releases else list(DEFAULT_RELEASES))
    except UnknownReleaseError as exc:
        print(f"lance-conformance: compat: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.features == "all":
        features = known_features()
    else:
        features = _names(args.features) if args.features else list(DEFAULT_FEATURES)
        unknown = [name for name in features if name not in known_features()]
        if unknown:
            known = ", ".join(known_features())
            print(f"lance-conformance: compat: unknown features {', '.join(unknown)}; known: {known}", file=sys.stderr)
            return EXIT_USAGE
    if not names or not features:
        print("lance-conformance: compat: name at least one release and one feature", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"lance-conformance: compat: --out {out} is not a directory", file=sys.stderr)
        return EXIT_USAGE

    def progress(message: str) -> None:
        if show_progress():
            print(message, file=sys.stderr, flush=True)

    try:
        releases = [resolve(name) for name in names]
    except ReleaseUnavailableError as exc:
        print(f"lance-conformance: compat: {exc}", file=sys.stderr)
        return EXIT_DRIVER_UNAVAILABLE
    out.mkdir(parents=True, exist_ok=True)
    workdir = out / "datasets" if args.keep_datasets else None
    run = run_compat(releases, features, workdir=workdir, timeout=args.timeout, progress=progress)
    document = to_document(run, args.run_date)
    validate_document(document)
    (out / "compat.json").write_text(dumps(document), encoding="utf-8")
    page = write_compat_html(out / "compat.html", document)
    summary = document["summary"]
    print(
        f"{summary['cells']} cells: {summary['pass']} pass, {summary['refused']} refused cleanly, "
        f"{summary['fail']} fail, {summary['not-applicable']} not applicable"
    )
    for cell in document["cells"]:
        if cell["status"] == "fail":
            print(
                f"FAIL {cell['feature']}: {cell['writer']} read by {cell['reader']}: {cell['failure_kind']}: "
                f"{(cell['message'] or '').splitlines()[0][:200]}"
            )
    for note in document["notes"]:
        print(f"{note['id']}: {note['text']}")
    print(f"saved {out / 'compat.json'}")
    print(f"saved {page}")
    return EXIT_OK if document["passed"] else EXIT_FINDINGS


def add_compat(commands) -> None:
    compat = commands.add_parser(
        "compat",
        help="the cross-release compatibility matrix: every pylance release reads every release's feature datasets",
    )
    compat.add_argument(
        "--releases",
        default=None,
        metavar="A,B",
        help="comma-separated releases: pinned pylance versions (their venvs are built on first use), 'installed' "
        "(the pylance beside lance-conformance), or the groups 'majors' (one per major line from 0.15), 'lines' "
        "(one per minor line), 'all' (every pinned release); default: installed,0.20.0",
    )
    compat.add_argument(
        "--features",
        default=None,
        metavar="A,B",
        help="comma-separated features, or 'all'; default: file-2.0, deletion-files, index-btree, txn-data-overlay",
    )
    compat.add_argument("--out", required=True, metavar="DIR", help="where to write compat.json and compat.html")
    compat.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="a wide guard against a read that hangs: the reader's worker is killed after this long on one call "
        "(default: the worker's, 300 s or $LANCE_CONFORMANCE_WORKER_TIMEOUT)",
    )
    compat.add_argument(
        "--keep-datasets", action="store_true", help="keep the datasets the releases wrote, under DIR/datasets"
    )
    compat.add_argument(RUN_DATE_OPTION, type=run_date_argument, default=None, metavar="DAY", help=RUN_DATE_HELP)
    compat.set_defaults(run=_compat)
