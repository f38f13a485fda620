"""The ``lance-conformance`` command."""

from __future__ import annotations

import argparse
import sys

from reference_impl.errors import LanceFormatError, NotADatasetError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_NOT_A_DATASET = 2


def _describe(args: argparse.Namespace) -> int:
    from .describe import to_json, to_text
    from .drivers import reference

    document = reference.describe(args.path, args.version)
    print(to_json(document) if args.format == "json" else to_text(document))
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    from .validator import validate
    from .validator.report import FORMATS

    report = validate(args.path, version=args.version, all_versions=args.all_versions, rules=args.rules)
    print(FORMATS[args.format](report))
    return EXIT_FINDINGS if report.has_errors else EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    from .validator.catalog import uncovered_requirements
    from .validator.registry import all_rules

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

    return run_demo(args.out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lance-conformance",
        description="Reference implementation, spec validator and conformance suite for the Lance table format.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    describe = commands.add_parser("describe", help="print one version of a dataset as the canonical document")
    describe.add_argument("path", help="dataset root directory")
    describe.add_argument("--version", type=int, default=None, help="version to describe (default: latest)")
    describe.add_argument("--format", choices=("json", "text"), default="json")
    describe.set_defaults(run=_describe)

    validate = commands.add_parser("validate", help="check a dataset against the specification")
    validate.add_argument("path", help="dataset root directory")
    which = validate.add_mutually_exclusive_group()
    which.add_argument("--version", type=int, default=None, help="version to validate (default: latest)")
    which.add_argument("--all-versions", action="store_true", help="validate every version")
    validate.add_argument("--format", choices=("text", "json", "junit", "sarif"), default="text")
    validate.add_argument("--rules", nargs="+", default=None, metavar="RULE",
                          help="only these rules (ids, or topics such as 'naming')")
    validate.set_defaults(run=_validate)

    rules = commands.add_parser("rules", help="list the validator's rules")
    rules.add_argument("--uncovered", action="store_true",
                       help="list the requirements no rule or test checks, with the reason")
    rules.set_defaults(run=_rules)

    demo = commands.add_parser("demo", help="write datasets with pylance and check them with the suite")
    demo.add_argument("--out", default=None, help="directory for the demo datasets (default: a temporary one)")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:  # output piped into a command that stopped reading
        sys.stderr.close()
        return EXIT_OK
    except NotADatasetError as exc:
        print(f"lance-conformance: not a Lance dataset: {exc}", file=sys.stderr)
        return EXIT_NOT_A_DATASET
    except LanceFormatError as exc:
        print(f"lance-conformance: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS


if __name__ == "__main__":
    sys.exit(main())
