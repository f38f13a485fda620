"""The ``lance-conformance`` command: the argument parser of every subcommand
and :func:`main`, which runs the one asked for and turns the errors that name
a bad command line into their exit statuses (conformance/exit_codes.py).

Each command group's options and handler live in a module of their own
(:mod:`.dataset_commands`: describe, validate, rules; :mod:`.fixtures_commands`:
the golden corpus; :mod:`.corpus_commands`: its export;
:mod:`.suite_commands`: conflicts, matrix, writer-check, dashboard;
:mod:`.compat_command`: the cross-release matrix; :mod:`.demo_command`; the
harness's in :mod:`conformance.harness.command`).
A handler imports its work lazily, so that ``--help`` and each command load
only what they need."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext

from reference_impl.errors import InvalidOperationError, LanceFormatError, NotADatasetError, VersionNotFoundError

from ..collector import collector_paused
from ..harness.command import add_harness_parser
from .common import (
    EXIT_DRIVER_UNAVAILABLE,
    EXIT_FINDINGS,
    EXIT_NOT_A_DATASET,
    EXIT_OK,
    EXIT_USAGE,
)
from .compat_command import add_compat
from .corpus_commands import add_corpus
from .dataset_commands import add_describe, add_rules, add_validate
from .demo_command import add_demo
from .fixtures_commands import add_fixtures
from .suite_commands import add_conflicts, add_dashboard, add_matrix, add_writer_check

__all__ = [
    "EXIT_DRIVER_UNAVAILABLE",
    "EXIT_FINDINGS",
    "EXIT_NOT_A_DATASET",
    "EXIT_OK",
    "EXIT_USAGE",
    "build_parser",
    "main",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lance-conformance",
        description="Reference implementation, spec validator and conformance suite for the Lance table format.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_describe(commands)
    add_validate(commands)
    add_rules(commands)
    add_conflicts(commands)
    add_demo(commands)
    add_fixtures(commands)
    add_corpus(commands)
    add_matrix(commands)
    add_harness_parser(commands)
    add_writer_check(commands)
    add_compat(commands)
    add_dashboard(commands)
    return parser


def _case_or_driver_errors() -> tuple[type[Exception], ...]:
    """The errors of a fixture case or a driver. An ``except`` clause evaluates
    this only when an exception reaches it, so a command that loads neither
    (``validate``, ``rules``) never imports the drivers (issue 17, start-up)."""
    # lazy: the drivers load only when a case's or a driver's error reaches main
    from ..drivers import DriverError
    from ..fixtures.case import CaseError

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
    # lazy: once the arguments parse (--help and usage errors exit before: they never pay for these)
    from reference_impl.refs import InvalidRefNameError, RefNotFoundError

    from ..spark_session import SparkError
    from ..validator.baseline import BaselineError

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
