"""What several commands of ``lance-conformance`` share: the exit statuses
under the names the handlers use, the golden corpus a command reads, the
``--in-process`` option, and when progress lines are shown."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..exit_codes import ExitCode
from ..fixtures import default_corpus

# The exit statuses are defined once, in conformance/exit_codes.py; these names are the handlers' (and tests').
EXIT_OK = ExitCode.OK
EXIT_FINDINGS = ExitCode.FINDINGS
EXIT_NOT_A_DATASET = ExitCode.NOT_A_DATASET
#: A malformed baseline, an unknown tag, branch or version: the command line asked for something that is not there.
EXIT_USAGE = ExitCode.USAGE
#: A driver that exists but cannot load or describe itself here.
EXIT_DRIVER_UNAVAILABLE = ExitCode.DRIVER_CANNOT_LOAD


def corpus_of(args: argparse.Namespace) -> Path:
    """The golden corpus ``--corpus`` names, else the default one."""
    return Path(args.corpus) if args.corpus else default_corpus()


def quiet_peers() -> None:
    """pylance logs a warning per unknown index type and per thread pool;
    the verdicts say what matters."""
    os.environ.setdefault("LANCE_LOG", "error")


def add_in_process_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run a driver module inside this process instead of in a worker process (a crash of native code "
        "in it then ends the run)",
    )


def show_progress() -> bool:
    """Progress lines go to a terminal, never into a CI log (``CI`` set) or a pipe."""
    return sys.stderr.isatty() and not os.environ.get("CI")
