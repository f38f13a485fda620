"""``lance-conformance corpus export DIR``: the golden corpus as a versioned
directory for harnesses in other languages (:mod:`conformance.fixtures.export`,
docs/corpus-export.md)."""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_OK, EXIT_USAGE, corpus_of


def _corpus_export(args: argparse.Namespace) -> int:
    # lazy: the export loads pyarrow and the validator's rules; only this command writes one
    from ..fixtures.export import ExportError, export_corpus

    try:
        result = export_corpus(corpus_of(args), args.directory, only=args.case, force=args.force)
    except ExportError as exc:
        print(f"lance-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    which = "every case" if result.complete else "the cases asked for"
    print(f"{result.directory}: corpus version {result.corpus_version}, {len(result.cases)} cases ({which})")
    return EXIT_OK


def add_corpus(commands) -> None:
    corpus = commands.add_parser("corpus", help="the golden corpus for harnesses in any language: export")
    group = corpus.add_subparsers(dest="corpus_command", required=True)
    export = group.add_parser(
        "export",
        help="write the corpus as a versioned directory: manifest, cases, rows as Arrow IPC and JSON, "
        "the catalog and the schemas (docs/corpus-export.md)",
        description="Exit status: 0 written; 1 the corpus is malformed; 2 DIR is not empty (and, with --force, "
        "holds no earlier export) or a case named is unknown.",
    )
    export.add_argument("directory", metavar="DIR", help="where to write the export (absent or empty)")
    export.add_argument(
        "--corpus",
        default=None,
        help="corpus directory (default: $LANCE_CONFORMANCE_FIXTURES or the repository's fixtures/)",
    )
    export.add_argument(
        "--case", "--cases", nargs="+", default=None, metavar="NAME", dest="case", help="only these cases"
    )
    export.add_argument("--force", action="store_true", help="replace DIR when it holds an earlier export")
    export.set_defaults(run=_corpus_export)
