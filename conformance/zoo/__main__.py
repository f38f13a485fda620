"""``python -m conformance.zoo build DIR [FEATURE ...]`` writes the zoo (every
feature by default); ``python -m conformance.zoo check DIR [--deep] [FEATURE ...]``
checks what was built there and prints every disagreement, explained or not.
Exit status (:class:`~conformance.exit_codes.ExitCode`): 0 when nothing is
unexplained, 1 when something is, 2 for a usage error (an unknown feature, a
directory with no zoo, deep validation the validator lacks)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ..exit_codes import ExitCode
from .catalog import FEATURES, UnknownFeatureError, build_zoo, read_record
from .check import NotBuiltError, ZooCheck, check_zoo
from .known import stale_entries


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m conformance.zoo", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="write the zoo's datasets into DIR")
    build.add_argument("directory", type=Path)
    build.add_argument("features", nargs="*", help=f"features to build (default: all {len(FEATURES)})")
    check = commands.add_parser("check", help="check the zoo built in DIR")
    check.add_argument("directory", type=Path)
    check.add_argument("features", nargs="*", help="features to check (default: every one built)")
    check.add_argument("--deep", action="store_true", help="validate with the validator's deep mode")
    return parser


def _build(args: argparse.Namespace) -> int:
    for built in build_zoo(args.directory, args.features or None):
        outcome = f"unavailable: {built.unavailable}" if built.unavailable else f"built in {built.seconds:.1f}s"
        print(f"{built.name}: {outcome}")
    return ExitCode.OK


def _print(result: ZooCheck, whole: bool, deep: bool) -> None:
    for name, reason in sorted(result.unavailable.items()):
        print(f"SKIPPED     {name}: {reason}")
    for check in result.features:
        notes = ", ".join(f"{rule} x{n}" for rule, n in sorted(check.notes.items()))
        print(
            f"{check.feature}: {len(check.datasets)} datasets, {check.versions_checked} versions; notes: {notes or '-'}"
        )
        for disagreement, entry in check.explained:
            print(f"  KNOWN       {disagreement}  <- {entry.fixed_by}")
        for disagreement in check.unexplained:
            print(f"  UNEXPLAINED {disagreement}")
    found = [d for check in result.features for d in check.disagreements]
    if whole:
        for entry in stale_entries(found, [check.feature for check in result.features], deep=deep):
            print(f"STALE       known entry for {', '.join(entry.features)} ({entry.fixed_by}) matched nothing")
    by_aspect = Counter(d.aspect.value for d in found)
    print(
        f"{len(result.unexplained)} unexplained disagreements, {len(found) - len(result.unexplained)} known "
        f"({', '.join(f'{a} {n}' for a, n in sorted(by_aspect.items())) or 'none'}), "
        f"{len(result.unavailable)} features unavailable"
    )


def _check(args: argparse.Namespace) -> int:
    if not read_record(args.directory):
        print(f"{args.directory}: no zoo built here (python -m conformance.zoo build DIR)", file=sys.stderr)
        return ExitCode.USAGE
    try:
        result = check_zoo(args.directory, names=args.features or None, deep=args.deep)
    except NotBuiltError as exc:
        print(str(exc), file=sys.stderr)
        return ExitCode.USAGE
    _print(result, whole=not args.features, deep=args.deep)
    return ExitCode.FINDINGS if result.unexplained else ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _build(args) if args.command == "build" else _check(args)
    except UnknownFeatureError as exc:
        print(str(exc), file=sys.stderr)
        return ExitCode.USAGE


if __name__ == "__main__":
    sys.exit(main())
